// CompareFunc.distance_metrics and CompareFunc.quality_metrics (Polygraphy has them in its Python
// API only; Parity offers them on the CLI too): whole-tensor metrics from one fused pass
// (tensor_error.h), accumulated in double, with per-output thresholds.
#include <fmt/format.h>

#include "comparator/compare.h"
#include "comparator/compare_internal.h"
#include "comparator/output_stats.h"
#include "comparator/tensor_error.h"
#include "core/logger.h"
#include "core/numeric.h"
#include "core/py_format.h"

namespace parity {

namespace {

double py_min(double a, double b) { return b < a ? b : a; }
double py_max(double a, double b) { return b > a ? b : a; }

// Logs both outputs' stats lines (values and histogram when failed), as CompareFunc.simple does,
// so that every compare function shows what it compared.
void log_both_outputs(const IterationResult& r0, const std::string& out0_name, const Tensor& out0,
                      const IterationResult& r1, const std::string& out1_name, const Tensor& out1,
                      bool failed) {
  if (!dtype_is_numeric(out0.dtype()) || !dtype_is_numeric(out1.dtype())) return;
  const NumArray a0 = to_num_array(out0), a1 = to_num_array(out1);
  const BasicStats s0 = compute_basic_stats(a0), s1 = compute_basic_stats(a1);
  auto min_of = [](const BasicStats& s) { return s.count == 0 ? 0.0 : s.min; };
  auto max_of = [](const BasicStats& s) { return s.count == 0 ? 0.0 : s.max; };
  std::pair<double, double> range{py_min(min_of(s0), min_of(s1)), py_max(max_of(s0), max_of(s1))};
  log_output_stats(a0, failed, r0.runner_name + ": " + out0_name, range, &out0, &s0);
  log_output_stats(a1, failed, r1.runner_name + ": " + out1_name, range, &out1, &s1);
}

OutputCompareResult to_result(const TensorErrorStats& s) {
  OutputCompareResult r;
  r.passed = s.passed;
  r.max_absdiff = s.max_abs;
  r.max_reldiff = s.max_rel;
  r.mean_absdiff = s.mean_abs;
  r.mean_reldiff = s.mean_rel;
  return r;
}

// The shape check and the pass shared by both functions; nullopt when the shapes differ.
std::optional<TensorErrorStats> measure(const std::string& name, const Tensor& out0,
                                        const Tensor& out1, bool check_shapes,
                                        const TensorCompareOptions& options) {
  if (check_shapes && out0.shape() != out1.shape()) {
    logger().error(
        "FAILED | Output: `{}` | Will not compare outputs of different shapes.\nNote: Output "
        "shapes are {} and {}.",
        name, shape_str(out0.shape()), shape_str(out1.shape()));
    return std::nullopt;
  }
  if (out0.numel() != out1.numel())
    fail(
        "failed to match the shape of output '{}' {} with {}: without shape checking the "
        "element counts must still be equal",
        name, shape_str(out1.shape()), shape_str(out0.shape()));
  TensorCompareOptions o = options;
  o.check_shapes = false;
  return compare_tensors(name, out0, out1.reshaped(out0.shape()), o);
}

}  // namespace

CompareFunc compare_func::distance(DistanceCompareOptions options) {
  return [options](const IterationResult& r0, const IterationResult& r1) {
    auto match = [&](const std::string& out0_name, const Tensor& out0, const std::string& out1_name,
                     const Tensor& out1) {
      const double l2_tol = options.l2_tolerance.get(out0_name, 1e-5);
      const double cos_min = options.cosine_similarity_threshold.get(out0_name, 0.997);
      logger().info("Thresholds: [l2={}, cosine-similarity={}] | Checking distance metrics",
                    format_g(l2_tol, 5), format_g(cos_min, 5));
      TensorCompareOptions o;
      o.metric = CompareMetric::kDistance;
      o.l2_tolerance = l2_tol;
      o.cosine_similarity_threshold = cos_min;
      std::optional<TensorErrorStats> s = measure(out0_name, out0, out1, options.check_shapes, o);
      if (!s) return OutputCompareResult{};
      log_both_outputs(r0, out0_name, out0, r1, out1_name, out1, !s->passed);
      logger().info("Distance Metrics: L2 norm={}, cosine similarity={}", format_g(s->l2, 5),
                    format_g(s->cosine, 5));
      if (!s->note.empty()) logger().info("Note: {}", s->note);
      if (s->passed)
        logger().finish("PASSED | Output: '{}' | L2 norm {} <= {} and cosine similarity {} >= {}",
                        out0_name, format_g(s->l2, 5), format_repr(l2_tol), format_g(s->cosine, 5),
                        format_repr(cos_min));
      else
        logger().error(
            "FAILED | Output: '{}' | Distance exceeds thresholds (l2={}, "
            "cosine-similarity={})",
            out0_name, format_repr(l2_tol), format_repr(cos_min));
      return to_result(*s);
    };
    return run_comparison(match, options.fail_fast, r0, r1);
  };
}

CompareFunc compare_func::quality(QualityCompareOptions options) {
  return [options](const IterationResult& r0, const IterationResult& r1) {
    auto match = [&](const std::string& out0_name, const Tensor& out0, const std::string& out1_name,
                     const Tensor& out1) {
      const double psnr_min = options.psnr_tolerance.get(out0_name, 30.0);
      const double snr_min = options.snr_tolerance.get(out0_name, 20.0);
      logger().info("Thresholds: [psnr={} dB, snr={} dB] | Checking quality metrics",
                    format_g(psnr_min, 5), format_g(snr_min, 5));
      TensorCompareOptions o;
      o.metric = CompareMetric::kQuality;
      o.psnr_tolerance = psnr_min;
      o.snr_tolerance = snr_min;
      std::optional<TensorErrorStats> s = measure(out0_name, out0, out1, options.check_shapes, o);
      if (!s) return OutputCompareResult{};
      log_both_outputs(r0, out0_name, out0, r1, out1_name, out1, !s->passed);
      logger().info("Quality Metrics: PSNR={} dB, SNR={} dB", format_g(s->psnr, 5),
                    format_g(s->snr, 5));
      if (!s->note.empty()) logger().info("Note: {}", s->note);
      if (s->passed)
        logger().finish("PASSED | Output: '{}' | PSNR {} dB >= {} and SNR {} dB >= {}", out0_name,
                        format_g(s->psnr, 5), format_repr(psnr_min), format_g(s->snr, 5),
                        format_repr(snr_min));
      else
        logger().error("FAILED | Output: '{}' | Quality below thresholds (psnr={} dB, snr={} dB)",
                       out0_name, format_repr(psnr_min), format_repr(snr_min));
      return to_result(*s);
    };
    return run_comparison(match, options.fail_fast, r0, r1);
  };
}

}  // namespace parity
