#include "support/onnx_text.h"

#include <fstream>

#include <onnx/defs/parser.h>

#include "core/error.h"
#include "onnx/model_io.h"

namespace parity::testing {

::onnx::ModelProto model_proto_from_text(const std::string& onnx_text) {
  ::onnx::ModelProto proto;
  auto status = ::onnx::OnnxParser::Parse(proto, onnx_text.c_str());
  if (!status.IsOK())
    fail("failed to parse a test model from ONNX text: {}\n{}", status.ErrorMessage(), onnx_text);
  return proto;
}

std::string model_bytes_from_text(const std::string& onnx_text) {
  std::string bytes;
  if (!model_proto_from_text(onnx_text).SerializeToString(&bytes))
    fail("failed to serialize a test model: protobuf refused it");
  return bytes;
}

std::shared_ptr<ir::Model> model_from_text(const std::string& onnx_text) {
  auto proto = std::make_shared<::onnx::ModelProto>(model_proto_from_text(onnx_text));
  return onnx_io::model_from_proto(std::move(proto), {}, ".");
}

void write_model_from_text(const std::string& path, const std::string& onnx_text) {
  std::string bytes = model_bytes_from_text(onnx_text);
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) fail("failed to write test model '{}': the file cannot be written", path);
}

}  // namespace parity::testing
