// Polygraphy's JSON files: run results (--save-outputs / --load-outputs) and input lists
// (--save-inputs / --load-inputs). Arrays are base64 of whole .npy files under "array" with
// "polygraphy_class" markers; the legacy marker and .npz payloads are read too.
#pragma once

#include <string>
#include <vector>

#include "comparator/struct.h"
#include "core/tensor.h"

namespace parity::io {

std::string run_results_to_json(const RunResults& results);
RunResults run_results_from_json(const std::string& text);
void save_run_results(const std::string& path, const RunResults& results);
RunResults load_run_results(const std::string& path);

std::string inputs_to_json(const std::vector<TensorMap>& feeds);
std::vector<TensorMap> inputs_from_json(const std::string& text);
void save_inputs(const std::string& path, const std::vector<TensorMap>& feeds);
std::vector<TensorMap> load_inputs(const std::string& path);

// Reads a file whole; Error naming the path when it cannot be read.
std::string read_file(const std::string& path);
// Writes atomically (temporary file, then rename), so a failure never leaves a half file.
void write_file(const std::string& path, const std::string& bytes);

}  // namespace parity::io
