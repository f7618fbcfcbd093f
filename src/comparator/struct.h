// Result structures (Polygraphy's comparator/struct.py).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace parity {

// The outputs of one inference of one runner.
struct IterationResult {
  TensorMap outputs;
  std::optional<double> runtime;  // seconds
  std::string runner_name = "custom_runner";
  // Parity's own, for dataset runs (comparator/dataset.h): the feed's position in the whole
  // dataset, so shards can be merged, and why the runner failed on it (outputs then empty).
  // Saved under extra keys, which Polygraphy's decoder ignores.
  std::optional<size_t> dataset_index;
  std::string error;
};

// A list of (runner name, iterations), in run order. Duplicate names are allowed.
class RunResults {
 public:
  using Entry = std::pair<std::string, std::vector<IterationResult>>;

  void add(std::vector<IterationResult> iterations,
           const std::string& runner_name = "custom_runner");
  // Replaces the entry with this name, or appends one.
  void set(const std::string& runner_name, std::vector<IterationResult> iterations);
  const std::vector<IterationResult>& at(const std::string& runner_name) const;  // Error if absent
  const Entry& operator[](size_t i) const;  // Error if out of bounds
  bool contains(const std::string& runner_name) const;
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  std::vector<std::string> keys() const;
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }
  auto begin() { return entries_.begin(); }
  auto end() { return entries_.end(); }
  void append(Entry e) { entries_.push_back(std::move(e)); }

 private:
  std::vector<Entry> entries_;
};

// The outcome of comparing one output of one iteration.
struct OutputCompareResult {
  bool passed = false;
  double max_absdiff = 0, max_reldiff = 0;
  double mean_absdiff = 0, mean_reldiff = 0;
  double median_absdiff = 0, median_reldiff = 0;
  std::optional<double> quantile_absdiff, quantile_reldiff;
  explicit operator bool() const { return passed; }
  std::string str() const;  // "(atol=<max_absdiff>, rtol=<max_reldiff>)"
};

// output name -> result, in the first runner's output order.
using IterationCompareResult = std::vector<std::pair<std::string, OutputCompareResult>>;

// (runner0, runner1) -> one IterationCompareResult per compared iteration.
class AccuracyResult {
 public:
  using Pair = std::pair<std::string, std::string>;
  std::vector<std::pair<Pair, std::vector<IterationCompareResult>>> entries;

  explicit operator bool() const;  // every output of every iteration of every pair passed
  // (matched iterations, mismatched iterations, total) for one pair.
  std::tuple<size_t, size_t, size_t> stats(const Pair& pair) const;
  double percentage(const Pair& pair) const;  // 1.0 when there is nothing to compare
};

}  // namespace parity
