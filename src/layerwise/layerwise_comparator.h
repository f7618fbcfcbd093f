// The one entry point of layer-wise comparison, used alike by `parity run --onnx-outputs mark
// all` and the Python module:
//
//   LayerwiseRunOptions options;               // tolerances, memory budget, local error
//   LayerwiseSource other{registry.configure("onnxrt", {}), nullptr};
//   LayerwiseRun run = LayerwiseComparator::run(model, registry.configure("pluginref", {}),
//                                               other, feeds, options);
//   run.passed();                              // every iteration passed
//   run.iterations[0].first_divergence;        // the first node whose own error fails
//
// The reference side is a backend that can stream (Backend::run_observed: every node's values
// are compared as they are produced, then released); the other side is any backend, whose
// tensors are fetched in batches within the budget (Backend::fetch_tensors), or the saved
// results of one runner. Each iteration's summary is logged as it ends, then the accuracy
// summary in Polygraphy's words.
#pragma once

#include <string>
#include <vector>

#include "backend/registry.h"
#include "comparator/data_loader.h"
#include "comparator/struct.h"
#include "layerwise/layerwise.h"

namespace parity {

struct LayerwiseRunOptions {
  LayerwiseOptions comparison;  // names of the two sides are filled in by run()
  // The tensors to compare; empty with mark_all false means the model's outputs only.
  std::vector<std::string> marked;
  bool mark_all = true;
  std::vector<std::string> exclude;
  // Feed the reference exactly what the data loader gives (see RunOptions::strict_inputs).
  bool strict_inputs = false;
  // When set, receives every feed used (for --save-inputs).
  std::vector<TensorMap>* used_feeds = nullptr;
  // When set, receives every compared tensor of both sides as it is compared (--save-outputs).
  LayerwiseSink* sink = nullptr;
};

// The other side of the comparison: a backend that computes the tensors, or the saved results
// of one runner (one IterationResult per feed; the run stops at the shorter of the two).
struct LayerwiseSource {
  ConfiguredBackend backend;
  const RunResults::Entry* saved = nullptr;
  // True when this side is the first runner: its tensors are out0, the reference's out1.
  bool is_first = false;
};

struct LayerwiseRun {
  std::vector<LayerwiseResult> iterations;
  std::string runner0, runner1;  // out0's and out1's runner names, in Polygraphy's order
  LayerwiseOptions options;      // as used, names filled in
  size_t passed_count() const;
  // False when no iteration was compared: nothing passes without a comparison.
  bool passed() const { return !iterations.empty() && passed_count() == iterations.size(); }
};

class LayerwiseComparator {
 public:
  static LayerwiseRun run(const ModelPtr& model, const ConfiguredBackend& reference,
                          const LayerwiseSource& other, FeedSource& feeds,
                          const LayerwiseRunOptions& options);
  // One streaming backend alone, nothing compared: hands every marked tensor to options.sink
  // as it is produced (sink->tensor(true, ...)), holding none. What `parity run --pluginref
  // --onnx-outputs mark all --save-outputs golden.json` saves a golden file with. Returns the
  // runner's name and the number of iterations run.
  static std::pair<std::string, size_t> stream(const ModelPtr& model,
                                               const ConfiguredBackend& reference,
                                               FeedSource& feeds,
                                               const LayerwiseRunOptions& options);
  // The same for a backend that cannot stream (onnxrt): its marked tensors come in batches of
  // consecutive nodes, each batch computing only its slice of the model, sized so that one
  // batch's tensors stay within options.comparison.budget_bytes (the first batch is one node;
  // later ones follow the bytes per node seen so far). Each batch goes to the sink and is freed.
  static std::pair<std::string, size_t> stream_in_batches(const ModelPtr& model,
                                                          const ConfiguredBackend& backend,
                                                          FeedSource& feeds,
                                                          const LayerwiseRunOptions& options);
};

// Runs one node of `model` alone on `reference` (a one-node model with the node's constants
// and types), for local errors. A node the backend says it cannot run is reported as not
// supported, apart from a node that failed.
NodeRunner single_node_runner(const ConfiguredBackend& reference, const ModelPtr& model);

// The names the options mark in `model` (every tensor for mark_all, less `exclude`), in the
// order modify_outputs gives them.
std::vector<std::string> marked_tensor_names(const ir::Model& model,
                                             const LayerwiseRunOptions& options);

}  // namespace parity
