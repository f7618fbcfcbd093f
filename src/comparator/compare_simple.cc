// CompareFunc.simple (Polygraphy's comparator/compare.py): element-wise absolute and relative
// differences, error statistics against per-output tolerances, and the report lines.
#include <cmath>
#include <tuple>

#include <fmt/format.h>

#include "comparator/compare.h"
#include "comparator/compare_internal.h"
#include "comparator/format.h"
#include "comparator/numeric.h"
#include "comparator/stats.h"
#include "core/error.h"
#include "core/logger.h"

namespace parity {

namespace {

// NumPy's machine epsilon for float64, which Polygraphy adds to exact zeros of the reference.
constexpr double kZeroEpsilon = 2.220446049250313e-16;

// Python's min()/max() on two values: the first wins unless the second compares smaller
// (larger), so a NaN on the left sticks and a NaN on the right is ignored.
double py_min(double a, double b) { return b < a ? b : a; }
double py_max(double a, double b) { return b > a ? b : a; }

// compute_min / compute_max: zero for empty arrays.
double compute_min(const BasicStats& s) { return s.count == 0 ? 0.0 : s.min; }
double compute_max(const BasicStats& s) { return s.count == 0 ? 0.0 : s.max; }

struct Differences {
  NumArray absdiff, reldiff;
};

// absdiff = |out0 - out1| (xor for two bools), reldiff = absdiff / |out1|, both in the precision
// NumPy would use after cast_up. Exact zeros of a floating reference get an epsilon added.
Differences compute_differences(const NumArray& a0, const NumArray& a1, bool infinities_equal,
                                const std::string& runner1, const std::string& out1_name) {
  Differences d;
  const size_t n = a0.size();
  const bool both_bool = a0.kind == NumKind::kBool && a1.kind == NumKind::kBool;
  const NumKind abs_kind = both_bool ? NumKind::kBool : promote(a0.kind, a1.kind);
  NumKind rel_kind = promote(abs_kind, a1.kind);
  if (rel_kind == NumKind::kBool || rel_kind == NumKind::kInt) rel_kind = NumKind::kFloat64;
  const bool ref_floating = a1.kind == NumKind::kFloat32 || a1.kind == NumKind::kFloat64;
  const double epsilon = round_to_kind(kZeroEpsilon, a1.kind);

  d.absdiff = NumArray{std::vector<double>(n), abs_kind, a0.shape};
  d.reldiff = NumArray{std::vector<double>(n), rel_kind, a0.shape};
  bool any_zero = false;
  for (size_t i = 0; i < n; ++i) {
    const double x = a0.values[i], y = a1.values[i];
    double abs = both_bool ? static_cast<double>((x != 0) != (y != 0))
                           : round_to_kind(std::fabs(x - y), abs_kind);
    if (infinities_equal && std::isinf(x) && x == y) abs = 0;
    double ref = y;
    if (ref_floating && ref == 0) {
      any_zero = true;
      ref = epsilon;
    }
    d.absdiff.values[i] = abs;
    d.reldiff.values[i] = round_to_kind(abs / std::fabs(ref), rel_kind);
  }
  if (any_zero)
    logger().log_once(
        Severity::kWarning,
        fmt::format("{} | Output: {}: Some values are 0. Will add a small epsilon quantity to "
                    "these when computing relative difference. Note that this may cause some "
                    "relative differences to be extremely high. ",
                    pad_name(runner1), out1_name));
  return d;
}

// Polygraphy's stat_failed: NaN always fails.
bool stat_failed(double value, double tolerance) {
  return std::isnan(value) || value > tolerance;
}

// elemwise: an element mismatches when it exceeds both tolerances (or either is NaN). The
// tolerance is compared in the difference's own precision, as NumPy does with a Python float.
std::vector<size_t> elemwise_mismatches(const Differences& d, double atol, double rtol) {
  const double abs_tol = round_to_kind(atol, d.absdiff.kind);
  const double rel_tol = round_to_kind(rtol, d.reldiff.kind);
  std::vector<size_t> mismatches;
  for (size_t i = 0; i < d.absdiff.size(); ++i) {
    const double a = d.absdiff.values[i], r = d.reldiff.values[i];
    if ((std::isnan(a) || a > abs_tol) && (std::isnan(r) || r > rel_tol)) mismatches.push_back(i);
  }
  return mismatches;
}

// The verbose dumps of where and what the mismatches are (np.argwhere, out[mismatches]).
void log_mismatches(const std::vector<size_t>& mismatches, const NumArray& a0, const NumArray& a1,
                    const Tensor& out0, const Tensor& out1, const std::string& runner0,
                    const std::string& runner1) {
  Logger::Indent indent;
  const int64_t n = static_cast<int64_t>(mismatches.size());
  if (logger().enabled(Severity::kSuperVerbose)) {
    const int64_t rank = static_cast<int64_t>(a0.shape.size());
    Tensor where(DataType::kInt64, {n, rank});
    for (int64_t m = 0; m < n; ++m) {
      int64_t flat = static_cast<int64_t>(mismatches[static_cast<size_t>(m)]);
      for (int64_t axis = rank; axis-- > 0;) {
        where.data<int64_t>()[m * rank + axis] = flat % a0.shape[static_cast<size_t>(axis)];
        flat /= a0.shape[static_cast<size_t>(axis)];
      }
    }
    logger().log(Severity::kSuperVerbose, "Mismatched indices:\n" + numpy_array_str(where));
  }
  if (!logger().enabled(Severity::kExtraVerbose)) return;
  for (const auto& [runner, a, out] : {std::tuple(&runner0, &a0, &out0), std::tuple(&runner1, &a1, &out1)}) {
    NumArray picked{{}, num_kind_after_cast_up(out->dtype()), {n}};
    for (size_t i : mismatches) picked.values.push_back(a->values[i]);
    Tensor values = cast_tensor(picked.to_tensor(), out->dtype());
    logger().extra_verbose("{} | Mismatched values:\n{}", pad_name(*runner), numpy_array_str(values));
  }
}

struct Tolerances {
  double atol, rtol, quantile;
  ErrorStat stat;
};

OutputCompareResult check_outputs_match(const Tensor& out0, const std::string& out0_name,
                                        const Tensor& out1, const std::string& out1_name,
                                        const Tolerances& tol, const std::string& runner0,
                                        const std::string& runner1, bool infinities_equal) {
  const NumArray a0 = to_num_array(out0);
  const NumArray a1 = to_num_array(out1);
  if (logger().enabled(Severity::kSuperVerbose)) {
    for (const auto& [runner, name, out] :
         {std::tuple(&runner0, &out0_name, &out0), std::tuple(&runner1, &out1_name, &out1)}) {
      std::string block = "    " + numpy_array_str(*out);
      for (size_t p = 0; (p = block.find('\n', p)) != std::string::npos; p += 5) block.insert(p + 1, "    ");
      logger().log(Severity::kSuperVerbose,
                   fmt::format("{} | Output: {} (dtype={}, shape={}):\n{}", pad_name(*runner), *name,
                               dtype_name(out->dtype()), shape_str(out->shape()), block));
    }
  }
  const Differences d = compute_differences(a0, a1, infinities_equal, runner1, out1_name);

  OutputCompareResult r;
  const BasicStats abs_stats = compute_basic_stats(d.absdiff);
  const BasicStats rel_stats = compute_basic_stats(d.reldiff);
  OrderStats abs_order(d.absdiff), rel_order(d.reldiff);
  r.max_absdiff = compute_max(abs_stats);
  r.max_reldiff = compute_max(rel_stats);
  r.mean_absdiff = abs_stats.mean;
  r.mean_reldiff = rel_stats.mean;
  r.median_absdiff = abs_order.median();
  r.median_reldiff = rel_order.median();

  bool failed = false;
  switch (tol.stat) {
    case ErrorStat::kMean:
      failed = stat_failed(r.mean_absdiff, tol.atol) && stat_failed(r.mean_reldiff, tol.rtol);
      break;
    case ErrorStat::kMedian:
      failed = stat_failed(r.median_absdiff, tol.atol) && stat_failed(r.median_reldiff, tol.rtol);
      break;
    case ErrorStat::kMax:
      failed = stat_failed(r.max_absdiff, tol.atol) && stat_failed(r.max_reldiff, tol.rtol);
      break;
    case ErrorStat::kQuantile:
      r.quantile_absdiff = abs_order.quantile(tol.quantile);
      r.quantile_reldiff = rel_order.quantile(tol.quantile);
      failed = stat_failed(*r.quantile_absdiff, tol.atol) &&
               stat_failed(*r.quantile_reldiff, tol.rtol);
      break;
    case ErrorStat::kElemwise:
    {
      const std::vector<size_t> mismatches = elemwise_mismatches(d, tol.atol, tol.rtol);
      failed = !mismatches.empty();
      log_mismatches(mismatches, a0, a1, out0, out1, runner0, runner1);
    }
      break;
  }
  r.passed = !failed;

  // Both outputs' histograms share one range so that they can be compared by eye.
  const BasicStats s0 = compute_basic_stats(a0), s1 = compute_basic_stats(a1);
  std::pair<double, double> range{py_min(compute_min(s0), compute_min(s1)),
                                  py_max(compute_max(s0), compute_max(s1))};
  log_output_stats(a0, failed, runner0 + ": " + out0_name, range, &out0, &s0);
  log_output_stats(a1, failed, runner1 + ": " + out1_name, range, &out1, &s1);

  logger().info("Error Metrics: {}", out0_name);
  Logger::Indent indent;
  double req_abs = r.max_absdiff, req_rel = r.max_reldiff;
  std::string suffix;
  switch (tol.stat) {
    case ErrorStat::kMean: req_abs = r.mean_absdiff, req_rel = r.mean_reldiff; break;
    case ErrorStat::kMedian: req_abs = r.median_absdiff, req_rel = r.median_reldiff; break;
    case ErrorStat::kQuantile:
      req_abs = *r.quantile_absdiff, req_rel = *r.quantile_reldiff;
      suffix = fmt::format(" (quantile={})", format_repr(tol.quantile));
      break;
    case ErrorStat::kElemwise:
      suffix = " (requirements may be lower if both abs/rel tolerances are set)";
      break;
    case ErrorStat::kMax: break;
  }
  logger().info("Minimum Required Tolerance: {} error | [abs={}] OR [rel={}]{}",
                error_stat_name(tol.stat), format_g(req_abs, 5), format_g(req_rel, 5), suffix);
  log_output_stats(d.absdiff, failed, "Absolute Difference", std::nullopt, nullptr, &abs_stats,
                   &abs_order);
  log_output_stats(d.reldiff, failed, "Relative Difference", std::nullopt, nullptr, &rel_stats,
                   &rel_order);
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
  if (!r.passed) logger().error("FAILED | Output: '{}' | Strings differ", out0_name);
  else logger().finish("PASSED | Output: '{}' | All strings are equal", out0_name);
  return r;
}

}  // namespace

CompareFunc compare_func::simple(SimpleCompareOptions options) {
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
        fail("failed to match the shape of output '{}' {} with {}: without shape checking the "
             "element counts must still be equal",
             out0_name, shape_str(output1.shape()), shape_str(output0.shape()));
      // Without shape checking, both are viewed with the first output's shape.
      const Tensor out0 = output0;
      const Tensor out1 = output1.reshaped(output0.shape());

      OutputCompareResult result;
      if (out0.dtype() == DataType::kString || out1.dtype() == DataType::kString)
        return check_strings_match(out0, out1, out0_name);
      result = check_outputs_match(out0, out0_name, out1, out1_name, tol, r0.runner_name,
                                   r1.runner_name, options.infinities_compare_equal);
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
