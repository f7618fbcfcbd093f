// Parity's one model writer. Tensors that go to external data are written one at a time, each
// moved out of the protobuf (or read from its mapped source file) as it is written, 64-byte
// aligned so that loading can map them in place.
#include "onnx/save_model.h"

#include <cctype>
#include <climits>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/onnx_pb.h>

#include "core/error.h"
#include "core/logger.h"
#include "onnx/external_data.h"
#include "onnx/model_io.h"
#include "onnx/proto_convert.h"

namespace fs = std::filesystem;

namespace parity::onnx_io {

namespace {

std::string external_location(const ::onnx::TensorProto& t) {
  for (const auto& kv : t.external_data())
    if (kv.key() == "location") return kv.value();
  return "";
}

// The bytes a tensor's data takes (what decides whether it goes to external data).
size_t data_bytes(const ::onnx::TensorProto& t) {
  if (t.has_raw_data()) return t.raw_data().size();
  int64_t numel = 1;
  for (int64_t d : t.dims()) numel *= d;
  if (numel < 0) return 0;
  return dtype_storage_bytes(static_cast<DataType>(t.data_type()), static_cast<size_t>(numel));
}

void clear_data(::onnx::TensorProto& t) {
  t.clear_raw_data();
  t.clear_float_data();
  t.clear_double_data();
  t.clear_int32_data();
  t.clear_int64_data();
  t.clear_uint64_data();
  t.clear_external_data();
}

// A file name a tensor can be stored under when each tensor has its own file.
std::string file_name_for(const std::string& tensor) {
  std::string s;
  for (char c : tensor)
    s += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-') ? c : '_';
  if (s.empty() || s[0] == '.') s = "tensor" + s;
  return s;
}

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  return fs::exists(a, ec) && fs::exists(b, ec) && fs::equivalent(a, b, ec);
}

// Writes tensors' bytes into data files beside the model, 64-byte aligned.
class DataWriter {
 public:
  DataWriter(fs::path dir, std::set<fs::path> protected_files)
      : dir_(std::move(dir)), protected_(std::move(protected_files)) {}

  void write(::onnx::TensorProto& t, const std::string& location, const void* data, size_t n) {
    const fs::path full = dir_ / location;
    auto it = files_.find(location);
    if (it == files_.end()) {
      for (const auto& p : protected_)
        if (same_file(full, p))
          fail_usage(
              "failed to save external data to '{}': it is a file the model being saved reads "
              "from; choose another name with --save-external-data",
              full.string());
      auto out = std::make_unique<std::ofstream>(full, std::ios::binary | std::ios::trunc);
      if (!*out)
        fail("failed to save external data to '{}': the file cannot be written", full.string());
      it = files_.emplace(location, File{std::move(out), 0}).first;
    }
    File& f = it->second;
    const size_t padding = (64 - f.offset % 64) % 64;
    static const char zeros[64] = {};
    f.out->write(zeros, static_cast<std::streamsize>(padding));
    f.offset += padding;
    f.out->write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
    if (!*f.out)
      fail("failed to save external data to '{}': writing the file failed (disk full?)",
           full.string());
    clear_data(t);
    t.set_data_location(::onnx::TensorProto::EXTERNAL);
    auto add = [&](const char* key, std::string value) {
      auto* kv = t.add_external_data();
      kv->set_key(key);
      kv->set_value(std::move(value));
    };
    add("location", location);
    add("offset", std::to_string(f.offset));
    add("length", std::to_string(n));
    f.offset += n;
  }

  void close() {
    for (auto& [location, f] : files_) {
      f.out->close();
      if (!*f.out)
        fail("failed to save external data to '{}': closing the file failed",
             (dir_ / location).string());
    }
  }

 private:
  struct File {
    std::unique_ptr<std::ofstream> out;
    size_t offset = 0;
  };
  fs::path dir_;
  std::set<fs::path> protected_;
  std::map<std::string, File> files_;
};

// Before IR version 4 every initializer must also be a graph input (the checker refuses
// otherwise); initializers a tool added (folded values, bounds) get their input here. Only in
// the top-level graph: a body's inputs are its node's formal parameters.
void list_initializers_as_inputs(::onnx::GraphProto& g) {
  std::set<std::string> inputs;
  for (const auto& in : g.input()) inputs.insert(in.name());
  for (const auto& t : g.initializer()) {
    if (inputs.count(t.name())) continue;
    auto* in = g.add_input();
    in->set_name(t.name());
    auto* type = in->mutable_type()->mutable_tensor_type();
    type->set_elem_type(t.data_type());
    auto* shape = type->mutable_shape();
    for (int64_t d : t.dims()) shape->add_dim()->set_dim_value(d);
  }
}

// Marked outputs that the file gives no type for (intermediate tensors of a model without
// value_info) get the one ONNX's shape inference tells, since the checker refuses a graph output
// without a type (Polygraphy writes such models). The value_info is kept as it was: only
// --shape-inference adds it.
void type_untyped_outputs(::onnx::ModelProto& proto) {
  auto untyped = [&] {
    std::vector<std::string> names;
    for (const auto& o : proto.graph().output())
      if (!o.has_type()) names.push_back(o.name());
    return names;
  };
  if (untyped().empty()) return;
  const auto value_info = proto.graph().value_info();
  infer_shapes(proto, /*error_ok=*/true);
  *proto.mutable_graph()->mutable_value_info() = value_info;
  const std::vector<std::string> still = untyped();
  if (!still.empty())
    logger().warning(
        "The saved model's output(s) {} have no type: ONNX shape inference cannot tell it, "
        "and onnx.checker refuses such a model; give them types (parity surgeon sanitize), or "
        "mark other tensors",
        fmt::format("{}", fmt::join(still, ", ")));
}

}  // namespace

void save_model_proto(::onnx::ModelProto& proto, const std::string& source_dir_name,
                      const std::string& source_path, const std::string& path,
                      const SaveOptions& options) {
  const fs::path target(path);
  fs::path target_dir = target.parent_path();
  if (target_dir.empty()) target_dir = ".";
  std::error_code ec;
  if (!fs::is_directory(target_dir, ec))
    fail("failed to save model to '{}': '{}' is not an existing folder", path, target_dir.string());
  if (fs::is_directory(target, ec))
    fail("failed to save model to '{}': it is a folder; give a file path", path);
  for (const std::string& input : {options.input_path, source_path})
    if (!input.empty() && same_file(target, input))
      fail_usage(
          "failed to save model to '{}': it is the input model, which is never overwritten; "
          "write to another path",
          path);

  if (proto.ir_version() > 0 && proto.ir_version() < 4)
    list_initializers_as_inputs(*proto.mutable_graph());
  std::optional<std::string> external = options.external_data_path;
  if (!external && proto.ByteSizeLong() > static_cast<size_t>(INT_MAX)) {
    logger().warning(
        "Model size ({} MiB) exceeds protobuf size threshold (2048 MiB). Will save weight data "
        "to an external file.\nTo control the location of this file, use the "
        "`--save-external-data` command-line option.",
        proto.ByteSizeLong() / (1024 * 1024));
    external = "";
  }
  std::string location =
      external && !external->empty() ? *external : target.filename().string() + ".data";
  if (external && !external->empty()) {
    const fs::path rel(*external);
    if (rel.is_absolute() || rel.has_parent_path() || *external == "." || *external == "..")
      fail_usage(
          "failed to save external data to '{}': the path must be a file name, written beside "
          "the model in '{}'; absolute paths and folders are refused because ONNX Runtime reads "
          "external data relative to the model",
          *external, target_dir.string());
  }

  // The files the model reads (itself, its external data) must survive the save.
  const fs::path source_dir = source_dir_name.empty() ? "." : source_dir_name;
  std::set<fs::path> protected_files;
  if (!source_path.empty()) protected_files.insert(source_path);
  if (!options.input_path.empty()) protected_files.insert(options.input_path);
  visit_tensors(*proto.mutable_graph(), [&](::onnx::TensorProto& t) {
    if (is_external(t)) protected_files.insert(source_dir / external_location(t));
  });
  const bool same_dir = fs::equivalent(target_dir, source_dir, ec);

  ExternalDataStore store(source_dir.string());
  DataWriter writer(target_dir, protected_files);
  visit_tensors(*proto.mutable_graph(), [&](::onnx::TensorProto& t) {
    const bool already = is_external(t);
    if (t.data_type() == static_cast<int32_t>(DataType::kString)) return;
    // Existing external data stays where it is when the model is saved beside it and no new
    // layout is asked for; otherwise it is copied (ONNX Runtime refuses locations outside the
    // model's folder).
    if (already && !external && same_dir) return;
    if (!already && (!external || data_bytes(t) < options.size_threshold)) return;
    const std::string where =
        options.all_tensors_to_one_file || !external ? location : file_name_for(t.name());
    if (t.has_raw_data()) {
      // Moved out of the message so that the raw bytes are freed as they are written.
      std::string bytes = std::move(*t.mutable_raw_data());
      writer.write(t, where, bytes.data(), bytes.size());
      return;
    }
    // Mapped for external data, no copy.
    const Tensor value = tensor_from_proto(t, TensorSource{&store, false});
    writer.write(t, where, value.raw_data(), value.nbytes());
  });
  writer.close();

  if (proto.ByteSizeLong() > static_cast<size_t>(INT_MAX))
    fail(
        "failed to save model to '{}': its protobuf is still {} bytes after moving the tensors "
        "to external data, past protobuf's 2 GB limit",
        path, proto.ByteSizeLong());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail("failed to save model to '{}': the file cannot be written", path);
  if (!proto.SerializeToOstream(&out) || !(out.flush()))
    fail("failed to save model to '{}': writing the file failed (disk full?)", path);
}

void save_model(const ir::Model& model, const std::string& path, const SaveOptions& options) {
  if (!model.proto)
    fail(
        "failed to save model '{}' to '{}': it has no protobuf; only models loaded from ONNX "
        "can be saved",
        model.graph.name, path);
  ::onnx::ModelProto copy = *model.proto;
  type_untyped_outputs(copy);
  save_model_proto(copy, model.external_data_dir, model.path, path, options);
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
