// Comparator::run / compare_accuracy / validate / postprocess: the cases of Polygraphy's
// tests/comparator/test_comparator.py that need neither TensorRT nor subprocesses.
#include "comparator/comparator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "support/test_util.h"

namespace parity {
namespace {

using testing::LogCapture;

TensorMetadata float_input(const std::string& name, Shape shape,
                           DataType dtype = DataType::kFloat32) {
  TensorMetadata meta;
  meta.add(name, dtype, dims_from_shape(shape));
  return meta;
}

// An identity "model": every input comes back as output "y" (or "<input>_out" for others).
// When `reuse_buffer` is set it writes into one buffer it keeps, as real backends may.
class EchoRunner : public Runner {
 public:
  EchoRunner(std::string name, TensorMetadata meta, bool reuse_buffer = false)
      : Runner(std::move(name), "echo-runner"), meta_(std::move(meta)), reuse_(reuse_buffer) {}
  int infer_calls = 0;
  std::vector<DataType> seen_dtypes;

 protected:
  void activate_impl() override {}
  void deactivate_impl() override { buffer_ = Tensor(); }
  TensorMetadata input_metadata_impl() override { return meta_; }
  TensorMap infer_impl(const TensorMap& feed) override {
    ++infer_calls;
    TensorMap out;
    for (const auto& [name, t] : feed) {
      seen_dtypes.push_back(t.dtype());
      Tensor result = t.clone();
      if (reuse_) {
        if (!buffer_.defined()) buffer_ = t.clone();
        std::memcpy(buffer_.raw_data(), t.raw_data(), t.nbytes());
        result = buffer_;
      }
      out.set(name == "x" || name == "X" ? "y" : name + "_out", result);
    }
    set_inference_time(0.001);
    return out;
  }

 private:
  TensorMetadata meta_;
  bool reuse_;
  Tensor buffer_;
};

TensorMap feed_of(const std::string& name, std::vector<float> values, Shape shape) {
  TensorMap m;
  m.set(name, Tensor::from_vector<float>(std::move(shape), values));
  return m;
}

// Yields feeds without knowing their number in advance, like a Python generator.
class GeneratorFeeds : public FeedSource {
 public:
  explicit GeneratorFeeds(std::vector<TensorMap> feeds) : feeds_(std::move(feeds)) {}
  std::optional<size_t> size() const override { return std::nullopt; }
  std::optional<TensorMap> get(size_t i) override {
    if (i >= feeds_.size()) return std::nullopt;
    return feeds_[i];
  }

 private:
  std::vector<TensorMap> feeds_;
};

TEST(Comparator, WarmUpRunsAreNotRecorded) {
  EchoRunner runner("echo", float_input("x", {1, 1, 2, 2}));
  FeedList feeds({feed_of("x", {1, 2, 3, 4}, {1, 1, 2, 2})});
  LogCapture log;
  RunOptions options;
  options.warm_up = 2;
  RunResults results = Comparator::run({&runner}, feeds, options);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].second.size(), 1u);
  EXPECT_EQ(runner.infer_calls, 3);
  EXPECT_TRUE(log.contains("echo                                | Running 2 warm-up run(s)"));
  EXPECT_TRUE(log.contains("echo                                | Finished 2 warm-up run(s)"));
}

TEST(Comparator, ListAndGeneratorFeedSources) {
  std::vector<TensorMap> list = {feed_of("x", {1, 2, 3, 4}, {1, 1, 2, 2}),
                                 feed_of("x", {5, 6, 7, 8}, {1, 1, 2, 2})};
  FeedList from_list(list);
  GeneratorFeeds from_generator(list);
  for (FeedSource* feeds : std::vector<FeedSource*>{&from_list, &from_generator}) {
    EchoRunner runner("echo", float_input("x", {1, 1, 2, 2}));
    LogCapture quiet;
    RunResults results = Comparator::run({&runner}, *feeds);
    const auto& iterations = results[0].second;
    ASSERT_EQ(iterations.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_TRUE(iterations[i].outputs.at("y").equals(list[i].at("x")));
      EXPECT_EQ(iterations[i].runner_name, "echo");
      EXPECT_EQ(iterations[i].runtime, 0.001);
    }
  }
}

TEST(Comparator, MultipleRunnersAgree) {
  EchoRunner a("runner-a", float_input("x", {1, 1, 2, 2}));
  EchoRunner b("runner-b", float_input("x", {1, 1, 2, 2}));
  DataLoader loader;
  LogCapture log;
  RunResults results = Comparator::run({&a, &b}, loader);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].second.size(), 1u);  // DataLoader's default: one iteration
  AccuracyResult accuracy = Comparator::compare_accuracy(results);
  EXPECT_TRUE(accuracy);
  EXPECT_TRUE(
      log.contains("[I] runner-a                            | Activating and starting inference"));
  EXPECT_TRUE(
      log.contains("[I] runner-a                            | Completed 1 iteration(s) in 1 ms | "
                   "Average inference time: 1 ms."));
  EXPECT_TRUE(
      log.contains("[I] runner-a                           \n    ---- Inference Input(s) ----\n"
                   "    {x [dtype=float32, shape=(1, 1, 2, 2)]}"))
      << log.text();
  EXPECT_TRUE(log.contains("[I] Accuracy Comparison | runner-a vs. runner-b"));
  EXPECT_TRUE(
      log.contains("[I] Accuracy Summary | runner-a vs. runner-b | Passed: 1/1 iterations | "
                   "Pass Rate: 100.0%"));
}

TEST(Comparator, LaterRunnersGetTheSameFeedsFittedToTheirMetadata) {
  EchoRunner a("runner-a", float_input("x", {4}));
  EchoRunner b("runner-b", float_input("X", {2, 2}, DataType::kFloat64));
  FeedList feeds({feed_of("x", {1, 2, 3, 4}, {4})});
  std::vector<TensorMap> used;
  RunOptions options;
  options.used_feeds = &used;
  LogCapture log;
  RunResults results = Comparator::run({&a, &b}, feeds, options);
  ASSERT_EQ(used.size(), 1u);
  EXPECT_TRUE(used[0].at("x").equals(feeds.get(0)->at("x")));
  ASSERT_EQ(b.seen_dtypes, std::vector<DataType>{DataType::kFloat64});  // only "X", cast
  EXPECT_TRUE(
      log.contains("Input tensor: X | Buffer dtype (float32) does not match expected input "
                   "dtype (float64), attempting to cast."));
  EXPECT_TRUE(
      log.contains("Input tensor: X | Buffer name (x) does not match expected input name (X)."));
  const Tensor& y = results[1].second[0].outputs.at("y");
  EXPECT_EQ(y.dtype(), DataType::kFloat64);
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
}

TEST(Comparator, NoRunnersGiveEmptyResults) {
  FeedList feeds({});
  LogCapture log;
  RunResults results = Comparator::run({}, feeds);
  EXPECT_TRUE(results.empty());
  EXPECT_TRUE(
      log.contains("[W] No runners were provided to Comparator.run(). Inference will not be "
                   "run, and run results will be empty."));
}

TEST(Comparator, OutputsOfEveryIterationAreKeptWhenTheRunnerReusesItsBuffers) {
  EchoRunner runner("echo", float_input("x", {2}), /*reuse_buffer=*/true);
  FeedList feeds({feed_of("x", {1, 2}, {2}), feed_of("x", {3, 4}, {2})});
  LogCapture quiet;
  RunResults results = Comparator::run({&runner}, feeds);
  EXPECT_EQ(results[0].second[0].outputs.at("y").data<float>()[0], 1);
  EXPECT_EQ(results[0].second[1].outputs.at("y").data<float>()[0], 3);
}

TEST(Comparator, MultirunOutputsAreDifferent) {
  EchoRunner runner("echo", float_input("x", {1, 1, 2, 2}));
  DataLoaderOptions options;
  options.iterations = 2;
  DataLoader loader(options);
  LogCapture quiet;
  RunResults results = Comparator::run({&runner}, loader);
  const auto& iterations = results[0].second;
  ASSERT_EQ(iterations.size(), 2u);
  EXPECT_FALSE(iterations[0].outputs.at("y").equals(iterations[1].outputs.at("y")));
}

TEST(Comparator, Postprocess) {
  EchoRunner runner("echo", float_input("x", {1, 1, 2, 2}));
  FeedList feeds({feed_of("x", {1, 2, 4, 3}, {1, 1, 2, 2})});
  LogCapture quiet;
  RunResults results = Comparator::run({&runner}, feeds);
  TopKOptions top;
  top.k = std::pair<int64_t, int64_t>{1, -1};
  Comparator::postprocess(results, postprocess_func::top_k(top));
  const Tensor& y = results[0].second[0].outputs.at("y");
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 1}));
  EXPECT_EQ(y.data<int64_t>()[0], 1);
  EXPECT_EQ(y.data<int64_t>()[1], 0);
}

RunResults single_output_results(std::vector<std::vector<float>> per_runner) {
  RunResults results;
  for (size_t i = 0; i < per_runner.size(); ++i) {
    IterationResult it;
    it.runner_name = "runner" + std::to_string(i);
    it.outputs.set("y", Tensor::from_vector<float>({static_cast<int64_t>(per_runner[i].size())},
                                                   per_runner[i]));
    results.add({it}, it.runner_name);
  }
  return results;
}

TEST(Comparator, ValidateNan) {
  LogCapture log;
  EXPECT_TRUE(Comparator::validate(single_output_results({{1, 2}})));
  EXPECT_TRUE(log.contains("[I]         PASSED | Output: y is valid"));
  EXPECT_TRUE(log.contains("[I]     PASSED | Output Validation"));
  EXPECT_FALSE(Comparator::validate(single_output_results({{1, NAN}})));
  EXPECT_TRUE(log.contains("[I] Output Validation | Runners: ['runner0']"));
  EXPECT_TRUE(
      log.contains("[I]     runner0                             | Validating output: y "
                   "(check_inf=False, check_nan=True)"));
  EXPECT_TRUE(
      log.contains("[E]         NaN Detected | One or more NaNs were encountered in this output"));
  EXPECT_TRUE(log.contains("[E]         FAILED | Errors detected in output: y"));
  EXPECT_TRUE(log.contains("[E]     FAILED | Output Validation"));
  // NaN checking can be turned off.
  EXPECT_TRUE(Comparator::validate(single_output_results({{1, NAN}}), false, false));
}

TEST(Comparator, ValidateInf) {
  LogCapture log;
  EXPECT_TRUE(Comparator::validate(single_output_results({{1, INFINITY}})));
  EXPECT_FALSE(Comparator::validate(single_output_results({{1, INFINITY}}), /*check_inf=*/true));
  EXPECT_TRUE(
      log.contains("Inf Detected | One or more non-finite values were encountered in this output"));
}

TEST(Comparator, CompareAccuracyOverIterationsAndPairs) {
  RunResults results;
  for (int r = 0; r < 3; ++r) {
    std::vector<IterationResult> iterations;
    for (int i = 0; i < 2; ++i) {
      IterationResult it;
      it.runner_name = "r" + std::to_string(r);
      // runner 2 differs in its second iteration only.
      float v = (r == 2 && i == 1) ? 9.0f : static_cast<float>(i);
      it.outputs.set("y", Tensor::from_vector<float>({1}, {v}));
      iterations.push_back(it);
    }
    results.add(iterations, "r" + std::to_string(r));
  }
  EXPECT_EQ(Comparator::default_comparisons(results),
            (std::vector<std::pair<size_t, size_t>>{{0, 1}, {1, 2}}));
  LogCapture log;
  AccuracyResult accuracy = Comparator::compare_accuracy(results);
  EXPECT_FALSE(accuracy);
  EXPECT_EQ(accuracy.stats({"r0", "r1"}), std::make_tuple(size_t{2}, size_t{0}, size_t{2}));
  EXPECT_EQ(accuracy.stats({"r1", "r2"}), std::make_tuple(size_t{1}, size_t{1}, size_t{2}));
  EXPECT_DOUBLE_EQ(accuracy.percentage({"r1", "r2"}), 0.5);
  EXPECT_TRUE(log.contains("[I]     Iteration: 1\n"));
  EXPECT_TRUE(log.contains(
      "[I] Accuracy Summary | r0 vs. r1 | Passed: 2/2 iterations | Pass Rate: 100.0%"));
  EXPECT_TRUE(
      log.contains("[E] Accuracy Summary | r1 vs. r2 | Passed: 1/2 iterations | Pass Rate: 50.0%"));

  // fail_fast returns at the first mismatching iteration.
  accuracy =
      Comparator::compare_accuracy(results, true, std::vector<std::pair<size_t, size_t>>{{1, 2}});
  ASSERT_EQ(accuracy.entries.size(), 1u);
  EXPECT_EQ(accuracy.entries[0].second.size(), 2u);
  // A custom compare function and explicit comparisons.
  accuracy = Comparator::compare_accuracy(
      results, false, std::vector<std::pair<size_t, size_t>>{{0, 2}}, compare_func::indices());
  EXPECT_EQ(accuracy.entries[0].first, (AccuracyResult::Pair{"r0", "r2"}));
}

}  // namespace
}  // namespace parity
