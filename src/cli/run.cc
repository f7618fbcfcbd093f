#include "cli/run.h"

#include "cli/app.h"
#include "cli/gen_script.h"
#include "cli/scripts.h"
#include "comparator/comparator.h"
#include "core/logger.h"
#include "io/json.h"
#include "layerwise/layerwise_comparator.h"
#include "onnx/loaders.h"
#include "report/html_report.h"

namespace parity::cli {

CLI::App* setup_run(CLI::App& app, RunArgs& args) {
  CLI::App* sub = app.add_subcommand(
      "run", "Run inference and compare results across backends.");
  add_logging_args(*sub, args.logging);
  add_model_args(*sub, args.model, /*with_outputs=*/true);
  add_backend_args(*sub);
  add_data_loader_args(*sub, args.data);
  add_comparator_args(*sub, args.comparator);
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
bool layerwise_applies(const RunArgs& args, const std::vector<ConfiguredBackend>& backends,
                       const ComparatorOptions& cmp) {
  if (!args.model.marks_outputs() || !streaming_backend(backends)) return false;
  const bool pair = (backends.size() == 2 && cmp.load_outputs.empty()) ||
                    (backends.size() == 1 && cmp.load_outputs.size() == 1);
  if (!pair) return false;
  const bool needs_all = !cmp.save_outputs.empty() || cmp.top_k || cmp.validate ||
                         cmp.compare == "indices";
  if (needs_all)
    logger().verbose("Comparing marked outputs with every output in memory: --save-outputs, "
                     "--postprocess, --validate and --compare indices need them all");
  return !needs_all;
}

void save_inputs(const std::string& path, const std::vector<TensorMap>& feeds) {
  logger().info("Saving inference input data to {}", path);
  io::save_inputs(path, feeds);
}

int run_layerwise(const RunArgs& args, const std::vector<ConfiguredBackend>& backends,
                  const ComparatorOptions& cmp, FeedSource& feeds) {
  LayerwiseRunOptions options;
  options.comparison.compare = cmp.tensor;
  options.comparison.budget_bytes = cmp.mark_budget;
  options.comparison.local_error = cmp.local_error;
  options.mark_all = args.model.mark_all();
  if (!options.mark_all) options.marked = args.model.onnx_outputs;
  options.exclude = args.model.onnx_exclude_outputs;
  std::vector<TensorMap> used_feeds;
  if (!cmp.save_inputs.empty()) options.used_feeds = &used_feeds;

  ModelPtr model = OnnxFromPath(args.model.model_file, args.model.load_options())();
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
      fail_usage("failed to compare layer-wise with '{}' holding {} runners: layer-wise "
                 "comparison takes one other source; save one runner's results per file",
                 cmp.load_outputs[0], saved->size());
    other.saved = &(*saved)[0];
  }
  const LayerwiseRun run =
      LayerwiseComparator::run(model, backends[ref_at], other, feeds, options);
  if (!cmp.save_inputs.empty()) save_inputs(cmp.save_inputs, used_feeds);
  if (!cmp.report.empty() && !run.iterations.empty())
    write_html_report(cmp.report, report_from_layerwise(run), invoked_command());
  return run.passed() ? 0 : 1;
}

}  // namespace

int run_command(const RunArgs& args) {
  // Parse every value before any work, so a malformed flag fails in milliseconds.
  const ComparatorOptions cmp = args.comparator.parse();
  const std::vector<ConfiguredBackend> backends = args.backends.configure();
  if (!args.gen_script.empty()) return write_run_script(args, cmp, backends);
  if (run_needs_python(args)) return run_in_python(args, cmp, backends);
  const CompareFunc compare = cmp.compare_func();
  std::unique_ptr<FeedSource> feeds = args.data.make_feeds();

  if (layerwise_applies(args, backends, cmp)) return run_layerwise(args, backends, cmp, *feeds);

  // Load the model once; every runner shares it.
  ModelPtr loaded = backends.empty() ? nullptr : args.model.loader()();
  std::vector<std::unique_ptr<Runner>> owned;
  for (const ConfiguredBackend& b : backends)
    owned.push_back(b.make_runner(Loader<ModelPtr>(loaded)));
  std::vector<Runner*> runners;
  for (auto& r : owned) runners.push_back(r.get());

  std::vector<TensorMap> used_feeds;
  RunOptions run_options;
  run_options.warm_up = cmp.warm_up;
  if (!cmp.save_inputs.empty()) run_options.used_feeds = &used_feeds;
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
  if (cmp.top_k) Comparator::postprocess(results, postprocess_func::top_k(*cmp.top_k));

  bool success = true;
  if (results.size() > 1) {
    AccuracyResult accuracy = Comparator::compare_accuracy(results, cmp.fail_fast, std::nullopt,
                                                           compare);
    success = success && static_cast<bool>(accuracy);
    if (!cmp.report.empty())
      write_html_report(cmp.report, report_from_results(results, accuracy, cmp.tensor),
                        invoked_command());
  }
  if (cmp.validate) success = Comparator::validate(results, true, true) && success;
  return success ? 0 : 1;
}

}  // namespace parity::cli
