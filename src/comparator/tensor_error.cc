#include "comparator/tensor_error.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <type_traits>

#include "comparator/compare_internal.h"
#include "comparator/output_stats.h"
#include "comparator/simple_verdict.h"
#include "core/numeric.h"
#include "core/thread_pool.h"
#include "stats/fused_stats.h"

namespace parity {

namespace {

// The chunking and block size of the fused statistics (fused_stats.h): the same chunks summed in
// the same lanes give the same mean to the last bit as CompareFunc.simple.
constexpr int64_t kGrain = kStatsGrain;
constexpr int64_t kBlock = kStatsBlock;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Order-free reductions of a block: maxima, NaN counts, mismatches. The differences are never
// negative, so their bit patterns order as integers do, which vectorises (a NaN pattern may win
// the maximum: the NaN count overrides it). "not a <= tol" is "a > tol or a is NaN"; the
// tolerances are values of the differences' type, so comparing in double is exact.
struct BlockCounts {
  double max_abs, max_rel, max_ratio;
  int64_t nan_abs, nan_rel, mismatches;
};

template <typename T>
__attribute__((always_inline)) inline BlockCounts count_body(const T* abs, const T* rel, int64_t n,
                                                             double abs_tol, double rel_tol,
                                                             double inv_abs_tol,
                                                             double inv_rel_tol) {
  using Bits = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  Bits max_abs = 0, max_rel = 0;
  int64_t max_ratio = 0;
  Bits nan_abs = 0, nan_rel = 0, mismatches = 0;  // a block's counts fit
  for (int64_t i = 0; i < n; ++i) {
    const T a = abs[i], r = rel[i];
    Bits a_bits, r_bits;
    std::memcpy(&a_bits, &a, sizeof a);
    std::memcpy(&r_bits, &r, sizeof r);
    max_abs = a_bits > max_abs ? a_bits : max_abs;
    max_rel = r_bits > max_rel ? r_bits : max_rel;
    nan_abs += a != a;
    nan_rel += r != r;
    mismatches += !(a <= abs_tol) & !(r <= rel_tol);
    // How far outside the tolerances, for ranking (elemwise: the better of the two).
    const double q =
        std::min(static_cast<double>(a) * inv_abs_tol, static_cast<double>(r) * inv_rel_tol);
    int64_t q_bits;
    std::memcpy(&q_bits, &q, sizeof q);
    max_ratio = q_bits > max_ratio ? q_bits : max_ratio;
  }
  const auto value = [](auto bits) {
    T v;
    std::memcpy(&v, &bits, sizeof v);
    return static_cast<double>(v);
  };
  double ratio;
  std::memcpy(&ratio, &max_ratio, sizeof ratio);
  return {value(max_abs), value(max_rel), ratio, nan_abs, nan_rel, mismatches};
}

__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) BlockCounts count_block(
    const double* abs, const double* rel, int64_t n, double abs_tol, double rel_tol,
    double inv_abs_tol, double inv_rel_tol) {
  return count_body(abs, rel, n, abs_tol, rel_tol, inv_abs_tol, inv_rel_tol);
}
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) BlockCounts count_block(
    const float* abs, const float* rel, int64_t n, double abs_tol, double rel_tol,
    double inv_abs_tol, double inv_rel_tol) {
  return count_body(abs, rel, n, abs_tol, rel_tol, inv_abs_tol, inv_rel_tol);
}

// The sums of one chunk, combined in chunk order.
struct Partial {
  double sum_abs = 0, sum_rel = 0;  // shifted, as compute_basic_stats
  double sum_d2 = 0, sum_x2 = 0, sum_y2 = 0, sum_xy = 0;
  double max_abs = -kInf, max_rel = -kInf, max0 = -kInf, ratio = 0;
  bool nan_abs = false, nan_rel = false, nan0 = false;
  int64_t mismatches = 0, nan_count = 0;
};

// The shared state of one pass.
struct Pass {
  explicit Pass(const DiffRules& r) : rules(r) {}
  const DiffRules& rules;
  double abs_tol = 0, rel_tol = 0, inv_abs_tol = 0, inv_rel_tol = 0;
  double shift_abs = 0, shift_rel = 0;
  bool elemwise_ratio = false;
  bool whole_tensor_metrics = false;  // L2, cosine, PSNR, SNR
  // Both float32 after cast_up and nothing needs the inputs in double: read them as float32.
  bool float_inputs = false;
  bool profile = false;
  int64_t cols = 1, rows = 1, heat_rows = 0, heat_cols = 0;
  std::vector<int32_t> cell_col;  // heat column of each position in the last dim
  std::vector<int32_t> cell_row;  // heat row of each position in the second-to-last dim
  std::vector<int64_t> cell_end;  // per heat column: the first position of the next
  std::mutex merge_mutex;
  ErrorProfile* out_profile = nullptr;
};

// Tolerance factors without NaN: a zero tolerance makes any positive error huge, a zero error 0.
double inverse_tolerance(double tol) { return tol > 0 ? 1.0 / tol : 1e300; }

// The profile's bin of every value of a block (ErrorProfile: zero, [2^e, 2^(e+1)) clamped, NaN
// and inf), without a branch per value.
template <typename T>
__attribute__((always_inline)) inline void bins_body(const T* v, int64_t n, uint8_t* bins) {
  for (int64_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(v[i]);
    uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    const int field = static_cast<int>((bits >> 52) & 0x7ff);
    int bin = 1 + std::clamp(field - 1023, ErrorProfile::kMinExponent, ErrorProfile::kMaxExponent) -
              ErrorProfile::kMinExponent;
    bin = x == 0 ? 0 : bin;
    bin = field == 0x7ff ? ErrorProfile::kBins - 1 : bin;
    bins[i] = static_cast<uint8_t>(bin);
  }
}
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) void exponent_bins(
    const float* v, int64_t n, uint8_t* bins) {
  bins_body(v, n, bins);
}
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) void exponent_bins(
    const double* v, int64_t n, uint8_t* bins) {
  bins_body(v, n, bins);
}

// Counts a block's bins in four interleaved histograms (neighbours often share a bin, and a
// counter incremented back to back waits for its own store).
template <typename T>
void add_to_histogram(const T* v, int64_t n, std::array<int64_t, ErrorProfile::kBins>& hist) {
  uint8_t bins[kBlock];
  exponent_bins(v, n, bins);
  int32_t counts[4][ErrorProfile::kBins] = {};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int j = 0; j < 4; ++j) ++counts[j][bins[i + j]];
  for (; i < n; ++i) ++counts[0][bins[i]];
  for (int b = 0; b < ErrorProfile::kBins; ++b)
    hist[static_cast<size_t>(b)] += counts[0][b] + counts[1][b] + counts[2][b] + counts[3][b];
}

// The heatmap cells of n values from row h, column w (advanced past them): a row's values fall
// into its cells in runs (the cells split the last dim into equal parts), so each run's maximum
// (NaN counted as infinity) updates its cell once.
template <typename T>
__attribute__((always_inline)) inline void heat_body(const T* v, int64_t n, const Pass& pass,
                                                     float* heat, int64_t& w, int64_t& h) {
  for (int64_t i = 0; i < n;) {
    const int32_t c = pass.cell_col[static_cast<size_t>(w)];
    const int64_t len = std::min(n - i, pass.cell_end[static_cast<size_t>(c)] - w);
    float m = 0;
    for (int64_t k = i; k < i + len; ++k) {
      const float x =
          v[k] != v[k] ? std::numeric_limits<float>::infinity() : static_cast<float>(v[k]);
      m = x > m ? x : m;
    }
    float& cell = heat[pass.cell_row[static_cast<size_t>(h)] * pass.heat_cols + c];
    cell = std::max(cell, m);
    i += len;
    if ((w += len) == pass.cols) {
      w = 0;
      if (++h == pass.rows) h = 0;
    }
  }
}
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) void add_heat(
    const float* v, int64_t n, const Pass& pass, float* heat, int64_t& w, int64_t& h) {
  heat_body(v, n, pass, heat, w, h);
}
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) void add_heat(
    const double* v, int64_t n, const Pass& pass, float* heat, int64_t& w, int64_t& h) {
  heat_body(v, n, pass, heat, w, h);
}

// What a chunk's blocks add up, in the differences' type (float32 pairs stay in float32).
struct ChunkState {
  std::array<int64_t, ErrorProfile::kBins> abs_hist{}, rel_hist{};
  std::vector<float> heat;
  LaneSum sum_abs, sum_rel;
  int64_t w = 0, h = 0;  // position in the last two dims, advanced element by element
};

template <typename T>
void add_block(Pass& pass, const T* abs, const T* rel, int64_t n, ChunkState& st, Partial& p) {
  // The sums of the means in the lanes of the fused statistics; the rest in any order.
  add_shifted(st.sum_abs, abs, n, pass.shift_abs);
  add_shifted(st.sum_rel, rel, n, pass.shift_rel);
  const BlockCounts c =
      count_block(abs, rel, n, pass.abs_tol, pass.rel_tol, pass.inv_abs_tol, pass.inv_rel_tol);
  if (n > 0) {
    p.max_abs = std::max(p.max_abs, c.max_abs);
    p.max_rel = std::max(p.max_rel, c.max_rel);
    if (pass.elemwise_ratio) p.ratio = std::max(p.ratio, c.max_ratio);
  }
  p.nan_count += c.nan_abs;
  p.nan_abs |= c.nan_abs > 0;
  p.nan_rel |= c.nan_rel > 0;
  p.mismatches += c.mismatches;
  if (!pass.profile) return;
  add_to_histogram(abs, n, st.abs_hist);
  add_to_histogram(rel, n, st.rel_hist);
  if (pass.heat_rows > 0) add_heat(abs, n, pass, st.heat.data(), st.w, st.h);
}

void run_chunk(Pass& pass, const ElementReader& r0, const ElementReader& r1, int64_t begin,
               int64_t end, Partial& p) {
  double x[kBlock], y[kBlock], abs[kBlock], rel[kBlock];
  float fx[kBlock], fy[kBlock], fabs[kBlock], frel[kBlock];
  const DiffRules& rules = pass.rules;
  ChunkState st;
  st.heat.assign(static_cast<size_t>(pass.heat_rows * pass.heat_cols), 0.0f);
  if (pass.heat_rows > 0) {
    st.w = begin % pass.cols;
    st.h = (begin / pass.cols) % pass.rows;
  }
  for (int64_t b = begin; b < end; b += kBlock) {
    const int64_t n = std::min(kBlock, end - b);
    if (pass.float_inputs) {
      // The next block is requested now, so that it arrives while this one is worked on.
      if (b + n < end) r0.prefetch(b + n, std::min(kBlock, end - b - n));
      if (b + n < end) r1.prefetch(b + n, std::min(kBlock, end - b - n));
      rules.diff_block(r0.read_f32(b, n, fx), r1.read_f32(b, n, fy), n, fabs, frel);
      add_block(pass, fabs, frel, n, st, p);
      continue;
    }
    r0.read(b, n, x);
    r1.read(b, n, y);
    rules.diff_block(x, y, n, abs, rel);
    add_block(pass, abs, rel, n, st, p);
    if (pass.whole_tensor_metrics)
      for (int64_t i = 0; i < n; ++i) {
        const double d = x[i] - y[i];
        p.sum_d2 += d * d;
        p.sum_x2 += x[i] * x[i];
        p.sum_y2 += y[i] * y[i];
        p.sum_xy += x[i] * y[i];
        p.max0 = x[i] > p.max0 ? x[i] : p.max0;
        p.nan0 |= x[i] != x[i];
      }
  }
  p.sum_abs = st.sum_abs.total();
  p.sum_rel = st.sum_rel.total();
  if (!pass.profile) return;
  // Counts and maxima do not depend on the order of merging.
  std::lock_guard<std::mutex> lock(pass.merge_mutex);
  ErrorProfile& out = *pass.out_profile;
  for (size_t i = 0; i < st.abs_hist.size(); ++i) {
    out.abs_hist[i] += st.abs_hist[i];
    out.rel_hist[i] += st.rel_hist[i];
  }
  for (size_t i = 0; i < st.heat.size(); ++i) out.heat[i] = std::max(out.heat[i], st.heat[i]);
}

ErrorSummary error_summary(const TensorErrorStats& s) {
  ErrorSummary e;
  e.max_abs = s.max_abs, e.max_rel = s.max_rel, e.mean_abs = s.mean_abs, e.mean_rel = s.mean_rel;
  e.median_abs = s.median_abs, e.median_rel = s.median_rel;
  e.quantile_abs = s.quantile_abs, e.quantile_rel = s.quantile_rel;
  e.mismatches = s.mismatches;
  return e;
}

double tolerance_part(double value, double tolerance) {
  if (std::isnan(value)) return kInf;
  if (value <= 0) return 0;
  return tolerance > 0 ? value / tolerance : kInf;
}

void set_heat_geometry(Pass& pass, const Shape& shape, ErrorProfile& profile) {
  if (shape.size() < 2) return;
  pass.cols = shape.back();
  pass.rows = shape[shape.size() - 2];
  if (pass.cols <= 0 || pass.rows <= 0) return;
  pass.heat_cols = std::min<int64_t>(pass.cols, ErrorProfile::kHeatCells);
  pass.heat_rows = std::min<int64_t>(pass.rows, ErrorProfile::kHeatCells);
  for (int64_t w = 0; w < pass.cols; ++w)
    pass.cell_col.push_back(static_cast<int32_t>(w * pass.heat_cols / pass.cols));
  pass.cell_end.assign(static_cast<size_t>(pass.heat_cols), pass.cols);
  for (int64_t w = pass.cols - 1; w > 0; --w)
    if (pass.cell_col[static_cast<size_t>(w)] != pass.cell_col[static_cast<size_t>(w - 1)])
      pass.cell_end[static_cast<size_t>(pass.cell_col[static_cast<size_t>(w - 1)])] = w;
  for (int64_t h = 0; h < pass.rows; ++h)
    pass.cell_row.push_back(static_cast<int32_t>(h * pass.heat_rows / pass.rows));
  profile.rows = pass.rows;
  profile.cols = pass.cols;
  profile.heat_rows = pass.heat_rows;
  profile.heat_cols = pass.heat_cols;
  profile.heat.assign(static_cast<size_t>(pass.heat_rows * pass.heat_cols), 0.0f);
}

// The median or quantile, selected from the differences without storing them.
void order_stats(TensorErrorStats& s, const Tensor& out0, const Tensor& out1,
                 const DiffRules& rules, ErrorStat stat, double quantile) {
  const PairStreams pair(out0, out1, rules, false);
  StreamRequest request;
  request.median = stat == ErrorStat::kMedian;
  if (stat == ErrorStat::kQuantile) request.quantiles = {quantile};
  const FusedStats stats = compute_fused_stats(pair, {request, request});
  const OrderStats& abs = stats.order[static_cast<size_t>(pair.abs_stream())];
  const OrderStats& rel = stats.order[static_cast<size_t>(pair.rel_stream())];
  if (stat == ErrorStat::kMedian) {
    s.median_abs = abs.median;
    s.median_rel = rel.median;
  } else {
    s.quantile_abs = abs.quantile(quantile);
    s.quantile_rel = rel.quantile(quantile);
  }
}

void compare_strings(TensorErrorStats& s, const Tensor& out0, const Tensor& out1) {
  int64_t differing = s.count;
  if (out0.dtype() == out1.dtype()) {
    differing = 0;
    const auto* a = out0.data<std::string>();
    const auto* b = out1.data<std::string>();
    for (int64_t i = 0; i < s.count; ++i) differing += a[i] != b[i] ? 1 : 0;
  }
  s.mismatches = differing;
  s.passed = differing == 0;
  s.max_abs = s.mean_abs = s.max_rel = s.mean_rel = s.passed ? 0 : 1;
  s.ratio = s.passed ? 0 : kInf;
  if (!s.passed) s.note = fmt::format("{} of {} strings differ", differing, s.count);
}

}  // namespace

std::string_view compare_metric_name(CompareMetric m) {
  switch (m) {
    case CompareMetric::kSimple:
      return "simple";
    case CompareMetric::kDistance:
      return "distance";
    case CompareMetric::kQuality:
      return "quality";
  }
  return "simple";
}

TensorErrorStats compare_tensors(const std::string& name, const Tensor& out0, const Tensor& out1,
                                 const TensorCompareOptions& options) {
  TensorErrorStats s;
  s.name = name;
  s.dtype0 = out0.dtype();
  s.dtype1 = out1.dtype();
  s.shape0 = out0.shape();
  s.shape1 = out1.shape();
  s.compared = true;
  if (options.check_shapes && out0.shape() != out1.shape()) {
    s.note =
        fmt::format("shapes differ: {} and {}", shape_str(out0.shape()), shape_str(out1.shape()));
    s.ratio = kInf;
    return s;
  }
  if (out0.numel() != out1.numel()) {
    s.note = fmt::format("element counts differ: {} and {}", out0.numel(), out1.numel());
    s.ratio = kInf;
    return s;
  }
  s.count = out0.numel();
  if (out0.dtype() == DataType::kString || out1.dtype() == DataType::kString) {
    compare_strings(s, out0, out1);
    return s;
  }
  if (!dtype_is_numeric(out0.dtype()) || !dtype_is_numeric(out1.dtype())) {
    s.compared = false;
    s.note = fmt::format("{} values have no arithmetic",
                         dtype_name(dtype_is_numeric(out0.dtype()) ? out1.dtype() : out0.dtype()));
    return s;
  }

  const DiffRules rules(out0.dtype(), out1.dtype(), options.infinities_compare_equal);
  const double atol = options.atol.get(name, 1e-5), rtol = options.rtol.get(name, 1e-5);
  const ErrorStat stat = options.check_error_stat.get(name, ErrorStat::kElemwise);
  const ElementReader r0(out0), r1(out1);

  Pass pass(rules);
  pass.abs_tol = round_to_kind(atol, rules.abs_kind);
  pass.rel_tol = round_to_kind(rtol, rules.rel_kind);
  pass.elemwise_ratio = options.metric == CompareMetric::kSimple && stat == ErrorStat::kElemwise;
  pass.whole_tensor_metrics = options.metric != CompareMetric::kSimple;
  pass.float_inputs = rules.float_pair && !pass.whole_tensor_metrics;
  pass.profile = options.with_profile;
  pass.inv_abs_tol = inverse_tolerance(pass.abs_tol);
  pass.inv_rel_tol = inverse_tolerance(pass.rel_tol);
  pass.out_profile = &s.profile;
  if (pass.profile) set_heat_geometry(pass, out0.shape(), s.profile);
  if (s.count > 0) {
    double x = 0, y = 0, a = 0, r = 0;
    r0.read(0, 1, &x);
    r1.read(0, 1, &y);
    rules.diff(x, y, a, r);
    pass.shift_abs = std::isfinite(a) ? a : 0.0;
    pass.shift_rel = std::isfinite(r) ? r : 0.0;
  }

  std::vector<Partial> parts(static_cast<size_t>((s.count + kGrain - 1) / kGrain));
  parallel_for(s.count, kGrain, [&](int64_t begin, int64_t end) {
    run_chunk(pass, r0, r1, begin, end, parts[static_cast<size_t>(begin / kGrain)]);
  });
  Partial t;
  for (const Partial& p : parts) {
    t.sum_abs += p.sum_abs;
    t.sum_rel += p.sum_rel;
    t.sum_d2 += p.sum_d2;
    t.sum_x2 += p.sum_x2;
    t.sum_y2 += p.sum_y2;
    t.sum_xy += p.sum_xy;
    t.max_abs = std::max(t.max_abs, p.max_abs);
    t.max_rel = std::max(t.max_rel, p.max_rel);
    t.max0 = std::max(t.max0, p.max0);
    t.ratio = std::max(t.ratio, p.ratio);
    t.nan_abs |= p.nan_abs;
    t.nan_rel |= p.nan_rel;
    t.nan0 |= p.nan0;
    t.mismatches += p.mismatches;
    t.nan_count += p.nan_count;
  }

  // Polygraphy's statistics: zero max for empty data, NaN max when any value is NaN, the mean
  // of compute_basic_stats (NaN when empty).
  const double n = static_cast<double>(s.count);
  s.mismatches = t.mismatches;
  s.nan_count = t.nan_count;
  if (s.count == 0) {
    s.mean_abs = s.mean_rel = NAN;
  } else {
    s.max_abs = t.nan_abs ? NAN : t.max_abs;
    s.max_rel = t.nan_rel ? NAN : t.max_rel;
    s.mean_abs = round_to_kind(pass.shift_abs + t.sum_abs / n, rules.abs_kind);
    s.mean_rel = round_to_kind(pass.shift_rel + t.sum_rel / n, rules.rel_kind);
  }

  // Distance: ||a - b||2 and a.b / (|a| |b|), in double. Two zero vectors are identical (1);
  // a zero vector and another are unrelated (0). Empty tensors do not differ.
  if (!pass.whole_tensor_metrics) {
    s.l2 = s.cosine = s.psnr = s.snr = NAN;
  } else {
    s.l2 = std::sqrt(t.sum_d2);
    const double norm0 = std::sqrt(t.sum_x2), norm1 = std::sqrt(t.sum_y2);
    if (std::isnan(norm0) || std::isnan(norm1) || std::isnan(t.sum_xy))
      s.cosine = NAN;
    else if (norm0 == 0 || norm1 == 0)
      s.cosine = norm0 == norm1 ? 1.0 : 0.0;
    else
      s.cosine = std::clamp(t.sum_xy / (norm0 * norm1), -1.0, 1.0);

    // Quality (Polygraphy's quality_metrics): the signal is out0. MSE 0 (or no elements) is a
    // perfect match, +inf dB.
    const double mse = s.count == 0 ? 0.0 : t.sum_d2 / n;
    double peak = t.nan0 ? NAN : t.max0;
    if (!(peak > 0) && !std::isnan(peak)) peak = 1.0;
    if (mse == 0) {
      s.psnr = s.snr = kInf;
    } else {
      s.psnr = 20 * std::log10(peak) - 10 * std::log10(mse);
      s.snr = 10 * std::log10((t.sum_x2 / n) / mse);
    }
  }

  switch (options.metric) {
    case CompareMetric::kSimple: {
      switch (stat) {
        case ErrorStat::kElemwise:
          s.passed = simple_verdict_passed(stat, error_summary(s), atol, rtol);
          s.ratio = s.nan_count > 0 ? kInf : t.ratio;
          break;
        case ErrorStat::kMedian:
        case ErrorStat::kQuantile:
          order_stats(s, out0, out1, rules, stat, options.error_quantile.get(name, 0.99));
          [[fallthrough]];
        default: {
          double sa = s.max_abs, sr = s.max_rel;
          if (stat == ErrorStat::kMean) sa = s.mean_abs, sr = s.mean_rel;
          if (stat == ErrorStat::kMedian) sa = *s.median_abs, sr = *s.median_rel;
          if (stat == ErrorStat::kQuantile) sa = *s.quantile_abs, sr = *s.quantile_rel;
          s.passed = simple_verdict_passed(stat, error_summary(s), atol, rtol);
          s.ratio = std::min(tolerance_part(sa, atol), tolerance_part(sr, rtol));
        }
      }
      break;
    }
    case CompareMetric::kDistance: {
      const double l2_tol = options.l2_tolerance.get(name, 1e-5);
      const double cos_min = options.cosine_similarity_threshold.get(name, 0.997);
      s.passed = s.l2 <= l2_tol && s.cosine >= cos_min;
      s.ratio =
          std::max(tolerance_part(s.l2, l2_tol), tolerance_part(1.0 - s.cosine, 1.0 - cos_min));
      break;
    }
    case CompareMetric::kQuality: {
      const double psnr_min = options.psnr_tolerance.get(name, 30.0);
      const double snr_min = options.snr_tolerance.get(name, 20.0);
      s.passed = s.psnr >= psnr_min && s.snr >= snr_min;
      // How far below the thresholds, as an amplitude factor (20 dB = 10x).
      auto shortfall = [](double value, double minimum) {
        if (std::isnan(value)) return kInf;
        return std::pow(10.0, (minimum - value) / 20.0);
      };
      s.ratio = std::max(shortfall(s.psnr, psnr_min), shortfall(s.snr, snr_min));
      break;
    }
  }
  return s;
}

}  // namespace parity
