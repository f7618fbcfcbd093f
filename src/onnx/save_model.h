// Parity's one model writer (Polygraphy's SaveOnnx and its --save-external-data flags), for the
// model tools (surgeon/model_file.h) and for run's models (--save-onnx, debug reduce, Python's
// SaveOnnx). Tensors are written out one at a time, straight from the protobuf or from the
// mapped external data files, so saving never holds a second copy of the weights.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "onnx/graph.h"

namespace parity::onnx_io {

struct SaveOptions {
  // Save tensors as external data: nullopt = no (unless the model would pass protobuf's 2 GB
  // limit), "" = the default file "<model file name>.data", else a file name relative to the
  // model's folder.
  std::optional<std::string> external_data_path;
  size_t size_threshold = 1024;  // tensors smaller than this stay in the model file
  bool all_tensors_to_one_file = true;
  // The input model's path: saving over it (or over a data file it reads) is refused.
  std::string input_path;
};

// Writes `proto` to `path`. `source_dir` is the folder its external data locations are
// relative to ("" = the working directory) and `source_path` the file it was read from ("" when
// made in memory); neither is ever written over. External data stays valid: saved beside its
// data with no new layout asked for, the references are kept; otherwise the external tensors are
// copied (ONNX Runtime refuses locations outside the model's folder). The protobuf is changed on
// the way (tensors moved to external data point at their new file), so it describes the saved
// file afterwards. Errors: an output path that cannot be written, the input model or its data as
// the target, an external data path that is not a plain relative file name.
void save_model_proto(::onnx::ModelProto& proto, const std::string& source_dir,
                      const std::string& source_path, const std::string& path,
                      const SaveOptions& options = {});

// Writes a loaded model (its protobuf, reflecting modify_outputs) to `path`, as above; the
// model itself is left as it was (its protobuf is copied first, since its tensors may point
// into it).
void save_model(const ir::Model& model, const std::string& path, const SaveOptions& options = {});

}  // namespace parity::onnx_io
