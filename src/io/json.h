// Polygraphy's JSON files: run results (--save-outputs / --load-outputs) and input lists
// (--save-inputs / --load-inputs). Arrays are base64 of whole .npy files under "array" with
// "polygraphy_class" markers; the legacy marker and .npz payloads are read too.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "comparator/struct.h"
#include "core/tensor.h"

namespace parity::io {

std::string run_results_to_json(const RunResults& results);
RunResults run_results_from_json(const std::string& text);
void save_run_results(const std::string& path, const RunResults& results);
RunResults load_run_results(const std::string& path);

// Saves RunResults as the iterations come, holding none of them in memory: each runner's
// iterations are written to a temporary file beside `path`, and finish() joins them into the
// file run_results_to_json would have written. Without finish() nothing is left behind.
class RunResultsStreamWriter {
 public:
  RunResultsStreamWriter(std::string path, std::vector<std::string> runners);
  ~RunResultsStreamWriter();
  RunResultsStreamWriter(const RunResultsStreamWriter&) = delete;
  RunResultsStreamWriter& operator=(const RunResultsStreamWriter&) = delete;
  void add(size_t runner, const IterationResult& iteration);
  void finish();

 private:
  struct Part {
    std::string path;
    FILE* file = nullptr;
    size_t count = 0;
  };
  std::string path_;
  std::vector<std::string> runners_;
  std::vector<Part> parts_;
};

// Joins the results of shards of one dataset run (--shard, --save-outputs): the same runners in
// each, iterations ordered by their dataset index. Error when the runners differ, an iteration
// has no index, or two shards hold the same iteration.
RunResults merge_dataset_results(const std::vector<std::string>& paths);

std::string inputs_to_json(const std::vector<TensorMap>& feeds);
std::vector<TensorMap> inputs_from_json(const std::string& text);
void save_inputs(const std::string& path, const std::vector<TensorMap>& feeds);
std::vector<TensorMap> load_inputs(const std::string& path);

// Reads a file whole; Error naming the path when it cannot be read.
std::string read_file(const std::string& path);
// Writes atomically (temporary file, then rename), so a failure never leaves a half file.
void write_file(const std::string& path, const std::string& bytes);

}  // namespace parity::io
