#include "surgeon/model_file.h"

#include <climits>
#include <filesystem>

#include <google/protobuf/io/coded_stream.h>

#include "core/error.h"
#include "core/file_util.h"
#include "core/logger.h"
#include "onnx/model_io.h"

namespace fs = std::filesystem;

namespace parity::surgeon {

std::shared_ptr<::onnx::ModelProto> parse_model_proto(const std::string& bytes) {
  auto model = std::make_shared<::onnx::ModelProto>();
  google::protobuf::io::CodedInputStream stream(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                static_cast<int>(bytes.size()));
  stream.SetTotalBytesLimit(INT_MAX);
  if (!model->ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage()) return nullptr;
  return model;
}

std::shared_ptr<::onnx::ModelProto> load_model_proto(const std::string& path) {
  logger().info("Loading model: {}", fs::absolute(path).lexically_normal().string());
  auto model = parse_model_proto(read_regular_file(path, fmt::format("load model '{}'", path)));
  if (!model)
    fail("failed to load model '{}': the file is not an ONNX model (protobuf parsing failed)",
         path);
  return model;
}

void save_model_proto(const std::shared_ptr<::onnx::ModelProto>& model, const std::string& path,
                      const std::string& external_data_dir) {
  logger().info("Saving ONNX model to: {}", path);
  ir::Model wrapper;  // onnx_io::save_model writes the protobuf and relocates external data
  wrapper.graph.name = model->graph().name();
  wrapper.external_data_dir = external_data_dir.empty() ? "." : external_data_dir;
  wrapper.proto = model;
  onnx_io::save_model(wrapper, path);
}

std::string external_data_dir_of(const std::string& path, const std::string& given) {
  if (!given.empty()) return given;
  const std::string dir = fs::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

}  // namespace parity::surgeon
