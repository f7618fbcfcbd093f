// Writing a model (Polygraphy's SaveOnnx and its --save-external-data flags). Tensors are
// written out one at a time, straight from the protobuf or from the mapped external data
// files, so saving never holds a second copy of the weights.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "surgeon/model_file.h"

namespace parity::surgeon {

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

// Writes `model` to `path`. The protobuf is changed on the way (tensors moved to external data
// point at their new file), so `model` describes the saved file afterwards. Errors: an output
// path that cannot be written, the input model or its data as the target, an external data
// path that is not a plain relative file name.
void save_model_file(ModelFile& model, const std::string& path, const SaveOptions& options = {});

}  // namespace parity::surgeon
