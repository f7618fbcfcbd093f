// RunResults and AccuracyResult: the cases of Polygraphy's tests/comparator/test_struct.py
// (Parity keeps outputs in memory, so there is no LazyArray to test).
#include "comparator/struct.h"

#include <gtest/gtest.h>

namespace parity {
namespace {

std::vector<IterationResult> iterations(const std::string& runner) {
  IterationResult it;
  it.outputs.set("dummy_out", Tensor(DataType::kFloat64, {4, 4}));
  it.runner_name = runner;
  return {it, it};
}

RunResults two_runners() {
  RunResults results;
  results.append({"runner0", iterations("runner0")});
  results.append({"runner1", iterations("runner1")});
  return results;
}

TEST(RunResults, ItemsAndKeys) {
  RunResults results = two_runners();
  EXPECT_EQ(results.keys(), (std::vector<std::string>{"runner0", "runner1"}));
  size_t n = 0;
  for (const auto& [name, its] : results) {
    EXPECT_EQ(its.size(), 2u);
    for (const auto& it : its) EXPECT_EQ(it.runner_name, name);
    ++n;
  }
  EXPECT_EQ(n, 2u);
}

TEST(RunResults, GetByIndexAndName) {
  RunResults results = two_runners();
  EXPECT_EQ(results[0].first, "runner0");
  EXPECT_EQ(&results[0].second, &results.at("runner0"));
  EXPECT_EQ(&results[1].second, &results.at("runner1"));
}

TEST(RunResults, GetOutOfBounds) {
  RunResults results = two_runners();
  EXPECT_THROW(results[2], std::out_of_range);
  try {
    results.at("runner2");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist in this RunResults instance"),
              std::string::npos);
    EXPECT_NE(std::string(e.what()).find("['runner0', 'runner1']"), std::string::npos);
  }
}

TEST(RunResults, SetReplacesOrAppends) {
  RunResults results = two_runners();
  results.set("runner1", {IterationResult{}});
  EXPECT_EQ(results.size(), 2u);
  ASSERT_EQ(results.at("runner1").size(), 1u);
  EXPECT_EQ(results.at("runner1")[0].runner_name, "custom_runner");
  EXPECT_TRUE(results.at("runner1")[0].outputs.empty());

  IterationResult fresh;
  fresh.runner_name = "new";
  results.set("runner2", {fresh});
  EXPECT_EQ(results.size(), 3u);
  EXPECT_EQ(results.at("runner2")[0].runner_name, "new");
}

TEST(RunResults, Contains) {
  RunResults results = two_runners();
  EXPECT_TRUE(results.contains("runner0"));
  EXPECT_TRUE(results.contains("runner1"));
  EXPECT_FALSE(results.contains("runner3"));
}

TEST(RunResults, AddWithAndWithoutName) {
  RunResults results;
  results.add(iterations("x"), "custom");
  EXPECT_EQ(results.at("custom").size(), 2u);
  RunResults unnamed;
  unnamed.add(iterations("x"));
  EXPECT_EQ(unnamed[0].first, "custom_runner");
  EXPECT_EQ(unnamed.at("custom_runner").size(), 2u);
}

TEST(AccuracyResult, StatsAndPercentage) {
  AccuracyResult acc;
  EXPECT_TRUE(acc);
  EXPECT_EQ(acc.percentage({"a", "b"}), 1.0);
  OutputCompareResult pass, fail;
  pass.passed = true;
  acc.entries.push_back({{"a", "b"}, {{{"y", pass}}, {{"y", pass}, {"z", fail}}}});
  EXPECT_FALSE(acc);
  EXPECT_EQ(acc.stats({"a", "b"}), std::make_tuple(size_t{1}, size_t{1}, size_t{2}));
  EXPECT_DOUBLE_EQ(acc.percentage({"a", "b"}), 0.5);
  EXPECT_THROW(acc.stats({"a", "c"}), Error);
}

TEST(OutputCompareResult, StrLikePython) {
  OutputCompareResult r;
  r.max_absdiff = 1e-05;
  r.max_reldiff = 0.5;
  EXPECT_EQ(r.str(), "(atol=1e-05, rtol=0.5)");
  r.max_absdiff = 1.0;
  EXPECT_EQ(r.str(), "(atol=1.0, rtol=0.5)");
}

}  // namespace
}  // namespace parity
