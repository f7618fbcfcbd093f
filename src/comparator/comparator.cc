// Comparator (Polygraphy's comparator/comparator.py): runs every runner on the same feeds,
// compares the results pairwise, validates them.
#include "comparator/comparator.h"

#include <cmath>

#include <fmt/format.h>

#include "comparator/compare_internal.h"
#include "comparator/feed_coercion.h"
#include "comparator/output_stats.h"
#include "core/logger.h"
#include "core/numeric.h"
#include "core/progress.h"
#include "core/py_format.h"

namespace parity {

namespace {

// The feeds every runner is given: read from the source as the first runner asks for them (so
// an endless generator starts inferring at once, and a runner that alone reads the feeds does
// not hold them all), and kept for the later runners when there are any.
class FeedCache {
 public:
  FeedCache(FeedSource& source, bool keep) : source_(source), keep_(keep) {}

  // Feed i, nullptr past the end; valid until the next call.
  const TensorMap* get(size_t i) {
    if (i < kept_.size()) return &kept_[i];
    if (exhausted_ || (keep_ && i > kept_.size())) return nullptr;
    std::optional<TensorMap> feed = source_.get(i);
    if (!feed) {
      exhausted_ = true;
      return nullptr;
    }
    read_ = true;
    if (!keep_) {
      last_ = std::move(*feed);
      return &last_;
    }
    kept_.push_back(std::move(*feed));
    return &kept_.back();
  }
  // Whether the source has yielded anything yet.
  bool read() const { return read_; }
  // How many feeds there are, when known before reading them all.
  std::optional<size_t> count() const {
    if (exhausted_ && keep_) return kept_.size();
    return source_.size();
  }
  std::vector<TensorMap>& kept() { return kept_; }

 private:
  FeedSource& source_;
  bool keep_;
  bool exhausted_ = false, read_ = false;
  std::vector<TensorMap> kept_;
  TensorMap last_;
};

TensorMetadata metadata_of(const TensorMap& tensors) {
  TensorMetadata meta;
  for (const auto& [name, t] : tensors) meta.add(name, t.dtype(), dims_from_shape(t.shape()));
  return meta;
}

// Every runner gets the feeds fitted to its inputs, as Polygraphy's DataLoaderCache does; with
// strict_inputs the first runner gets them exactly as given, so that a feed file that does not
// fit the model is refused (later runners may expect other names or types for the same data).
TensorMap fitted(const TensorMap& cached, const TensorMetadata& meta, bool first_runner,
                 const RunOptions& options) {
  return first_runner && options.strict_inputs ? cached : coerce_feed(cached, meta);
}

std::vector<IterationResult> run_one(Runner& runner, FeedCache& feeds, FeedSource& source,
                                     bool first_runner, const RunOptions& options) {
  const std::string name = pad_name(runner.name());
  RunnerActivation activation(runner);
  const TensorMetadata meta = runner.input_metadata();
  if (first_runner) source.set_input_metadata(meta);

  if (options.warm_up > 0) {
    logger().start("{} | Running {} warm-up run(s)", name, options.warm_up);
    if (const TensorMap* first = feeds.get(0)) {
      const TensorMap feed = fitted(*first, meta, first_runner, options);
      for (int64_t i = 0; i < options.warm_up; ++i) runner.infer(feed);
    } else {
      logger().warning(
          "{} warm-up run(s) were requested, but data loader did not supply any data. Skipping "
          "warm-up run(s)",
          options.warm_up);
    }
    logger().finish("{} | Finished {} warm-up run(s)", name, options.warm_up);
  }

  std::vector<IterationResult> iterations;
  // A runner may reuse its output buffers between calls, so results are copied when more
  // than one iteration is kept (Polygraphy 0.49.21 copies only in that case too); a source
  // of unknown length (a generator) may have more.
  const std::optional<size_t> count = feeds.count();
  const bool copy_outputs = !count || *count > 1;
  double total_runtime = 0;
  Progress progress(fmt::format("{} | Iteration", name), feeds.count().value_or(0));
  for (size_t i = 0;; ++i) {
    const TensorMap* cached = feeds.get(i);
    if (!cached) break;
    progress.update(iterations.size());
    const TensorMap feed = fitted(*cached, meta, first_runner, options);
    logger().log_once(Severity::kInfo, fmt::format("{}\n---- Inference Input(s) ----\n{}", name,
                                                   metadata_of(feed).str()));
    TensorMap outputs = runner.infer(feed);
    const double runtime = runner.last_inference_time().value_or(0.0);
    total_runtime += runtime;
    if (copy_outputs)
      for (auto& [out_name, t] : outputs) t = t.clone();
    logger().log_once(Severity::kInfo, fmt::format("{}\n---- Inference Output(s) ----\n{}", name,
                                                   metadata_of(outputs).str()));
    IterationResult result;
    result.outputs = std::move(outputs);
    result.runtime = runtime;
    result.runner_name = runner.name();
    iterations.push_back(std::move(result));
    progress.update(iterations.size());
  }
  const double total_ms = total_runtime * 1000.0;
  const size_t n = iterations.size();
  logger().finish("{} | Completed {} iteration(s) in {} ms | Average inference time: {} ms.", name,
                  n, format_g(total_ms, 4), format_g(n ? total_ms / static_cast<double>(n) : 0, 4));
  return iterations;
}

}  // namespace

RunResults Comparator::run(const std::vector<Runner*>& runners, FeedSource& source,
                           const RunOptions& options) {
  RunResults results;
  if (runners.empty())
    logger().warning(
        "No runners were provided to Comparator.run(). Inference will not be run, and run "
        "results will be empty.");
  FeedCache feeds(source, runners.size() > 1 || options.used_feeds);
  std::vector<std::string> names;
  bool feeds_read = false;  // by the first runner that got as far as its input metadata
  for (Runner* runner : runners) {
    logger().start("{} | Activating and starting inference", pad_name(runner->name()));
    if (!options.failed_runners) {
      results.add(run_one(*runner, feeds, source, names.empty(), options), runner->name());
      names.push_back(runner->name());
      continue;
    }
    try {
      const bool first = !feeds_read;
      std::vector<IterationResult> iterations = run_one(*runner, feeds, source, first, options);
      results.add(std::move(iterations), runner->name());
      names.push_back(runner->name());
    } catch (const std::exception& e) {
      logger().error("{}", e.what());
      options.failed_runners->push_back(runner->name());
    }
    feeds_read = feeds_read || feeds.read() || !names.empty();
  }
  if (options.used_feeds) *options.used_feeds = feeds.kept();
  logger().verbose("Successfully ran: {}", format_name_list(names));
  return results;
}

void Comparator::postprocess(RunResults& results, const PostprocessFunc& fn) {
  logger().start("Applying post-processing to outputs");
  for (auto& [name, iterations] : results)
    for (IterationResult& it : iterations) fn(it);
  logger().finish("Finished applying post-processing");
}

std::vector<std::pair<size_t, size_t>> Comparator::default_comparisons(const RunResults& results) {
  std::vector<std::pair<size_t, size_t>> pairs;
  for (size_t i = 0; i + 1 < results.size(); ++i) pairs.emplace_back(i, i + 1);
  return pairs;
}

AccuracyResult Comparator::compare_accuracy(
    const RunResults& results, bool fail_fast,
    std::optional<std::vector<std::pair<size_t, size_t>>> comparisons, CompareFunc compare_func) {
  if (!compare_func) compare_func = compare_func::simple();
  if (!comparisons) comparisons = default_comparisons(results);

  AccuracyResult accuracy;
  for (const auto& [i0, i1] : *comparisons) {
    const auto& [runner0, results0] = results[i0];
    const auto& [runner1, results1] = results[i1];
    logger().start("Accuracy Comparison | {} vs. {}", runner0, runner1);
    const AccuracyResult::Pair pair{runner0, runner1};
    {
      Logger::Indent indent;
      accuracy.entries.emplace_back(pair, std::vector<IterationCompareResult>{});
      const size_t num_iters = std::min(results0.size(), results1.size());
      for (size_t it = 0; it < num_iters; ++it) {
        if (num_iters > 1) logger().info("Iteration: {}", it);
        Logger::Indent iteration_indent(num_iters > 1 ? 1 : 0);
        IterationCompareResult outputs = compare_func(results0[it], results1[it]);
        bool mismatched = false;
        for (const auto& [name, r] : outputs) mismatched |= !r.passed;
        accuracy.entries.back().second.push_back(std::move(outputs));
        if (fail_fast && mismatched) return accuracy;
      }
      logger().extra_verbose("Finished comparing {} with {}", runner0, runner1);
    }
    const auto [passed, failed, total] = accuracy.stats(pair);
    const std::string message = fmt::format(
        "Accuracy Summary | {} vs. {} | Passed: {}/{} iterations | Pass Rate: {}%", runner0,
        runner1, passed, total, format_repr(accuracy.percentage(pair) * 100.0));
    if (passed == total)
      logger().finish("{}", message);
    else
      logger().error("{}", message);
  }
  return accuracy;
}

bool Comparator::validate(const RunResults& results, bool check_inf, bool check_nan,
                          bool fail_fast) {
  auto py_bool = [](bool b) { return b ? "True" : "False"; };
  auto validate_output = [&](const std::string& runner, const std::string& name, const Tensor& t) {
    logger().start("{} | Validating output: {} (check_inf={}, check_nan={})", pad_name(runner),
                   name, py_bool(check_inf), py_bool(check_nan));
    Logger::Indent indent;
    if (!dtype_is_numeric(t.dtype())) {
      logger().finish("PASSED | Output: {} is valid", name);
      return true;
    }
    const NumArray a = to_num_array(t);
    log_output_stats(a, false, "");
    bool valid = true;
    if (check_nan) {
      Tensor nans(DataType::kBool, t.shape());
      bool any = false;
      for (size_t i = 0; i < a.size(); ++i) any |= nans.data<bool>()[i] = std::isnan(a.values[i]);
      if (any) {
        logger().error("NaN Detected | One or more NaNs were encountered in this output");
        logger().log_once(Severity::kInfo,
                          "Note: Use -vv or set logging verbosity to EXTRA_VERBOSE to display "
                          "locations of NaNs");
        if (logger().enabled(Severity::kExtraVerbose))
          logger().extra_verbose("Note: NaNs at:\n{}", numpy_array_str(nans));
        valid = false;
      }
    }
    if (check_inf) {
      Tensor non_finite(DataType::kBool, t.shape());
      std::vector<double> bad;
      for (size_t i = 0; i < a.size(); ++i)
        if ((non_finite.data<bool>()[i] = !std::isfinite(a.values[i]))) bad.push_back(a.values[i]);
      if (!bad.empty()) {
        logger().error(
            "Inf Detected | One or more non-finite values were encountered in this output");
        logger().log_once(Severity::kInfo,
                          "Note: Use -vv or set logging verbosity to EXTRA_VERBOSE to display "
                          "non-finite values");
        if (logger().enabled(Severity::kExtraVerbose)) {
          logger().extra_verbose("Note: non-finite values at:\n{}", numpy_array_str(non_finite));
          NumArray values{bad, a.kind, {static_cast<int64_t>(bad.size())}};
          logger().extra_verbose("Note: non-finite values:\n{}",
                                 numpy_array_str(values.to_tensor()));
        }
        valid = false;
      }
    }
    if (valid)
      logger().finish("PASSED | Output: {} is valid", name);
    else
      logger().error("FAILED | Errors detected in output: {}", name);
    return valid;
  };

  bool all_valid = true;
  logger().start("Output Validation | Runners: {}", format_name_list(results.keys()));
  Logger::Indent indent;
  for (const auto& [runner, iterations] : results)
    for (const IterationResult& it : iterations)
      for (const auto& [name, t] : it.outputs) {
        all_valid &= validate_output(runner, name, t);
        if (fail_fast && !all_valid) return false;
      }
  if (all_valid)
    logger().finish("PASSED | Output Validation");
  else
    logger().error("FAILED | Output Validation");
  return all_valid;
}

}  // namespace parity
