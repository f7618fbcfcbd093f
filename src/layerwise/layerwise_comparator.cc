#include "layerwise/layerwise_comparator.h"

#include <fmt/format.h>

#include "comparator/feed_coercion.h"
#include "core/logger.h"
#include "core/py_format.h"
#include "onnx/model_io.h"
#include "onnx/single_node_model.h"

namespace parity {

size_t LayerwiseRun::passed_count() const {
  size_t passed = 0;
  for (const auto& r : iterations) passed += r.passed() ? 1 : 0;
  return passed;
}

std::vector<std::string> marked_tensor_names(const ir::Model& model,
                                             const LayerwiseRunOptions& options) {
  ModelPtr marked =
      onnx_io::modify_outputs(model, options.mark_all ? std::vector<std::string>{} : options.marked,
                              options.mark_all, options.exclude);
  std::vector<std::string> names;
  for (const auto& out : marked->graph.outputs) names.push_back(out.name);
  return names;
}

namespace {

// The other backend's batches. Each batch makes a new runner of that backend; its start-up
// lines ("Creating session...") are shown for the first batch only, and for all with -v.
BatchFetcher backend_batches(const ConfiguredBackend& backend, const ModelPtr& model,
                             const TensorMap& feed, const std::string& runner_name) {
  auto batches = std::make_shared<int>(0);
  return [&backend, model, &feed, runner_name, batches](const std::vector<std::string>& names) {
    const Severity shown = logger().severity();
    struct Restore {
      Severity severity;
      ~Restore() { logger().set_severity(severity); }
    } restore{shown};
    if ((*batches)++ > 0 && shown == Severity::kInfo) logger().set_severity(Severity::kWarning);
    return backend.fetch_tensors(model, feed, names, runner_name);
  };
}

BatchFetcher saved_batches(const TensorMap& saved) {
  return [&saved](const std::vector<std::string>& names) {
    TensorMap batch;
    for (const auto& name : names)
      if (const Tensor* t = saved.find(name)) batch.set(name, *t);
    return batch;
  };
}

}  // namespace

NodeRunner single_node_runner(const ConfiguredBackend& reference, const ModelPtr& model) {
  // Asked only what it supports: never activated.
  std::shared_ptr<Runner> probe = reference.make_runner(Loader<ModelPtr>(model), "probe");
  return [reference, model, probe](const ir::Node& node, const TensorMap& inputs) {
    if (probe->supports(node, model->opset(node.domain)) == false)
      fail("not supported: {} has no kernel for {}::{} at opset {}", reference.backend->name,
           node.domain.empty() ? "ai.onnx" : node.domain, node.op_type, model->opset(node.domain));
    std::unique_ptr<Runner> runner = reference.make_runner(
        Loader<ModelPtr>(onnx_io::single_node_model(*model, node)), "local-error");
    RunnerActivation active(*runner);
    const TensorMap outputs = runner->infer(inputs, /*check_inputs=*/false);
    std::vector<Tensor> result;
    for (const auto& out : node.outputs) {
      const Tensor* t = out.empty() ? nullptr : outputs.find(out);
      result.push_back(t ? *t : Tensor());
    }
    return result;
  };
}

LayerwiseRun LayerwiseComparator::run(const ModelPtr& model, const ConfiguredBackend& reference,
                                      const LayerwiseSource& other, FeedSource& feeds,
                                      const LayerwiseRunOptions& options) {
  if (!reference.backend || !reference.backend->run_observed)
    fail_usage(
        "failed to compare layer-wise with reference backend '{}': it cannot stream "
        "its tensors; the reference side must be a backend that can (pluginref)",
        reference.backend ? reference.backend->name : "");
  if (!other.saved && !other.backend.backend)
    fail_usage(
        "failed to compare layer-wise: no other side was given; give a backend or saved "
        "results");
  const std::vector<std::string> marked = marked_tensor_names(*model, options);

  LayerwiseRun out;
  LayerwiseOptions lw = options.comparison;
  lw.other_is_first = other.is_first;
  std::unique_ptr<Runner> streaming = reference.make_runner(Loader<ModelPtr>(model));
  lw.reference_name = streaming->name();
  // Made once for its name, and so that a backend that loads a library does it before the
  // reference runs.
  lw.other_name =
      other.saved ? other.saved->first : other.backend.make_runner(Loader<ModelPtr>(model))->name();
  out.runner0 = lw.other_is_first ? lw.other_name : lw.reference_name;
  out.runner1 = lw.other_is_first ? lw.reference_name : lw.other_name;

  logger().start("Layer-wise Comparison | {} vs. {} | {} marked tensor(s), budget {}", out.runner0,
                 out.runner1, marked.size(), format_bytes(lw.budget_bytes));
  RunnerActivation active(*streaming);
  feeds.set_input_metadata(streaming->input_metadata());
  for (size_t i = 0;; ++i) {
    std::optional<TensorMap> feed = feeds.get(i);
    if (!feed) break;
    if (!options.strict_inputs) feed = coerce_feed(*feed, streaming->input_metadata());
    if (other.saved && i >= other.saved->second.size()) break;
    if (options.used_feeds) options.used_feeds->push_back(*feed);
    if (feeds.size().value_or(1) > 1) logger().info("Iteration: {}", i);
    Logger::Indent indent;
    BatchFetcher fetch = other.saved ? saved_batches(other.saved->second[i].outputs)
                                     : backend_batches(other.backend, model, *feed, lw.other_name);
    LayerwiseComparison comparison(model->graph, marked, lw, fetch,
                                   lw.local_error ? single_node_runner(reference, model) : nullptr);
    comparison.set_feed(*feed);
    reference.backend->run_observed(*streaming, *feed,
                                    [&](const ir::Node& node, const std::vector<Value>& outputs) {
                                      comparison.on_node(node, outputs);
                                    });
    out.iterations.push_back(comparison.finish());
    log_layerwise_summary(out.iterations.back(), lw);
  }

  const size_t passed = out.passed_count();
  if (out.iterations.empty())
    logger().error("Layer-wise comparison compared nothing: the data loader gave no feed{}",
                   other.saved ? " that the saved results hold" : "");
  const std::string summary = fmt::format(
      "Accuracy Summary | {} vs. {} | Passed: {}/{} iterations | Pass Rate: {}%", out.runner0,
      out.runner1, passed, out.iterations.size(),
      format_repr(out.iterations.empty() ? 100.0
                                         : 100.0 * static_cast<double>(passed) /
                                               static_cast<double>(out.iterations.size())));
  if (out.passed())
    logger().finish("{}", summary);
  else
    logger().error("{}", summary);
  out.options = lw;
  return out;
}

}  // namespace parity
