// Loading models (file, bytes, parsed protobuf) and single tensors, copying and serializing.
// Output marking lives in modify_outputs.cc and saving in save_model.cc (save_model.h).
#include "onnx/model_io.h"

#include <climits>
#include <filesystem>
#include <fstream>

#include <google/protobuf/io/coded_stream.h>
#include <onnx/onnx_pb.h>

#include "core/error.h"
#include "core/file_util.h"
#include "onnx/model_check.h"
#include "onnx/proto_convert.h"

namespace fs = std::filesystem;

namespace parity::onnx_io {

namespace {

// Parses with protobuf's limits opened to the 2 GB maximum of a serialized message, so that
// large models with embedded weights load; never aborts on bad bytes.
bool parse_proto(std::string_view bytes, google::protobuf::MessageLite& message) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) return false;
  google::protobuf::io::CodedInputStream stream(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                static_cast<int>(bytes.size()));
  stream.SetTotalBytesLimit(INT_MAX);
  return message.ParseFromCodedStream(&stream) && stream.ConsumedEntireMessage();
}

// Only a regular file: a FIFO or a device would block or never end (core/file_util.h).
std::string read_file(const std::string& path) {
  return read_regular_file(path, fmt::format("load model '{}'", path));
}

std::shared_ptr<::onnx::ModelProto> parse_model(std::string_view bytes, const std::string& what) {
  auto proto = std::make_shared<::onnx::ModelProto>();
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    fail(
        "failed to parse {} as an ONNX model: it is {} bytes, past protobuf's 2 GB limit; "
        "large models must keep their weights in external data files",
        what, bytes.size());
  if (!parse_proto(bytes, *proto))
    fail(
        "failed to parse {} as an ONNX model: the file is not a valid ModelProto "
        "(truncated or corrupt?)",
        what);
  if (!proto->has_graph())
    fail("failed to parse {} as an ONNX model: it holds no graph (is it an ONNX model?)", what);
  return proto;
}

// Adds the model's path to errors raised while converting it, so that a message about a
// tensor or node says which file it came from.
template <typename F>
auto with_model_context(const std::string& path, F fn) {
  try {
    return fn();
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw Error(fmt::format("{} (model '{}')", e.what(), path));
  }
}

std::shared_ptr<ir::Graph> copy_graph(const ir::Graph& g, ir::Graph* parent);

void relink_subgraphs(ir::Graph& g) {
  for (auto& node : g.nodes)
    for (auto& a : node.attributes) {
      if (a.g) a.g = copy_graph(*a.g, &g);
      for (auto& sub : a.graphs) sub = copy_graph(*sub, &g);
    }
}

std::shared_ptr<ir::Graph> copy_graph(const ir::Graph& g, ir::Graph* parent) {
  auto out = std::make_shared<ir::Graph>(g);
  out->parent = parent;
  relink_subgraphs(*out);
  return out;
}

}  // namespace

std::shared_ptr<ir::Model> model_from_proto(std::shared_ptr<::onnx::ModelProto> proto,
                                            const LoadOptions& options,
                                            const std::string& base_dir) {
  check_model_proto(*proto);
  auto model = std::make_shared<ir::Model>();
  model->ir_version = proto->ir_version();
  for (const auto& op : proto->opset_import())
    model->opsets[op.domain() == "ai.onnx" ? "" : op.domain()] = op.version();
  model->producer_name = proto->producer_name();
  model->producer_version = proto->producer_version();
  model->doc_string = proto->doc_string();
  model->external_data_dir =
      options.external_data_dir.empty() ? base_dir : options.external_data_dir;

  ExternalDataStore external(model->external_data_dir);
  TensorSource source{&external, options.ignore_external_data};
  graph_from_proto(proto->graph(), model->graph, source);
  toposort_recursive(model->graph);
  model->proto = std::move(proto);
  return model;
}

std::shared_ptr<ir::Model> load_model(const std::string& path, const LoadOptions& options) {
  auto proto = parse_model(read_file(path), fmt::format("'{}'", path));
  std::string dir = fs::path(path).parent_path().string();
  return with_model_context(path, [&] {
    auto model = model_from_proto(std::move(proto), options, dir.empty() ? "." : dir);
    model->path = path;
    return model;
  });
}

std::shared_ptr<ir::Model> load_model_from_bytes(std::string_view bytes, const LoadOptions& options,
                                                 const std::string& base_dir) {
  auto proto = parse_model(bytes, fmt::format("{} bytes", bytes.size()));
  return model_from_proto(std::move(proto), options, base_dir);
}

Tensor tensor_from_proto_bytes(const std::string& serialized_tensor_proto) {
  ::onnx::TensorProto proto;
  if (!parse_proto(serialized_tensor_proto, proto))
    fail(
        "failed to parse {} bytes as an ONNX tensor: they are not a valid TensorProto "
        "(truncated or corrupt?)",
        serialized_tensor_proto.size());
  return tensor_from_proto(proto, TensorSource{});
}

std::shared_ptr<ir::Model> copy_model(const ir::Model& model) {
  auto out = std::make_shared<ir::Model>(model);
  relink_subgraphs(out->graph);
  if (model.proto) out->proto = std::make_shared<::onnx::ModelProto>(*model.proto);
  return out;
}

std::string serialize_model(const ir::Model& model) {
  if (!model.proto)
    fail(
        "failed to serialize model '{}': it has no protobuf; only models loaded from ONNX "
        "can be serialized",
        model.graph.name);
  const size_t size = model.proto->ByteSizeLong();
  if (size > static_cast<size_t>(INT_MAX))
    fail(
        "failed to serialize model '{}' of {} bytes: protobuf messages cannot exceed 2 GB; "
        "save the model with its weights as external data instead",
        model.graph.name, size);
  std::string bytes;
  if (!model.proto->SerializeToString(&bytes))
    fail("failed to serialize model '{}': protobuf refused the message", model.graph.name);
  return bytes;
}

}  // namespace parity::onnx_io
