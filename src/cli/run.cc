#include "cli/run.h"

#include "backend/onnxrt/runner.h"
#include "backend/ref/plugin.h"
#include "backend/ref/runner.h"
#include "cli/gen_script.h"
#include "cli/layerwise.h"
#include "cli/parse_util.h"
#include "cli/scripts.h"
#include "comparator/comparator.h"
#include "core/logger.h"
#include "core/thread_pool.h"
#include "io/json.h"
#include "onnx/loaders.h"

namespace parity::cli {

CLI::App* setup_run(CLI::App& app, RunArgs& args) {
  CLI::App* sub = app.add_subcommand(
      "run", "Run inference and compare results across backends.");
  add_logging_args(*sub, args.logging);
  add_model_args(*sub, args.model, /*with_outputs=*/true);
  sub->add_flag("--pluginref,--ref")->description("Run inference on the reference backend");
  sub->add_option("--ref-threads", args.ref_threads,
                  "Reference backend threads (0 = the CPUs of the process's affinity mask)")
      ->check(CLI::Range(0, 1 << 16));
  sub->add_flag("--onnxrt")->description("Run inference with ONNX Runtime");
  add_data_loader_args(*sub, args.data);
  add_comparator_args(*sub, args.comparator);
  add_onnxrt_args(*sub, args.onnxrt);
  add_script_args(*sub, args);
  return sub;
}

void collect_runner_order(CLI::App& sub, RunArgs& args) {
  const CLI::Option* ref = sub.get_option("--pluginref");
  const CLI::Option* ort = sub.get_option("--onnxrt");
  args.runners.clear();
  for (const CLI::Option* opt : sub.parse_order()) {
    if (opt == ref) args.runners.push_back(RunnerKind::kPluginRef);
    if (opt == ort) args.runners.push_back(RunnerKind::kOnnxrt);
  }
}

int run_run(const RunArgs& args) {
  if (!args.gen_script.empty()) return write_run_script(args);
  if (run_needs_python(args)) return run_in_python(args);
  const ComparatorArgs& cmp = args.comparator;
  // Parse every value before any work, so a malformed flag fails in milliseconds.
  CompareFunc compare = cmp.compare_func();
  std::optional<TopKOptions> top_k;
  if (!cmp.postprocess.empty()) top_k = parse_top_k(cmp.postprocess);
  std::unique_ptr<FeedSource> feeds = args.data.make_feeds();
  std::optional<OrtOptions> ort_options;
  for (RunnerKind k : args.runners)
    if (k == RunnerKind::kOnnxrt) ort_options = args.onnxrt.options();

  for (const auto& path : args.plugins) ref::load_plugin(path);
  // The reference pool is process-wide; the layer-wise path builds its own runners.
  if (args.ref_threads > 0) set_num_threads(args.ref_threads);
  if (layerwise_applies(args)) return run_layerwise(args);

  // Load the model once; every runner shares it.
  Loader<ModelPtr> model = OnnxFromPath(args.model.model_file, args.model.load_options());
  if (!args.model.onnx_outputs.empty() || !args.model.onnx_exclude_outputs.empty()) {
    std::vector<std::string> names = args.model.mark_all() ? std::vector<std::string>{}
                                                           : args.model.onnx_outputs;
    model = ModifyOutputs(model, names, args.model.mark_all(), args.model.onnx_exclude_outputs);
  }
  ModelPtr loaded = args.runners.empty() ? nullptr : model();

  std::vector<std::unique_ptr<Runner>> owned;
  for (RunnerKind k : args.runners) {
    if (k == RunnerKind::kPluginRef)
      owned.push_back(std::make_unique<PluginRefRunner>(Loader<ModelPtr>(loaded)));
    else
      owned.push_back(make_onnxrt_runner(Loader<ModelPtr>(loaded), *ort_options));
  }
  std::vector<Runner*> runners;
  for (auto& r : owned) runners.push_back(r.get());

  std::vector<TensorMap> used_feeds;
  RunOptions run_options;
  run_options.warm_up = cmp.warm_up;
  if (!cmp.save_inputs.empty()) run_options.used_feeds = &used_feeds;
  RunResults results = Comparator::run(runners, *feeds, run_options);

  if (!cmp.save_inputs.empty()) {
    logger().info("Saving inference input data to {}", cmp.save_inputs);
    io::save_inputs(cmp.save_inputs, used_feeds);
  }
  if (!cmp.save_outputs.empty()) {
    logger().info("Saving inference results to {}", cmp.save_outputs);
    io::save_run_results(cmp.save_outputs, results);
  }
  for (const auto& path : cmp.load_outputs) {
    logger().info("Loading inference results from {}", path);
    for (auto& entry : io::load_run_results(path)) results.append(std::move(entry));
  }
  if (top_k) Comparator::postprocess(results, postprocess_func::top_k(*top_k));

  bool success = true;
  if (results.size() > 1) {
    AccuracyResult accuracy = Comparator::compare_accuracy(results, cmp.fail_fast, std::nullopt,
                                                           compare);
    success = success && static_cast<bool>(accuracy);
    if (!cmp.report.empty()) write_run_report(args, results, accuracy);
  }
  if (cmp.validate) success = Comparator::validate(results, true, true) && success;
  return success ? 0 : 1;
}

}  // namespace parity::cli
