#include "comparator/stats.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

#include "comparator/format.h"
#include "comparator/numeric.h"
#include "core/thread_pool.h"

namespace parity {

NumKind num_kind_after_cast_up(DataType t) {
  if (t == DataType::kBool) return NumKind::kBool;
  if (t == DataType::kFloat64) return NumKind::kFloat64;
  if (dtype_is_float(t)) return NumKind::kFloat32;
  if (dtype_is_integer(t)) return NumKind::kInt;
  fail("failed to compare values of type {}: only numeric and bool types have statistics; "
       "string outputs are compared for equality only",
       dtype_name(t));
}

NumKind promote(NumKind a, NumKind b) {
  if (a == b) return a;
  if (a == NumKind::kFloat64 || b == NumKind::kFloat64) return NumKind::kFloat64;
  bool has_f32 = a == NumKind::kFloat32 || b == NumKind::kFloat32;
  bool has_int = a == NumKind::kInt || b == NumKind::kInt;
  if (has_f32) return has_int ? NumKind::kFloat64 : NumKind::kFloat32;
  return NumKind::kInt;  // bool with int
}

DataType dtype_of_kind(NumKind k) {
  switch (k) {
    case NumKind::kBool: return DataType::kBool;
    case NumKind::kInt: return DataType::kInt64;
    case NumKind::kFloat32: return DataType::kFloat32;
    case NumKind::kFloat64: return DataType::kFloat64;
  }
  return DataType::kFloat64;
}

double round_to_kind(double v, NumKind k) {
  return k == NumKind::kFloat32 ? static_cast<double>(static_cast<float>(v)) : v;
}

Tensor NumArray::to_tensor() const {
  Tensor t(dtype_of_kind(kind), shape);
  for (size_t i = 0; i < values.size(); ++i) {
    switch (kind) {
      case NumKind::kBool: t.data<bool>()[i] = values[i] != 0; break;
      case NumKind::kInt: t.data<int64_t>()[i] = static_cast<int64_t>(values[i]); break;
      case NumKind::kFloat32: t.data<float>()[i] = static_cast<float>(values[i]); break;
      case NumKind::kFloat64: t.data<double>()[i] = values[i]; break;
    }
  }
  return t;
}

NumArray to_num_array(const Tensor& t) {
  NumKind kind = num_kind_after_cast_up(t.dtype());
  return NumArray{tensor_to_doubles(t), kind, t.shape()};
}

namespace {

// Partial results of the fused pass over one chunk. Sums are taken around a shift (the first
// element) so that the variance does not cancel catastrophically.
struct Partial {
  size_t count = 0;
  double sum = 0, sumsq = 0, sum_abs = 0;
  double min = INFINITY, max = -INFINITY;
  int64_t argmin = -1, argmax = -1, first_nan = -1;
};

constexpr int64_t kGrain = 1 << 16;

}  // namespace

BasicStats compute_basic_stats(const NumArray& a) {
  BasicStats s;
  s.count = a.size();
  if (a.values.empty()) return s;
  const double* v = a.values.data();
  const double shift = std::isfinite(v[0]) ? v[0] : 0.0;
  const int64_t n = static_cast<int64_t>(a.size());
  std::vector<Partial> parts(static_cast<size_t>((n + kGrain - 1) / kGrain));
  parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
    Partial p;
    for (int64_t i = begin; i < end; ++i) {
      double x = v[i];
      if (std::isnan(x)) {
        if (p.first_nan < 0) p.first_nan = i;
      } else {
        if (x < p.min || p.argmin < 0) p.min = x, p.argmin = i;
        if (x > p.max || p.argmax < 0) p.max = x, p.argmax = i;
      }
      double d = x - shift;
      p.sum += d;
      p.sumsq += d * d;
      p.sum_abs += std::fabs(x);
    }
    p.count = static_cast<size_t>(end - begin);
    parts[static_cast<size_t>(begin / kGrain)] = p;
  });
  // Combine in chunk order: the same bits for any number of threads.
  Partial t;
  for (const Partial& p : parts) {
    t.sum += p.sum;
    t.sumsq += p.sumsq;
    t.sum_abs += p.sum_abs;
    if (p.first_nan >= 0 && t.first_nan < 0) t.first_nan = p.first_nan;
    if (p.argmin >= 0 && (t.argmin < 0 || p.min < t.min)) t.min = p.min, t.argmin = p.argmin;
    if (p.argmax >= 0 && (t.argmax < 0 || p.max > t.max)) t.max = p.max, t.argmax = p.argmax;
  }
  const double count = static_cast<double>(n);
  // Polygraphy takes the mean with a float32 accumulator (np.mean(dtype=float32)), even for
  // float64 data, which loses digits on large outputs. Parity accumulates in double and rounds
  // once to the data's own precision.
  double mean_shifted = t.sum / count;
  s.mean = round_to_kind(shift + mean_shifted, a.kind);
  double var = std::max(0.0, t.sumsq / count - mean_shifted * mean_shifted);
  if (!std::isfinite(t.sum)) var = NAN;  // inf - inf, as NumPy
  s.var = round_to_kind(var, a.kind);
  s.stddev = round_to_kind(std::sqrt(var), a.kind);
  s.avg_magnitude = round_to_kind(t.sum_abs / count, a.kind);
  s.has_nan = t.first_nan >= 0;
  if (s.has_nan) {
    s.min = s.max = NAN;
    s.argmin = s.argmax = t.first_nan;
  } else {
    s.min = t.min, s.argmin = t.argmin;
    s.max = t.max, s.argmax = t.argmax;
  }
  return s;
}

OrderStats::OrderStats(const NumArray& a) : sorted_(a.values), kind_(a.kind) {
  has_nan_ = std::any_of(sorted_.begin(), sorted_.end(), [](double x) { return std::isnan(x); });
}

void OrderStats::select(size_t k) {
  auto it = std::lower_bound(selected_.begin(), selected_.end(), k);
  if (it != selected_.end() && *it == k) return;
  // Everything before the previous selected position is smaller, everything after the next is
  // larger: only the stretch between them needs partitioning.
  const size_t begin = it == selected_.begin() ? 0 : *std::prev(it) + 1;
  const size_t end = it == selected_.end() ? sorted_.size() : *it;
  std::nth_element(sorted_.begin() + static_cast<ptrdiff_t>(begin),
                   sorted_.begin() + static_cast<ptrdiff_t>(k),
                   sorted_.begin() + static_cast<ptrdiff_t>(end));
  selected_.insert(it, k);
}

// The value at fractional position `pos` of the sorted data. The next order statistic is the
// smallest value between the selected position and the next selected one (inclusive).
double OrderStats::interpolated(double pos, bool numpy_lerp) {
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const double t = pos - static_cast<double>(lo);
  select(lo);
  const double a = sorted_[lo];
  if (t == 0 || lo + 1 >= sorted_.size()) return a;
  auto next = std::upper_bound(selected_.begin(), selected_.end(), lo);
  const size_t last = next == selected_.end() ? sorted_.size() : *next + 1;
  const double b = *std::min_element(sorted_.begin() + static_cast<ptrdiff_t>(lo) + 1,
                                     sorted_.begin() + static_cast<ptrdiff_t>(last));
  if (!numpy_lerp) return (a + b) / 2;
  // NumPy's _lerp: computed from whichever end is nearer, so that t = 1 gives b exactly.
  const double diff = b - a;
  return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;
}

double OrderStats::median() {
  if (sorted_.empty()) return 0;
  if (has_nan_) return NAN;
  return round_to_kind(interpolated(static_cast<double>(sorted_.size() - 1) / 2, false), kind_);
}

double OrderStats::quantile(double q) {
  if (sorted_.empty()) return INFINITY;
  if (has_nan_) return NAN;
  return round_to_kind(interpolated(q * static_cast<double>(sorted_.size() - 1), true), kind_);
}

std::string unravel_index_str(int64_t flat, const Shape& shape, size_t size) {
  if (size == 0) return "0";
  Shape index(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    index[i] = flat % shape[i];
    flat /= shape[i];
  }
  return shape_str(index);
}

std::string str_output_stats(const NumArray& a, const std::string& name) {
  BasicStats s = compute_basic_stats(a);
  OrderStats order(a);
  return str_output_stats(a, name, s, order);
}

std::string str_output_stats(const NumArray& a, const std::string& name, const BasicStats& s,
                             OrderStats& order) {
  std::string r = name.empty() ? "" : name + " | Stats: ";
  r += fmt::format(
      "mean={}, std-dev={}, var={}, median={}, min={} at {}, max={} at {}, avg-magnitude={}",
      format_g(s.mean, 5), format_g(s.stddev, 5), format_g(s.var, 5), format_g(order.median(), 5),
      format_g(s.min, 5), unravel_index_str(s.argmin, a.shape, a.size()), format_g(s.max, 5),
      unravel_index_str(s.argmax, a.shape, a.size()), format_g(s.avg_magnitude, 5));
  // NumPy cannot take quantiles of bools, so Polygraphy leaves them out for bool data.
  if (a.kind != NumKind::kBool)
    r += fmt::format(", p90={}, p95={}, p99={}", format_g(order.quantile(0.9), 5),
                     format_g(order.quantile(0.95), 5), format_g(order.quantile(0.99), 5));
  return r;
}

std::string str_histogram(const NumArray& a, std::optional<std::pair<double, double>> range,
                          const BasicStats* stats) {
  if (a.kind == NumKind::kBool) return "";
  double first = 0, last = 1;
  if (range) {
    std::tie(first, last) = *range;
    if (first > last) {
      logger().verbose("Could not generate histogram. Note: Error was: max must be larger than "
                       "min in range parameter.");
      return "";
    }
    if (!std::isfinite(first) || !std::isfinite(last)) {
      logger().verbose("Could not generate histogram. Note: Error was: supplied range of [{}, {}] "
                       "is not finite", format_repr(first), format_repr(last));
      return "";
    }
  } else if (a.size() > 0) {
    const BasicStats s = stats ? *stats : compute_basic_stats(a);
    first = s.min, last = s.max;
    if (!std::isfinite(first) || !std::isfinite(last)) {
      logger().verbose("Could not generate histogram. Note: Error was: autodetected range of "
                       "[{}, {}] is not finite", format_repr(first), format_repr(last));
      return "";
    }
  }
  if (first == last) first -= 0.5, last += 0.5;

  // np.histogram(bins=10): edges from linspace in double, stored in the data's float type.
  constexpr int kBins = 10;
  const bool single = a.kind == NumKind::kFloat32;
  const NumKind edge_kind = single ? NumKind::kFloat32 : NumKind::kFloat64;
  double edges[kBins + 1];
  const double step = (last - first) / kBins;
  for (int i = 0; i <= kBins; ++i) edges[i] = round_to_kind(i * step + first, edge_kind);
  edges[kBins] = round_to_kind(last, edge_kind);
  const double norm = kBins / (last - first);

  int64_t counts[kBins] = {};
  for (double x : a.values) {
    if (!(x >= first && x <= last)) continue;
    double f = single ? static_cast<double>(static_cast<float>(
                            static_cast<float>(x - static_cast<float>(first)) *
                            static_cast<float>(norm)))
                      : (x - first) * norm;
    int idx = std::clamp(static_cast<int>(f), 0, kBins - 1);
    if (x < edges[idx] && idx > 0) --idx;
    if (x >= edges[idx + 1] && idx != kBins - 1) ++idx;
    ++counts[idx];
  }
  const int64_t max_count = *std::max_element(counts, counts + kBins);
  if (max_count == 0) return "";

  std::string labels[kBins + 1];
  size_t start_width = 0, end_width = 0;
  for (int i = 0; i <= kBins; ++i) {
    labels[i] = format_g(edges[i], 3);
    start_width = std::max(start_width, labels[i].size());
    if (i > 0) end_width = std::max(end_width, labels[i].size());
  }
  std::string r = "---- Histogram ----\n";
  r += fmt::format("{:<{}}|  Num Elems | Visualization", "Bin Range", start_width + end_width + 5);
  for (int i = 0; i < kBins; ++i) {
    size_t bar = static_cast<size_t>(40.0 * static_cast<double>(counts[i]) /
                                     static_cast<double>(max_count));
    r += fmt::format("\n({:<{}}, {:<{}}) | {:>10} | {}", labels[i], start_width, labels[i + 1],
                     end_width, counts[i], std::string(bar, '#'));
  }
  return r;
}

void log_output_stats(const NumArray& a, bool info_hist, const std::string& name,
                      std::optional<std::pair<double, double>> hist_range, const Tensor* values,
                      const BasicStats* stats, OrderStats* order) {
  const BasicStats own_stats = stats ? BasicStats{} : compute_basic_stats(a);
  if (!stats) stats = &own_stats;
  std::optional<OrderStats> own_order;
  if (!order) order = &own_order.emplace(a);
  logger().info("{}", str_output_stats(a, name, *stats, *order));
  Logger::Indent indent;
  const Severity severity = info_hist ? Severity::kInfo : Severity::kVerbose;
  if (!logger().enabled(severity)) return;
  constexpr size_t kSmallOutputThreshold = 100;
  if (a.size() <= kSmallOutputThreshold) {
    std::string text = values ? numpy_array_str(*values) : numpy_array_str(a.to_tensor());
    std::string block = "    ";
    for (char c : text) {
      block.push_back(c);
      if (c == '\n') block += "    ";
    }
    logger().log(severity, "---- Values ----\n" + block);
  }
  std::string histogram = str_histogram(a, hist_range, stats);
  if (!histogram.empty()) logger().log(severity, histogram);
}

}  // namespace parity
