// The error between two tensors in one fused pass, kept as statistics only (never the arrays):
// what layer-wise comparison keeps per marked tensor, what the distance and quality compare
// functions and the HTML report are built on.
//
// One pass (parallel, chunk sums combined in chunk order, so the bits do not depend on the
// thread count) gives: Polygraphy's absolute and relative differences (after its cast_up, with
// its epsilon for zeros of the reference) with their max, mean and element-wise mismatch count
// against atol/rtol; for the distance and quality metrics the L2 distance and cosine
// similarity, PSNR and SNR; and, when asked, histograms and a downsampled heatmap of the error
// for the report. The
// median and quantile are selected exactly by the fused statistics (fused_stats.h) in a few
// more light passes, only when check_error_stat asks for one of them.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "comparator/compare.h"
#include "core/tensor.h"

namespace parity {

// Which verdict decides whether a tensor passes.
enum class CompareMetric { kSimple, kDistance, kQuality };
std::string_view compare_metric_name(CompareMetric m);

struct TensorCompareOptions {
  CompareMetric metric = CompareMetric::kSimple;
  bool check_shapes = true;
  // kSimple (Polygraphy's CompareFunc.simple semantics).
  PerOutput<double> atol = 1e-5;
  PerOutput<double> rtol = 1e-5;
  PerOutput<ErrorStat> check_error_stat = ErrorStat::kElemwise;
  PerOutput<double> error_quantile = 0.99;
  bool infinities_compare_equal = false;
  // kDistance: passes when l2 <= l2_tolerance and cosine >= cosine_similarity_threshold.
  PerOutput<double> l2_tolerance = 1e-5;
  PerOutput<double> cosine_similarity_threshold = 0.997;
  // kQuality: passes when psnr >= psnr_tolerance and snr >= snr_tolerance (dB).
  PerOutput<double> psnr_tolerance = 30.0;
  PerOutput<double> snr_tolerance = 20.0;
  // Histograms and heatmap for the report (costs a little time per element).
  bool with_profile = false;
};

// Histograms of the error by binary order of magnitude, and a heatmap of the largest absolute
// error over the last two dims (rank >= 2), downsampled to at most kHeatCells per side.
struct ErrorProfile {
  static constexpr int kMinExponent = -40;  // values below 2^-40 share the first bin
  static constexpr int kMaxExponent = 24;   // values from 2^24 up share the last finite bin
  // [0]: exact zeros; [1 + e - kMinExponent]: values in [2^e, 2^(e+1)); last: NaN and inf.
  static constexpr int kBins = kMaxExponent - kMinExponent + 3;
  static constexpr int kHeatCells = 32;
  std::array<int64_t, kBins> abs_hist{}, rel_hist{};
  int64_t heat_rows = 0, heat_cols = 0;  // 0 when there is no heatmap
  int64_t rows = 0, cols = 0;            // the full size of the last two dims
  std::vector<float> heat;               // row-major; NaN errors count as +inf
  // Layer-wise runs with a report, rank >= 3: the same heatmap for each index of the
  // third-to-last dim (the channel of NCHW), the first kHeatChannels of them, so that the
  // report can show one channel instead of the maximum over all.
  static constexpr int kHeatChannels = 16;
  std::vector<std::vector<float>> channel_heat;
};

// Everything kept about one compared pair (out0 is the first runner's, out1 the reference of
// the relative error, as in Polygraphy).
struct TensorErrorStats {
  std::string name;
  DataType dtype0 = DataType::kUndefined, dtype1 = DataType::kUndefined;
  Shape shape0, shape1;
  bool compared = false;  // false: not comparable (see note)
  bool passed = false;
  std::string note;  // why it failed without numbers, or was not compared
  int64_t count = 0;
  int64_t mismatches = 0;  // elements failing atol/rtol element-wise
  int64_t nan_count = 0;   // elements whose absolute difference is NaN
  double max_abs = 0, mean_abs = 0, max_rel = 0, mean_rel = 0;
  std::optional<double> median_abs, median_rel, quantile_abs, quantile_rel;
  // Whole-tensor metrics, computed for --compare distance and quality (NaN otherwise).
  double l2 = 0, cosine = 1, psnr = 0, snr = 0;
  // The error measured against the threshold of the chosen metric: a value above 1 is outside
  // it (for elemwise, max over elements of min(abs/atol, rel/rtol)). Scale-free, so nodes of
  // different magnitudes rank against each other.
  double ratio = 0;
  // Layer-wise runs, for two floating tensors of one type: the largest distance in units in the
  // last place of that type, and the largest finite |value| of out1 (what one ulp is scaled by).
  std::optional<double> max_ulps;
  double max_magnitude = 0;
  ErrorProfile profile;  // filled when with_profile
};

// Compares out0 with out1 (shapes must match unless check_shapes is off, then element counts).
// Never logs; never throws for data (NaN, inf, empty); strings compare for equality.
TensorErrorStats compare_tensors(const std::string& name, const Tensor& out0, const Tensor& out1,
                                 const TensorCompareOptions& options);

}  // namespace parity
