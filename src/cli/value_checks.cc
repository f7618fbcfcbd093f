#include "cli/value_checks.h"

#include <cmath>

#include "core/error.h"

namespace parity::cli {

void check_tolerances(const std::string& flag, const PerOutput<double>& values) {
  for (const auto& [name, v] : values.values) {
    const std::string which = name.empty() ? "" : fmt::format(" for output '{}'", name);
    if (std::isnan(v))
      fail_usage(
          "failed to use {} nan{}: a tolerance must be a number of 0 or more (inf "
          "accepts any difference); NaN would fail every comparison",
          flag, which);
    if (v < 0)
      fail_usage(
          "failed to use {} {}{}: a tolerance must be 0 or more; a negative one would fail "
          "even identical outputs",
          flag, v, which);
  }
}

}  // namespace parity::cli
