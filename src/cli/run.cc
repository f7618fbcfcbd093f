#include "cli/run.h"

#include <malloc.h>

#include "cli/app.h"
#include "cli/dataset_run.h"
#include "cli/gen_script.h"
#include "cli/limit_args.h"
#include "cli/parse_util.h"
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
  return sub;
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
  if (!streaming_backend(backends))
    return "no selected backend can stream its tensors (--pluginref can)";
  const bool pair = (backends.size() == 2 && cmp.load_outputs.empty()) ||
                    (backends.size() == 1 && cmp.load_outputs.size() == 1);
  if (!pair)
    return "it compares the reference with exactly one other source (a second runner, or one "
           "--load-outputs file)";
  if (!cmp.save_outputs.empty()) return "--save-outputs needs every output in memory";
  if (cmp.top_k) return "--postprocess needs every output in memory";
  if (cmp.validate) return "--validate needs every output in memory";
  if (cmp.compare == "indices") return "--compare indices needs every output in memory";
  return "";
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
        [] {
          std::vector<std::string> flags;
          for (const Backend* b : BackendRegistry::global().all())
            flags.push_back(b->flag_list().front());
          return fmt::format("{}", fmt::join(flags, ", "));
        }());
  if (cmp.local_error && !why_not_layerwise.empty())
    fail_usage(
        "failed to use --local-error: it needs a layer-wise run, and this run is not one: "
        "{}",
        why_not_layerwise);
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

  ModelPtr model = args.model.loader(/*marked=*/false)();  // layer-wise marks its own
  check_input_names(args, *model);
  check_output_names(cmp, marked_tensor_names(*model, options));
  const size_t ref_at = *streaming_backend(backends);
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
  if (!cmp.report.empty() && !run.iterations.empty())
    write_html_report(cmp.report, report_from_layerwise(run), invoked_command());
  return RunVerdict::from_iterations(run.iterations.size(), run.passed_count());
}

}  // namespace

RunEnd run_command(const RunArgs& args) {
  // Parse every value before any work, so a malformed flag fails in milliseconds.
  const ComparatorOptions cmp = args.comparator.parse();
  const std::vector<ConfiguredBackend> backends = args.backends.configure();
  const std::string why_not = why_not_layerwise(args, backends, cmp);
  check_requests(args, backends, cmp, why_not);
  if (args.dataset.enabled()) return run_dataset_command(args, cmp, backends);
  if (!args.gen_script.empty())
    return RunEnd{std::nullopt, write_run_script(args, cmp, backends), true};
  if (run_needs_python(args))
    return RunEnd{std::nullopt, run_in_python(args, cmp, backends), false};
  const CompareFunc compare = cmp.compare_func();
  std::unique_ptr<FeedSource> feeds = args.data.make_feeds();

  if (why_not.empty())
    return RunEnd{run_layerwise(args, backends, cmp, *feeds), std::nullopt, false};
  if (args.model.marks_outputs())
    logger().warning(
        "Comparing the marked tensors as outputs, all held in memory, without the "
        "layer-wise summary: {}",
        why_not);

  // Load the model once; every runner shares it.
  ModelPtr loaded = backends.empty() ? nullptr : args.model.loader()();
  if (loaded) check_input_names(args, *loaded);
  std::vector<std::unique_ptr<Runner>> owned;
  for (const ConfiguredBackend& b : backends)
    owned.push_back(b.make_runner(Loader<ModelPtr>(loaded)));
  std::vector<Runner*> runners;
  for (auto& r : owned) runners.push_back(r.get());

  std::vector<TensorMap> used_feeds;
  RunOptions run_options;
  run_options.warm_up = cmp.warm_up;
  run_options.strict_inputs = args.data.strict_inputs;
  if (!cmp.save_inputs.empty()) run_options.used_feeds = &used_feeds;
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
  if (backends.empty() && is_dataset_results(results))
    return run_dataset_command(args, cmp, backends, std::move(results));
  if (cmp.top_k) Comparator::postprocess(results, postprocess_func::top_k(*cmp.top_k));

  std::optional<RunVerdict> verdict;
  if (results.size() > 1) {
    check_output_names(cmp, result_output_names(results));
    AccuracyResult accuracy =
        Comparator::compare_accuracy(results, cmp.fail_fast, std::nullopt, compare);
    verdict = RunVerdict::from_accuracy(accuracy);
    if (loaded && !accuracy) explain_failures(backends, *loaded, failing_outputs(accuracy));
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
  return RunEnd{verdict, std::nullopt, false};
}

}  // namespace parity::cli
