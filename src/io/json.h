// Polygraphy's JSON files: run results (--save-outputs / --load-outputs) and input lists
// (--save-inputs / --load-inputs). Arrays are base64 of whole .npy files under "array" with
// "polygraphy_class" markers; the legacy marker and .npz payloads are read too.
#pragma once

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comparator/struct.h"
#include "core/tensor.h"

namespace parity::io {

std::string run_results_to_json(const RunResults& results);
RunResults run_results_from_json(const std::string& text);
void save_run_results(const std::string& path, const RunResults& results);
RunResults load_run_results(const std::string& path);

// Writes Polygraphy's RunResults file as tensors arrive, holding none of them: what
// --save-outputs does in layer-wise runs, where every tensor of a model is saved. Each runner's
// iterations go to an anonymous temporary file; finish() joins them into `path` (atomically, as
// write_file does), byte for byte what save_run_results writes for the same results.
//
//   RunResultsStream out("golden.json", 1);   // one runner
//   out.begin_iteration(0);
//   out.add(0, "conv1_out", tensor);   // written now; the tensor can be released
//   out.end_iteration(0, std::nullopt, "pluginref-runner-N0-...");
//   out.set_runner_name(0, "pluginref-runner-N0-...");  // any time before finish()
//   out.finish();
class RunResultsStream {
 public:
  RunResultsStream(std::string path, size_t runners);
  // With the runners' names known up front (a dataset run).
  RunResultsStream(std::string path, const std::vector<std::string>& runner_names);
  ~RunResultsStream();
  RunResultsStream(const RunResultsStream&) = delete;
  RunResultsStream& operator=(const RunResultsStream&) = delete;

  void begin_iteration(size_t runner);
  void add(size_t runner, const std::string& name, const Tensor& tensor);
  void end_iteration(size_t runner, std::optional<double> runtime, const std::string& runner_name);
  // A whole iteration at once (its dataset index and error too, as save_run_results writes
  // them).
  void add(size_t runner, const IterationResult& iteration);
  void set_runner_name(size_t runner, std::string name);
  // Writes `path`. Without it (an error on the way), `path` is left as it was.
  void finish();

 private:
  struct Section;
  std::string path_;
  std::vector<std::unique_ptr<Section>> sections_;
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
