// The model a surgeon tool works on: the parsed protobuf and where its external data lives.
// Loading parses the file straight into the message (no second copy of embedded weights) and
// leaves external data in its files, to be mapped when a tensor is read.
#pragma once

#include <memory>
#include <string>

#include <onnx/onnx_pb.h>

#include "core/tensor.h"
#include "onnx/external_data.h"
#include "onnx/save_model.h"

namespace parity::surgeon {

struct ModelFile {
  std::shared_ptr<::onnx::ModelProto> proto;
  std::string path;               // the file it came from ("" when made in memory)
  std::string external_data_dir;  // what external data locations are relative to
};

// Reads `path`; `external_data_dir` empty means the model's own folder. Errors (missing or
// corrupt file, a header ONNX refuses) are parity::Error with the path.
ModelFile load_model_file(const std::string& path, const std::string& external_data_dir = "");

// Writes `model` with Parity's one writer (onnx/save_model.h); afterwards `model` describes the
// saved file (its path, and its external data beside it).
void save_model_file(ModelFile& model, const std::string& path,
                     const onnx_io::SaveOptions& options = {});

// Polygraphy's str_from_onnx without layers: "Name: g | ONNX Opset: 17", the graph inputs and
// outputs with their metadata, the counts of initializers and nodes.
std::string model_summary(const ::onnx::ModelProto& model);

// The value of a tensor proto (raw or typed fields; external data mapped through `store`).
Tensor tensor_value(const ::onnx::TensorProto& proto, onnx_io::ExternalDataStore& store);
// A tensor proto holding `value` in raw_data (string tensors in string_data).
::onnx::TensorProto tensor_proto(const std::string& name, const Tensor& value);

}  // namespace parity::surgeon
