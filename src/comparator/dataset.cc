// Dataset runs: streaming feeds through active runners, compact per-iteration records, and the
// summary made from them (comparator/dataset.h).
#include "comparator/dataset.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "comparator/feed_coercion.h"
#include "core/error.h"
#include "core/logger.h"
#include "core/py_format.h"

namespace parity {

Shard Shard::parse(const std::string& flag, const std::string& text) {
  const size_t slash = text.find('/');
  auto number = [](std::string_view s, size_t& out) {
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return !s.empty() && ec == std::errc() && end == s.data() + s.size();
  };
  Shard shard;
  if (slash == std::string::npos || !number(std::string_view(text).substr(0, slash), shard.index) ||
      !number(std::string_view(text).substr(slash + 1), shard.count) || shard.count == 0 ||
      shard.index >= shard.count)
    fail_usage(
        "failed to parse {} with value '{}': it must be INDEX/COUNT with 0 <= INDEX < COUNT, "
        "e.g. 0/4 for the first of four shards",
        flag, text);
  return shard;
}

bool DatasetIteration::passed() const {
  for (size_t p = 0; p < pairs.size(); ++p)
    if (!passed(p)) return false;
  return ran();
}

bool DatasetIteration::passed(size_t pair) const {
  if (!ran() || pair >= pairs.size()) return false;
  for (const auto& [name, r] : pairs[pair])
    if (!r.passed) return false;
  return true;
}

void DatasetSummary::add(DatasetIteration iteration) {
  if (!iterations_.empty() && iterations_.back().index >= iteration.index) sorted_ = false;
  iterations_.push_back(std::move(iteration));
}

const std::vector<DatasetIteration>& DatasetSummary::iterations() const {
  if (!sorted_) {
    std::stable_sort(iterations_.begin(), iterations_.end(),
                     [](const auto& a, const auto& b) { return a.index < b.index; });
    sorted_ = true;
  }
  for (size_t i = 1; i < iterations_.size(); ++i)
    PARITY_ENFORCE(iterations_[i - 1].index != iterations_[i].index,
                   "dataset iteration {} was recorded twice", iterations_[i].index);
  return iterations_;
}

size_t DatasetSummary::ran_count() const {
  size_t n = 0;
  for (const DatasetIteration& it : iterations()) n += it.ran();
  return n;
}

size_t DatasetSummary::passed_count() const {
  size_t n = 0;
  for (const DatasetIteration& it : iterations()) n += it.passed();
  return n;
}

RunVerdict DatasetSummary::verdict() const {
  const std::vector<DatasetIteration>& all = iterations();
  if (all.empty())
    return RunVerdict::nothing_compared(
        "Compared nothing: the dataset gave no feed to this run (an empty dataset, or a shard "
        "with no iteration)");
  if (pairs_.empty()) {
    if (ran_count() == all.size()) return RunVerdict::from_iterations(1, 1);
    return RunVerdict::nothing_compared(
        fmt::format("Ran {} of {} feeds: the others failed to run", ran_count(), all.size()));
  }
  return RunVerdict::from_iterations(all.size(), passed_count());
}

namespace {

// The value at rank ceil(q * n) of sorted values (the nearest-rank percentile): a value of
// the data, the same wherever it is computed.
double nearest_rank(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

// Sorts with NaN last, so order statistics are defined for any data.
void sort_values(std::vector<double>& v) {
  std::sort(v.begin(), v.end(), [](double a, double b) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
    return a < b;
  });
}

size_t decade_of(double error, size_t buckets) {
  if (!std::isfinite(error)) return buckets - 1;
  if (error <= 0) return 0;
  const int decade = static_cast<int>(std::floor(std::log10(error)));
  const int k = decade - OutputErrorDistribution::kFirstDecade;
  return static_cast<size_t>(std::clamp(k, 0, static_cast<int>(buckets) - 1));
}

std::string decade_bound(int k) {
  return fmt::format("1e{}", k + OutputErrorDistribution::kFirstDecade);
}

std::string index_list(const std::vector<size_t>& indices, size_t limit) {
  std::vector<std::string> shown;
  for (size_t i = 0; i < std::min(limit, indices.size()); ++i)
    shown.push_back(std::to_string(indices[i]));
  std::string out = fmt::format("{}", fmt::join(shown, ", "));
  if (indices.size() > limit) out += fmt::format(", and {} more", indices.size() - limit);
  return out;
}

}  // namespace

std::vector<OutputErrorDistribution> error_distributions(const DatasetSummary& summary, size_t pair,
                                                         size_t worst) {
  struct Values {
    std::vector<double> abs, rel;
    std::vector<std::pair<size_t, double>> by_index;
    size_t passed = 0;
  };
  std::vector<std::string> order;  // outputs in the order they first appear
  std::map<std::string, Values> values;
  for (const DatasetIteration& it : summary.iterations()) {
    if (pair >= it.pairs.size()) continue;
    for (const auto& [name, r] : it.pairs[pair]) {
      if (!values.count(name)) order.push_back(name);
      Values& v = values[name];
      v.abs.push_back(r.max_absdiff);
      v.rel.push_back(r.max_reldiff);
      v.by_index.emplace_back(it.index, r.max_absdiff);
      v.passed += r.passed;
    }
  }
  std::vector<OutputErrorDistribution> out;
  for (const std::string& name : order) {
    Values& v = values[name];
    OutputErrorDistribution d;
    d.output = name;
    d.compared = v.abs.size();
    d.passed = v.passed;
    double sum = 0;
    for (double a : v.abs) sum += a;  // dataset order, so every process sums alike
    d.abs_mean = sum / static_cast<double>(v.abs.size());
    d.decades.assign(12, 0);
    for (double a : v.abs) ++d.decades[decade_of(a, d.decades.size())];
    sort_values(v.abs);
    sort_values(v.rel);
    d.abs_min = v.abs.front(), d.abs_max = v.abs.back();
    d.abs_median = nearest_rank(v.abs, 0.5), d.abs_p90 = nearest_rank(v.abs, 0.9);
    d.abs_p99 = nearest_rank(v.abs, 0.99);
    d.rel_min = v.rel.front(), d.rel_max = v.rel.back();
    d.rel_median = nearest_rank(v.rel, 0.5), d.rel_p90 = nearest_rank(v.rel, 0.9);
    d.rel_p99 = nearest_rank(v.rel, 0.99);
    std::stable_sort(v.by_index.begin(), v.by_index.end(), [](const auto& a, const auto& b) {
      const bool an = std::isnan(a.second), bn = std::isnan(b.second);
      if (an != bn) return an;  // NaN errors are the worst
      return a.second > b.second;
    });
    v.by_index.resize(std::min(worst, v.by_index.size()));
    d.worst = std::move(v.by_index);
    out.push_back(std::move(d));
  }
  return out;
}

void DatasetSummary::log(const DatasetSummaryOptions& options) const {
  const std::vector<DatasetIteration>& all = iterations();
  const size_t ran = ran_count();
  std::vector<const DatasetIteration*> failed_to_run;
  for (const DatasetIteration& it : all)
    if (!it.ran()) failed_to_run.push_back(&it);
  const std::string head = fmt::format("Dataset Summary | Runners: {} | Feeds: {} | Ran: {}",
                                       format_name_list(runners_), all.size(), ran);
  if (failed_to_run.empty()) {
    logger().info("{}", head);
  } else {
    logger().error("{} | Failed to run: {}", head, failed_to_run.size());
    Logger::Indent indent;
    for (const DatasetIteration* it : failed_to_run)
      for (const std::string& e : it->errors)
        logger().error("Feed {} failed to run on {}", it->index, e);
  }
  for (size_t p = 0; p < pairs_.size(); ++p) {
    const auto& [a, b] = pairs_[p];
    size_t passed = 0;
    std::vector<size_t> failing;
    for (const DatasetIteration& it : all) {
      if (!it.ran()) continue;
      if (it.passed(p))
        ++passed;
      else
        failing.push_back(it.index);
    }
    const std::string line = fmt::format(
        "Dataset Accuracy | {} vs. {} | Passed: {}/{} iterations | Pass Rate: {}%", a, b, passed,
        all.size(),
        format_repr(all.empty()
                        ? 100.0
                        : static_cast<double>(passed) * 100.0 / static_cast<double>(all.size())));
    if (passed == all.size())
      logger().finish("{}", line);
    else
      logger().error("{}", line);
    Logger::Indent indent;
    if (!failing.empty()) logger().error("Failing iterations: {}", index_list(failing, 20));
    for (const OutputErrorDistribution& d : error_distributions(*this, p, options.worst)) {
      logger().info("Output: {} | Passed: {}/{} iterations", d.output, d.passed, d.compared);
      Logger::Indent output_indent;
      logger().info(
          "Max absolute error per iteration | min={}, median={}, p90={}, p99={}, max={}, "
          "mean={}",
          format_repr(d.abs_min), format_repr(d.abs_median), format_repr(d.abs_p90),
          format_repr(d.abs_p99), format_repr(d.abs_max), format_repr(d.abs_mean));
      logger().info("Max relative error per iteration | min={}, median={}, p90={}, p99={}, max={}",
                    format_repr(d.rel_min), format_repr(d.rel_median), format_repr(d.rel_p90),
                    format_repr(d.rel_p99), format_repr(d.rel_max));
      std::vector<std::string> worst;
      for (const auto& [index, error] : d.worst)
        worst.push_back(fmt::format("{} ({})", index, format_repr(error)));
      logger().info("Worst inputs by max absolute error: {}", fmt::join(worst, ", "));
      std::vector<std::string> buckets;
      const int n = static_cast<int>(d.decades.size());
      for (int k = 0; k < n; ++k) {
        if (!d.decades[k]) continue;
        const std::string lo = k == 0 ? "0" : decade_bound(k);
        const std::string hi = k == n - 1 ? "inf" : decade_bound(k + 1);
        buckets.push_back(fmt::format("[{}, {}): {}", lo, hi, d.decades[k]));
      }
      logger().info("Max absolute error by decade | {}", fmt::join(buckets, " | "));
    }
  }
}

std::vector<DatasetSummary::Pair> default_pairs(const std::vector<std::string>& runners) {
  std::vector<DatasetSummary::Pair> pairs;
  for (size_t i = 0; i + 1 < runners.size(); ++i) pairs.emplace_back(runners[i], runners[i + 1]);
  return pairs;
}

DatasetIteration compare_iteration(size_t index, const std::vector<std::string>& runner_names,
                                   const std::vector<RunnerOutcome>& outcomes,
                                   const std::vector<DatasetSummary::Pair>& pairs,
                                   const CompareFunc& compare) {
  DatasetIteration record;
  record.index = index;
  for (size_t r = 0; r < outcomes.size(); ++r)
    if (!outcomes[r].result) record.errors.push_back(runner_names[r] + ": " + outcomes[r].error);
  if (!record.ran()) {
    for (const std::string& e : record.errors) logger().error("Feed {} failed on {}", index, e);
    return record;
  }
  auto position = [&](const std::string& name) {
    return static_cast<size_t>(std::find(runner_names.begin(), runner_names.end(), name) -
                               runner_names.begin());
  };
  for (const auto& [a, b] : pairs) {
    logger().info("Iteration: {} | {} vs. {}", index, a, b);
    Logger::Indent indent;
    record.pairs.push_back(compare(*outcomes[position(a)].result, *outcomes[position(b)].result));
  }
  return record;
}

DatasetFeedRunner::DatasetFeedRunner(std::vector<Runner*> runners, CompareFunc compare,
                                     bool strict_inputs)
    : runners_(std::move(runners)),
      compare_(compare ? std::move(compare) : compare_func::simple()),
      strict_inputs_(strict_inputs) {
  for (Runner* r : runners_) names_.push_back(r->name());
  pairs_ = default_pairs(names_);
  for (Runner* r : runners_) {
    logger().start("{} | Activating and starting inference", pad_name(r->name()));
    active_.push_back(std::make_unique<RunnerActivation>(*r));
    metadata_.push_back(r->input_metadata());
  }
  runtime_.assign(runners_.size(), 0.0);
  ran_.assign(runners_.size(), 0);
}

DatasetFeedRunner::~DatasetFeedRunner() = default;

DatasetIteration DatasetFeedRunner::run(size_t index, const TensorMap& feed,
                                        std::vector<RunnerOutcome>* kept) {
  std::vector<RunnerOutcome> outcomes(runners_.size());
  for (size_t r = 0; r < runners_.size(); ++r) {
    try {
      const TensorMap fitted = r == 0 && strict_inputs_ ? feed : coerce_feed(feed, metadata_[r]);
      IterationResult result;
      result.outputs = runners_[r]->infer(fitted);
      result.runner_name = names_[r];
      result.runtime = runners_[r]->last_inference_time().value_or(0.0);
      for (auto& [out_name, t] : result.outputs) t = t.clone();  // buffers may be reused
      result.dataset_index = index;
      runtime_[r] += *result.runtime;
      ++ran_[r];
      outcomes[r].result = std::move(result);
    } catch (const Error& e) {
      outcomes[r].error = e.what();
    }
  }
  DatasetIteration record = compare_iteration(index, names_, outcomes, pairs_, compare_);
  if (kept) *kept = std::move(outcomes);
  return record;
}

void DatasetFeedRunner::log_completion() const {
  for (size_t r = 0; r < runners_.size(); ++r) {
    const double total_ms = runtime_[r] * 1000.0;
    logger().finish("{} | Completed {} iteration(s) in {} ms | Average inference time: {} ms.",
                    pad_name(names_[r]), ran_[r], format_g(total_ms, 4),
                    format_g(ran_[r] ? total_ms / static_cast<double>(ran_[r]) : 0, 4));
  }
}

DatasetSummary run_dataset(const std::vector<Runner*>& runners, FeedSource& feeds,
                           const DatasetRunOptions& options) {
  DatasetFeedRunner runner(runners, options.compare, options.strict_inputs);
  DatasetSummary summary(runner.names(), runner.pairs());
  if (!runners.empty()) feeds.set_input_metadata(runner.input_metadata());
  const std::optional<size_t> size = feeds.size();
  std::vector<RunnerOutcome> outcomes;
  for (size_t i = 0; !size || i < *size; ++i) {
    if (!options.shard.owns(i)) {
      if (!size && !feeds.get(i)) break;  // an open-ended source: find its end
      continue;
    }
    std::optional<TensorMap> feed = feeds.get(i);
    if (!feed) break;
    summary.add(runner.run(i, *feed, options.on_iteration ? &outcomes : nullptr));
    if (options.on_iteration) options.on_iteration(i, outcomes);
  }
  runner.log_completion();
  return summary;
}

DatasetSummary compare_dataset_results(const RunResults& results, const CompareFunc& compare_fn) {
  const CompareFunc compare = compare_fn ? compare_fn : compare_func::simple();
  std::vector<std::string> names = results.keys();
  DatasetSummary summary(names, default_pairs(names));
  // index -> one outcome per runner; iterations saved without an index count by position.
  std::map<size_t, std::vector<RunnerOutcome>> by_index;
  for (size_t r = 0; r < results.size(); ++r) {
    const auto& iterations = results[r].second;
    for (size_t k = 0; k < iterations.size(); ++k) {
      const IterationResult& it = iterations[k];
      const size_t index = it.dataset_index.value_or(k);
      std::vector<RunnerOutcome>& outcomes = by_index[index];
      outcomes.resize(results.size());
      if (outcomes[r].result || !outcomes[r].error.empty())
        fail(
            "failed to compare the results of runner '{}': iteration {} of the dataset is "
            "saved twice; merge shards with 'parity data merge', which refuses overlapping "
            "shards",
            names[r], index);
      if (it.error.empty())
        outcomes[r].result = it;
      else
        outcomes[r].error = it.error;
    }
  }
  for (auto& [index, outcomes] : by_index) {
    outcomes.resize(results.size());
    for (RunnerOutcome& o : outcomes)
      if (!o.result && o.error.empty()) o.error = "no result is saved for this feed";
    summary.add(compare_iteration(index, names, outcomes, summary.pairs(), compare));
  }
  return summary;
}

}  // namespace parity
