// compare_tensors (the fused pass behind layer-wise runs and the report) and the distance and
// quality compare functions: NumPy's values for Polygraphy's formulas, hand-computed edge cases
// (NaN, infinities, empty, integer and bool outputs), and agreement with CompareFunc.simple.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>

#include "comparator/compare.h"
#include "comparator/compare_internal.h"
#include "comparator/output_stats.h"
#include "comparator/tensor_error.h"
#include "core/numeric.h"
#include "core/py_format.h"
#include "core/thread_pool.h"
#include "support/test_util.h"

namespace parity {
namespace {

using testing::LogCapture;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

template <typename T>
Tensor vec(const std::vector<T>& v) {
  return Tensor::from_vector<T>({static_cast<int64_t>(v.size())}, v);
}

TensorErrorStats measure(const Tensor& a, const Tensor& b, CompareMetric metric) {
  TensorCompareOptions o;
  o.metric = metric;
  return compare_tensors("out", a, b, o);
}

// Polygraphy's formulas (polygraphy-features.md 2.5) evaluated by NumPy in float64.
TEST(Metrics, DistanceAndQualityMatchNumPy) {
  const std::vector<std::pair<std::vector<double>, std::vector<double>>> cases = {
      {{1, 2, 3, 4}, {1, 2, 3, 5}},
      {{0.5, -1.25, 3.0, 8.0, -2.0}, {0.25, -1.0, 3.5, 7.0, -2.5}},
      {{-1, -2}, {-1, -3}},  // max(out0) <= 0: the peak is 1
      {{1e-3, 2e-3, 4e-3}, {1.1e-3, 2e-3, 3.9e-3}},
  };
  std::string script = "import numpy as np\ncases = [";
  for (const auto& [a, b] : cases) {
    script += "(np.array([";
    for (double v : a) script += format_repr(v) + ",";
    script += "], dtype=np.float64), np.array([";
    for (double v : b) script += format_repr(v) + ",";
    script += "], dtype=np.float64)),";
  }
  script += R"(]
for a, b in cases:
    l2 = np.linalg.norm(a - b)
    cos = np.clip(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)), -1.0, 1.0)
    mse = np.mean((a - b) ** 2)
    peak = np.max(a)
    peak = peak if peak > 0 else 1.0
    psnr = 20 * np.log10(peak) - 10 * np.log10(mse)
    snr = 10 * np.log10(np.mean(a ** 2) / mse)
    print(repr(float(l2)), repr(float(cos)), repr(float(psnr)), repr(float(snr)))
)";
  testing::CommandResult py = testing::run_python(script);
  ASSERT_EQ(py.exit_code, 0) << py.output;
  std::istringstream lines(py.output);
  for (const auto& [a, b] : cases) {
    double l2, cos, psnr, snr;
    ASSERT_TRUE(lines >> l2 >> cos >> psnr >> snr) << py.output;
    const TensorErrorStats s = measure(vec(a), vec(b), CompareMetric::kDistance);
    EXPECT_NEAR(s.l2, l2, 1e-14 * std::max(1.0, l2));
    EXPECT_NEAR(s.cosine, cos, 1e-14);
    EXPECT_NEAR(s.psnr, psnr, 1e-12 * std::fabs(psnr));
    EXPECT_NEAR(s.snr, snr, 1e-12 * std::fabs(snr));
  }
}

TEST(Metrics, HandComputedDistances) {
  // [3, 4] vs [0, 0]: the difference has norm 5; a zero vector is unrelated to another (0).
  TensorErrorStats s = measure(vec<float>({3, 4}), vec<float>({0, 0}), CompareMetric::kDistance);
  EXPECT_DOUBLE_EQ(s.l2, 5.0);
  EXPECT_EQ(s.cosine, 0.0);
  EXPECT_FALSE(s.passed);
  // Two zero vectors are identical.
  s = measure(vec<float>({0, 0}), vec<float>({0, 0}), CompareMetric::kDistance);
  EXPECT_EQ(s.l2, 0.0);
  EXPECT_EQ(s.cosine, 1.0);
  EXPECT_TRUE(s.passed);
  // Orthogonal unit vectors.
  s = measure(vec<double>({1, 0}), vec<double>({0, 1}), CompareMetric::kDistance);
  EXPECT_DOUBLE_EQ(s.l2, std::sqrt(2.0));
  EXPECT_EQ(s.cosine, 0.0);
  // Opposite vectors: cosine -1.
  s = measure(vec<double>({1, 2}), vec<double>({-1, -2}), CompareMetric::kDistance);
  EXPECT_DOUBLE_EQ(s.cosine, -1.0);
  // Integers: [1, 2, 3] vs [1, 2, 4]: l2 1, cosine 17 / sqrt(14 * 21).
  s = measure(vec<int32_t>({1, 2, 3}), vec<int32_t>({1, 2, 4}), CompareMetric::kDistance);
  EXPECT_EQ(s.l2, 1.0);
  EXPECT_DOUBLE_EQ(s.cosine, 17.0 / std::sqrt(14.0 * 21.0));
  EXPECT_FALSE(s.passed);
  // Bools count as 0 and 1: [T, F, T] vs [T, T, T]: l2 1, cosine 2 / sqrt(2 * 3).
  s = measure(vec<bool>({true, false, true}), vec<bool>({true, true, true}),
              CompareMetric::kDistance);
  EXPECT_EQ(s.l2, 1.0);
  EXPECT_DOUBLE_EQ(s.cosine, 2.0 / std::sqrt(6.0));
  EXPECT_EQ(s.mismatches, 1);
}

TEST(Metrics, HandComputedQuality) {
  // [1, 2, 3, 4] vs [1, 2, 3, 5]: MSE 1/4, peak 4, mean square of the signal 7.5.
  TensorErrorStats s =
      measure(vec<float>({1, 2, 3, 4}), vec<float>({1, 2, 3, 5}), CompareMetric::kQuality);
  EXPECT_DOUBLE_EQ(s.psnr, 20 * std::log10(4.0) - 10 * std::log10(0.25));
  EXPECT_DOUBLE_EQ(s.snr, 10 * std::log10(30.0));
  EXPECT_FALSE(s.passed);  // 18 dB < 30 dB
  // Equal outputs: MSE 0 is +inf dB.
  s = measure(vec<float>({1, 2}), vec<float>({1, 2}), CompareMetric::kQuality);
  EXPECT_EQ(s.psnr, kInf);
  EXPECT_EQ(s.snr, kInf);
  EXPECT_TRUE(s.passed);
  // A silent signal with noise: SNR is -inf.
  s = measure(vec<double>({0, 0}), vec<double>({1, 0}), CompareMetric::kQuality);
  EXPECT_EQ(s.snr, -kInf);
  EXPECT_FALSE(s.passed);
  // Per-output thresholds: this output needs only 10 dB.
  TensorCompareOptions o;
  o.metric = CompareMetric::kQuality;
  o.psnr_tolerance.values["out"] = 10.0;
  o.snr_tolerance.values["out"] = 10.0;
  s = compare_tensors("out", vec<float>({1, 2, 3, 4}), vec<float>({1, 2, 3, 5}), o);
  EXPECT_TRUE(s.passed);
  s = compare_tensors("other", vec<float>({1, 2, 3, 4}), vec<float>({1, 2, 3, 5}), o);
  EXPECT_FALSE(s.passed);
}

TEST(Metrics, NaNAndInfinitiesFailEveryMetric) {
  for (CompareMetric m :
       {CompareMetric::kSimple, CompareMetric::kDistance, CompareMetric::kQuality}) {
    const TensorErrorStats nan = measure(vec<double>({1, kNaN}), vec<double>({1, 1}), m);
    EXPECT_FALSE(nan.passed) << compare_metric_name(m);
    EXPECT_TRUE(std::isinf(nan.ratio)) << compare_metric_name(m);
    EXPECT_EQ(nan.nan_count, 1);
    EXPECT_TRUE(std::isnan(nan.max_abs));
    // Matching infinities: inf - inf is NaN.
    const TensorErrorStats inf = measure(vec<double>({kInf, 1}), vec<double>({kInf, 1}), m);
    EXPECT_FALSE(inf.passed) << compare_metric_name(m);
    // An infinity against a finite value.
    EXPECT_FALSE(measure(vec<double>({kInf, 1}), vec<float>({2, 1}), m).passed);
  }
  // Simple with infinities_compare_equal: equal infinities have no error.
  TensorCompareOptions o;
  o.infinities_compare_equal = true;
  EXPECT_TRUE(
      compare_tensors("o", vec<double>({kInf, -kInf}), vec<double>({kInf, -kInf}), o).passed);
  EXPECT_FALSE(compare_tensors("o", vec<double>({kInf}), vec<double>({-kInf}), o).passed);
}

TEST(Metrics, EmptyTensors) {
  const Tensor empty(DataType::kFloat32, {0, 3});
  TensorErrorStats s = measure(empty, empty, CompareMetric::kDistance);
  EXPECT_TRUE(s.passed);
  EXPECT_EQ(s.l2, 0.0);
  EXPECT_EQ(s.cosine, 1.0);
  s = measure(empty, empty, CompareMetric::kQuality);
  EXPECT_TRUE(s.passed);
  // Polygraphy's statistics of nothing: max 0, mean NaN; elemwise has no mismatch.
  s = measure(empty, empty, CompareMetric::kSimple);
  EXPECT_TRUE(s.passed);
  EXPECT_EQ(s.max_abs, 0.0);
  EXPECT_TRUE(std::isnan(s.mean_abs));
  // ...but the mean statistic of nothing is NaN, which fails, as in Polygraphy.
  TensorCompareOptions o;
  o.check_error_stat = ErrorStat::kMean;
  EXPECT_FALSE(compare_tensors("o", empty, empty, o).passed);
}

TEST(Metrics, IntegerAndBoolSimple) {
  // Integers: |3 - 5| = 2, relative 2 / 5 (no epsilon: integers are not floating).
  TensorErrorStats s = measure(vec<int64_t>({1, 3}), vec<int64_t>({1, 5}), CompareMetric::kSimple);
  EXPECT_EQ(s.max_abs, 2.0);
  EXPECT_DOUBLE_EQ(s.max_rel, 0.4);
  EXPECT_FALSE(s.passed);
  // An integer zero reference: 0/0 is NaN (fails), 1/0 is inf.
  s = measure(vec<int32_t>({0, 1}), vec<int32_t>({0, 0}), CompareMetric::kSimple);
  EXPECT_EQ(s.max_abs, 1.0);
  EXPECT_TRUE(std::isnan(s.max_rel));
  // Bools: xor.
  s = measure(vec<bool>({true, false}), vec<bool>({true, true}), CompareMetric::kSimple);
  EXPECT_EQ(s.max_abs, 1.0);
  EXPECT_EQ(s.mismatches, 1);
  EXPECT_FALSE(s.passed);
  // Strings compare for equality.
  s = measure(vec<std::string>({"a", "b"}), vec<std::string>({"a", "c"}), CompareMetric::kSimple);
  EXPECT_FALSE(s.passed);
  EXPECT_EQ(s.mismatches, 1);
  // Shapes must match.
  s = measure(Tensor(DataType::kFloat32, {2, 2}), Tensor(DataType::kFloat32, {4}),
              CompareMetric::kSimple);
  EXPECT_FALSE(s.passed);
  EXPECT_NE(s.note.find("shapes differ"), std::string::npos);
}

// The fused pass gives CompareFunc.simple's verdicts and statistics to the last bit, for every
// error statistic, on data spanning several chunks, on 1 and 2 threads.
TEST(Metrics, AgreesWithCompareFuncSimple) {
  const int64_t n = 200003;
  Tensor a(DataType::kFloat32, {n}), b(DataType::kFloat32, {n});
  uint64_t state = 12345;
  for (int64_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const float x = static_cast<float>(state >> 40) / 16777216.0f - 0.5f;
    a.data<float>()[i] = x;
    b.data<float>()[i] = (i % 1000 == 0) ? 0.0f : x * (1.0f + 1e-5f * static_cast<float>(i % 7));
  }
  LogCapture log(Severity::kCritical);
  for (ErrorStat stat : {ErrorStat::kElemwise, ErrorStat::kMax, ErrorStat::kMean,
                         ErrorStat::kMedian, ErrorStat::kQuantile}) {
    for (double tol : {1e-7, 1e-5, 1e-4}) {
      SimpleCompareOptions so;
      so.atol = tol;
      so.rtol = tol;
      so.check_error_stat = stat;
      IterationResult r0{{}, std::nullopt, "r0", std::nullopt, ""},
          r1{{}, std::nullopt, "r1", std::nullopt, ""};
      r0.outputs.set("out", a);
      r1.outputs.set("out", b);
      const OutputCompareResult expected = compare_func::simple(so)(r0, r1)[0].second;
      TensorCompareOptions o;
      o.atol = tol;
      o.rtol = tol;
      o.check_error_stat = stat;
      for (int threads : {1, 2}) {
        set_num_threads(threads);
        const TensorErrorStats s = compare_tensors("out", a, b, o);
        EXPECT_EQ(s.passed, expected.passed) << error_stat_name(stat) << " " << tol;
        EXPECT_EQ(s.max_abs, expected.max_absdiff);
        EXPECT_EQ(s.max_rel, expected.max_reldiff);
        EXPECT_EQ(s.mean_abs, expected.mean_absdiff);
        EXPECT_EQ(s.mean_rel, expected.mean_reldiff);
        if (stat == ErrorStat::kMedian) {
          EXPECT_EQ(*s.median_abs, expected.median_absdiff);
        }
        if (stat == ErrorStat::kQuantile) {
          EXPECT_EQ(*s.quantile_abs, *expected.quantile_absdiff);
        }
        EXPECT_TRUE(!s.passed || s.ratio <= 1.0);  // passing is within the threshold
      }
      set_num_threads(0);
    }
  }
}

TEST(Metrics, ProfileCountsEveryElementAndFindsTheHotCell) {
  Tensor a(DataType::kFloat32, {2, 3, 40, 50}), b(DataType::kFloat32, {2, 3, 40, 50});
  b.data<float>()[(1 * 3 + 2) * 2000 + 39 * 50 + 49] = 1.0f;  // one error at the last pixel
  TensorCompareOptions o;
  o.with_profile = true;
  const TensorErrorStats s = compare_tensors("out", a, b, o);
  int64_t total = 0;
  for (int64_t c : s.profile.abs_hist) total += c;
  EXPECT_EQ(total, a.numel());
  EXPECT_EQ(s.profile.abs_hist[0], a.numel() - 1);                   // exact zeros
  EXPECT_EQ(s.profile.abs_hist[1 - ErrorProfile::kMinExponent], 1);  // 1.0 is 2^0
  EXPECT_EQ(s.profile.heat_rows, 32);
  EXPECT_EQ(s.profile.heat_cols, 32);
  EXPECT_EQ(s.profile.heat.back(), 1.0f);
  float others = 0;
  for (size_t i = 0; i + 1 < s.profile.heat.size(); ++i)
    others = std::max(others, s.profile.heat[i]);
  EXPECT_EQ(others, 0.0f);
}

// The error histograms and heatmap against a plain restatement (per element: its exponent's bin,
// its cell's maximum), for pairs computed in float32 (float32, float16, bfloat16) and float64
// ones, with zeros, NaNs, infinities, tiny and huge errors, and last dims that do not divide into
// the cells.
TEST(Metrics, ProfileMatchesAPlainRestatement) {
  std::mt19937 rng(23);
  for (const DataType dtype :
       {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16, DataType::kBFloat16}) {
    for (const Shape& shape : {Shape{3, 37, 45}, Shape{70, 1030}, Shape{5, 7}, Shape{2, 3000}}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + shape_str(shape));
      const int64_t n = shape_numel(shape);
      std::vector<double> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        x[static_cast<size_t>(i)] = static_cast<double>(rng() % 1000) / 10.0;
        double e = 0;
        switch (rng() % 8) {
          case 0:
            e = 0;
            break;
          case 1:
            e = std::ldexp(1.0, -static_cast<int>(rng() % 60));
            break;
          case 2:
            e = std::ldexp(1.0, static_cast<int>(rng() % 30));
            break;
          case 3:
            e = rng() % 2 ? INFINITY : NAN;
            break;
          default:
            e = static_cast<double>(rng() % 100) * 1e-3;
            break;
        }
        y[static_cast<size_t>(i)] = x[static_cast<size_t>(i)] + e;
      }
      const Tensor a = cast_tensor(Tensor::from_vector<double>(shape, x), dtype);
      const Tensor b = cast_tensor(Tensor::from_vector<double>(shape, y), dtype);
      TensorCompareOptions o;
      o.with_profile = true;
      const TensorErrorStats s = compare_tensors("out", a, b, o);
      // Plain: the differences as the comparator defines them, then bins and cells one by one.
      const DiffRules rules(dtype, dtype, false);
      const NumArray xa = to_num_array(a), ya = to_num_array(b);
      std::array<int64_t, ErrorProfile::kBins> abs_hist{}, rel_hist{};
      const auto bin = [](double v) {
        if (v == 0) return 0;
        if (!std::isfinite(v)) return ErrorProfile::kBins - 1;
        const int e = std::ilogb(v);
        return 1 + std::clamp(e, ErrorProfile::kMinExponent, ErrorProfile::kMaxExponent) -
               ErrorProfile::kMinExponent;
      };
      const int64_t cols = shape.back(), rows = shape[shape.size() - 2];
      const int64_t hc = std::min<int64_t>(cols, ErrorProfile::kHeatCells);
      const int64_t hr = std::min<int64_t>(rows, ErrorProfile::kHeatCells);
      std::vector<float> heat(static_cast<size_t>(hr * hc), 0.0f);
      for (int64_t i = 0; i < n; ++i) {
        double d = 0, r = 0;
        rules.diff(xa.values[static_cast<size_t>(i)], ya.values[static_cast<size_t>(i)], d, r);
        ++abs_hist[static_cast<size_t>(bin(d))];
        ++rel_hist[static_cast<size_t>(bin(r))];
        const int64_t w = i % cols, h = (i / cols) % rows;
        float& cell = heat[static_cast<size_t>((h * hr / rows) * hc + w * hc / cols)];
        cell = std::max(cell, std::isnan(d) ? INFINITY : static_cast<float>(d));
      }
      EXPECT_EQ(s.profile.abs_hist, abs_hist);
      EXPECT_EQ(s.profile.rel_hist, rel_hist);
      EXPECT_EQ(s.profile.heat, heat);
    }
  }
}

TEST(CompareFuncMetrics, DistanceAndQualityReportAndDecide) {
  IterationResult r0{{}, std::nullopt, "runner0", std::nullopt, ""},
      r1{{}, std::nullopt, "runner1", std::nullopt, ""};
  r0.outputs.set("out", vec<float>({1, 2, 3, 4}));
  r1.outputs.set("out", vec<float>({1, 2, 3, 5}));
  {
    LogCapture log;
    DistanceCompareOptions o;
    EXPECT_FALSE(compare_func::distance(o)(r0, r1)[0].second.passed);
    EXPECT_TRUE(log.contains("Distance Metrics: L2 norm=1, cosine similarity=0.99"));
    EXPECT_TRUE(log.contains("FAILED | Output: 'out' | Distance exceeds thresholds"));
    o.l2_tolerance.values["out"] = 1.5;
    o.cosine_similarity_threshold = 0.9;
    EXPECT_TRUE(compare_func::distance(o)(r0, r1)[0].second.passed);
  }
  {
    LogCapture log;
    QualityCompareOptions o;
    EXPECT_FALSE(compare_func::quality(o)(r0, r1)[0].second.passed);
    EXPECT_TRUE(log.contains("Quality Metrics: PSNR=18.062 dB, SNR=14.771 dB")) << log.text();
    o.psnr_tolerance = 18.0;
    o.snr_tolerance = 14.0;
    EXPECT_TRUE(compare_func::quality(o)(r0, r1)[0].second.passed);
  }
  {
    LogCapture log;
    r1.outputs.set("out", vec<float>({1, 2, 3}));
    EXPECT_FALSE(compare_func::distance()(r0, r1)[0].second.passed);
    EXPECT_TRUE(log.contains("Will not compare outputs of different shapes"));
  }
}

}  // namespace
}  // namespace parity
