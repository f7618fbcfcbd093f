// The lines Polygraphy prints about an output or a difference (comparator/util.py:
// str_output_stats, str_histogram, log_output_stats), from the statistics of stats/.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "core/logger.h"
#include "core/tensor.h"
#include "stats/array_stats.h"

namespace parity {

// "(0, 3)" for a flat index in `shape`; "0" for an empty array (Polygraphy's zero-on-empty).
std::string unravel_index_str(int64_t flat, const Shape& shape, size_t size);

// "mean=..., std-dev=..., ..., avg-magnitude=...[, p90=..., p95=..., p99=...]", prefixed
// with "<name> | Stats: " when name is not empty.
std::string str_output_stats(const NumArray& a, const std::string& name);
// The same from statistics the caller already has (saves passes over the data).
std::string str_output_stats(const NumArray& a, const std::string& name, const BasicStats& s,
                             const OrderStats& order);
// The same for an array known by its kind, shape and size only (a stream never stored).
std::string str_output_stats(NumKind kind, const Shape& shape, size_t size, const std::string& name,
                             const BasicStats& s, const OrderStats& order);

// The 10-bin "---- Histogram ----" block (no trailing newline); empty when there is nothing to
// show (bool data, no elements, a range NumPy rejects).
// `stats`, when given, are a's own (they give the range when `range` is not set).
std::string str_histogram(const NumArray& a, std::optional<std::pair<double, double>> range,
                          const BasicStats* stats = nullptr);

// Logs the stats line at INFO, then (indented) the values when there are at most 100 and the
// histogram, at INFO when `info_hist` (the output failed), else VERBOSE. `values` is the
// tensor whose values are printed (the original output, or a.to_tensor() when null).
void log_output_stats(const NumArray& a, bool info_hist, const std::string& name,
                      std::optional<std::pair<double, double>> hist_range = std::nullopt,
                      const Tensor* values = nullptr, const BasicStats* stats = nullptr,
                      const OrderStats* order = nullptr);
// The same from a ready stats line: the values (when there are at most 100) and the histogram
// are asked for only when they will be printed.
void log_output_stats(const std::string& stats_line, bool info_hist, size_t size,
                      const std::function<std::string()>& values_text,
                      const std::function<std::string()>& histogram);

}  // namespace parity
