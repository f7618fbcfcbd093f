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

// Every feed of the source, read once (the first runner's metadata decides them).
std::vector<TensorMap> materialise(FeedSource& feeds) {
  std::vector<TensorMap> all;
  if (std::optional<size_t> n = feeds.size()) {
    all.reserve(*n);
    for (size_t i = 0; i < *n; ++i) {
      std::optional<TensorMap> feed = feeds.get(i);
      if (!feed) break;
      all.push_back(std::move(*feed));
    }
    return all;
  }
  for (size_t i = 0;; ++i) {
    std::optional<TensorMap> feed = feeds.get(i);
    if (!feed) return all;
    all.push_back(std::move(*feed));
  }
}

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

std::vector<IterationResult> run_one(Runner& runner, std::vector<TensorMap>& cache,
                                     bool first_runner, FeedSource& feeds,
                                     const RunOptions& options) {
  const std::string name = pad_name(runner.name());
  RunnerActivation activation(runner);
  const TensorMetadata meta = runner.input_metadata();
  if (first_runner) {
    feeds.set_input_metadata(meta);
    cache = materialise(feeds);
    if (options.used_feeds) *options.used_feeds = cache;
  }

  if (options.warm_up > 0) {
    logger().start("{} | Running {} warm-up run(s)", name, options.warm_up);
    if (cache.empty()) {
      logger().warning(
          "{} warm-up run(s) were requested, but data loader did not supply any data. Skipping "
          "warm-up run(s)",
          options.warm_up);
    } else {
      const TensorMap feed = fitted(cache[0], meta, first_runner, options);
      for (int64_t i = 0; i < options.warm_up; ++i) runner.infer(feed);
    }
    logger().finish("{} | Finished {} warm-up run(s)", name, options.warm_up);
  }

  std::vector<IterationResult> iterations;
  iterations.reserve(cache.size());
  double total_runtime = 0;
  Progress progress(fmt::format("{} | Iteration", name), cache.size());
  for (const TensorMap& cached : cache) {
    progress.update(iterations.size());
    const TensorMap feed = fitted(cached, meta, first_runner, options);
    logger().log_once(Severity::kInfo, fmt::format("{}\n---- Inference Input(s) ----\n{}", name,
                                                   metadata_of(feed).str()));
    TensorMap outputs = runner.infer(feed);
    const double runtime = runner.last_inference_time().value_or(0.0);
    total_runtime += runtime;
    // A runner may reuse its output buffers between calls, so results are copied when more
    // than one iteration is kept (Polygraphy 0.49.21 copies only in that case too).
    if (cache.size() > 1)
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

RunResults Comparator::run(const std::vector<Runner*>& runners, FeedSource& feeds,
                           const RunOptions& options) {
  RunResults results;
  if (runners.empty())
    logger().warning(
        "No runners were provided to Comparator.run(). Inference will not be run, and run "
        "results will be empty.");
  std::vector<TensorMap> cache;
  std::vector<std::string> names;
  bool feeds_read = false;  // by the first runner that got as far as its input metadata
  for (Runner* runner : runners) {
    logger().start("{} | Activating and starting inference", pad_name(runner->name()));
    if (!options.failed_runners) {
      results.add(run_one(*runner, cache, names.empty(), feeds, options), runner->name());
      names.push_back(runner->name());
      continue;
    }
    try {
      const bool first = !feeds_read;
      std::vector<IterationResult> iterations = run_one(*runner, cache, first, feeds, options);
      results.add(std::move(iterations), runner->name());
      names.push_back(runner->name());
    } catch (const std::exception& e) {
      logger().error("{}", e.what());
      options.failed_runners->push_back(runner->name());
    }
    feeds_read = feeds_read || !cache.empty() || !names.empty();
  }
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
