// Statistics over arrays the way NumPy computes them after Polygraphy's cast_up: the element
// kinds, the one-pass basic statistics, the exact median and quantiles, and np.histogram's
// binning rule. Depends on core only; the lines Polygraphy prints about them are in
// comparator/output_stats.h.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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
  double mean = NAN;  // NaN when empty, as np.mean
  double stddev = 0;  // population; 0 when empty (Polygraphy's zero-on-empty)
  double var = 0;
  double min = 0, max = 0;         // 0 when empty; NaN when any value is NaN (NumPy propagates NaN)
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

}  // namespace parity
