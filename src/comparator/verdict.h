// How a run ended: the one thing its exit status and its final PASSED or FAILED line are made
// from. A passing verdict can only be made from comparisons or validations that ran and passed,
// or from an inference-only run (one set of results, nothing asked to compare) that ran at
// least one iteration; a run asked to compare that compared nothing fails, saying why.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "comparator/struct.h"

namespace parity {

class RunVerdict {
 public:
  // compare_accuracy's outcome: passes when every comparison passed and at least one output
  // of one iteration was compared.
  static RunVerdict from_accuracy(const AccuracyResult& accuracy);
  // `passed` of `iterations` compared iterations passed (a layer-wise run).
  static RunVerdict from_iterations(size_t iterations, size_t passed);
  // The results of one runner, with nothing asked to be compared.
  static RunVerdict inference_only(const RunResults& results);
  // The run could not compare what it was asked to compare.
  static RunVerdict nothing_compared(std::string why);

  // --validate: the run passes only when the validation passes too.
  RunVerdict& with_validation(bool passed);
  // Runners that failed and were left out (--use-subprocess): the run fails, naming them.
  RunVerdict& with_failed_runners(const std::vector<std::string>& names);

  bool passed() const { return passed_; }
  // Why the run failed without a failing comparison ("" when a comparison decided).
  const std::string& why() const { return why_; }
  int exit_status() const { return passed_ ? 0 : 1; }

 private:
  RunVerdict(bool passed, std::string why) : passed_(passed), why_(std::move(why)) {}
  bool passed_;
  std::string why_;
};

}  // namespace parity
