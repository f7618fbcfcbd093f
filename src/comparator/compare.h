// Compare functions (Polygraphy's CompareFunc). A compare function takes two iteration
// results and returns one OutputCompareResult per compared output, logging the report.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "comparator/error_plots.h"
#include "comparator/struct.h"

namespace parity {

// A value that may differ per output: `values[""]` is the default for outputs not named.
template <typename T>
struct PerOutput {
  std::map<std::string, T> values;
  PerOutput() = default;
  PerOutput(T v) { values[""] = v; }  // NOLINT: implicit by design
  // Exact name, then the "" default, then `fallback`.
  T get(const std::string& name, T fallback) const {
    if (auto it = values.find(name); it != values.end()) return it->second;
    if (auto it = values.find(""); it != values.end()) return it->second;
    return fallback;
  }
};

enum class ErrorStat { kElemwise, kMax, kMean, kMedian, kQuantile };
std::string_view error_stat_name(ErrorStat s);
// Throws UsageError "Invalid choice for check_error_stat: X. Note: Valid choices are: [...]".
ErrorStat error_stat_from_name(std::string_view name);

using CompareFunc =
    std::function<IterationCompareResult(const IterationResult&, const IterationResult&)>;

struct SimpleCompareOptions {
  bool check_shapes = true;
  PerOutput<double> rtol = 1e-5;
  PerOutput<double> atol = 1e-5;
  bool fail_fast = false;
  PerOutput<ErrorStat> check_error_stat = ErrorStat::kElemwise;
  bool infinities_compare_equal = false;
  PerOutput<double> error_quantile = 0.99;
  // The figures of the errors (Polygraphy's save_heatmaps, ...), drawn by `plotter`, which
  // must be set when any is asked for.
  ErrorPlotOptions plots;
  std::shared_ptr<ErrorPlotter> plotter;
};

struct IndicesCompareOptions {
  PerOutput<int64_t> index_tolerance = int64_t{0};
  bool fail_fast = false;
};

// Polygraphy's CompareFunc.distance_metrics: passes when the L2 norm of the difference is at
// most l2_tolerance and the cosine similarity at least the threshold (per output).
struct DistanceCompareOptions {
  bool check_shapes = true;
  PerOutput<double> l2_tolerance = 1e-5;
  PerOutput<double> cosine_similarity_threshold = 0.997;
  bool fail_fast = false;
};

// Polygraphy's CompareFunc.quality_metrics: passes when PSNR and SNR (dB, the first output is
// the signal) are at least their tolerances (per output).
struct QualityCompareOptions {
  bool check_shapes = true;
  PerOutput<double> psnr_tolerance = 30.0;
  PerOutput<double> snr_tolerance = 20.0;
  bool fail_fast = false;
};

namespace compare_func {
CompareFunc simple(SimpleCompareOptions options = {});
CompareFunc indices(IndicesCompareOptions options = {});
CompareFunc distance(DistanceCompareOptions options = {});
CompareFunc quality(QualityCompareOptions options = {});
}  // namespace compare_func

}  // namespace parity
