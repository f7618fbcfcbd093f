#include "cli/comparator_args.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "cli/option_checks.h"
#include "cli/parse_util.h"
#include "cli/value_checks.h"
#include "core/error.h"

namespace parity::cli {

namespace fs = std::filesystem;

namespace {

void check_range(const std::string& flag, const PerOutput<double>& values, double min, double max,
                 const char* rule) {
  for (const auto& [name, v] : values.values)
    if (!(v >= min && v <= max)) fail_usage("failed to parse {} with value {}: {}", flag, v, rule);
}

// The figures are CompareFunc.simple's, saved into folders.
void check_plot_options(const ErrorPlotOptions& plots, const std::string& compare) {
  const std::pair<const char*, const std::string*> folders[] = {
      {"--save-heatmaps", &plots.save_heatmaps},
      {"--save-error-metrics-plot", &plots.save_error_metrics_plot}};
  for (const auto& [flag, dir] : folders) {
    std::error_code ec;
    if (!dir->empty() && fs::exists(*dir, ec) && !fs::is_directory(*dir, ec))
      fail_usage(
          "failed to use {} with value '{}': it is a file, and the figures are saved "
          "into a folder (made when missing); give a folder",
          flag, *dir);
  }
  if (plots.any() && compare != "simple")
    fail_usage(
        "failed to use {}: the figures of the errors are CompareFunc.simple's, and "
        "--compare is '{}'; use --compare simple or leave the figures out",
        plot_flag(plots), compare);
}

}  // namespace

std::string plot_flag(const ErrorPlotOptions& plots) {
  if (!plots.save_heatmaps.empty()) return "--save-heatmaps";
  if (plots.show_heatmaps) return "--show-heatmaps";
  if (!plots.save_error_metrics_plot.empty()) return "--save-error-metrics-plot";
  return "--show-error-metrics-plot";
}

SimpleCompareOptions ComparatorOptions::simple() const {
  SimpleCompareOptions o;
  o.check_shapes = tensor.check_shapes;
  o.atol = tensor.atol;
  o.rtol = tensor.rtol;
  o.check_error_stat = tensor.check_error_stat;
  o.error_quantile = tensor.error_quantile;
  o.infinities_compare_equal = tensor.infinities_compare_equal;
  o.fail_fast = fail_fast;
  o.plots = plots;
  return o;
}

DistanceCompareOptions ComparatorOptions::distance() const {
  DistanceCompareOptions d;
  d.check_shapes = tensor.check_shapes;
  d.l2_tolerance = tensor.l2_tolerance;
  d.cosine_similarity_threshold = tensor.cosine_similarity_threshold;
  d.fail_fast = fail_fast;
  return d;
}

QualityCompareOptions ComparatorOptions::quality() const {
  QualityCompareOptions q;
  q.check_shapes = tensor.check_shapes;
  q.psnr_tolerance = tensor.psnr_tolerance;
  q.snr_tolerance = tensor.snr_tolerance;
  q.fail_fast = fail_fast;
  return q;
}

CompareFunc ComparatorOptions::compare_func(std::shared_ptr<ErrorPlotter> plotter) const {
  if (compare == "indices") return compare_func::indices(indices);
  if (compare == "distance") return compare_func::distance(distance());
  if (compare == "quality") return compare_func::quality(quality());
  SimpleCompareOptions o = simple();
  o.plotter = std::move(plotter);
  return compare_func::simple(o);
}

ComparatorOptions ComparatorArgs::parse() const {
  ComparatorOptions o;
  o.warm_up = warm_up;
  o.use_subprocess = use_subprocess || subprocess_timeout;
  o.subprocess_timeout = subprocess_timeout;
  o.save_inputs = save_inputs;
  o.save_outputs = save_outputs;
  o.load_outputs = load_outputs;
  o.validate = validate;
  o.fail_fast = fail_fast;
  o.compare = compare;
  TensorCompareOptions& t = o.tensor;
  if (compare == "distance")
    t.metric = CompareMetric::kDistance;
  else if (compare == "quality")
    t.metric = CompareMetric::kQuality;
  t.check_shapes = !no_shape_check;
  if (!atol.empty()) t.atol = parse_per_output_number("--atol", atol);
  if (!rtol.empty()) t.rtol = parse_per_output_number("--rtol", rtol);
  check_tolerances("--atol", t.atol);
  check_tolerances("--rtol", t.rtol);
  if (!check_error_stat.empty()) t.check_error_stat = parse_per_output_error_stat(check_error_stat);
  if (!error_quantile.empty())
    t.error_quantile = parse_per_output_number("--error-quantile", error_quantile);
  check_range("--error-quantile", t.error_quantile, 0.0, 1.0, "a quantile must be within [0, 1]");
  t.infinities_compare_equal = infinities_compare_equal;
  if (!l2_tolerance.empty())
    t.l2_tolerance = parse_per_output_number("--l2-tolerance", l2_tolerance);
  if (!cosine_similarity_threshold.empty())
    t.cosine_similarity_threshold =
        parse_per_output_number("--cosine-similarity-threshold", cosine_similarity_threshold);
  check_range("--cosine-similarity-threshold", t.cosine_similarity_threshold, -1.0, 1.0,
              "a cosine similarity is within [-1, 1]");
  if (!psnr_tolerance.empty())
    t.psnr_tolerance = parse_per_output_number("--psnr-tolerance", psnr_tolerance);
  if (!snr_tolerance.empty())
    t.snr_tolerance = parse_per_output_number("--snr-tolerance", snr_tolerance);
  t.with_profile = !report.empty();
  if (!index_tolerance.empty())
    o.indices.index_tolerance = parse_per_output_int("--index-tolerance", index_tolerance);
  o.indices.fail_fast = fail_fast;
  if (!postprocess.empty()) o.top_k = parse_top_k(postprocess);
  o.mark_budget =
      mark_budget.empty() ? default_mark_budget() : parse_byte_size("--mark-budget", mark_budget);
  o.local_error = local_error;
  o.report = report;
  o.plots = {save_heatmaps, show_heatmaps, save_error_metrics_plot, show_error_metrics_plot};
  check_plot_options(o.plots, compare);
  return o;
}

size_t default_mark_budget() {
  size_t budget = size_t{1} << 30;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0)
    budget = std::min(budget, static_cast<size_t>(pages) * static_cast<size_t>(page) / 4);
  return budget;
}

void add_comparator_args(CLI::App& app, ComparatorArgs& args) {
  const char* run = "Comparator Inference";
  check_range(
      app.add_option("--warm-up", args.warm_up, "Number of warm-up runs before timing inference"),
      int64_t{0}, int64_t{1} << 30)
      ->group(run);
  app.add_flag("--use-subprocess", args.use_subprocess,
               "Run runners in isolated subprocesses: a runner whose backend crashes fails "
               "with its own error and the others still compare. Cannot be used with a debugger")
      ->group(run);
  check_range(app.add_option(
                  "--subprocess-timeout", args.subprocess_timeout,
                  "With --use-subprocess: seconds to wait for a runner's answer (its activation, "
                  "one inference) before its process is killed and the runner fails"),
              0.001, 1e9)
      ->group(run);
  app.add_option("--save-inputs,--save-input-data", args.save_inputs,
                 "Save the inference inputs (JSON, Polygraphy's format)")
      ->group(run);
  app.add_option("--save-outputs,--save-results", args.save_outputs,
                 "Save the runners' results (JSON, Polygraphy's format)")
      ->group(run);
  const char* cmp = "Comparator Comparisons";
  app.add_option("--load-outputs,--load-results", args.load_outputs,
                 "Results saved earlier, compared after this command's runners")
      ->group(cmp);
  app.add_flag("--validate", args.validate, "Check outputs for NaNs and Infs")->group(cmp);
  app.add_flag("--fail-fast", args.fail_fast, "Stop comparing after the first failure")->group(cmp);
  app.add_option("--compare,--compare-func", args.compare,
                 "Comparison function. Defaults to simple")
      ->check(CLI::IsMember({"simple", "indices", "distance", "quality"}))
      ->group(cmp);
  app.add_option("--postprocess,--postprocess-func", args.postprocess,
                 "Replace outputs before comparing: [<output>:]top-<K>[,axis=<A>]")
      ->group("Comparator Postprocessing");
  // Each compare function's flags in its own group, named as Polygraphy names them.
  const char* fn = "Comparison Function: `simple`";
  const char* indices = "Comparison Function: `indices`";
  const char* distance = "Comparison Function: `distance`";
  const char* quality = "Comparison Function: `quality`";
  app.add_option("--atol,--abs-tol", args.atol,
                 "Absolute tolerance: <value> or <output>:<value>. Defaults to 1e-5")
      ->group(fn);
  app.add_option("--rtol,--rel-tol", args.rtol,
                 "Relative tolerance: <value> or <output>:<value>. Defaults to 1e-5")
      ->group(fn);
  app.add_option("--check-error-stat", args.check_error_stat,
                 "Error statistic to check: elemwise, max, mean, median or quantile, per output "
                 "as <output>:<stat>. Defaults to elemwise")
      ->group(fn);
  app.add_option("--error-quantile", args.error_quantile,
                 "Quantile for --check-error-stat quantile, in [0, 1]. Defaults to 0.99")
      ->group(fn);
  app.add_option("--index-tolerance", args.index_tolerance,
                 "Index tolerance for --compare indices. Defaults to 0")
      ->group(indices);
  app.add_flag("--infinities-compare-equal", args.infinities_compare_equal,
               "Matching infinities compare equal (otherwise they count as NaN)")
      ->group(fn);
  app.add_flag("--no-shape-check", args.no_shape_check,
               "Compare outputs whose shapes differ but hold the same number of elements")
      ->group(fn);
  app.add_option("--l2-tolerance", args.l2_tolerance,
                 "--compare distance: largest L2 norm of the difference, <value> or "
                 "<output>:<value>. Defaults to 1e-5")
      ->group(distance);
  app.add_option("--cosine-similarity-threshold", args.cosine_similarity_threshold,
                 "--compare distance: smallest cosine similarity, in [-1, 1]. Defaults to 0.997")
      ->group(distance);
  app.add_option("--psnr-tolerance", args.psnr_tolerance,
                 "--compare quality: smallest PSNR in dB. Defaults to 30")
      ->group(quality);
  app.add_option("--snr-tolerance", args.snr_tolerance,
                 "--compare quality: smallest SNR in dB. Defaults to 20")
      ->group(quality);
  app.add_option("--save-heatmaps", args.save_heatmaps,
                 "[EXPERIMENTAL] Folder in which to save heatmaps of the absolute and relative "
                 "error of each output (SVG; needs python3-matplotlib)")
      ->group(fn);
  app.add_flag("--show-heatmaps", args.show_heatmaps,
               "[EXPERIMENTAL] Show heatmaps of the absolute and relative error in windows "
               "(needs a display)")
      ->group(fn);
  app.add_option("--save-error-metrics-plot", args.save_error_metrics_plot,
                 "[EXPERIMENTAL] Folder in which to save plots of the absolute and relative "
                 "error against the reference output's magnitude (PNG; needs "
                 "python3-matplotlib). Made if missing")
      ->group(fn);
  app.add_flag("--show-error-metrics-plot", args.show_error_metrics_plot,
               "[EXPERIMENTAL] Show the error metrics plots in windows (needs a display)")
      ->group(fn);
  const char* lw = "Layer-wise Comparison and Report";
  app.add_option("--mark-budget", args.mark_budget,
                 "Layer-wise runs: memory for held and fetched marked tensors, in bytes or with a "
                 "K/M/G suffix. Defaults to 1G (at most a quarter of the memory)")
      ->group(lw);
  app.add_flag("--local-error", args.local_error,
               "Layer-wise runs: re-run each node on the reference with the other backend's "
               "inputs, to split its error into added and inherited")
      ->group(lw);
  app.add_option("--report", args.report,
                 "Write a self-contained HTML report of the comparison to this file")
      ->group(lw);
}

}  // namespace parity::cli
