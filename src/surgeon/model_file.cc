#include "surgeon/model_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "core/error.h"
#include "core/metadata.h"
#include "onnx/model_check.h"
#include "onnx/proto_convert.h"
#include "surgeon/types.h"

namespace fs = std::filesystem;

namespace parity::surgeon {

ModelFile load_model_file(const std::string& path, const std::string& external_data_dir) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    fail("failed to load model '{}': {}", path,
         fs::exists(path, ec) ? "it is not a regular file" : "the file does not exist");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("failed to load model '{}': {}", path, std::strerror(errno));
  auto proto = std::make_shared<::onnx::ModelProto>();
  bool parsed = false;
  {
    google::protobuf::io::FileInputStream file(fd);
    google::protobuf::io::CodedInputStream stream(&file);
    stream.SetTotalBytesLimit(INT_MAX);
    parsed = proto->ParseFromCodedStream(&stream) && stream.ConsumedEntireMessage();
  }
  ::close(fd);
  if (!parsed)
    fail(
        "failed to parse '{}' as an ONNX model: the file is not a valid ModelProto (truncated, "
        "corrupt, or past protobuf's 2 GB limit?)",
        path);
  if (!proto->has_graph())
    fail("failed to parse '{}' as an ONNX model: it holds no graph (is it an ONNX model?)", path);
  try {
    onnx_io::check_model_proto(*proto);
  } catch (const Error& e) {
    throw Error(fmt::format("{} (model '{}')", e.what(), path));
  }
  ModelFile model;
  model.proto = std::move(proto);
  model.path = path;
  const std::string dir = fs::path(path).parent_path().string();
  model.external_data_dir = !external_data_dir.empty() ? external_data_dir
                            : dir.empty()              ? "."
                                                       : dir;
  return model;
}

namespace {

TensorMetadata metadata_of(const google::protobuf::RepeatedPtrField<::onnx::ValueInfoProto>& vs) {
  TensorMetadata meta;
  for (const auto& v : vs) meta.add(v.name(), dtype_of(v.type()), dims_of(v.type()));
  return meta;
}

}  // namespace

std::string model_summary(const ::onnx::ModelProto& model) {
  int64_t opset = 0;
  for (const auto& op : model.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx") opset = op.version();
  const auto& g = model.graph();
  std::set<std::string> initializers;
  for (const auto& t : g.initializer()) initializers.insert(t.name());
  // Graph inputs that are initializers are weights, not inputs, for Polygraphy.
  google::protobuf::RepeatedPtrField<::onnx::ValueInfoProto> inputs;
  for (const auto& in : g.input())
    if (!initializers.count(in.name())) *inputs.Add() = in;
  const TensorMetadata in = metadata_of(inputs), out = metadata_of(g.output());
  return fmt::format(
      "Name: {} | ONNX Opset: {}\n\n---- {} Graph Input(s) ----\n{}\n\n---- {} Graph Output(s) "
      "----\n{}\n\n---- {} Initializer(s) ----\n\n---- {} Node(s) ----",
      g.name(), opset, in.size(), in.str(), out.size(), out.str(), g.initializer_size(),
      g.node_size());
}

void save_model_file(ModelFile& model, const std::string& path,
                     const onnx_io::SaveOptions& options) {
  onnx_io::save_model_proto(*model.proto, model.external_data_dir, model.path, path, options);
  model.path = path;
  const std::string dir = std::filesystem::path(path).parent_path().string();
  model.external_data_dir = dir.empty() ? "." : dir;
}

Tensor tensor_value(const ::onnx::TensorProto& proto, onnx_io::ExternalDataStore& store) {
  return onnx_io::tensor_from_proto(proto, onnx_io::TensorSource{&store, false});
}

::onnx::TensorProto tensor_proto(const std::string& name, const Tensor& value) {
  ::onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(static_cast<int32_t>(value.dtype()));
  for (int64_t d : value.shape()) t.add_dims(d);
  if (value.dtype() == DataType::kString) {
    const auto* s = static_cast<const std::string*>(value.raw_data());
    for (int64_t i = 0; i < value.numel(); ++i) t.add_string_data(s[i]);
  } else {
    t.set_raw_data(value.raw_data(), value.nbytes());
  }
  return t;
}

}  // namespace parity::surgeon
