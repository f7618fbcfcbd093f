// The surgeon layer for Polygraphy's ONNX loaders (FoldConstants, InferShapes, ExtractSubgraph,
// SetUpperBound, SaveOnnx, ConvertToFp16 in parity/backend/onnx.py). Models cross the binding
// serialized, as Polygraphy's loaders work on onnx.ModelProto: each call parses, edits, and
// serializes back.
#include <climits>

#include "py_util.h"
#include "surgeon/extract.h"
#include "surgeon/fold.h"
#include "surgeon/fp16.h"
#include "surgeon/model_file.h"
#include "surgeon/shape_inference.h"
#include "surgeon/upper_bound.h"

namespace parity::python {

namespace {

surgeon::ModelFile parse(const std::string& bytes, const std::string& external_data_dir) {
  surgeon::ModelFile model;
  model.proto = std::make_shared<::onnx::ModelProto>();
  if (!model.proto->ParseFromString(bytes))
    fail("failed to parse {} bytes as an ONNX model: they are not a valid ModelProto",
         bytes.size());
  model.external_data_dir = external_data_dir.empty() ? "." : external_data_dir;
  return model;
}

py::bytes serialize(const surgeon::ModelFile& model) {
  if (model.proto->ByteSizeLong() > static_cast<size_t>(INT_MAX))
    fail(
        "failed to return the model to Python: its {} bytes pass protobuf's 2 GB limit; save "
        "it with external data instead",
        model.proto->ByteSizeLong());
  std::string out;
  model.proto->SerializeToString(&out);
  return py::bytes(out);
}

std::vector<surgeon::TensorSpec> specs(const TensorMetadata& meta) {
  std::vector<surgeon::TensorSpec> out;
  for (const auto& m : meta) out.push_back({m.name, m.dtype, m.shape});
  return out;
}

}  // namespace

void bind_surgeon(py::module_& m) {
  m.def(
      "convert_to_fp16",
      [](const py::bytes& model, const std::string& external_data_dir) {
        surgeon::ModelFile file = parse(model, external_data_dir);
        {
          py::gil_scoped_release nogil;
          surgeon::Fp16Options options;
          options.external_data_dir = file.external_data_dir;
          surgeon::convert_to_fp16(*file.proto, options);
        }
        return serialize(file);
      },
      py::arg("model"), py::arg("external_data_dir"));
  m.def(
      "fold_constants",
      [](const py::bytes& model, const std::string& external_data_dir, int num_passes,
         bool fold_shapes, long long size_threshold, const std::string& partitioning,
         bool shape_inference, bool error_ok) {
        surgeon::ModelFile file = parse(model, external_data_dir);
        surgeon::FoldOptions o;
        if (num_passes > 0) o.num_passes = num_passes;
        o.fold_shapes = fold_shapes;
        if (size_threshold >= 0) o.size_threshold = static_cast<size_t>(size_threshold);
        if (partitioning == "basic")
          o.partitioning = surgeon::Partitioning::kBasic;
        else if (partitioning == "recursive")
          o.partitioning = surgeon::Partitioning::kRecursive;
        else if (!partitioning.empty())
          fail_usage(
              "failed to fold constants with partitioning '{}': valid choices are None, "
              "'basic', 'recursive'",
              partitioning);
        o.shape_inference = shape_inference;
        o.error_ok = error_ok;
        {
          py::gil_scoped_release nogil;
          surgeon::fold_constants(file, o);
        }
        return serialize(file);
      },
      py::arg("model"), py::arg("external_data_dir"), py::arg("num_passes"), py::arg("fold_shapes"),
      py::arg("size_threshold"), py::arg("partitioning"), py::arg("shape_inference"),
      py::arg("error_ok"));
  m.def(
      "infer_shapes",
      [](const py::bytes& model, bool error_ok) {
        surgeon::ModelFile file = parse(model, "");
        {
          py::gil_scoped_release nogil;
          surgeon::infer_shapes(*file.proto, error_ok);
        }
        return serialize(file);
      },
      py::arg("model"), py::arg("error_ok"));
  m.def(
      "extract_subgraph",
      [](const py::bytes& model, const TensorMetadata& inputs, const TensorMetadata& outputs) {
        surgeon::ModelFile file = parse(model, "");
        surgeon::extract_subgraph(*file.proto, {specs(inputs), specs(outputs)});
        return serialize(file);
      },
      py::arg("model"), py::arg("inputs"), py::arg("outputs"));
  m.def(
      "set_upper_bound",
      [](const py::bytes& model, const std::map<std::string, int64_t>& bounds) {
        surgeon::ModelFile file = parse(model, "");
        const auto applied = surgeon::set_upper_bounds(*file.proto->mutable_graph(), bounds);
        return py::make_tuple(serialize(file), applied);
      },
      py::arg("model"), py::arg("bounds"));
  m.def(
      "save_onnx_proto",
      [](const py::bytes& model, const std::string& external_data_dir, const std::string& path,
         py::object external_data_path, long long size_threshold, bool all_tensors_to_one_file) {
        surgeon::ModelFile file = parse(model, external_data_dir);
        onnx_io::SaveOptions o;
        if (!external_data_path.is_none()) o.external_data_path = py::str(external_data_path);
        if (size_threshold >= 0) o.size_threshold = static_cast<size_t>(size_threshold);
        o.all_tensors_to_one_file = all_tensors_to_one_file;
        py::gil_scoped_release nogil;
        surgeon::save_model_file(file, path, o);
      },
      py::arg("model"), py::arg("external_data_dir"), py::arg("path"),
      py::arg("external_data_path"), py::arg("size_threshold"), py::arg("all_tensors_to_one_file"));
}

}  // namespace parity::python
