// `debug reduce`: cuts a failing model down to the smallest subgraph that still fails, as
// Polygraphy's does. Two phases: find the earliest node outputs that still fail (cutting the
// graph's outputs), then the latest node inputs (cutting its inputs), each by bisection or one
// node at a time. Every candidate is judged either by the user's --check command run on the
// candidate saved as `polygraphy_debug.onnx`, or in this process (native mode: two backends
// compared on the candidate, fed the values its inputs had in the full model).
//
//   FullModelValues values(model, registry.configure("pluginref", {}), feed, false);
//   BackendPairJudge judge(onnxrt, pluginref, tolerances, values);
//   ReduceResult r = reduce_model(model, options, values, nullptr, {}, judge);
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backend/registry.h"
#include "comparator/data_loader.h"
#include "comparator/tensor_error.h"
#include "debug/candidate.h"
#include "debug/iterate.h"

namespace parity::debug {

enum class ReduceMode { kBisect, kLinear };
// "bisect" or "linear" (UsageError naming the choices otherwise).
ReduceMode reduce_mode_from_name(const std::string& name);

struct ReduceOptions {
  ReduceMode mode = ReduceMode::kBisect;
  bool reduce_inputs = true, reduce_outputs = true;
  std::string output;    // where the minimal failing model goes ("" = not saved)
  std::string min_good;  // where a passing model close in size goes ("" = not saved)
  // iter_artifact: where each candidate is saved for the check ("" = not saved).
  IterateOptions iterate;
  // A node (index into the full graph) to try first: its outputs as the graph outputs, then
  // its inputs as the graph inputs. Native mode starts from the first divergence this way.
  std::optional<size_t> start_node;
};

// Judges a candidate in memory: true when it passes.
using ModelJudge = std::function<bool(const ModelPtr& candidate)>;

struct ReduceResult {
  ModelPtr bad;            // the minimal failing model
  ModelPtr good;           // with min_good: the passing model found closest in size (may be null)
  int64_t candidates = 0;  // candidates judged (iterations that ran a check or comparison)
  std::vector<std::string> bad_nodes;  // node names of `bad`
};

// Runs both phases. Exactly one of `check` (judges the saved iteration artifact) and
// `in_memory` is set.
ReduceResult reduce_model(const ModelPtr& model, const ReduceOptions& options, TensorSource& values,
                          const ArtifactSorter* sorter, Judge check, ModelJudge in_memory);

// The values of the full model's tensors for one feed: taken from the feed when it holds them
// (graph inputs, or every tensor of a layer-wise input file made by `data to-input`), else
// computed by the reference backend with exactly the missing tensors marked (cached).
class FullModelValues : public TensorSource {
 public:
  FullModelValues(ModelPtr model, ConfiguredBackend reference, TensorMap feed, bool random_data);
  TensorMap values(const std::vector<std::string>& names) override;
  bool random_data() const override { return random_data_; }
  size_t reference_runs() const { return runs_; }

 private:
  ModelPtr model_;
  ConfiguredBackend reference_;
  TensorMap known_;
  bool random_data_;
  size_t runs_ = 0;
};

// Native mode's judge: runs the candidate on both backends with its inputs' values from the
// full model and compares every output; a backend that fails to run it counts as a failure.
class BackendPairJudge {
 public:
  BackendPairJudge(ConfiguredBackend first, ConfiguredBackend second,
                   TensorCompareOptions tolerances, TensorSource& values);
  bool operator()(const ModelPtr& candidate) const;

 private:
  ConfiguredBackend first_, second_;
  TensorCompareOptions tolerances_;
  TensorSource* values_;
};

// Native mode: compares `first` and `second` layer-wise on the full model for the first feed
// (one of them must stream, like the reference backend), then reduces starting from the first
// divergence, every candidate judged in this process by BackendPairJudge. Error when the full
// model passes. `feed` may hold more tensors than the graph inputs (layer-wise input files).
ReduceResult reduce_by_comparison(const ModelPtr& model, const ConfiguredBackend& first,
                                  const ConfiguredBackend& second,
                                  const TensorCompareOptions& tolerances, const TensorMap& feed,
                                  bool random_data, ReduceOptions options);

// The first feed of `feeds` for the model's graph inputs.
TensorMap first_feed(const ir::Model& model, FeedSource& feeds);

// The model as `debug reduce` works on it (Polygraphy's defaults): the input shapes of
// --model-input-shapes set, then ONNX shape inference run, so candidates' inputs and outputs get
// the types of the full model.
ModelPtr prepare_model(const ir::Model& model, const TensorMetadata& input_shapes);

}  // namespace parity::debug
