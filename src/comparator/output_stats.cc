#include "comparator/output_stats.h"

#include <fmt/format.h>

#include "core/py_format.h"
#include "stats/fused_stats.h"

namespace parity {

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
  const FusedStats stats = compute_fused_stats(
      NumArraySource(a),
      {StreamRequest{true, a.kind == NumKind::kBool ? std::vector<double>{} : kReportQuantiles}});
  return str_output_stats(a, name, stats.basic[0], stats.order[0]);
}

std::string str_output_stats(const NumArray& a, const std::string& name, const BasicStats& s,
                             const OrderStats& order) {
  return str_output_stats(a.kind, a.shape, a.size(), name, s, order);
}

std::string str_output_stats(NumKind kind, const Shape& shape, size_t size, const std::string& name,
                             const BasicStats& s, const OrderStats& order) {
  std::string r = name.empty() ? "" : name + " | Stats: ";
  r += fmt::format(
      "mean={}, std-dev={}, var={}, median={}, min={} at {}, max={} at {}, avg-magnitude={}",
      format_g(s.mean, 5), format_g(s.stddev, 5), format_g(s.var, 5), format_g(order.median, 5),
      format_g(s.min, 5), unravel_index_str(s.argmin, shape, size), format_g(s.max, 5),
      unravel_index_str(s.argmax, shape, size), format_g(s.avg_magnitude, 5));
  // NumPy cannot take quantiles of bools, so Polygraphy leaves them out for bool data.
  if (kind != NumKind::kBool)
    r += fmt::format(", p90={}, p95={}, p99={}", format_g(order.quantile(0.9), 5),
                     format_g(order.quantile(0.95), 5), format_g(order.quantile(0.99), 5));
  return r;
}

std::string str_histogram(const NumArray& a, std::optional<std::pair<double, double>> range,
                          const BasicStats* stats) {
  if (a.kind == NumKind::kBool) return "";
  const BasicStats own = stats || range || a.size() == 0 ? BasicStats{} : compute_basic_stats(a);
  const std::optional<Histogram10> h =
      Histogram10::make(a.kind, a.size(), range, stats ? *stats : own);
  if (!h) return "";
  std::array<int64_t, Histogram10::kBins> counts{};
  for (double x : a.values) {
    const int idx = h->bin(x);
    if (idx >= 0) ++counts[static_cast<size_t>(idx)];
  }
  return h->str(counts);
}

void log_output_stats(const std::string& stats_line, bool info_hist, size_t size,
                      const std::function<std::string()>& values_text,
                      const std::function<std::string()>& histogram) {
  logger().info("{}", stats_line);
  Logger::Indent indent;
  const Severity severity = info_hist ? Severity::kInfo : Severity::kVerbose;
  if (!logger().enabled(severity)) return;
  constexpr size_t kSmallOutputThreshold = 100;
  if (size <= kSmallOutputThreshold) {
    const std::string text = values_text();
    std::string block = "    ";
    for (char c : text) {
      block.push_back(c);
      if (c == '\n') block += "    ";
    }
    logger().log(severity, "---- Values ----\n" + block);
  }
  const std::string hist = histogram();
  if (!hist.empty()) logger().log(severity, hist);
}

void log_output_stats(const NumArray& a, bool info_hist, const std::string& name,
                      std::optional<std::pair<double, double>> hist_range, const Tensor* values,
                      const BasicStats* stats, const OrderStats* order) {
  const bool want_order = order == nullptr;
  const FusedStats own = compute_fused_stats(
      NumArraySource(a),
      {StreamRequest{want_order, want_order && a.kind != NumKind::kBool ? kReportQuantiles
                                                                        : std::vector<double>{}}});
  if (!stats) stats = &own.basic[0];
  if (!order) order = &own.order[0];
  log_output_stats(
      str_output_stats(a, name, *stats, *order), info_hist, a.size(),
      [&] { return values ? numpy_array_str(*values) : numpy_array_str(a.to_tensor()); },
      [&] { return str_histogram(a, hist_range, stats); });
}

}  // namespace parity
