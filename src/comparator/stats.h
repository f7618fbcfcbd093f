// Statistics over outputs and their differences, and the lines Polygraphy prints about them
// (comparator/util.py: str_output_stats, str_histogram, log_output_stats).
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/logger.h"
#include "core/tensor.h"

namespace parity {

// The element kind NumPy would compute in after Polygraphy's cast_up: float16 (and the other
// narrow floats) -> float32; int8/uint8/int16/uint16 -> int32; uint32 -> int64; others unchanged.
enum class NumKind { kBool, kInt, kFloat32, kFloat64 };

NumKind num_kind_after_cast_up(DataType t);
// NumPy's result kind for arithmetic between two kinds (int with float32 gives float64).
NumKind promote(NumKind a, NumKind b);
// The dtype that holds a kind (for printing derived arrays).
DataType dtype_of_kind(NumKind k);
// Rounds a statistic to the precision of its kind (float32 results are float32 in NumPy).
double round_to_kind(double v, NumKind k);

// Values in double plus the kind they stand for. Every value is exactly representable in its
// kind (a kFloat32 array holds float32 values).
struct NumArray {
  std::vector<double> values;
  NumKind kind = NumKind::kFloat64;
  Shape shape;

  size_t size() const { return values.size(); }
  // A tensor of the kind's dtype with these values (for NumPy-style printing).
  Tensor to_tensor() const;
};

NumArray to_num_array(const Tensor& t);

// Everything one fused pass over the data gives.
struct BasicStats {
  size_t count = 0;
  double mean = NAN;     // NaN when empty, as np.mean
  double stddev = 0;     // population; 0 when empty (Polygraphy's zero-on-empty)
  double var = 0;
  double min = 0, max = 0;  // 0 when empty; NaN when any value is NaN (NumPy propagates NaN)
  int64_t argmin = 0, argmax = 0;  // flat index; first NaN when there is one
  double avg_magnitude = NAN;
  bool has_nan = false;
};

BasicStats compute_basic_stats(const NumArray& a);

// The median and quantiles of an array (comparator/fused_stats.h selects them exactly, without
// sorting or copying the data).
struct OrderStats {
  double median = 0;  // 0 when empty, NaN when any value is NaN
  // (q, value) for each quantile computed: NumPy's linear method; +inf when empty, NaN with NaN.
  std::vector<std::pair<double, double>> quantiles;
  // The value of a quantile computed; throws parity::Error for one that was not.
  double quantile(double q) const;
};

// The median and the given quantiles of `a`.
OrderStats compute_order_stats(const NumArray& a, const std::vector<double>& quantiles);
// The quantiles Polygraphy prints for every array.
inline const std::vector<double> kReportQuantiles = {0.9, 0.95, 0.99};

// np.histogram(bins=10) as Polygraphy's str_histogram draws it: the range, edges and binning
// rule (in float32 for float32 data) apart from the counting, so that streams can be counted.
class Histogram10 {
 public:
  static constexpr int kBins = 10;
  // Nothing to show (nullopt): bool data, or a range NumPy rejects (logged at VERBOSE as
  // Polygraphy does). Without `range`, the data's own min and max (`stats`) when not empty.
  static std::optional<Histogram10> make(NumKind kind, size_t size,
                                         std::optional<std::pair<double, double>> range,
                                         const BasicStats& stats);
  // The bin of x, -1 outside the range (and for NaN).
  int bin(double x) const;
  // The "---- Histogram ----" block (no trailing newline); empty when every count is 0.
  std::string str(const std::array<int64_t, kBins>& counts) const;

 private:
  double first_ = 0, last_ = 1, norm_ = 0;
  double edges_[kBins + 1] = {};
  bool single_ = false;
};

// "(0, 3)" for a flat index in `shape`; "0" for an empty array (Polygraphy's zero-on-empty).
std::string unravel_index_str(int64_t flat, const Shape& shape, size_t size);

// "mean=..., std-dev=..., ..., avg-magnitude=...[, p90=..., p95=..., p99=...]", prefixed
// with "<name> | Stats: " when name is not empty.
std::string str_output_stats(const NumArray& a, const std::string& name);
// The same from statistics the caller already has (saves passes over the data).
std::string str_output_stats(const NumArray& a, const std::string& name, const BasicStats& s,
                             const OrderStats& order);
// The same for an array known by its kind, shape and size only (a stream never stored).
std::string str_output_stats(NumKind kind, const Shape& shape, size_t size,
                             const std::string& name, const BasicStats& s, const OrderStats& order);

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
