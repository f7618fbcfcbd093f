#include "comparator/simple_verdict.h"

#include <cmath>

#include "core/error.h"

namespace parity {

bool stat_failed(double value, double tolerance) { return std::isnan(value) || value > tolerance; }

bool simple_verdict_passed(ErrorStat stat, const ErrorSummary& e, double atol, double rtol) {
  auto within = [&](double abs, double rel) {
    return !(stat_failed(abs, atol) && stat_failed(rel, rtol));
  };
  switch (stat) {
    case ErrorStat::kElemwise:
      return e.mismatches == 0;
    case ErrorStat::kMax:
      return within(e.max_abs, e.max_rel);
    case ErrorStat::kMean:
      return within(e.mean_abs, e.mean_rel);
    case ErrorStat::kMedian:
      PARITY_ENFORCE(e.median_abs && e.median_rel, "the median verdict needs the medians");
      return within(*e.median_abs, *e.median_rel);
    case ErrorStat::kQuantile:
      PARITY_ENFORCE(e.quantile_abs && e.quantile_rel, "the quantile verdict needs quantiles");
      return within(*e.quantile_abs, *e.quantile_rel);
  }
  return false;
}

}  // namespace parity
