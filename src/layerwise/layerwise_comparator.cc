#include "layerwise/layerwise_comparator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "comparator/feed_coercion.h"
#include "core/logger.h"
#include "core/progress.h"
#include "core/py_format.h"
#include "onnx/model_io.h"
#include "onnx/single_node_model.h"
#include "onnx/slice_model.h"

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

// The other backend's batches, each computing only its own nodes (cost linear in depth): a batch
// runs the slice of the model from the node after the previous batch's last to its own last
// node, fed with the graph inputs and with this backend's own values of earlier tensors that
// later nodes read (the frontier, held between batches; one tensor for a chain). With every
// tensor marked, the cuts between slices are tensors the marked model outputs anyway, so the
// backend computes what it computes for the marked model. A batch that is the whole model (the
// budget holds everything) keeps its runner for the next iterations: one session per run.
class SlicedBatches {
 public:
  SlicedBatches(const ConfiguredBackend& backend, const ModelPtr& model, std::string runner_name)
      : backend_(backend.for_batches()),
        model_(model),
        slicer_(model),
        runner_name_(std::move(runner_name)) {
    const auto& nodes = model->graph.nodes;
    for (size_t i = 0; i < nodes.size(); ++i) {
      for (const auto& in : nodes[i].inputs)
        if (!in.empty()) last_use_[in] = i;
      for (const auto& out : nodes[i].outputs) {
        if (out.empty()) continue;
        producer_[out] = i;
        if (nodes[i].op_type == "Constant" && nodes[i].domain.empty()) constants_.insert(out);
      }
    }
  }
  const std::string& why_not() const { return slicer_.why_not(); }

  void start(const TensorMap& feed) {
    feed_ = &feed;
    next_ = 0;
    frontier_ = TensorMap();
    whole_model_ = false;
  }

  TensorMap fetch(const std::vector<std::string>& names) {
    // A value a slice would need that is not a tensor here (a sequence, say): this iteration's
    // remaining batches run the whole model, as backends without slices do.
    if (whole_model_) return backend_.fetch_tensors(model_, *feed_, names, runner_name_);
    std::optional<size_t> end;
    for (const auto& name : names) {
      auto p = producer_.find(name);
      if (frontier_.contains(name) || p == producer_.end() || p->second < next_) continue;
      end = std::max(end.value_or(0), p->second);
    }
    TensorMap batch;
    TensorMap computed;
    if (end) {
      std::optional<TensorMap> slice = run_slice(*end);
      if (!slice) {
        whole_model_ = true;
        return fetch(names);
      }
      computed = std::move(*slice);
    }
    for (const auto& name : names)
      if (const Tensor* t = computed.find(name))
        batch.set(name, *t);
      else if (const Tensor* f = frontier_.find(name))
        batch.set(name, *f);
    if (end) {
      // The frontier after this batch: what nodes after it read.
      TensorMap frontier;
      for (const auto& [name, t] : frontier_)
        if (last_use_.count(name) && last_use_.at(name) > *end) frontier.set(name, t);
      for (const auto& [name, t] : computed)
        if (last_use_.count(name) && last_use_.at(name) > *end) frontier.set(name, t);
      frontier_ = std::move(frontier);
      next_ = *end + 1;
    }
    return batch;
  }

 private:
  // Runs nodes [next_, end]; returns every output of the slice, or nullopt when an input it
  // needs is not at hand.
  std::optional<TensorMap> run_slice(size_t end) {
    const auto& nodes = model_->graph.nodes;
    std::vector<onnx_io::SliceInput> inputs;
    TensorMap feed;
    std::vector<std::string> outputs;
    std::unordered_set<std::string> seen;
    auto in_slice = [&](const std::string& name) {
      auto p = producer_.find(name);
      return p != producer_.end() && p->second >= next_ && p->second <= end;
    };
    for (size_t i = next_; i <= end; ++i)
      for (const auto& in : nodes[i].inputs) {
        if (in.empty() || in_slice(in) || constants_.count(in) || !seen.insert(in).second) continue;
        const Tensor* value = frontier_.find(in);
        if (!value) value = feed_->find(in);
        if (!value && model_->graph.initializers.count(in)) continue;  // the slice has it
        if (!value) {
          logger().verbose(
              "Layer-wise | {}: '{}' is not a tensor held for the next slice; the "
              "rest of this iteration runs the whole model per batch",
              runner_name_, in);
          return std::nullopt;
        }
        inputs.push_back({in, value->dtype(), value->shape()});
        feed.set(in, *value);
      }
    for (size_t i = next_; i <= end; ++i)
      for (const auto& out : nodes[i].outputs)
        if (!out.empty() && !constants_.count(out)) outputs.push_back(out);

    logger().verbose("Layer-wise | {} computes nodes {} to {} of {} ({} input(s), {} output(s))",
                     runner_name_, next_ + 1, end + 1, nodes.size(), inputs.size(), outputs.size());
    const Severity shown = logger().severity();
    struct Restore {
      Severity severity;
      ~Restore() { logger().set_severity(severity); }
    } restore{shown};
    if (batches_++ > 0 && shown == Severity::kInfo) logger().set_severity(Severity::kWarning);

    const bool whole = next_ == 0 && end + 1 == nodes.size();
    std::string key;
    for (const auto& in : inputs) key += in.name + shape_str(in.shape) + ";";
    if (whole && kept_ && key == kept_key_) return kept_->infer(feed);
    std::unique_ptr<Runner> runner = backend_.make_runner(
        Loader<ModelPtr>(slicer_.slice(next_, end, inputs, outputs)), runner_name_);
    if (!whole) {
      RunnerActivation active(*runner);
      return runner->infer(feed);
    }
    if (kept_) kept_->deactivate();
    kept_.reset();
    runner->activate();
    kept_ = std::move(runner);  // deactivated when the run ends
    kept_key_ = key;
    return kept_->infer(feed);
  }

  const ConfiguredBackend backend_;  // configured for short-lived batch runners
  ModelPtr model_;
  onnx_io::ModelSlicer slicer_;
  std::string runner_name_;
  std::unordered_map<std::string, size_t> producer_, last_use_;
  std::unordered_set<std::string> constants_;
  const TensorMap* feed_ = nullptr;
  size_t next_ = 0;
  TensorMap frontier_;
  int batches_ = 0;
  bool whole_model_ = false;
  std::unique_ptr<Runner> kept_;
  std::string kept_key_;  // the inputs and shapes kept_ was made for

 public:
  ~SlicedBatches() {
    if (kept_) kept_->deactivate();
  }
};

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

// The progress line of a streamed run: the top-level nodes done (an observer also sees the
// nodes of subgraph bodies, which are not counted; they are told apart by name).
class NodeProgress {
 public:
  NodeProgress(const std::string& runner, const ir::Model& model)
      : progress_(fmt::format("{} | Node", runner), model.graph.nodes.size()) {
    if (!progress_enabled()) return;
    for (const ir::Node& node : model.graph.nodes) top_level_.insert(node.name);
  }
  void node(const ir::Node& node) {
    if (!progress_enabled() || !top_level_.count(node.name)) return;
    progress_.update(++done_);
  }

 private:
  std::unordered_set<std::string> top_level_;
  Progress progress_;
  size_t done_ = 0;
};

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
  if (options.sink) options.sink->runners(lw.reference_name, lw.other_name);
  const NodeRunner rerun = single_node_runner(reference, model);
  // Every tensor marked: the other backend computes each batch's nodes only.
  std::optional<SlicedBatches> sliced;
  if (!other.saved && options.mark_all && options.exclude.empty()) {
    sliced.emplace(other.backend, model, lw.other_name);
    if (!sliced->why_not().empty()) {
      logger().verbose("Layer-wise | {} runs the whole model for each batch: {}", lw.other_name,
                       sliced->why_not());
      sliced.reset();
    }
  }
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
    if (sliced) sliced->start(*feed);
    BatchFetcher fetch = other.saved ? saved_batches(other.saved->second[i].outputs)
                         : sliced    ? BatchFetcher([&](const std::vector<std::string>& names) {
                             return sliced->fetch(names);
                           })
                                     : backend_batches(other.backend, model, *feed, lw.other_name);
    // The node runner serves --local-error, and without it the candidates for the first
    // divergence (a node rounding an inherited difference is not one).
    LayerwiseComparison comparison(model->graph, marked, lw, fetch, rerun);
    comparison.set_feed(*feed);
    comparison.set_sink(options.sink);
    if (options.sink) options.sink->begin_iteration(i);
    NodeProgress progress(lw.reference_name, *model);
    reference.backend->run_observed(*streaming, *feed,
                                    [&](const ir::Node& node, const std::vector<Value>& outputs) {
                                      comparison.on_node(node, outputs);
                                      progress.node(node);
                                    });
    out.iterations.push_back(comparison.finish());
    if (options.sink) options.sink->end_iteration(i);
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

std::pair<std::string, size_t> LayerwiseComparator::stream(const ModelPtr& model,
                                                           const ConfiguredBackend& reference,
                                                           FeedSource& feeds,
                                                           const LayerwiseRunOptions& options) {
  if (!reference.backend || !reference.backend->run_observed)
    fail_usage(
        "failed to stream the tensors of backend '{}': it cannot stream them; use a backend "
        "that can (pluginref)",
        reference.backend ? reference.backend->name : "");
  PARITY_ENFORCE(options.sink != nullptr, "streaming tensors needs a sink");
  const std::vector<std::string> names = marked_tensor_names(*model, options);
  const std::unordered_set<std::string> marked(names.begin(), names.end());
  std::unique_ptr<Runner> runner = reference.make_runner(Loader<ModelPtr>(model));
  options.sink->runners(runner->name(), "");
  RunnerActivation active(*runner);
  feeds.set_input_metadata(runner->input_metadata());
  size_t i = 0;
  for (;; ++i) {
    std::optional<TensorMap> feed = feeds.get(i);
    if (!feed) break;
    if (!options.strict_inputs) feed = coerce_feed(*feed, runner->input_metadata());
    if (options.used_feeds) options.used_feeds->push_back(*feed);
    logger().info("{:<24} | Running inference on {} marked tensor(s), streamed", runner->name(),
                  names.size());
    options.sink->begin_iteration(i);
    NodeProgress progress(runner->name(), *model);
    reference.backend->run_observed(
        *runner, *feed, [&](const ir::Node& node, const std::vector<Value>& outputs) {
          for (size_t j = 0; j < outputs.size() && j < node.outputs.size(); ++j)
            if (outputs[j].is_tensor() && marked.count(node.outputs[j]))
              options.sink->tensor(true, node.outputs[j], outputs[j].tensor);
          progress.node(node);
        });
    options.sink->end_iteration(i);
  }
  return {runner->name(), i};
}

std::pair<std::string, size_t> LayerwiseComparator::stream_in_batches(
    const ModelPtr& model, const ConfiguredBackend& backend, FeedSource& feeds,
    const LayerwiseRunOptions& options) {
  PARITY_ENFORCE(options.sink != nullptr, "streaming tensors needs a sink");
  const std::vector<std::string> names = marked_tensor_names(*model, options);
  const std::unordered_set<std::string> marked(names.begin(), names.end());
  // The marked outputs of each node, in node order: the units batches are made of.
  std::vector<std::vector<std::string>> per_node;
  for (const auto& node : model->graph.nodes) {
    std::vector<std::string> outs;
    for (const auto& out : node.outputs)
      if (!out.empty() && marked.count(out)) outs.push_back(out);
    if (!outs.empty()) per_node.push_back(std::move(outs));
  }
  std::unique_ptr<Runner> probe = backend.make_runner(Loader<ModelPtr>(model));
  const std::string name = probe->name();
  TensorMetadata meta;
  {
    RunnerActivation active(*probe);
    meta = probe->input_metadata();
  }
  probe.reset();
  options.sink->runners(name, "");
  std::optional<SlicedBatches> sliced;
  sliced.emplace(backend, model, name);
  if (!sliced->why_not().empty()) {
    logger().verbose("Layer-wise | {} runs the whole model for each batch: {}", name,
                     sliced->why_not());
    sliced.reset();
  }
  const double budget = static_cast<double>(std::max<size_t>(options.comparison.budget_bytes, 1));
  feeds.set_input_metadata(meta);
  size_t i = 0;
  for (;; ++i) {
    std::optional<TensorMap> feed = feeds.get(i);
    if (!feed) break;
    if (!options.strict_inputs) feed = coerce_feed(*feed, meta);
    if (options.used_feeds) options.used_feeds->push_back(*feed);
    logger().info("{:<24} | Running inference on {} marked tensor(s), in batches of nodes", name,
                  names.size());
    if (sliced) sliced->start(*feed);
    BatchFetcher whole = backend_batches(backend, model, *feed, name);
    options.sink->begin_iteration(i);
    double bytes_per_node = 0;
    size_t nodes_seen = 0, batches = 0;
    Progress progress(fmt::format("{} | Node", name), per_node.size());
    for (size_t at = 0; at < per_node.size();) {
      progress.update(at);
      size_t count = 1;
      if (bytes_per_node > 0)
        count = static_cast<size_t>(std::max(1.0, std::floor(budget / bytes_per_node)));
      count = std::min(count, per_node.size() - at);
      std::vector<std::string> batch;
      for (size_t k = at; k < at + count; ++k)
        batch.insert(batch.end(), per_node[k].begin(), per_node[k].end());
      const TensorMap got = sliced ? sliced->fetch(batch) : whole(batch);
      size_t bytes = 0;
      for (const auto& tensor_name : batch)
        if (const Tensor* t = got.find(tensor_name)) {
          options.sink->tensor(true, tensor_name, *t);
          bytes += t->nbytes();
        }
      nodes_seen += count;
      bytes_per_node = std::max(bytes_per_node, static_cast<double>(bytes) / count);
      at += count;
      ++batches;
    }
    logger().verbose("Layer-wise | {}: {} node(s) in {} batch(es)", name, nodes_seen, batches);
    options.sink->end_iteration(i);
  }
  return {name, i};
}

}  // namespace parity
