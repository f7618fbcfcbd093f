// CompareFunc.simple (Polygraphy's comparator/compare.py): element-wise absolute and relative
// differences, error statistics against per-output tolerances, and the report lines.
#include <algorithm>
#include <cmath>
#include <memory>
#include <tuple>

#include <fmt/format.h>

#include "comparator/compare.h"
#include "comparator/compare_internal.h"
#include "comparator/output_stats.h"
#include "comparator/simple_verdict.h"
#include "core/error.h"
#include "core/logger.h"
#include "core/numeric.h"
#include "core/py_format.h"

namespace parity {

namespace {

// Python's min()/max() on two values: the first wins unless the second compares smaller
// (larger), so a NaN on the left sticks and a NaN on the right is ignored.
double py_min(double a, double b) { return b < a ? b : a; }
double py_max(double a, double b) { return b > a ? b : a; }

// compute_min / compute_max: zero for empty arrays.
double compute_min(const BasicStats& s) { return s.count == 0 ? 0.0 : s.min; }
double compute_max(const BasicStats& s) { return s.count == 0 ? 0.0 : s.max; }

// The flat indices of the elements beyond both tolerances (for the verbose dumps only).
std::vector<int64_t> mismatch_indices(const PairStreams& pair) {
  std::vector<int64_t> found;
  auto block = std::make_unique_for_overwrite<StreamBlock>();
  for (int64_t at = 0; at < pair.size(); ++at) {
    int64_t counts[2] = {0, 0};
    pair.read(at, 1, *block);
    pair.count(*block, 1, counts);
    if (counts[0] > 0) found.push_back(at);
  }
  return found;
}

// The verbose dumps of where and what the mismatches are (np.argwhere, out[mismatches]).
void log_mismatches(const PairStreams& pair, const Tensor& out0, const Tensor& out1,
                    const std::string& runner0, const std::string& runner1) {
  Logger::Indent indent;
  const bool indices = logger().enabled(Severity::kSuperVerbose);
  const bool values = logger().enabled(Severity::kExtraVerbose);
  if (!indices && !values) return;
  const std::vector<int64_t> mismatches = mismatch_indices(pair);
  const int64_t n = static_cast<int64_t>(mismatches.size());
  const Shape& shape = out0.shape();
  const int64_t rank = static_cast<int64_t>(shape.size());
  Tensor where(DataType::kInt64, {n, rank});
  for (int64_t m = 0; m < n; ++m) {
    int64_t flat = mismatches[static_cast<size_t>(m)];
    for (int64_t axis = rank; axis-- > 0;) {
      where.data<int64_t>()[m * rank + axis] = flat % shape[static_cast<size_t>(axis)];
      flat /= shape[static_cast<size_t>(axis)];
    }
  }
  if (indices)
    logger().log(Severity::kSuperVerbose, "Mismatched indices:\n" + numpy_array_str(where));
  if (!values) return;
  for (const auto& [runner, out] : {std::pair(&runner0, &out0), std::pair(&runner1, &out1)}) {
    const ElementReader reader(*out);
    NumArray picked{{}, num_kind_after_cast_up(out->dtype()), {n}};
    for (int64_t i : mismatches) {
      double v = 0;
      reader.read(i, 1, &v);
      picked.values.push_back(v);
    }
    Tensor values = cast_tensor(picked.to_tensor(), out->dtype());
    logger().extra_verbose("{} | Mismatched values:\n{}", pad_name(*runner),
                           numpy_array_str(values));
  }
}

struct Tolerances {
  double atol, rtol, quantile;
  ErrorStat stat;
};

// The values of a stream, for printing small arrays (at most 100 elements).
NumArray small_stream(const PairStreams& pair, int stream, const Shape& shape) {
  NumArray a{{}, pair.kind(stream), shape};
  auto block = std::make_unique_for_overwrite<StreamBlock>();
  for (int64_t at = 0; at < pair.size(); at += kStatsBlock) {
    const int64_t n = std::min(kStatsBlock, pair.size() - at);
    pair.read(at, n, *block);
    for (int64_t i = 0; i < n; ++i)
      a.values.push_back(a.kind == NumKind::kFloat32 ? static_cast<double>(block->f[stream][i])
                                                     : block->d[stream][i]);
  }
  return a;
}

// Every element of the streams as tensors of `shape`, for the figures of the errors:
// float32 streams as float32, the others (integers, bools as 0/1) as float64.
std::vector<Tensor> stream_tensors(const PairStreams& pair, const std::vector<int>& streams,
                                   const Shape& shape) {
  std::vector<Tensor> out;
  for (int s : streams)
    out.emplace_back(pair.kind(s) == NumKind::kFloat32 ? DataType::kFloat32 : DataType::kFloat64,
                     shape);
  auto block = std::make_unique_for_overwrite<StreamBlock>();
  for (int64_t at = 0; at < pair.size(); at += kStatsBlock) {
    const int64_t n = std::min(kStatsBlock, pair.size() - at);
    pair.read(at, n, *block);
    for (size_t k = 0; k < streams.size(); ++k) {
      const int s = streams[k];
      if (out[k].dtype() == DataType::kFloat32)
        std::copy_n(block->f[s], n, out[k].data<float>() + at);
      else
        std::copy_n(block->d[s], n, out[k].data<double>() + at);
    }
  }
  return out;
}

// Where the figures go and who draws them.
struct Figures {
  const ErrorPlotOptions& options;
  ErrorPlotter* plotter;
};

OutputCompareResult check_outputs_match(const Tensor& out0, const std::string& out0_name,
                                        const Tensor& out1, const std::string& out1_name,
                                        const Tolerances& tol, const std::string& runner0,
                                        const std::string& runner1, bool infinities_equal,
                                        const Figures& figures) {
  if (logger().enabled(Severity::kSuperVerbose)) {
    for (const auto& [runner, name, out] :
         {std::tuple(&runner0, &out0_name, &out0), std::tuple(&runner1, &out1_name, &out1)}) {
      std::string block = "    " + numpy_array_str(*out);
      for (size_t p = 0; (p = block.find('\n', p)) != std::string::npos; p += 5)
        block.insert(p + 1, "    ");
      logger().log(Severity::kSuperVerbose,
                   fmt::format("{} | Output: {} (dtype={}, shape={}):\n{}", pad_name(*runner),
                               *name, dtype_name(out->dtype()), shape_str(out->shape()), block));
    }
  }
  // One fused pass gives every statistic of both outputs and both differences, which are
  // computed a block at a time and never stored.
  const DiffRules rules(out0.dtype(), out1.dtype(), infinities_equal);
  const PairStreams pair(out0, out1, rules, true, tol.atol, tol.rtol);
  const int abs_s = pair.abs_stream(), rel_s = pair.rel_stream();
  std::vector<StreamRequest> requests(4);
  for (int s = 0; s < 4; ++s) {
    StreamRequest& request = requests[static_cast<size_t>(s)];
    request.median = true;
    if (pair.kind(s) != NumKind::kBool) request.quantiles = kReportQuantiles;
    if (tol.stat == ErrorStat::kQuantile && (s == abs_s || s == rel_s))
      request.quantiles.push_back(tol.quantile);
  }
  const FusedStats stats = compute_fused_stats(pair, requests);
  if (stats.counts[1] > 0)
    logger().log_once(
        Severity::kWarning,
        fmt::format("{} | Output: {}: Some values are 0. Will add a small epsilon quantity to "
                    "these when computing relative difference. Note that this may cause some "
                    "relative differences to be extremely high. ",
                    pad_name(runner1), out1_name));
  const BasicStats& abs_stats = stats.basic[static_cast<size_t>(abs_s)];
  const BasicStats& rel_stats = stats.basic[static_cast<size_t>(rel_s)];
  const OrderStats& abs_order = stats.order[static_cast<size_t>(abs_s)];
  const OrderStats& rel_order = stats.order[static_cast<size_t>(rel_s)];

  OutputCompareResult r;
  r.max_absdiff = compute_max(abs_stats);
  r.max_reldiff = compute_max(rel_stats);
  r.mean_absdiff = abs_stats.mean;
  r.mean_reldiff = rel_stats.mean;
  r.median_absdiff = abs_order.median;
  r.median_reldiff = rel_order.median;

  if (tol.stat == ErrorStat::kQuantile) {
    r.quantile_absdiff = abs_order.quantile(tol.quantile);
    r.quantile_reldiff = rel_order.quantile(tol.quantile);
  }
  ErrorSummary e;
  e.max_abs = r.max_absdiff, e.max_rel = r.max_reldiff;
  e.mean_abs = r.mean_absdiff, e.mean_rel = r.mean_reldiff;
  e.median_abs = r.median_absdiff, e.median_rel = r.median_reldiff;
  e.quantile_abs = r.quantile_absdiff, e.quantile_rel = r.quantile_reldiff;
  e.mismatches = stats.counts[0];
  r.passed = simple_verdict_passed(tol.stat, e, tol.atol, tol.rtol);
  const bool failed = !r.passed;
  if (tol.stat == ErrorStat::kElemwise) log_mismatches(pair, out0, out1, runner0, runner1);

  // The reports, with the histograms counted in one more pass only when they are printed. Both
  // outputs' histograms share one range so that they can be compared by eye.
  const size_t n = static_cast<size_t>(pair.size());
  const BasicStats& s0 = stats.basic[0];
  const BasicStats& s1 = stats.basic[1];
  const std::pair<double, double> range{py_min(compute_min(s0), compute_min(s1)),
                                        py_max(compute_max(s0), compute_max(s1))};
  std::optional<std::vector<std::array<int64_t, Histogram10::kBins>>> counts;
  std::vector<std::optional<Histogram10>> bins(4);
  const auto histogram = [&](int s) {
    return [&, s]() -> std::string {
      const size_t i = static_cast<size_t>(s);
      if (!counts) {
        for (int k = 0; k < 4; ++k)
          bins[static_cast<size_t>(k)] =
              Histogram10::make(pair.kind(k), n, k < 2 ? std::optional(range) : std::nullopt,
                                stats.basic[static_cast<size_t>(k)]);
        std::vector<const Histogram10*> use;
        for (const auto& b : bins) use.push_back(b ? &*b : nullptr);
        counts = stream_histograms(pair, use);
      }
      return bins[i] ? bins[i]->str((*counts)[i]) : std::string();
    };
  };
  const auto line = [&](int s, const std::string& name) {
    const size_t i = static_cast<size_t>(s);
    return str_output_stats(pair.kind(s), out0.shape(), n, name, stats.basic[i], stats.order[i]);
  };
  log_output_stats(
      line(0, runner0 + ": " + out0_name), failed, n, [&] { return numpy_array_str(out0); },
      histogram(0));
  log_output_stats(
      line(1, runner1 + ": " + out1_name), failed, n, [&] { return numpy_array_str(out1); },
      histogram(1));

  logger().info("Error Metrics: {}", out0_name);
  Logger::Indent indent;
  double req_abs = r.max_absdiff, req_rel = r.max_reldiff;
  std::string suffix;
  switch (tol.stat) {
    case ErrorStat::kMean:
      req_abs = r.mean_absdiff, req_rel = r.mean_reldiff;
      break;
    case ErrorStat::kMedian:
      req_abs = r.median_absdiff, req_rel = r.median_reldiff;
      break;
    case ErrorStat::kQuantile:
      req_abs = *r.quantile_absdiff, req_rel = *r.quantile_reldiff;
      suffix = fmt::format(" (quantile={})", format_repr(tol.quantile));
      break;
    case ErrorStat::kElemwise:
      suffix = " (requirements may be lower if both abs/rel tolerances are set)";
      break;
    case ErrorStat::kMax:
      break;
  }
  logger().info("Minimum Required Tolerance: {} error | [abs={}] OR [rel={}]{}",
                error_stat_name(tol.stat), format_g(req_abs, 5), format_g(req_rel, 5), suffix);
  // The figures are drawn from the compared arrays, made only for them, where Polygraphy
  // draws them: the plot after the required tolerance, each heatmap after its statistics.
  const ErrorPlotOptions& plots = figures.options;
  std::vector<Tensor> arrays;
  if (plots.any()) arrays = stream_tensors(pair, {abs_s, rel_s, 1}, out0.shape());
  if (plots.error_metrics_plot()) {
    Logger::Indent plot_indent;
    figures.plotter->error_metrics_plot(
        {arrays[0], arrays[1], arrays[2], compute_min(rel_stats), r.max_reldiff, runner0, runner1,
         out0_name, out1_name, plots.save_error_metrics_plot, plots.show_error_metrics_plot});
  }
  for (const auto& [s, name] :
       {std::pair(abs_s, "Absolute Difference"), std::pair(rel_s, "Relative Difference")}) {
    log_output_stats(
        line(s, name), failed, n,
        [&, s = s] { return numpy_array_str(small_stream(pair, s, out0.shape()).to_tensor()); },
        histogram(s));
    if (!plots.heatmaps()) continue;
    const bool relative = s == rel_s;
    const BasicStats& diff_stats = relative ? rel_stats : abs_stats;
    Logger::Indent plot_indent;
    figures.plotter->heatmaps(
        {arrays[relative ? 1 : 0], compute_min(diff_stats), compute_max(diff_stats),
         fmt::format("{} Error | {}", relative ? "Relative" : "Absolute", out0_name), relative,
         plots.save_heatmaps, plots.show_heatmaps});
  }
  return r;
}

// Strings have no arithmetic: they match when every element is equal.
OutputCompareResult check_strings_match(const Tensor& out0, const Tensor& out1,
                                        const std::string& out0_name) {
  OutputCompareResult r;
  size_t differing = 0;
  if (out0.dtype() != out1.dtype()) {
    differing = static_cast<size_t>(out0.numel());
  } else {
    const auto* s0 = out0.data<std::string>();
    const auto* s1 = out1.data<std::string>();
    for (int64_t i = 0; i < out0.numel(); ++i) differing += s0[i] != s1[i] ? 1 : 0;
  }
  r.passed = differing == 0;
  r.max_absdiff = r.mean_absdiff = r.median_absdiff = r.passed ? 0 : 1;
  r.max_reldiff = r.mean_reldiff = r.median_reldiff = r.passed ? 0 : 1;
  logger().info("String output: {} of {} element(s) differ", differing, out0.numel());
  if (!r.passed)
    logger().error("FAILED | Output: '{}' | Strings differ", out0_name);
  else
    logger().finish("PASSED | Output: '{}' | All strings are equal", out0_name);
  return r;
}

}  // namespace

CompareFunc compare_func::simple(SimpleCompareOptions options) {
  PARITY_ENFORCE(!options.plots.any() || options.plotter,
                 "CompareFunc.simple asked for figures of the errors without a plotter");
  return [options](const IterationResult& r0, const IterationResult& r1) {
    if (!options.check_shapes)
      logger().info(
          "Strict shape checking disabled. Will attempt to match output shapes before "
          "comparisons");

    auto match = [&](const std::string& out0_name, const Tensor& output0,
                     const std::string& out1_name, const Tensor& output1) {
      Tolerances tol{options.atol.get(out0_name, 1e-5), options.rtol.get(out0_name, 1e-5),
                     options.error_quantile.get(out0_name, 0.99),
                     options.check_error_stat.get(out0_name, ErrorStat::kElemwise)};
      logger().info("Tolerance: [abs={}, rel={}] | Checking {} error", format_g(tol.atol, 5),
                    format_g(tol.rtol, 5), error_stat_name(tol.stat));
      logger().extra_verbose("Note: Comparing {} vs. {}", r0.runner_name, r1.runner_name);

      if (options.check_shapes && output0.shape() != output1.shape()) {
        logger().error(
            "FAILED | Output: `{}` | Will not compare outputs of different shapes.\nNote: Output "
            "shapes are {} and {}.",
            out0_name, shape_str(output0.shape()), shape_str(output1.shape()));
        logger().log_once(Severity::kError,
                          "Note: Use --no-shape-check or set check_shapes=False to attempt to "
                          "compare values anyway.");
        return OutputCompareResult{};
      }
      if (output0.numel() != output1.numel())
        fail(
            "failed to match the shape of output '{}' {} with {}: without shape checking the "
            "element counts must still be equal",
            out0_name, shape_str(output1.shape()), shape_str(output0.shape()));
      // Without shape checking, both are viewed with the first output's shape.
      const Tensor out0 = output0;
      const Tensor out1 = output1.reshaped(output0.shape());

      OutputCompareResult result;
      if (out0.dtype() == DataType::kString || out1.dtype() == DataType::kString)
        return check_strings_match(out0, out1, out0_name);
      result = check_outputs_match(out0, out0_name, out1, out1_name, tol, r0.runner_name,
                                   r1.runner_name, options.infinities_compare_equal,
                                   {options.plots, options.plotter.get()});
      if (!result.passed)
        logger().error("FAILED | Output: '{}' | Difference exceeds tolerance (rel={}, abs={})",
                       out0_name, format_repr(tol.rtol), format_repr(tol.atol));
      else
        logger().finish("PASSED | Output: '{}' | Difference is within tolerance (rel={}, abs={})",
                        out0_name, format_repr(tol.rtol), format_repr(tol.atol));
      return result;
    };
    return run_comparison(match, options.fail_fast, r0, r1);
  };
}

}  // namespace parity
