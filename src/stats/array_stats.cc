#include "stats/array_stats.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

#include "core/error.h"
#include "core/logger.h"
#include "core/numeric.h"
#include "core/py_format.h"
#include "stats/fused_stats.h"

namespace parity {

NumKind num_kind_after_cast_up(DataType t) {
  if (t == DataType::kBool) return NumKind::kBool;
  if (t == DataType::kFloat64) return NumKind::kFloat64;
  if (dtype_is_float(t)) return NumKind::kFloat32;
  if (dtype_is_integer(t)) return NumKind::kInt;
  fail(
      "failed to compare values of type {}: only numeric and bool types have statistics; "
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
    case NumKind::kBool:
      return DataType::kBool;
    case NumKind::kInt:
      return DataType::kInt64;
    case NumKind::kFloat32:
      return DataType::kFloat32;
    case NumKind::kFloat64:
      return DataType::kFloat64;
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
      case NumKind::kBool:
        t.data<bool>()[i] = values[i] != 0;
        break;
      case NumKind::kInt:
        t.data<int64_t>()[i] = static_cast<int64_t>(values[i]);
        break;
      case NumKind::kFloat32:
        t.data<float>()[i] = static_cast<float>(values[i]);
        break;
      case NumKind::kFloat64:
        t.data<double>()[i] = values[i];
        break;
    }
  }
  return t;
}

NumArray to_num_array(const Tensor& t) {
  NumKind kind = num_kind_after_cast_up(t.dtype());
  return NumArray{tensor_to_doubles(t), kind, t.shape()};
}

BasicStats compute_basic_stats(const NumArray& a) {
  return compute_fused_stats(NumArraySource(a), {StreamRequest{}}).basic[0];
}

OrderStats compute_order_stats(const NumArray& a, const std::vector<double>& quantiles) {
  return compute_fused_stats(NumArraySource(a), {StreamRequest{true, quantiles}}).order[0];
}

double OrderStats::quantile(double q) const {
  for (const auto& [at, value] : quantiles)
    if (at == q) return value;
  fail("failed to look up quantile {}: it was not computed; computed: {}", format_repr(q),
       quantiles.size());
}

std::optional<Histogram10> Histogram10::make(NumKind kind, size_t size,
                                             std::optional<std::pair<double, double>> range,
                                             const BasicStats& stats) {
  if (kind == NumKind::kBool) return std::nullopt;
  double first = 0, last = 1;
  if (range) {
    std::tie(first, last) = *range;
    if (first > last) {
      logger().verbose(
          "Could not generate histogram. Note: Error was: max must be larger than "
          "min in range parameter.");
      return std::nullopt;
    }
    if (!std::isfinite(first) || !std::isfinite(last)) {
      logger().verbose(
          "Could not generate histogram. Note: Error was: supplied range of [{}, {}] "
          "is not finite",
          format_repr(first), format_repr(last));
      return std::nullopt;
    }
  } else if (size > 0) {
    first = stats.min, last = stats.max;
    if (!std::isfinite(first) || !std::isfinite(last)) {
      logger().verbose(
          "Could not generate histogram. Note: Error was: autodetected range of "
          "[{}, {}] is not finite",
          format_repr(first), format_repr(last));
      return std::nullopt;
    }
  }
  if (first == last) first -= 0.5, last += 0.5;

  // np.histogram(bins=10): edges from linspace in double, stored in the data's float type.
  Histogram10 h;
  h.single_ = kind == NumKind::kFloat32;
  const NumKind edge_kind = h.single_ ? NumKind::kFloat32 : NumKind::kFloat64;
  const double step = (last - first) / kBins;
  for (int i = 0; i <= kBins; ++i) h.edges_[i] = round_to_kind(i * step + first, edge_kind);
  h.edges_[kBins] = round_to_kind(last, edge_kind);
  h.norm_ = kBins / (last - first);
  h.first_ = first;
  h.last_ = last;
  return h;
}

int Histogram10::bin(double x) const {
  if (!(x >= first_ && x <= last_)) return -1;
  const double f =
      single_ ? static_cast<double>(static_cast<float>(
                    static_cast<float>(x - static_cast<float>(first_)) * static_cast<float>(norm_)))
              : (x - first_) * norm_;
  int idx = std::clamp(static_cast<int>(f), 0, kBins - 1);
  if (x < edges_[idx] && idx > 0) --idx;
  if (x >= edges_[idx + 1] && idx != kBins - 1) ++idx;
  return idx;
}

std::string Histogram10::str(const std::array<int64_t, kBins>& counts) const {
  const int64_t max_count = *std::max_element(counts.begin(), counts.end());
  if (max_count == 0) return "";
  std::string labels[kBins + 1];
  size_t start_width = 0, end_width = 0;
  for (int i = 0; i <= kBins; ++i) {
    labels[i] = format_g(edges_[i], 3);
    start_width = std::max(start_width, labels[i].size());
    if (i > 0) end_width = std::max(end_width, labels[i].size());
  }
  std::string r = "---- Histogram ----\n";
  r += fmt::format("{:<{}}|  Num Elems | Visualization", "Bin Range", start_width + end_width + 5);
  for (int i = 0; i < kBins; ++i) {
    size_t bar =
        static_cast<size_t>(40.0 * static_cast<double>(counts[i]) / static_cast<double>(max_count));
    r += fmt::format("\n({:<{}}, {:<{}}) | {:>10} | {}", labels[i], start_width, labels[i + 1],
                     end_width, counts[i], std::string(bar, '#'));
  }
  return r;
}

}  // namespace parity
