#include "cli/run.h"

#include <malloc.h>

#include <mutex>

#include "backend/subprocess_runner.h"
#include "cli/app.h"
#include "cli/dataset_run.h"
#include "cli/gen_script.h"
#include "cli/help_format.h"
#include "cli/limit_args.h"
#include "cli/parse_util.h"
#include "cli/plot_process.h"
#include "cli/scripts.h"
#include "comparator/comparator.h"
#include "core/logger.h"
#include "core/names.h"
#include "io/json.h"
#include "layerwise/layerwise_comparator.h"
#include "onnx/loaders.h"
#include "report/html_report.h"

namespace parity::cli {

CLI::App* setup_run(CLI::App& app, RunArgs& args) {
  CLI::App* sub = app.add_subcommand("run", "Run inference and compare results across backends.");
  add_logging_args(*sub, args.logging);
  add_model_args(*sub, args.model, /*with_outputs=*/true, /*required=*/false);
  add_backend_args(*sub);
  add_data_loader_args(*sub, args.data);
  add_comparator_args(*sub, args.comparator);
  add_dataset_args(*sub, args.dataset);
  add_limit_args(*sub);
  add_script_args(*sub, args);
  add_save_onnx_args(*sub, args.save_onnx, /*output_required=*/false, "--save-onnx");
  const char* shapes = "ONNX Shape Inference";
  sub->add_flag("--shape-inference,--do-shape-inference", args.model.shape_inference,
                "Enable ONNX shape inference when loading the model")
      ->group(shapes);
  sub->add_flag("--no-onnxruntime-shape-inference", args.no_onnxruntime_shape_inference,
                "Accepted for Polygraphy's command lines: Parity always uses ONNX's own shape "
                "inference (libonnx), never ONNX Runtime's")
      ->group(shapes);
  // `parity run --help` lists Polygraphy's argument groups in the order `polygraphy run --help`
  // does (its TensorFlow and TensorRT groups left out; its "TensorRT Plugin Loading" is Parity's
  // "Plugin Loading"), then Parity's own.
  sub->formatter(std::make_shared<OrderedGroupsFormatter>(std::vector<std::string>{
      "Options", "Logging", "Runners", "Model", "ONNX Model Saving", "ONNX Shape Inference",
      "ONNX Model Loading", "ONNX-Runtime Session Creation", "Plugin Loading", "Data Loader",
      "Comparator Inference", "Comparator Postprocessing", "Comparator Comparisons",
      "Comparison Function: `simple`", "Comparison Function: `indices`",
      // Parity's own compare functions beside Polygraphy's.
      "Comparison Function: `distance`", "Comparison Function: `quality`"}));
  return sub;
}

RunnerModels runner_models(const RunArgs& args, const std::vector<ConfiguredBackend>& backends) {
  RunnerModels models{args.model.shared_loader()(), {}};
  const bool saving = !args.save_onnx.output.empty();
  auto saved = std::make_shared<std::once_flag>();
  for (const ConfiguredBackend& b : backends) {
    // A runner that saves the model loads it through the saver, as Polygraphy's does, even
    // where it could open the unmodified file itself.
    Loader<ModelPtr> model =
        args.model.loader_for(models.shared, b.backend->opens_model_file && !saving);
    if (saving) {
      Loader<ModelPtr> save =
          SaveOnnx(model, args.save_onnx.output, args.save_onnx.options(args.model.path()));
      model = Loader<ModelPtr>([model, save, saved] {
        ModelPtr m;
        std::call_once(*saved, [&] { m = save(); });
        return m ? m : model();
      });
    }
    models.loaders.push_back(std::move(model));
  }
  return models;
}

namespace {

// The first backend that can stream its tensors (the reference side of a layer-wise run).
std::optional<size_t> streaming_backend(const std::vector<ConfiguredBackend>& backends) {
  for (size_t i = 0; i < backends.size(); ++i)
    if (backends[i].backend->run_observed) return i;
  return std::nullopt;
}

// Layer-wise mode: tensors are marked and a streaming backend is compared with exactly one
// other source (a second runner or one --load-outputs file). Options that need every output in
// memory keep Polygraphy's all-outputs path.
// Returns "" when it applies, else why not.
std::string why_not_layerwise(const RunArgs& args, const std::vector<ConfiguredBackend>& backends,
                              const ComparatorOptions& cmp) {
  if (!args.model.marks_outputs()) return "no tensors are marked (--onnx-outputs)";
  // One runner saving every marked tensor, streamed to the file (a backend that cannot stream
  // gives them in batches of nodes).
  const bool streamed_save =
      backends.size() == 1 && cmp.load_outputs.empty() && !cmp.save_outputs.empty();
  if (!streaming_backend(backends) && !streamed_save)
    return "no selected backend can stream its tensors (--pluginref can)";
  const bool pair = (backends.size() == 2 && cmp.load_outputs.empty()) ||
                    (backends.size() == 1 && cmp.load_outputs.size() == 1);
  if (!pair && !streamed_save)
    return "it compares the reference with exactly one other source (a second runner, or one "
           "--load-outputs file)";
  if (cmp.top_k) return "--postprocess needs every output in memory";
  if (cmp.validate) return "--validate needs every output in memory";
  if (cmp.compare == "indices") return "--compare indices needs every output in memory";
  if (cmp.use_subprocess) return "--use-subprocess runs each runner whole in its own process";
  return "";
}

// The runner flags of the registered backends, for messages.
std::string runner_flags() {
  std::vector<std::string> flags;
  for (const Backend* b : BackendRegistry::global().all()) flags.push_back(b->flag_list().front());
  return fmt::format("{}", fmt::join(flags, ", "));
}

// Refuses flags that this run could not honour, before any work.
void check_requests(const RunArgs& args, const std::vector<ConfiguredBackend>& backends,
                    const ComparatorOptions& cmp, const std::string& why_not_layerwise) {
  if (!backends.empty() && args.model.model_file.empty()) {
    std::string note;
    for (const std::string& path : cmp.load_outputs)
      if (path.size() > 5 && path.ends_with(".onnx"))
        note = fmt::format(
            ".\nNote: --load-outputs took '{}'; give the model before the flags "
            "that take several values",
            path);
    fail_usage(
        "One or more runners was specified, but no model file was provided. Make sure "
        "you've specified the model path, and also that it's not being consumed as an "
        "argument for another parameter{}",
        note);
  }
  if (backends.empty() && cmp.load_outputs.empty())
    fail_usage(
        "failed to run: nothing to run or compare; select runners ({}) or give results "
        "to compare with --load-outputs",
        runner_flags());
  if (!args.save_onnx.output.empty() && backends.empty())
    fail_usage(
        "failed to use --save-onnx '{}': it saves the model the runners load, and no runner is "
        "selected; select runners ({})",
        args.save_onnx.output, runner_flags());
  if (cmp.local_error && !why_not_layerwise.empty())
    fail_usage(
        "failed to use --local-error: it needs a layer-wise run, and this run is not one: "
        "{}",
        why_not_layerwise);
  if (cmp.local_error && backends.size() + cmp.load_outputs.size() < 2)
    fail_usage(
        "failed to use --local-error: it splits the error between two sources, and this run "
        "compares nothing; give two runners, or a runner and --load-outputs");
  if (cmp.plots.any()) {
    const std::string flag = plot_flag(cmp.plots);
    if (why_not_layerwise.empty())
      fail_usage(
          "failed to use {}: this run is layer-wise (tensors are marked and a backend streams "
          "them), which compares tensor by tensor without CompareFunc.simple's figures; the "
          "HTML report (--report FILE) has a heatmap of every tensor's error",
          flag);
    if (args.dataset.enabled())
      fail_usage(
          "failed to use {} with --dataset: a dataset run keeps no arrays of its feeds to "
          "draw; run the feeds of interest without --dataset",
          flag);
    if (!args.compare_func_script.empty())
      fail_usage(
          "failed to use {} with --compare-func-script: the figures are CompareFunc.simple's, "
          "which the script replaces; draw them in the script, or leave out one of the two",
          flag);
  }
  // (One results file may hold several runners, so --load-outputs alone may compare.)
  if (!cmp.report.empty() && backends.size() + cmp.load_outputs.size() < 2 &&
      cmp.load_outputs.empty())
    fail_usage(
        "failed to use --report '{}': a report shows a comparison, and this run compares "
        "nothing; give two runners, or a runner and --load-outputs",
        cmp.report);
}

std::vector<std::string> input_names(const ir::Model& model) {
  std::vector<std::string> names;
  for (const auto& in : model.graph.inputs)
    if (!model.graph.initializers.count(in.name)) names.push_back(in.name);
  return names;
}

bool is_pattern(const std::string& name) { return name.find_first_of("*?[") != std::string::npos; }

// --input-shapes and --val-range names must be inputs of the model.
void check_input_names(const RunArgs& args, const ir::Model& model) {
  const std::vector<std::string> inputs = input_names(model);
  auto check = [&](const char* flag, const std::string& name) {
    if (name.empty() || is_pattern(name) ||
        std::find(inputs.begin(), inputs.end(), name) != inputs.end())
      return;
    fail_usage("failed to use {} for '{}': the model has no input of that name{}", flag, name,
               did_you_mean(name, inputs));
  };
  for (const TensorMeta& m : parse_input_shapes("--input-shapes", args.data.input_shapes))
    check("--input-shapes", m.name);
  for (const auto& [name, range] : parse_val_ranges(args.data.val_range))
    check("--val-range", name);
}

// Per-output values (--atol out0:1e-3) must name outputs that are compared.
void check_output_names(const ComparatorOptions& cmp, const std::vector<std::string>& outputs) {
  auto check = [&](const char* flag, const auto& per_output) {
    for (const auto& [name, value] : per_output.values)
      if (!name.empty() && std::find(outputs.begin(), outputs.end(), name) == outputs.end())
        fail_usage("failed to use {} for output '{}': no compared output has that name{}", flag,
                   name, did_you_mean(name, outputs));
  };
  const TensorCompareOptions& t = cmp.tensor;
  check("--atol", t.atol);
  check("--rtol", t.rtol);
  check("--check-error-stat", t.check_error_stat);
  check("--error-quantile", t.error_quantile);
  check("--l2-tolerance", t.l2_tolerance);
  check("--cosine-similarity-threshold", t.cosine_similarity_threshold);
  check("--psnr-tolerance", t.psnr_tolerance);
  check("--snr-tolerance", t.snr_tolerance);
  check("--index-tolerance", cmp.indices.index_tolerance);
  if (cmp.top_k) check("--postprocess", cmp.top_k->k);
}

std::vector<std::string> result_output_names(const RunResults& results) {
  std::vector<std::string> names;
  for (const auto& [runner, iterations] : results)
    for (const auto& it : iterations)
      for (const auto& name : it.outputs.names())
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  return names;
}

// Names the known departures of the compared backends from the specification that may explain
// why `failing` values differ.
void explain_failures(const std::vector<ConfiguredBackend>& backends, const ir::Model& model,
                      const std::vector<std::string>& failing) {
  if (failing.empty()) return;
  for (const ConfiguredBackend& b : backends)
    if (b.backend->known_departures)
      for (const std::string& message : b.backend->known_departures(model, failing))
        logger().warning("{}", message);
}

std::vector<std::string> failing_outputs(const AccuracyResult& accuracy) {
  std::vector<std::string> names;
  for (const auto& [pair, iterations] : accuracy.entries)
    for (const auto& iteration : iterations)
      for (const auto& [name, r] : iteration)
        if (!r.passed && std::find(names.begin(), names.end(), name) == names.end())
          names.push_back(name);
  return names;
}

// --save-outputs of a layer-wise run: every tensor of the runners that ran, written as it is
// compared and then released, in Polygraphy's file format (runners in command-line order; saved
// results loaded as the other side are not saved again).
class SavingSink : public LayerwiseSink {
 public:
  // `reference_first`: the reference is the first runner. `with_other`: the other side is a
  // runner (not loaded results).
  SavingSink(const std::string& path, bool reference_first, bool with_other)
      : out_(path, with_other ? 2 : 1),
        reference_(reference_first || !with_other ? 0 : 1),
        other_(with_other ? std::optional<size_t>(reference_first ? 1 : 0) : std::nullopt) {}

  void runners(const std::string& reference, const std::string& other) override {
    names_[reference_] = reference;
    out_.set_runner_name(reference_, reference);
    if (other_) {
      names_[*other_] = other;
      out_.set_runner_name(*other_, other);
    }
  }
  void begin_iteration(size_t) override {
    out_.begin_iteration(reference_);
    if (other_) out_.begin_iteration(*other_);
  }
  void tensor(bool reference, const std::string& name, const Tensor& value) override {
    if (reference)
      out_.add(reference_, name, value);
    else if (other_)
      out_.add(*other_, name, value);
  }
  void end_iteration(size_t) override {
    out_.end_iteration(reference_, std::nullopt, names_[reference_]);
    if (other_) out_.end_iteration(*other_, std::nullopt, names_[*other_]);
  }
  void finish() { out_.finish(); }

 private:
  io::RunResultsStream out_;
  size_t reference_;
  std::optional<size_t> other_;
  std::string names_[2];
};

void save_inputs(const std::string& path, const std::vector<TensorMap>& feeds) {
  logger().info("Saving inference input data to {}", path);
  io::save_inputs(path, feeds);
}

RunVerdict run_layerwise(const RunArgs& args, const std::vector<ConfiguredBackend>& backends,
                         const ComparatorOptions& cmp, FeedSource& feeds) {
  // Tensors of 1 MiB and more get mappings of their own here, returned to the system when freed,
  // so that peak memory follows --mark-budget. (glibc's threshold otherwise rises to the largest
  // block freed, after which freed tensors stay in the heaps of the threads that made them and
  // the peak depends on how their frees interleave: 130-550 MiB measured for a run that holds
  // 118 MiB this way. It costs page faults, about 20 % on that run, so plain runs keep glibc's
  // default.)
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  LayerwiseRunOptions options;
  options.comparison.compare = cmp.tensor;
  options.comparison.budget_bytes = cmp.mark_budget;
  options.comparison.local_error = cmp.local_error;
  options.mark_all = args.model.mark_all();
  if (!options.mark_all) options.marked = args.model.onnx_outputs;
  options.exclude = args.model.onnx_exclude_outputs;
  options.strict_inputs = args.data.strict_inputs;
  std::vector<TensorMap> used_feeds;
  if (!cmp.save_inputs.empty()) options.used_feeds = &used_feeds;
  const std::optional<size_t> streaming = streaming_backend(backends);
  const size_t ref_at = streaming.value_or(0);
  std::optional<SavingSink> saving;
  if (!cmp.save_outputs.empty()) {
    saving.emplace(cmp.save_outputs, /*reference_first=*/ref_at == 0, backends.size() == 2);
    options.sink = &*saving;
  }

  ModelPtr model = args.model.loader(/*marked_outputs=*/false)();  // layer-wise marks its own
  // --save-onnx: the model with the tensors marked as the flags mark them, as a runner of the
  // all-outputs path would load it (layer-wise runners load slices of it).
  if (!args.save_onnx.output.empty())
    SaveOnnx(args.model.marked(model), args.save_onnx.output,
             args.save_onnx.options(args.model.path()))();
  check_input_names(args, *model);
  check_output_names(cmp, marked_tensor_names(*model, options));
  if (backends.size() == 1 && cmp.load_outputs.empty()) {
    // One streaming runner saving its marked tensors: nothing to compare.
    const auto [runner, iterations] =
        streaming ? LayerwiseComparator::stream(model, backends[ref_at], feeds, options)
                  : LayerwiseComparator::stream_in_batches(model, backends[0], feeds, options);
    if (!cmp.save_inputs.empty()) save_inputs(cmp.save_inputs, used_feeds);
    logger().info("Saving inference results to {}", cmp.save_outputs);
    saving->finish();
    RunResults ran;
    ran.add(std::vector<IterationResult>(iterations), runner);
    return RunVerdict::inference_only(ran);
  }
  LayerwiseSource other;
  std::optional<RunResults> saved;
  if (backends.size() == 2) {
    other.backend = backends[1 - ref_at];
    other.is_first = ref_at == 1;
  } else {
    logger().info("Loading inference results from {}", cmp.load_outputs[0]);
    saved = io::load_run_results(cmp.load_outputs[0]);
    if (saved->size() != 1)
      fail_usage(
          "failed to compare layer-wise with '{}' holding {} runners: layer-wise "
          "comparison takes one other source; save one runner's results per file",
          cmp.load_outputs[0], saved->size());
    other.saved = &(*saved)[0];
  }
  const LayerwiseRun run = LayerwiseComparator::run(model, backends[ref_at], other, feeds, options);
  for (const LayerwiseResult& r : run.iterations) {
    if (!r.first_divergence) continue;
    std::vector<std::string> outputs;
    for (size_t t : r.nodes[*r.first_divergence].outputs) outputs.push_back(r.tensors[t].name);
    explain_failures(backends, *model, outputs);
    break;
  }
  if (!cmp.save_inputs.empty()) save_inputs(cmp.save_inputs, used_feeds);
  if (saving) {
    logger().info("Saving inference results to {}", cmp.save_outputs);
    saving->finish();
  }
  if (!cmp.report.empty() && !run.iterations.empty())
    write_html_report(cmp.report, report_from_layerwise(run), invoked_command());
  return RunVerdict::from_iterations(run.iterations.size(), run.passed_count());
}

}  // namespace

RunEnd run_command(const RunArgs& args) {
  // Parse every value before any work, so a malformed flag fails in milliseconds.
  const ComparatorOptions cmp = args.comparator.parse();
  if (!args.save_onnx.output.empty()) args.save_onnx.options(args.model.path());
  const std::vector<ConfiguredBackend> backends = args.backends.configure();
  const std::string why_not = why_not_layerwise(args, backends, cmp);
  check_requests(args, backends, cmp, why_not);
  if (args.dataset.enabled()) return run_dataset_command(args, cmp, backends);
  if (!args.gen_script.empty())
    return RunEnd{std::nullopt, write_run_script(args, cmp, backends), true};
  if (run_needs_python(args))
    return RunEnd{std::nullopt, run_in_python(args, cmp, backends), false};
  // The figures' Python starts now, so a missing matplotlib fails before any inference.
  std::shared_ptr<ErrorPlotter> plotter;
  if (cmp.plots.any()) plotter = std::make_shared<PythonErrorPlotter>(cmp.plots);
  const CompareFunc compare = cmp.compare_func(plotter);
  std::unique_ptr<FeedSource> feeds = args.data.make_feeds();

  if (why_not.empty())
    return RunEnd{run_layerwise(args, backends, cmp, *feeds), std::nullopt, false};
  if (args.model.marks_outputs())
    logger().warning(
        "Comparing the marked tensors as outputs, all held in memory, without the "
        "layer-wise summary: {}",
        why_not);

  // Load the model once; every runner shares it (runner_models).
  RunnerModels models;
  if (!backends.empty()) models = runner_models(args, backends);
  if (models.shared) check_input_names(args, *models.shared);
  std::vector<std::unique_ptr<Runner>> owned;
  for (size_t i = 0; i < backends.size(); ++i) {
    std::unique_ptr<Runner> runner = backends[i].make_runner(models.loaders[i]);
    if (cmp.use_subprocess)
      runner = std::make_unique<SubprocessRunner>(std::move(runner),
                                                  SubprocessOptions{cmp.subprocess_timeout});
    owned.push_back(std::move(runner));
  }
  std::vector<Runner*> runners;
  for (auto& r : owned) runners.push_back(r.get());

  std::vector<TensorMap> used_feeds;
  RunOptions run_options;
  run_options.warm_up = cmp.warm_up;
  run_options.strict_inputs = args.data.strict_inputs;
  if (!cmp.save_inputs.empty()) run_options.used_feeds = &used_feeds;
  std::vector<std::string> failed_runners;
  if (cmp.use_subprocess) run_options.failed_runners = &failed_runners;
  if (runners.empty())
    logger().warning("No runners have been selected. Inference will not be run!");
  RunResults results = Comparator::run(runners, *feeds, run_options);

  if (!cmp.save_inputs.empty()) save_inputs(cmp.save_inputs, used_feeds);
  if (!cmp.save_outputs.empty()) {
    logger().info("Saving inference results to {}", cmp.save_outputs);
    io::save_run_results(cmp.save_outputs, results);
  }
  for (const auto& path : cmp.load_outputs) {
    logger().info("Loading inference results from {}", path);
    for (auto& entry : io::load_run_results(path)) results.append(std::move(entry));
  }
  // Saved results of a dataset run (shards merged by 'parity data merge') are compared as the
  // dataset run compared them, so the summary is the same as the unsharded run's.
  if (backends.empty() && is_dataset_results(results)) {
    if (cmp.plots.any())
      fail_usage(
          "failed to use {}: the loaded results are a dataset run's, compared as a dataset "
          "run, which keeps no arrays of its feeds to draw",
          plot_flag(cmp.plots));
    return run_dataset_command(args, cmp, backends, std::move(results));
  }
  if (cmp.top_k) Comparator::postprocess(results, postprocess_func::top_k(*cmp.top_k));

  std::optional<RunVerdict> verdict;
  if (results.size() > 1) {
    check_output_names(cmp, result_output_names(results));
    AccuracyResult accuracy =
        Comparator::compare_accuracy(results, cmp.fail_fast, std::nullopt, compare);
    verdict = RunVerdict::from_accuracy(accuracy);
    if (models.shared && !accuracy)
      explain_failures(backends, *models.shared, failing_outputs(accuracy));
    if (!cmp.report.empty())
      write_html_report(cmp.report, report_from_results(results, accuracy, cmp.tensor),
                        invoked_command());
  } else if (backends.empty()) {
    verdict = RunVerdict::nothing_compared(
        "Compared nothing: --load-outputs gave one set of results and there is nothing to "
        "compare it with; add a runner or another results file");
  } else {
    verdict = RunVerdict::inference_only(results);
  }
  if (cmp.validate) verdict->with_validation(Comparator::validate(results, true, true));
  verdict->with_failed_runners(failed_runners);
  return RunEnd{verdict, std::nullopt, false};
}

}  // namespace parity::cli
