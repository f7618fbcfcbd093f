// Dataset runs (comparator/dataset.h): shards, records in any order, the verdict.
#include "comparator/dataset.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

namespace parity {
namespace {

TEST(Shard, ParsesAndRefuses) {
  const Shard s = Shard::parse("--shard", "2/5");
  EXPECT_EQ(s.index, 2u);
  EXPECT_EQ(s.count, 5u);
  for (const char* bad : {"5/5", "1", "a/2", "1/0", "-1/3", "1/3x", "/3"})
    EXPECT_THROW(Shard::parse("--shard", bad), UsageError) << bad;
}

TEST(Shard, SharesAreDisjointAndCoverEverything) {
  std::vector<int> owners(1000, 0);
  for (size_t k = 0; k < 7; ++k) {
    const Shard s{k, 7};
    for (size_t i = 0; i < owners.size(); ++i) owners[i] += s.owns(i);
  }
  EXPECT_TRUE(std::all_of(owners.begin(), owners.end(), [](int n) { return n == 1; }));
}

DatasetIteration record(size_t index, double error, bool passed) {
  DatasetIteration it;
  it.index = index;
  OutputCompareResult r;
  r.passed = passed;
  r.max_absdiff = error;
  r.max_reldiff = error / 2;
  it.pairs.push_back({{"y", r}});
  return it;
}

// Records added in any order give the statistics of dataset order.
TEST(DatasetSummary, OrderOfArrivalDoesNotMatter) {
  std::vector<DatasetIteration> records;
  for (size_t i = 0; i < 200; ++i)
    records.push_back(record(i, std::ldexp(1.0, -static_cast<int>(i % 37)), i % 11 != 0));
  DatasetSummary in_order({"a", "b"}, default_pairs({"a", "b"}));
  for (const auto& r : records) in_order.add(r);
  std::shuffle(records.begin(), records.end(), std::mt19937(4));
  DatasetSummary shuffled({"a", "b"}, default_pairs({"a", "b"}));
  for (const auto& r : records) shuffled.add(r);
  ASSERT_EQ(shuffled.iterations().size(), 200u);
  for (size_t i = 0; i < 200; ++i) EXPECT_EQ(shuffled.iterations()[i].index, i);
  const auto a = error_distributions(in_order, 0, 5), b = error_distributions(shuffled, 0, 5);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].abs_mean, b[0].abs_mean);  // summed in dataset order either way
  EXPECT_EQ(a[0].worst, b[0].worst);
  EXPECT_EQ(a[0].decades, b[0].decades);
  EXPECT_EQ(in_order.passed_count(), shuffled.passed_count());
  // The worst are the largest errors, ties by index: 2^0 at i = 0, 37, 74, ...
  std::vector<std::pair<size_t, double>> expected;
  for (size_t i = 0; i < 200 && expected.size() < 5; i += 37) expected.emplace_back(i, 1.0);
  EXPECT_EQ(a[0].worst, expected);
  size_t total = std::accumulate(a[0].decades.begin(), a[0].decades.end(), size_t{0});
  EXPECT_EQ(total, 200u);
}

TEST(DatasetSummary, AnIndexRecordedTwiceIsABug) {
  DatasetSummary s({"a", "b"}, default_pairs({"a", "b"}));
  s.add(record(3, 0, true));
  s.add(record(3, 0, true));
  EXPECT_THROW(s.iterations(), InternalError);
}

TEST(DatasetSummary, VerdictNeedsEveryFeedToRunAndPass) {
  DatasetSummary s({"a", "b"}, default_pairs({"a", "b"}));
  EXPECT_FALSE(s.verdict().passed());  // nothing compared
  s.add(record(0, 0, true));
  EXPECT_TRUE(s.verdict().passed());
  DatasetIteration failed;
  failed.index = 1;
  failed.errors.push_back("b: infer failed");
  s.add(failed);
  EXPECT_FALSE(s.verdict().passed());
  EXPECT_EQ(s.ran_count(), 1u);
}

// With three runners each pair has its own verdict: a failure of (b, c) is no failure of (a, b).
TEST(DatasetIteration, PairsHaveTheirOwnVerdicts) {
  DatasetIteration it = record(0, 0, true);
  OutputCompareResult failed;
  it.pairs.push_back({{"y", failed}});
  EXPECT_TRUE(it.passed(0));
  EXPECT_FALSE(it.passed(1));
  EXPECT_FALSE(it.passed());
  it.errors.push_back("c: failed");
  EXPECT_FALSE(it.passed(0));
}

}  // namespace
}  // namespace parity
