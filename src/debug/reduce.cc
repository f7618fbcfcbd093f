#include "debug/reduce.h"

#include <algorithm>
#include <filesystem>
#include <memory>

#include <onnx/onnx_pb.h>

#include "core/error.h"
#include "core/logger.h"
#include "core/names.h"
#include "debug/markers.h"
#include "layerwise/layerwise.h"
#include "onnx/describe.h"
#include "onnx/model_io.h"
#include "onnx/save_model.h"
#include "surgeon/shape_inference.h"

namespace parity::debug {

ReduceMode reduce_mode_from_name(const std::string& name) {
  if (name == "bisect") return ReduceMode::kBisect;
  if (name == "linear") return ReduceMode::kLinear;
  fail_usage(
      "failed to parse --mode with value '{}': it must be a reduction strategy{}; valid "
      "choices are bisect, linear",
      name, did_you_mean(name, {"bisect", "linear"}));
}

namespace {

std::unique_ptr<Marker> make_marker(ReduceMode mode, int64_t num_nodes, bool invert) {
  if (mode == ReduceMode::kBisect) return std::make_unique<BisectMarker>(num_nodes, invert);
  return std::make_unique<LinearMarker>(num_nodes, invert);
}

bool is_dynamic(const ir::ValueType& t) {
  if (t.kind != ir::ValueType::Kind::kTensor || !t.shape) return true;
  return !dims_are_fixed(*t.shape);
}

// Polygraphy's "Minimum Bad Model:\n{str_from_onnx}\n\n" as its logger prints it (one blank
// line after the description).
std::string model_text(const ir::Model& model) {
  std::string text = onnx_io::describe_model(model);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text + "\n";
}

void save_candidate(const ModelPtr& model, const std::string& path) {
  logger().info("Saving ONNX model to: {}", path);
  onnx_io::save_model(*model, path);
}

std::optional<size_t> position_of(const Candidate& c, size_t graph_node) {
  const auto& nodes = c.nodes();
  auto it = std::find(nodes.begin(), nodes.end(), graph_node);
  if (it == nodes.end()) return std::nullopt;
  return static_cast<size_t>(it - nodes.begin());
}

// The two phases over one candidate graph; holds what every iteration needs.
class Reduction {
 public:
  Reduction(const ReduceOptions& options, TensorSource& values, Iterator& iterator,
            ModelPtr& current)
      : options_(options), values_(values), iterator_(iterator), current_(current) {}

  // Cuts `graph`'s outputs (attr outputs) or inputs at each node the marker picks. Returns the
  // tensors of the smallest failing and the best passing candidates.
  struct Found {
    std::vector<std::string> bad, good;
  };
  Found bisect_io(const Candidate& graph, Marker& marker, bool outputs, const std::string& suffix) {
    const char* attr = outputs ? "outputs" : "inputs";
    logger().start("Reducing model {}", attr);
    Iterator::Callbacks callbacks;
    callbacks.make_artifact = [&](IterationContext& context) {
      Candidate iter = graph;
      {
        Logger::Indent indent;
        const size_t at = static_cast<size_t>(marker.node_index());
        mark(iter, outputs, outputs ? iter.node_outputs(at) : iter.node_inputs(at));
        write(iter);
      }
      context.state["num_nodes"] = static_cast<int64_t>(iter.nodes().size());
      return Iterator::Make::kCheck;
    };
    callbacks.advance = [&](const IterationContext& context) {
      ++judged_;
      marker.step(context.success, context.state.count("num_nodes")
                                       ? context.state.at("num_nodes")
                                       : static_cast<int64_t>(graph.nodes().size()));
      return !marker.stop();
    };
    callbacks.remaining = [&]() -> std::optional<int64_t> { return marker.remaining(); };
    replay_ = iterator_.iterate(callbacks, suffix, have_replay_ ? &replay_ : nullptr);
    have_replay_ = true;
    marker.finish();
    logger().finish("Finished reducing model {}", attr);
    auto io = [&](std::optional<int64_t> index) {
      if (!index) return outputs ? graph.outputs() : graph.inputs();
      const size_t at = static_cast<size_t>(*index);
      return outputs ? graph.node_outputs(at) : graph.node_inputs(at);
    };
    return Found{io(marker.best_bad_node_index()), io(marker.best_good_node_index())};
  }

  // One candidate: `names` as the graph's outputs (inputs). Returns whether it failed.
  bool try_once(const Candidate& graph, bool outputs, const std::vector<std::string>& names,
                const std::string& suffix, Candidate& result) {
    logger().start("Trying the {} of the node to start from", outputs ? "outputs" : "inputs");
    bool failed = false, made = false;
    Iterator::Callbacks callbacks;
    callbacks.make_artifact = [&](IterationContext& context) {
      made = true;
      result = graph;
      {
        Logger::Indent indent;
        mark(result, outputs, names);
        write(result);
      }
      context.state["num_nodes"] = static_cast<int64_t>(result.nodes().size());
      return Iterator::Make::kCheck;
    };
    callbacks.advance = [&](const IterationContext& context) {
      ++judged_;
      failed = !context.success;
      if (failed && !made) {  // decided by the replay: the candidate is cut again here
        result = graph;
        mark(result, outputs, names);
      }
      return false;
    };
    callbacks.remaining = []() -> std::optional<int64_t> { return 1; };
    replay_ = iterator_.iterate(callbacks, suffix, have_replay_ ? &replay_ : nullptr);
    have_replay_ = true;
    return failed;
  }

  // The inputs of the node at `at`, then of the nodes before it, one at a time, up to `steps`
  // candidates: the first that fails is taken. The error of a node often needs a little of
  // what comes before it (a Cast a backend fuses into the next node, say).
  bool walk_back_inputs(const Candidate& graph, size_t at, size_t steps, Candidate& result) {
    logger().start("Reducing model inputs back from the node to start from");
    bool failed = false;
    size_t position = at;
    size_t made = SIZE_MAX;  // the position whose candidate `result` holds
    Iterator::Callbacks callbacks;
    callbacks.make_artifact = [&](IterationContext& context) {
      made = position;
      result = graph;
      {
        Logger::Indent indent;
        mark(result, /*outputs=*/false, result.node_inputs(position));
        write(result);
      }
      context.state["num_nodes"] = static_cast<int64_t>(result.nodes().size());
      return Iterator::Make::kCheck;
    };
    callbacks.advance = [&](const IterationContext& context) {
      ++judged_;
      failed = !context.success;
      if (failed && made != position) {  // decided by the replay: cut the candidate again here
        result = graph;
        mark(result, /*outputs=*/false, result.node_inputs(position));
      }
      if (failed || position == 0 || at - position + 1 >= steps) return false;
      --position;
      return true;
    };
    callbacks.remaining = [&]() -> std::optional<int64_t> {
      return static_cast<int64_t>(std::min(steps - (at - position), position + 1));
    };
    replay_ = iterator_.iterate(callbacks, "inputs_start", have_replay_ ? &replay_ : nullptr);
    have_replay_ = true;
    logger().finish("Finished reducing model inputs back from the node to start from");
    return failed;
  }

  void mark(Candidate& c, bool outputs, const std::vector<std::string>& names) {
    if (outputs)
      c.mark_outputs(names);
    else
      c.mark_inputs(names);
  }

  int64_t judged() const { return judged_; }

 private:
  void write(const Candidate& c) {
    current_ = c.to_model(values_);
    if (!options_.iterate.iter_artifact.empty())
      save_candidate(current_, options_.iterate.iter_artifact);
  }

  const ReduceOptions& options_;
  TensorSource& values_;
  Iterator& iterator_;
  ModelPtr& current_;
  Replay replay_;
  bool have_replay_ = false;
  int64_t judged_ = 0;
};

}  // namespace

ReduceResult reduce_model(const ModelPtr& model, const ReduceOptions& options, TensorSource& values,
                          const ArtifactSorter* sorter, Judge check, ModelJudge in_memory) {
  PARITY_ENFORCE(static_cast<bool>(check) != static_cast<bool>(in_memory),
                 "reduce_model takes one judge");
  if (options.output.empty() && options.min_good.empty())
    logger().critical(
        "--output (where to write the reduced model) and/or --min-good (where to write a "
        "reduced model that passes) must be provided!");
  const ir::Graph& graph = model->graph;
  const size_t num_orig_nodes = graph.nodes.size();
  bool dynamic_inputs = false, unknown_types = false, has_shape = false;
  for (const auto& in : graph.inputs)
    if (!graph.initializers.count(in.name)) dynamic_inputs |= is_dynamic(in.type);
  for (const auto& node : graph.nodes) {
    has_shape |= node.op_type == "Shape";
    for (const auto& o : node.outputs) {
      const ir::ValueType* t = graph.find_type(o);
      unknown_types |= !o.empty() && (!t || is_dynamic(*t));
    }
  }
  if (dynamic_inputs)
    logger().warning(
        "This model uses dynamic input shapes.\nYou may want to provide input shapes to `debug "
        "reduce` using the `--model-input-shapes` option to prevent unexpected behavior.");
  else if (unknown_types)
    logger().warning(
        "The model does not give the shapes of some of its tensors.\nThe candidates take the "
        "shapes of their new inputs from the values computed for the full model (static "
        "shapes).");
  if (has_shape)
    logger().warning(
        "This model includes shape operations, which may cause issues while reducing.\nYou may "
        "want to freeze the input shapes and fold the shape operations away with:\n    `parity "
        "surgeon sanitize --override-input-shapes <shapes> --fold-constants`");

  ModelPtr current;
  Judge judge = check;
  if (in_memory) judge = [&](const std::string&) { return in_memory(current); };
  Iterator iterator(options.iterate, judge, sorter);
  Reduction reduction(options, values, iterator, current);

  const Candidate full(*model);
  Candidate bad = full;
  std::optional<Candidate> good;
  if (!options.min_good.empty()) good = full;
  bool seeded_outputs = false, seeded_inputs = false;

  // Native mode: the node to start from, outputs first. A failing cut there replaces the
  // bisection of the outputs.
  if (options.start_node && options.reduce_outputs) {
    if (std::optional<size_t> at = position_of(bad, *options.start_node)) {
      Candidate tried = bad;
      if (reduction.try_once(bad, /*outputs=*/true, bad.node_outputs(*at), "outputs_start",
                             tried)) {
        bad = tried;
        seeded_outputs = true;
      }
    }
  }
  if (options.reduce_outputs && !seeded_outputs) {
    std::unique_ptr<Marker> marker =
        make_marker(options.mode, static_cast<int64_t>(bad.nodes().size()), false);
    const auto found = reduction.bisect_io(bad, *marker, /*outputs=*/true, "outputs");
    bad.mark_outputs(found.bad);
    if (good) good->mark_outputs(found.good);
  }
  if (options.start_node && options.reduce_inputs) {
    if (std::optional<size_t> at = position_of(bad, *options.start_node)) {
      Candidate tried = bad;
      constexpr size_t kWalkBack = 4;  // candidates before falling back to bisection
      if (reduction.walk_back_inputs(bad, *at, kWalkBack, tried)) {
        bad = tried;
        seeded_inputs = true;
      }
    }
  }
  if (options.reduce_inputs && !seeded_inputs) {
    std::unique_ptr<Marker> marker =
        make_marker(options.mode, static_cast<int64_t>(bad.nodes().size()), true);
    const auto found = reduction.bisect_io(bad, *marker, /*outputs=*/false, "inputs");
    bad.mark_inputs(found.bad);
    if (good) good->mark_inputs(found.good);
  }

  // A candidate with external data was saved with "<artifact>.data" beside it; the iterations
  // removed the artifact itself.
  if (!options.iterate.iter_artifact.empty() && options.iterate.remove_intermediate) {
    std::error_code ec;
    std::filesystem::remove(options.iterate.iter_artifact + ".data", ec);
  }
  ReduceResult result;
  result.candidates = reduction.judged();
  result.bad = bad.to_model(values);
  for (const auto& n : result.bad->graph.nodes) result.bad_nodes.push_back(n.name);
  if (!options.output.empty()) {
    const size_t reduced = result.bad->graph.nodes.size();
    if (static_cast<double>(reduced) / static_cast<double>(std::max<size_t>(num_orig_nodes, 1)) >=
            0.25 &&
        reduced > 1 && options.mode == ReduceMode::kBisect)
      logger().warning(
          "It looks like this model could potentially be reduced further.\nYou may want to "
          "reduce {} again using --mode=linear. ",
          options.output);
    logger().info("Minimum Bad Model:\n{}", model_text(*result.bad));
    save_candidate(result.bad, options.output);
  }
  if (good) {
    const bool same = good->nodes() == bad.nodes() && good->inputs() == bad.inputs() &&
                      good->outputs() == bad.outputs();
    if (same) {
      logger().warning(
          "Could not find a minimal model close in size to the reduced model that does not "
          "cause a failure.");
    } else {
      result.good = good->to_model(values);
      logger().info("Minimum Good Model:\n{}", model_text(*result.good));
      save_candidate(result.good, options.min_good);
    }
  }
  return result;
}

FullModelValues::FullModelValues(ModelPtr model, ConfiguredBackend reference, TensorMap feed,
                                 bool random_data)
    : model_(std::move(model)),
      reference_(std::move(reference)),
      known_(std::move(feed)),
      random_data_(random_data) {}

TensorMap FullModelValues::values(const std::vector<std::string>& names) {
  std::vector<std::string> missing;
  for (const std::string& n : names)
    if (!known_.contains(n) && std::find(missing.begin(), missing.end(), n) == missing.end())
      missing.push_back(n);
  if (!missing.empty()) {
    if (runs_ == 0)
      logger().info(
          "Running inference with the reference backend to determine metadata for "
          "intermediate tensors.\nThis will cause intermediate models to have static shapes.");
    ++runs_;
    Logger::Indent indent;
    TensorMap feed;
    for (const auto& in : model_->graph.inputs)
      if (const Tensor* t = known_.find(in.name)) feed.set(in.name, *t);
    // The reference's start-up lines would repeat for every run; warnings still show.
    const Severity shown = logger().severity();
    if (shown == Severity::kInfo) logger().set_severity(Severity::kWarning);
    struct Restore {
      Severity s;
      ~Restore() { logger().set_severity(s); }
    } restore{shown};
    TensorMap fetched = reference_.fetch_tensors(model_, feed, missing, "reduce-values");
    for (const std::string& n : missing) known_.set(n, fetched.at(n));
  }
  TensorMap out;
  for (const std::string& n : names) out.set(n, known_.at(n));
  return out;
}

BackendPairJudge::BackendPairJudge(ConfiguredBackend first, ConfiguredBackend second,
                                   TensorCompareOptions tolerances, TensorSource& values)
    : first_(std::move(first)),
      second_(std::move(second)),
      tolerances_(std::move(tolerances)),
      values_(&values) {}

bool BackendPairJudge::operator()(const ModelPtr& candidate) const {
  std::vector<std::string> inputs;
  for (const auto& in : candidate->graph.inputs)
    if (!candidate->graph.initializers.count(in.name)) inputs.push_back(in.name);
  const TensorMap feed = values_->values(inputs);
  auto run = [&](const ConfiguredBackend& b) -> std::optional<TensorMap> {
    const Severity shown = logger().severity();
    if (shown == Severity::kInfo) logger().set_severity(Severity::kWarning);
    struct Restore {
      Severity s;
      ~Restore() { logger().set_severity(s); }
    } restore{shown};
    try {
      std::unique_ptr<Runner> runner = b.make_runner(Loader<ModelPtr>(candidate));
      RunnerActivation active(*runner);
      return runner->infer(feed);
    } catch (const Error& e) {
      logger().set_severity(shown);
      logger().error("{} failed to run the candidate: {}", b.backend->name, e.what());
      return std::nullopt;
    }
  };
  const std::optional<TensorMap> out0 = run(first_);
  const std::optional<TensorMap> out1 = run(second_);
  if (!out0 || !out1) return false;
  bool passed = true;
  for (const auto& out : candidate->graph.outputs) {
    const Tensor* a = out0->find(out.name);
    const Tensor* b = out1->find(out.name);
    if (!a || !b) {
      logger().error("Output '{}' is missing from {}", out.name,
                     !a ? first_.backend->name : second_.backend->name);
      passed = false;
      continue;
    }
    const TensorErrorStats s = compare_tensors(out.name, *a, *b, tolerances_);
    if (s.passed) continue;
    passed = false;
    logger().info("{} and {} differ on '{}': {}", first_.backend->name, second_.backend->name,
                  out.name, s.note.empty() ? format_error_summary(s, tolerances_.metric) : s.note);
  }
  return passed;
}

ModelPtr prepare_model(const ir::Model& model, const TensorMetadata& input_shapes) {
  auto proto = std::make_shared<::onnx::ModelProto>(*model.proto);
  if (!input_shapes.empty()) surgeon::override_input_shapes(*proto->mutable_graph(), input_shapes);
  surgeon::infer_shapes(*proto, /*error_ok=*/true);
  onnx_io::LoadOptions options;
  options.external_data_dir = model.external_data_dir;
  ModelPtr copy = onnx_io::model_from_proto(
      std::move(proto), options, model.external_data_dir.empty() ? "." : model.external_data_dir);
  copy->path = model.path;
  return copy;
}

}  // namespace parity::debug
