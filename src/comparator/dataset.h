// Validation on a whole dataset: feeds are read one at a time, every runner runs each feed, the
// runners are compared pairwise at once and only a compact record of the iteration is kept (its
// verdict and error statistics), so memory does not grow with the outputs of the dataset. The
// summary (pass rate, the worst inputs by error with their indices, the distribution of the
// errors across the dataset) is made from those records alone, in dataset order, so a run split
// into shards or spread over a cluster gives the same summary as one run in one process.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/runner.h"
#include "comparator/compare.h"
#include "comparator/data_loader.h"
#include "comparator/struct.h"
#include "comparator/verdict.h"

namespace parity {

// `--shard index/count`: a run takes the iterations i with i % count == index, so shards are
// disjoint, cover the dataset together, and need not know its size in advance.
struct Shard {
  size_t index = 0;
  size_t count = 1;
  bool owns(size_t iteration) const { return iteration % count == index; }
  // "i/n" with 0 <= i < n; UsageError naming `flag` otherwise.
  static Shard parse(const std::string& flag, const std::string& text);
};

// What one runner made of one feed: its outputs, or why it failed.
struct RunnerOutcome {
  std::optional<IterationResult> result;
  std::string error;  // set when result is empty
};

// The compact record of one iteration of a dataset.
struct DatasetIteration {
  size_t index = 0;  // the feed's position in the whole dataset
  // One entry per compared pair of runners, in comparison order; empty when a runner failed.
  std::vector<IterationCompareResult> pairs;
  // "runner: message" for each runner that failed on this feed.
  std::vector<std::string> errors;
  bool ran() const { return errors.empty(); }
  bool passed() const;             // ran, and every output of every pair passed
  bool passed(size_t pair) const;  // ran, and every output of that pair passed
};

struct DatasetSummaryOptions {
  size_t worst = 5;  // how many of the worst inputs to name, per output
};

// The records of a dataset run and what they say together.
class DatasetSummary {
 public:
  using Pair = AccuracyResult::Pair;
  DatasetSummary() = default;
  DatasetSummary(std::vector<std::string> runners, std::vector<Pair> pairs)
      : runners_(std::move(runners)), pairs_(std::move(pairs)) {}

  // Records may come in any order (a cluster returns them as they finish); an index given twice
  // is an internal error, since it would count a feed twice.
  void add(DatasetIteration iteration);
  // The records in dataset order.
  const std::vector<DatasetIteration>& iterations() const;
  const std::vector<std::string>& runners() const { return runners_; }
  const std::vector<Pair>& pairs() const { return pairs_; }

  size_t ran_count() const;
  size_t passed_count() const;

  // The summary as log lines (Logger::Indent is applied by log()).
  void log(const DatasetSummaryOptions& options = {}) const;
  // The verdict: passes when every feed ran and every comparison passed.
  RunVerdict verdict() const;

 private:
  std::vector<std::string> runners_;
  std::vector<Pair> pairs_;
  mutable std::vector<DatasetIteration> iterations_;
  mutable bool sorted_ = true;
};

// Per-output error statistics across the dataset, for the summary and the report.
struct OutputErrorDistribution {
  std::string output;
  size_t compared = 0, passed = 0;
  // Order statistics of the per-iteration max absolute / relative error.
  double abs_min = 0, abs_median = 0, abs_p90 = 0, abs_p99 = 0, abs_max = 0;
  double rel_min = 0, rel_median = 0, rel_p90 = 0, rel_p99 = 0, rel_max = 0;
  double abs_mean = 0;  // mean of the per-iteration max absolute error, summed in dataset order
  // (iteration index, max absolute error), worst first, ties by index.
  std::vector<std::pair<size_t, double>> worst;
  // Counts of the per-iteration max absolute error by decade: bucket k holds errors in
  // [10^(k + kFirstDecade), 10^(k + kFirstDecade + 1)); the first also holds exact zeros and
  // smaller values, the last larger ones and non-finite errors.
  static constexpr int kFirstDecade = -10;
  std::vector<size_t> decades;
};
std::vector<OutputErrorDistribution> error_distributions(const DatasetSummary& summary, size_t pair,
                                                         size_t worst);

// Compares the outcomes of the runners on one feed (logging the compare function's report under
// "Iteration: i") and returns the record.
DatasetIteration compare_iteration(size_t index, const std::vector<std::string>& runner_names,
                                   const std::vector<RunnerOutcome>& outcomes,
                                   const std::vector<DatasetSummary::Pair>& pairs,
                                   const CompareFunc& compare);

struct DatasetRunOptions {
  CompareFunc compare;  // nullptr: CompareFunc.simple's defaults
  Shard shard;
  bool strict_inputs = false;
  // Called for every iteration of the shard with each runner's outcome (for --save-outputs).
  std::function<void(size_t index, const std::vector<RunnerOutcome>&)> on_iteration;
};

// The pairs compared for runners r0..rn: (r0, r1), (r1, r2), ...
std::vector<DatasetSummary::Pair> default_pairs(const std::vector<std::string>& runners);

// Runs feeds on runners that stay active: the work of one iteration of a dataset run, in one
// place for a run in this process and for each worker of a cluster.
class DatasetFeedRunner {
 public:
  // Activates every runner (each loads its model once); they are deactivated on destruction.
  DatasetFeedRunner(std::vector<Runner*> runners, CompareFunc compare, bool strict_inputs);
  ~DatasetFeedRunner();
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<DatasetSummary::Pair>& pairs() const { return pairs_; }
  // The first runner's inputs, which decide generated feeds.
  const TensorMetadata& input_metadata() const { return metadata_.at(0); }
  // Runs one feed on every runner and compares them. A runner that fails is recorded, not
  // thrown; the outcomes are returned for saving (empty unless `keep_outcomes`).
  DatasetIteration run(size_t index, const TensorMap& feed, std::vector<RunnerOutcome>* outcomes);
  // Logs each runner's "Completed N iteration(s)" line.
  void log_completion() const;

 private:
  std::vector<Runner*> runners_;
  std::vector<std::string> names_;
  std::vector<DatasetSummary::Pair> pairs_;
  CompareFunc compare_;
  bool strict_inputs_;
  std::vector<std::unique_ptr<RunnerActivation>> active_;
  std::vector<TensorMetadata> metadata_;
  std::vector<double> runtime_;
  std::vector<size_t> ran_;
};

// Activates every runner once, then runs each feed of the shard on all of them, in dataset
// order. A runner that fails on a feed is recorded with the feed's index and the run goes on.
DatasetSummary run_dataset(const std::vector<Runner*>& runners, FeedSource& feeds,
                           const DatasetRunOptions& options);

// Compares saved results (one entry per runner, iterations carrying their dataset index, as
// --save-outputs writes them in a dataset run) as run_dataset would have compared them.
DatasetSummary compare_dataset_results(const RunResults& results, const CompareFunc& compare);

}  // namespace parity
