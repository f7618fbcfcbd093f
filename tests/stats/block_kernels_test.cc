// The block kernels on every path this CPU has (portable, AVX-512) against plain loops, and the
// fused statistics giving the same bits on every path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "comparator/compare_internal.h"
#include "stats/block_kernels.h"
#include "stats/fused_stats.h"
#include "stats/radix_select.h"

namespace parity {
namespace {

using kernels::KernelPath;

std::string path_name(KernelPath p) { return p == KernelPath::kAvx512 ? "avx512" : "portable"; }

// The same bits, or both NaN (which NaN an addition of two NaNs returns depends on the operand
// order the compiler picks; every NaN prints as nan).
bool same_bits(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

// Runs fn once per path, the path forced.
template <typename Fn>
void on_every_path(const Fn& fn) {
  for (KernelPath path : kernels::supported_kernel_paths()) {
    SCOPED_TRACE(path_name(path));
    kernels::force_kernel_path(path);
    fn(path);
  }
  kernels::reset_kernel_path();
}

// Values with NaNs, infinities, signed zeros, denormals and repeats.
std::vector<float> awkward_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> v(n);
  for (float& x : v) {
    switch (rng() % 16) {
      case 0:
        x = std::copysign(std::numeric_limits<float>::quiet_NaN(), (rng() & 1) ? 1.0f : -1.0f);
        break;
      case 1:
        x = (rng() & 1) ? INFINITY : -INFINITY;
        break;
      case 2:
        x = (rng() & 1) ? 0.0f : -0.0f;
        break;
      case 3:
        x = std::numeric_limits<float>::denorm_min() * static_cast<float>(rng() % 50);
        break;
      case 4:
        x = 1.5f;
        break;
      default:
        x = static_cast<float>(static_cast<int32_t>(rng())) / 1e6f;
        break;
    }
  }
  return v;
}

TEST(BlockKernels, ScanMatchesPlainLoops) {
  for (const int64_t n : {1, 7, 15, 16, 17, 100, 1023, 1024}) {
    SCOPED_TRACE(n);
    for (const bool finite : {false, true}) {
      std::vector<float> v = awkward_floats(static_cast<size_t>(n), static_cast<uint32_t>(n));
      if (finite)
        for (float& x : v) x = std::isfinite(x) ? x : -2.5f;
      const double shift = 0.25;
      // Plain: lane i % 16 in element order, squares by FMA; extremes skipping NaN.
      kernels::Lanes want;
      for (int64_t i = 0; i < n; ++i) {
        const double x = v[static_cast<size_t>(i)], d = x - shift;
        const int j = static_cast<int>(i % kernels::kLanes);
        want.sum[j] += d;
        want.sumsq[j] = std::fma(d, d, want.sumsq[j]);
        want.sum_abs[j] += std::fabs(x);
      }
      int64_t nans = 0;
      float mn = INFINITY, mx = -INFINITY;
      for (float x : v) {
        nans += x != x;
        mn = x < mn ? x : mn;
        mx = x > mx ? x : mx;
      }
      on_every_path([&](KernelPath) {
        for (const bool magnitudes : {true, false}) {
          kernels::Lanes lanes;
          std::vector<uint32_t> keys(static_cast<size_t>(n) + 16);
          const auto e = kernels::scan_block(v.data(), n, shift, lanes, keys.data(), magnitudes);
          for (int j = 0; j < kernels::kLanes; ++j) {
            EXPECT_TRUE(same_bits(lanes.sum[j], want.sum[j])) << j;
            EXPECT_TRUE(same_bits(lanes.sumsq[j], want.sumsq[j])) << j;
            EXPECT_TRUE(same_bits(lanes.sum_abs[j], magnitudes ? want.sum_abs[j] : 0.0)) << j;
          }
          EXPECT_EQ(e.has_nan, nans > 0);
          if (nans == 0) {  // else the extremes do not matter
            EXPECT_EQ(e.min, mn);
            EXPECT_EQ(e.max, mx);
          }
          for (int64_t i = 0; i < n; ++i)
            ASSERT_EQ(keys[static_cast<size_t>(i)], radix::key_of(v[static_cast<size_t>(i)])) << i;
        }
      });
    }
  }
}

TEST(BlockKernels, IntervalsMatchPlainLoops) {
  std::mt19937 rng(3);
  for (int round = 0; round < 200; ++round) {
    const int64_t n = 1 + static_cast<int64_t>(rng() % 1024);
    // Keys from a narrow range so that intervals catch many, with repeats at their ends.
    std::vector<uint32_t> keys(static_cast<size_t>(n) + 16);
    for (int64_t i = 0; i < n; ++i) keys[static_cast<size_t>(i)] = 1000 + rng() % 200;
    std::vector<uint32_t> ends;
    for (int k = 0; k < 2 * (1 + static_cast<int>(rng() % 7)); ++k)
      ends.push_back(990 + rng() % 220);
    std::sort(ends.begin(), ends.end());
    ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
    if (ends.size() % 2) ends.pop_back();
    const size_t m = ends.size() / 2;
    std::vector<uint32_t> lo(m), width(m);
    for (size_t j = 0; j < m; ++j) lo[j] = ends[2 * j], width[j] = ends[2 * j + 1] - ends[2 * j];
    // Whole intervals: every key in them gathered, nothing counted at the low end.
    const bool whole = rng() % 2 == 0;
    std::vector<int64_t> want(3 * m, 0);
    std::vector<std::vector<uint32_t>> want_kept(m);
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t key = keys[static_cast<size_t>(i)];
      for (size_t j = 0; j < m; ++j) {
        const bool in = key >= lo[j] && key <= lo[j] + width[j];
        want[3 * j] += key < lo[j];
        want[3 * j + 1] += in;
        want[3 * j + 2] += !whole && key == lo[j];
        if (whole ? in : key > lo[j] && key < lo[j] + width[j]) want_kept[j].push_back(key);
      }
    }
    const size_t upper = rng() % (m + 2);  // a hint only: any value gives the same results
    on_every_path([&](KernelPath) {
      std::vector<int64_t> counts(3 * m, 0), kept_count(m, -1);
      std::vector<std::vector<uint32_t>> kept(m,
                                              std::vector<uint32_t>(static_cast<size_t>(n) + 16));
      std::vector<uint32_t*> kept_at(m);
      for (size_t j = 0; j < m; ++j) kept_at[j] = kept[j].data();
      kernels::interval_block(keys.data(), n,
                              {lo.data(), width.data(), m, upper, counts.data(), kept_at.data(),
                               kept_count.data(), whole});
      EXPECT_EQ(counts, want);
      for (size_t j = 0; j < m; ++j) {
        ASSERT_GE(kept_count[j], 0);
        std::vector<uint32_t> got(kept[j].begin(), kept[j].begin() + kept_count[j]);
        std::sort(got.begin(), got.end());
        std::sort(want_kept[j].begin(), want_kept[j].end());
        EXPECT_EQ(got, want_kept[j]) << "interval " << j;
      }
    });
  }
}

// scan_intervals (one sweep on AVX-512 for up to one interval below the upper ones) equals
// scan_block followed by interval_block, for every shape of bracket.
TEST(BlockKernels, ScanIntervalsEqualsScanThenCount) {
  std::mt19937 rng(17);
  for (int round = 0; round < 300; ++round) {
    const int64_t n = 1 + static_cast<int64_t>(rng() % 1024);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = static_cast<float>(static_cast<int>(rng() % 400) - 200) / 64.0f;
    std::vector<uint32_t> keys(static_cast<size_t>(n) + 16);
    for (int64_t i = 0; i < n; ++i)
      keys[static_cast<size_t>(i)] = radix::key_of(v[static_cast<size_t>(i)]);
    std::vector<uint32_t> ends;
    const size_t m = rng() % 5;
    for (size_t k = 0; k < 2 * m; ++k)
      ends.push_back(keys[rng() % static_cast<size_t>(n)] + rng() % 3);
    std::sort(ends.begin(), ends.end());
    ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
    if (ends.size() % 2) ends.pop_back();
    const size_t intervals = ends.size() / 2;
    std::vector<uint32_t> lo(intervals), width(intervals);
    for (size_t j = 0; j < intervals; ++j)
      lo[j] = ends[2 * j], width[j] = ends[2 * j + 1] - ends[2 * j];
    const size_t upper = rng() % (intervals + 2);
    const bool whole = rng() % 2 == 0, magnitudes = rng() % 2 == 0;
    on_every_path([&](KernelPath) {
      struct Run {
        kernels::Lanes lanes;
        kernels::Extremes<float> e{};
        std::vector<int64_t> counts, kept_count;
        std::vector<std::vector<uint32_t>> kept;
      };
      auto run = [&](bool fused) {
        Run r;
        r.counts.assign(3 * intervals, 0);
        r.kept_count.assign(intervals, 0);
        r.kept.assign(intervals, std::vector<uint32_t>(static_cast<size_t>(n) + 16));
        std::vector<uint32_t*> at(intervals);
        for (size_t j = 0; j < intervals; ++j) at[j] = r.kept[j].data();
        const kernels::IntervalScan<uint32_t> scan{
            lo.data(),       width.data(), intervals,           upper,
            r.counts.data(), at.data(),    r.kept_count.data(), whole};
        if (fused) {
          r.e = kernels::scan_intervals(v.data(), n, 0.5, r.lanes, magnitudes, scan);
        } else {
          std::vector<uint32_t> k(static_cast<size_t>(n) + 16);
          r.e = kernels::scan_block(v.data(), n, 0.5, r.lanes, k.data(), magnitudes);
          if (intervals > 0) kernels::interval_block(k.data(), n, scan);
        }
        for (size_t j = 0; j < intervals; ++j) {
          r.kept[j].resize(static_cast<size_t>(r.kept_count[j]));
          std::sort(r.kept[j].begin(), r.kept[j].end());
        }
        return r;
      };
      const Run a = run(true), b = run(false);
      EXPECT_EQ(std::memcmp(&a.lanes, &b.lanes, sizeof a.lanes), 0);
      EXPECT_EQ(a.e.min, b.e.min);
      EXPECT_EQ(a.e.max, b.e.max);
      EXPECT_EQ(a.e.has_nan, b.e.has_nan);
      EXPECT_EQ(a.counts, b.counts);
      EXPECT_EQ(a.kept, b.kept);
    });
  }
}

// Every statistic CompareFunc.simple takes from the fused pass, bit for bit on every path.
TEST(BlockKernels, FusedStatisticsSameBitsOnEveryPath) {
  for (const int64_t n : {int64_t{1000}, int64_t{300001}}) {
    SCOPED_TRACE(n);
    std::vector<float> a = awkward_floats(static_cast<size_t>(n), 21);
    std::mt19937 rng(5);
    for (float& x : a)  // mostly finite, so that the order statistics are not all NaN
      if (std::isnan(x) && rng() % 64 != 0) x = 2.0f;
    std::vector<float> b(a);
    for (float& x : b) x *= 1.0f + static_cast<float>(rng() % 9) * 1e-6f;
    for (const bool nan_free : {false, true}) {
      std::vector<float> a2(a), b2(b);
      if (nan_free) {
        for (float& x : a2) x = std::isnan(x) ? 0.5f : x;
        for (float& x : b2) x = std::isnan(x) ? 0.5f : x;
      }
      const Tensor x = Tensor::from_vector<float>({n}, a2), y = Tensor::from_vector<float>({n}, b2);
      const DiffRules rules(DataType::kFloat32, DataType::kFloat32, true);
      const PairStreams pair(x, y, rules, true, 1e-5, 1e-5);
      const std::vector<StreamRequest> requests(4, StreamRequest{true, {0.5, 0.9, 0.95, 0.99}});
      std::vector<std::vector<double>> results;
      on_every_path([&](KernelPath) {
        const FusedStats f = compute_fused_stats(pair, requests);
        std::vector<double> r{static_cast<double>(f.counts[0]), static_cast<double>(f.counts[1])};
        for (size_t s = 0; s < 4; ++s) {
          const BasicStats& st = f.basic[s];
          r.insert(r.end(), {st.mean, st.var, st.stddev, st.avg_magnitude, st.min, st.max,
                             static_cast<double>(st.argmin), static_cast<double>(st.argmax),
                             f.order[s].median});
          for (const auto& [q, v] : f.order[s].quantiles) r.push_back(v);
        }
        results.push_back(r);
      });
      for (size_t p = 1; p < results.size(); ++p) {
        ASSERT_EQ(results[p].size(), results[0].size());
        for (size_t i = 0; i < results[0].size(); ++i)
          EXPECT_TRUE(same_bits(results[p][i], results[0][i]))
              << "value " << i << ": " << results[p][i] << " vs " << results[0][i];
      }
    }
  }
}

}  // namespace
}  // namespace parity
