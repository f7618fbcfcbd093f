// Loading ONNX models into the IR (saving them: onnx/save_model.h).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "onnx/graph.h"

namespace parity::onnx_io {

struct LoadOptions {
  // Where external data files are looked up; empty = the model's own folder.
  std::string external_data_dir;
  // Loads the structure only: initializers with external data become zero-filled tensors.
  bool ignore_external_data = false;
};

// Reads and parses a model file. Errors (missing file, corrupt protobuf, unsafe or short
// external data, cycles, dangling inputs) are parity::Error with the path in the message.
std::shared_ptr<ir::Model> load_model(const std::string& path, const LoadOptions& options = {});
// Parses a serialized model held in memory (not copied: the Python module passes a view of a
// bytes object); external data is resolved against `base_dir`.
std::shared_ptr<ir::Model> load_model_from_bytes(std::string_view bytes,
                                                 const LoadOptions& options = {},
                                                 const std::string& base_dir = ".");
// Builds the IR from an already parsed protobuf (kept by the returned model).
std::shared_ptr<ir::Model> model_from_proto(std::shared_ptr<onnx::ModelProto> proto,
                                            const LoadOptions& options,
                                            const std::string& base_dir);

// Converts one TensorProto (raw or typed fields, external data) to a Tensor.
Tensor tensor_from_proto_bytes(const std::string& serialized_tensor_proto);

// Makes the listed tensors graph outputs of a copy of `model` (Polygraphy's ModifyOutputs).
// `mark_all` marks the outputs of every node except Constant nodes, in topological order,
// replacing the graph's outputs; `exclude` then removes names. Unknown names are an error.
std::shared_ptr<ir::Model> modify_outputs(const ir::Model& model,
                                          const std::vector<std::string>& outputs, bool mark_all,
                                          const std::vector<std::string>& exclude);

// Runs ONNX's shape inference (libonnx) on the protobuf in place: value_info gains every type it
// can tell. With `error_ok`, a failure is logged as a warning and the model is left as it was.
void infer_shapes(onnx::ModelProto& model, bool error_ok = true);

// Serializes the model (its protobuf, reflecting modify_outputs). Throws Error when the
// protobuf would pass protobuf's 2 GB limit: such a model must be saved with external data.
std::string serialize_model(const ir::Model& model);

// A deep copy (graph structure, subgraphs with their parents, protobuf); tensors share their
// buffers, which are never written after loading.
std::shared_ptr<ir::Model> copy_model(const ir::Model& model);

}  // namespace parity::onnx_io
