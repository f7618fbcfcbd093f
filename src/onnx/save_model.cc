// Saving a model to a file without breaking its external data. ONNX Runtime refuses absolute
// external data locations, so a model saved away from its data cannot simply point back at
// the original files: its external tensors are copied into one "<file name>.data" beside it.
#include <filesystem>
#include <fstream>
#include <functional>

#include <onnx/onnx_pb.h>

#include "core/error.h"
#include "onnx/external_data.h"
#include "onnx/model_io.h"

namespace fs = std::filesystem;

namespace parity::onnx_io {

namespace {

bool has_external_data(const ::onnx::GraphProto& g) {
  for (const auto& t : g.initializer())
    if (is_external(t)) return true;
  for (const auto& s : g.sparse_initializer())
    if (is_external(s.values()) || is_external(s.indices())) return true;
  for (const auto& node : g.node())
    for (const auto& a : node.attribute()) {
      if (a.has_t() && is_external(a.t())) return true;
      for (const auto& t : a.tensors())
        if (is_external(t)) return true;
      if (a.has_g() && has_external_data(a.g())) return true;
      for (const auto& sub : a.graphs())
        if (has_external_data(sub)) return true;
    }
  return false;
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) fail("failed to save model to '{}': the file cannot be written", path);
}

// Copies every external tensor into `data_path` (64-byte aligned so that loading can map them
// in place) and points the tensors there, by file name relative to the saved model.
void relocate_external_data(::onnx::ModelProto& proto, const std::string& source_dir,
                            const std::string& data_path) {
  ExternalDataStore source(source_dir);
  std::ofstream data(data_path, std::ios::binary | std::ios::trunc);
  if (!data) fail("failed to save external data to '{}': the file cannot be written", data_path);
  const std::string location = fs::path(data_path).filename().string();
  size_t offset = 0;
  visit_tensors(*proto.mutable_graph(), [&](::onnx::TensorProto& t) {
    if (!is_external(t)) return;
    const Shape shape(t.dims().begin(), t.dims().end());
    Tensor tensor = source.load(t, static_cast<DataType>(t.data_type()), shape);
    const size_t padding = (64 - offset % 64) % 64;
    const std::string zeros(padding, '\0');
    data.write(zeros.data(), static_cast<std::streamsize>(padding));
    offset += padding;
    data.write(static_cast<const char*>(tensor.raw_data()),
               static_cast<std::streamsize>(tensor.nbytes()));
    t.clear_external_data();
    auto add = [&](const char* key, std::string value) {
      auto* kv = t.add_external_data();
      kv->set_key(key);
      kv->set_value(std::move(value));
    };
    add("location", location);
    add("offset", std::to_string(offset));
    add("length", std::to_string(tensor.nbytes()));
    offset += tensor.nbytes();
  });
  if (!data) fail("failed to save external data to '{}': writing the file failed", data_path);
}

}  // namespace

void save_model(const ir::Model& model, const std::string& path) {
  if (!model.proto)
    fail(
        "failed to save model '{}' to '{}': it has no protobuf; only models loaded from ONNX "
        "can be saved",
        model.graph.name, path);
  const bool has_external = has_external_data(model.proto->graph());
  std::error_code ec;
  fs::path target_dir = fs::path(path).parent_path();
  if (target_dir.empty()) target_dir = ".";
  const std::string source_dir = model.external_data_dir.empty() ? "." : model.external_data_dir;
  if (!has_external || fs::equivalent(target_dir, source_dir, ec)) {
    write_bytes(path, serialize_model(model));
    return;
  }
  ir::Model copy;  // only the protobuf is needed for serializing
  copy.graph.name = model.graph.name;
  copy.proto = std::make_shared<::onnx::ModelProto>(*model.proto);
  relocate_external_data(*copy.proto, source_dir, path + ".data");
  write_bytes(path, serialize_model(copy));
}

void visit_tensors(::onnx::GraphProto& g, const std::function<void(::onnx::TensorProto&)>& fn) {
  for (auto& t : *g.mutable_initializer()) fn(t);
  for (auto& s : *g.mutable_sparse_initializer()) {
    fn(*s.mutable_values());
    fn(*s.mutable_indices());
  }
  for (auto& node : *g.mutable_node())
    for (auto& a : *node.mutable_attribute()) {
      if (a.has_t()) fn(*a.mutable_t());
      for (auto& t : *a.mutable_tensors()) fn(t);
      if (a.has_g()) visit_tensors(*a.mutable_g(), fn);
      for (auto& sub : *a.mutable_graphs()) visit_tensors(sub, fn);
    }
}

bool is_external(const ::onnx::TensorProto& t) {
  return t.data_location() == ::onnx::TensorProto::EXTERNAL;
}

}  // namespace parity::onnx_io
