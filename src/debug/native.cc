// Native `debug reduce`: no process per candidate. One layer-wise comparison of the full model
// names the first divergence (the first node whose own error, measured with the other
// backend's inputs, is outside the tolerances); the reduction tries that node alone first and
// bisects only when the node alone does not reproduce the failure.
#include <algorithm>

#include "core/error.h"
#include "core/logger.h"
#include "debug/reduce.h"
#include "layerwise/layerwise_comparator.h"

namespace parity::debug {

TensorMap first_feed(const ir::Model& model, FeedSource& feeds) {
  TensorMetadata metadata;
  for (const auto& in : model.graph.inputs) {
    if (model.graph.initializers.count(in.name)) continue;
    std::optional<DataType> dtype;
    std::optional<DimList> shape;
    if (in.type.kind == ir::ValueType::Kind::kTensor) {
      dtype = in.type.elem_type;
      shape = in.type.shape;
    }
    metadata.add(in.name, dtype, shape);
  }
  feeds.set_input_metadata(metadata);
  std::optional<TensorMap> feed = feeds.get(0);
  if (!feed) fail("failed to get inputs for the model: the data loader gave no feed");
  return *feed;
}

ReduceResult reduce_by_comparison(const ModelPtr& model, const ConfiguredBackend& first,
                                  const ConfiguredBackend& second,
                                  const TensorCompareOptions& tolerances, const TensorMap& feed,
                                  bool random_data, ReduceOptions options) {
  const bool first_streams = static_cast<bool>(first.backend->run_observed);
  if (!first_streams && !second.backend->run_observed)
    fail_usage(
        "failed to reduce by comparing {} and {}: one of the two backends must stream "
        "its tensors for the layer-wise comparison; valid choices include --pluginref",
        first.backend->name, second.backend->name);
  const ConfiguredBackend& reference = first_streams ? first : second;
  const ConfiguredBackend& other = first_streams ? second : first;

  // The graph inputs only: a layer-wise input file holds every tensor, used below.
  TensorMap inputs;
  for (const auto& in : model->graph.inputs)
    if (const Tensor* t = feed.find(in.name)) inputs.set(in.name, *t);
  FeedList one({inputs});
  LayerwiseRunOptions lw;
  lw.comparison.compare = tolerances;
  lw.comparison.local_error = true;
  lw.mark_all = true;
  LayerwiseSource source{other, nullptr, /*is_first=*/!first_streams};
  logger().start("Comparing {} and {} on every tensor of the full model", first.backend->name,
                 second.backend->name);
  const LayerwiseRun run = [&] {
    Logger::Indent indent;
    return LayerwiseComparator::run(model, reference, source, one, lw);
  }();
  if (run.iterations.empty()) fail("failed to compare the full model: no iteration ran");
  const LayerwiseResult& r = run.iterations.front();
  if (r.passed())
    fail(
        "failed to reduce '{}': {} and {} agree on every compared tensor of the full model "
        "within the tolerances, so there is no failure to reduce; tighter tolerances (--atol, "
        "--rtol) or a --check command that fails give one",
        model->path, first.backend->name, second.backend->name);
  if (r.first_divergence) {
    const NodeResult& node = r.nodes[*r.first_divergence];
    options.start_node = node.index;
    logger().info("Starting from the first divergence: node '{}' ({})", node.name, node.op_type);
  } else {
    logger().warning(
        "The comparison names no first divergence (no node adds error of its own); reducing "
        "by bisection alone");
  }
  FullModelValues values(model, reference, feed, random_data);
  const BackendPairJudge judge(first, second, tolerances, values);
  options.iterate.iter_artifact.clear();  // candidates stay in memory
  return reduce_model(model, options, values, nullptr, {},
                      [&](const ModelPtr& candidate) { return judge(candidate); });
}

}  // namespace parity::debug
