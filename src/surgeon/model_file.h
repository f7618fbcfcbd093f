// Reading and writing the protobuf of a model for the model tools (convert, check lint, prune,
// weight-strip, weight-reconstruct, inspect sparsity). The tools edit the ModelProto in place,
// so a model is parsed as it is in the file (no IR, no checks that would refuse what a tool is
// meant to report), and written through save_model_proto alone.
#pragma once

#include <memory>
#include <string>

#include <onnx/onnx_pb.h>

namespace parity::surgeon {

// The model in `bytes`, or nullptr when they are no ModelProto.
std::shared_ptr<::onnx::ModelProto> parse_model_proto(const std::string& bytes);
// The model at `path` ("Loading model: <absolute path>" as Polygraphy logs it); Error when the
// file cannot be read or is no ONNX model.
std::shared_ptr<::onnx::ModelProto> load_model_proto(const std::string& path);

// Writes the model to `path` ("Saving ONNX model to: <path>"). External data that the model
// still references is read from `external_data_dir` and kept valid beside `path`.
void save_model_proto(const std::shared_ptr<::onnx::ModelProto>& model, const std::string& path,
                      const std::string& external_data_dir = ".");

// The folder external data of the model at `path` is relative to: `given` when not empty,
// else the model's folder.
std::string external_data_dir_of(const std::string& path, const std::string& given);

}  // namespace parity::surgeon
