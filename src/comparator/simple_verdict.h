// CompareFunc.simple's verdict on one output, stated once: compare_simple.cc prints
// Polygraphy's report around it, tensor_error.cc keeps it per tensor for layer-wise runs and
// the report.
#pragma once

#include <cstdint>
#include <optional>

#include "comparator/compare.h"

namespace parity {

// The error statistics a verdict may look at. The median and quantile are needed only when
// the checked statistic is that one.
struct ErrorSummary {
  double max_abs = 0, max_rel = 0, mean_abs = 0, mean_rel = 0;
  std::optional<double> median_abs, median_rel, quantile_abs, quantile_rel;
  int64_t mismatches = 0;  // elements beyond both atol and rtol
};

// Polygraphy's stat_failed: a statistic fails when it is NaN or above its tolerance.
bool stat_failed(double value, double tolerance);

// elemwise: no element is beyond both tolerances. Otherwise the output passes unless the
// chosen statistic fails for both the absolute and the relative difference.
bool simple_verdict_passed(ErrorStat stat, const ErrorSummary& e, double atol, double rtol);

}  // namespace parity
