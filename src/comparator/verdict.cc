#include "comparator/verdict.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace parity {

RunVerdict RunVerdict::from_accuracy(const AccuracyResult& accuracy) {
  size_t compared = 0;
  for (const auto& [pair, iterations] : accuracy.entries)
    for (const auto& iteration : iterations) compared += iteration.size();
  if (compared == 0)
    return nothing_compared(
        accuracy.entries.empty()
            ? "Compared nothing: there were no two sets of results to compare"
            : "Compared nothing: the results hold no iteration with an output to compare (did "
              "the data loader give no input, or do the saved results hold no iteration?)");
  return RunVerdict(static_cast<bool>(accuracy), "");
}

RunVerdict RunVerdict::from_iterations(size_t iterations, size_t passed) {
  if (iterations == 0)
    return nothing_compared(
        "Compared nothing: no iteration ran (the data loader gave no input, "
        "or the saved results hold no iteration)");
  return RunVerdict(passed == iterations, "");
}

RunVerdict RunVerdict::inference_only(const RunResults& results) {
  if (results.size() != 1)
    return nothing_compared(
        fmt::format("Compared nothing: {} sets of results and no comparison", results.size()));
  if (results[0].second.empty())
    return nothing_compared(
        fmt::format("Ran nothing: runner {} ran no iteration (the data "
                    "loader gave no input)",
                    results[0].first));
  return RunVerdict(true, "");
}

RunVerdict RunVerdict::nothing_compared(std::string why) {
  return RunVerdict(false, std::move(why));
}

RunVerdict& RunVerdict::with_validation(bool passed) {
  passed_ = passed_ && passed;
  return *this;
}

RunVerdict& RunVerdict::with_failed_runners(const std::vector<std::string>& names) {
  if (names.empty()) return *this;
  passed_ = false;
  const std::string failed =
      fmt::format("{} runner(s) failed and were left out of the comparison: {}", names.size(),
                  fmt::join(names, ", "));
  why_ = why_.empty() ? failed : why_ + "; " + failed;
  return *this;
}

}  // namespace parity
