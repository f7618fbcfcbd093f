#include "cli/layerwise.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "backend/onnxrt/runner.h"
#include "backend/ref/runner.h"
#include "cli/layerwise_backends.h"
#include "cli/parse_util.h"
#include "cli/run.h"
#include "comparator/format.h"
#include "comparator/report_html.h"
#include "core/logger.h"
#include "io/json.h"

namespace parity::cli {

void add_layerwise_args(CLI::App& app, ComparatorArgs& args) {
  app.add_option("--mark-budget", args.mark_budget,
                 "Layer-wise runs: memory for held and fetched marked tensors, in bytes or with a "
                 "K/M/G suffix. Defaults to 1G (at most a quarter of the memory)");
  app.add_flag("--local-error", args.local_error,
               "Layer-wise runs: re-run each node on the reference with the other backend's "
               "inputs, to split its error into added and inherited");
  app.add_option("--report", args.report,
                 "Write a self-contained HTML report of the comparison to this file");
  app.add_option("--l2-tolerance", args.l2_tolerance,
                 "--compare distance: largest L2 norm of the difference, <value> or "
                 "<output>:<value>. Defaults to 1e-5");
  app.add_option("--cosine-similarity-threshold", args.cosine_similarity_threshold,
                 "--compare distance: smallest cosine similarity, in [-1, 1]. Defaults to 0.997");
  app.add_option("--psnr-tolerance", args.psnr_tolerance,
                 "--compare quality: smallest PSNR in dB. Defaults to 30");
  app.add_option("--snr-tolerance", args.snr_tolerance,
                 "--compare quality: smallest SNR in dB. Defaults to 20");
}

size_t parse_byte_size(const std::string& flag, const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) ||
                                  text[digits] == '.'))
    ++digits;
  std::string unit = text.substr(digits);
  std::transform(unit.begin(), unit.end(), unit.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  const std::optional<double> value = parse_number(text.substr(0, digits));
  const std::pair<const char*, double> units[] = {
      {"", 1},          {"b", 1},         {"k", 0x1p10},   {"kb", 0x1p10}, {"kib", 0x1p10},
      {"m", 0x1p20},    {"mb", 0x1p20},   {"mib", 0x1p20}, {"g", 0x1p30},  {"gb", 0x1p30},
      {"gib", 0x1p30},  {"t", 0x1p40},    {"tb", 0x1p40},  {"tib", 0x1p40}};
  for (const auto& [name, scale] : units)
    if (value && digits > 0 && unit == name && *value * scale >= 1 && *value * scale < 0x1p62)
      return static_cast<size_t>(*value * scale);
  fail_usage("failed to parse {} with value '{}': a size is a positive number of bytes with an "
             "optional unit; valid units are K, M, G, T (powers of 1024, also KB/KiB...)",
             flag, text);
}

size_t mark_budget_bytes(const ComparatorArgs& args) {
  if (!args.mark_budget.empty()) return parse_byte_size("--mark-budget", args.mark_budget);
  size_t budget = size_t{1} << 30;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0)
    budget = std::min(budget, static_cast<size_t>(pages) * static_cast<size_t>(page) / 4);
  return budget;
}

TensorCompareOptions tensor_compare_options(const ComparatorArgs& args) {
  TensorCompareOptions o;
  if (args.compare == "distance") o.metric = CompareMetric::kDistance;
  else if (args.compare == "quality") o.metric = CompareMetric::kQuality;
  o.check_shapes = !args.no_shape_check;
  if (!args.atol.empty()) o.atol = parse_per_output_number("--atol", args.atol);
  if (!args.rtol.empty()) o.rtol = parse_per_output_number("--rtol", args.rtol);
  if (!args.check_error_stat.empty())
    o.check_error_stat = parse_per_output_error_stat(args.check_error_stat);
  if (!args.error_quantile.empty())
    o.error_quantile = parse_per_output_number("--error-quantile", args.error_quantile);
  for (const auto& [name, q] : o.error_quantile.values)
    if (!(q >= 0.0 && q <= 1.0))
      fail_usage("failed to parse --error-quantile with value {}: a quantile must be within "
                 "[0, 1]", q);
  o.infinities_compare_equal = args.infinities_compare_equal;
  if (!args.l2_tolerance.empty())
    o.l2_tolerance = parse_per_output_number("--l2-tolerance", args.l2_tolerance);
  if (!args.cosine_similarity_threshold.empty())
    o.cosine_similarity_threshold =
        parse_per_output_number("--cosine-similarity-threshold", args.cosine_similarity_threshold);
  for (const auto& [name, c] : o.cosine_similarity_threshold.values)
    if (!(c >= -1.0 && c <= 1.0))
      fail_usage("failed to parse --cosine-similarity-threshold with value {}: a cosine "
                 "similarity is within [-1, 1]", c);
  if (!args.psnr_tolerance.empty())
    o.psnr_tolerance = parse_per_output_number("--psnr-tolerance", args.psnr_tolerance);
  if (!args.snr_tolerance.empty())
    o.snr_tolerance = parse_per_output_number("--snr-tolerance", args.snr_tolerance);
  o.with_profile = !args.report.empty();
  return o;
}

CompareFunc metric_compare_func(const ComparatorArgs& args) {
  const TensorCompareOptions o = tensor_compare_options(args);
  if (o.metric == CompareMetric::kQuality) {
    QualityCompareOptions q;
    q.check_shapes = o.check_shapes;
    q.psnr_tolerance = o.psnr_tolerance;
    q.snr_tolerance = o.snr_tolerance;
    q.fail_fast = args.fail_fast;
    return compare_func::quality(q);
  }
  DistanceCompareOptions d;
  d.check_shapes = o.check_shapes;
  d.l2_tolerance = o.l2_tolerance;
  d.cosine_similarity_threshold = o.cosine_similarity_threshold;
  d.fail_fast = args.fail_fast;
  return compare_func::distance(d);
}

bool layerwise_applies(const RunArgs& args) {
  const ComparatorArgs& cmp = args.comparator;
  if (args.model.onnx_outputs.empty() && args.model.onnx_exclude_outputs.empty()) return false;
  const long refs = std::count(args.runners.begin(), args.runners.end(), RunnerKind::kPluginRef);
  const bool pair = (args.runners.size() == 2 && cmp.load_outputs.empty()) ||
                    (args.runners.size() == 1 && cmp.load_outputs.size() == 1);
  if (refs == 0 || !pair) return false;
  const bool needs_all = !cmp.save_outputs.empty() || !cmp.postprocess.empty() || cmp.validate ||
                         cmp.compare == "indices";
  if (needs_all)
    logger().verbose("Comparing marked outputs with every output in memory: --save-outputs, "
                     "--postprocess, --validate and --compare indices need them all");
  return !needs_all;
}

namespace {

std::vector<std::string> marked_names(const RunArgs& args, const ir::Model& model) {
  std::vector<std::string> names = args.model.mark_all() ? std::vector<std::string>{}
                                                         : args.model.onnx_outputs;
  ModelPtr marked = onnx_io::modify_outputs(model, names, args.model.mark_all(),
                                            args.model.onnx_exclude_outputs);
  names.clear();
  for (const auto& out : marked->graph.outputs) names.push_back(out.name);
  return names;
}

}  // namespace

int run_layerwise(const RunArgs& args) {
  const ComparatorArgs& cmp = args.comparator;
  LayerwiseOptions options;
  options.compare = tensor_compare_options(cmp);  // every flag parsed before any work
  options.budget_bytes = mark_budget_bytes(cmp);
  options.local_error = cmp.local_error;
  std::unique_ptr<FeedSource> feeds = args.data.make_feeds();

  ModelPtr model = OnnxFromPath(args.model.model_file, args.model.load_options())();
  const std::vector<std::string> marked = marked_names(args, *model);

  // The reference streams; the other side is the remaining runner or the saved results.
  const size_t ref_at = static_cast<size_t>(
      std::find(args.runners.begin(), args.runners.end(), RunnerKind::kPluginRef) -
      args.runners.begin());
  options.other_is_first = args.runners.size() == 2 && ref_at == 1;
  PluginRefRunner reference{Loader<ModelPtr>(model)};
  options.reference_name = reference.name();
  std::optional<OrtOptions> ort_options;
  std::optional<RunResults> saved;
  if (args.runners.size() == 2 && args.runners[1 - ref_at] == RunnerKind::kOnnxrt) {
    ort_options = args.onnxrt.options();
    // Made once for its name (and to load ONNX Runtime before the reference runs).
    options.other_name = make_onnxrt_runner(Loader<ModelPtr>(model), *ort_options)->name();
  } else if (args.runners.size() == 2) {
    options.other_name = PluginRefRunner(Loader<ModelPtr>(model)).name();
  } else {
    logger().info("Loading inference results from {}", cmp.load_outputs[0]);
    saved = io::load_run_results(cmp.load_outputs[0]);
    if (saved->size() != 1)
      fail_usage("failed to compare layer-wise with '{}' holding {} runners: layer-wise "
                 "comparison takes one other source; save one runner's results per file",
                 cmp.load_outputs[0], saved->size());
    options.other_name = (*saved)[0].first;
  }

  logger().start("Layer-wise Comparison | {} vs. {} | {} marked tensor(s), budget {}",
                 options.other_is_first ? options.other_name : options.reference_name,
                 options.other_is_first ? options.reference_name : options.other_name,
                 marked.size(), format_bytes(options.budget_bytes));
  RunnerActivation active(reference);
  feeds->set_input_metadata(reference.input_metadata());
  std::vector<TensorMap> used_feeds;
  std::vector<LayerwiseResult> iterations;
  for (size_t i = 0;; ++i) {
    std::optional<TensorMap> feed = feeds->get(i);
    if (!feed) break;
    if (saved && i >= (*saved)[0].second.size()) break;
    if (!cmp.save_inputs.empty()) used_feeds.push_back(*feed);
    if (feeds->size().value_or(1) > 1) logger().info("Iteration: {}", i);
    Logger::Indent indent;
    BatchFetcher fetch =
        ort_options ? onnxrt_batches(model, *ort_options, options.other_name, *feed)
        : saved     ? saved_batches((*saved)[0].second[i].outputs)
                    : reference_batches(model, *feed);
    LayerwiseComparison comparison(model->graph, marked, options, fetch,
                                   options.local_error ? single_node_runner(model) : nullptr);
    comparison.set_feed(*feed);
    reference.executor().set_observer(
        [&](const ir::Node& node, const std::vector<Value>& outputs) {
          comparison.on_node(node, outputs);
        });
    reference.infer(*feed);
    reference.executor().set_observer(nullptr);
    iterations.push_back(comparison.finish());
    log_layerwise_summary(iterations.back(), options);
  }
  if (!cmp.save_inputs.empty()) {
    logger().info("Saving inference input data to {}", cmp.save_inputs);
    io::save_inputs(cmp.save_inputs, used_feeds);
  }

  size_t passed = 0;
  for (const auto& r : iterations) passed += r.passed() ? 1 : 0;
  const std::string runner0 = options.other_is_first ? options.other_name : options.reference_name;
  const std::string runner1 = options.other_is_first ? options.reference_name : options.other_name;
  const std::string summary = fmt::format(
      "Accuracy Summary | {} vs. {} | Passed: {}/{} iterations | Pass Rate: {}%", runner0,
      runner1, passed, iterations.size(),
      format_repr(iterations.empty() ? 100.0 : 100.0 * passed / iterations.size()));
  if (passed == iterations.size()) logger().finish("{}", summary);
  else logger().error("{}", summary);

  if (!cmp.report.empty() && !iterations.empty()) {
    // The first failing iteration, else the first.
    size_t shown = 0;
    while (shown + 1 < iterations.size() && iterations[shown].passed()) ++shown;
    HtmlReportData data;
    data.command = process_command_line();
    data.runner0 = runner0;
    data.runner1 = runner1;
    data.metric = options.compare.metric;
    data.passed = passed == iterations.size();
    data.outputs = iterations[shown].tensors;
    data.layerwise = &iterations[shown];
    if (iterations.size() > 1) data.title += fmt::format(" (iteration {})", shown);
    logger().info("Writing the report to {}", cmp.report);
    io::write_file(cmp.report, render_html_report(data));
  }
  return passed == iterations.size() ? 0 : 1;
}

}  // namespace parity::cli
