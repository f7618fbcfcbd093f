// The fused statistics (radix selection of order statistics, lane sums, extremes) against a
// plain restatement with std::nth_element and sequential loops, on adversarial data.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <random>

#include "comparator/compare.h"
#include "comparator/compare_internal.h"
#include "comparator/output_stats.h"
#include "comparator/tensor_error.h"
#include "core/numeric.h"
#include "core/thread_pool.h"
#include "stats/fused_stats.h"
#include "stats/radix_select.h"

namespace parity {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
const std::vector<double> kQuantiles = {0.0, 0.1, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0};

// The k-th smallest value by std::nth_element on a copy.
double nth(std::vector<double> v, size_t k) {
  std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(k), v.end());
  return v[k];
}
float nth(std::vector<float> v, size_t k) {
  std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(k), v.end());
  return v[k];
}

// NumPy's median and linear quantile, stated directly (no NaN here: checked separately).
double expected_at(const std::vector<double>& v, double pos, bool lerp, NumKind kind) {
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const double t = pos - static_cast<double>(lo);
  const double a = nth(v, lo);
  if (t == 0 || lo + 1 >= v.size()) return round_to_kind(a, kind);
  const double b = nth(v, lo + 1);
  if (!lerp) return round_to_kind((a + b) / 2, kind);
  const double diff = b - a;
  return round_to_kind(t >= 0.5 ? b - diff * (1 - t) : a + diff * t, kind);
}

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

void expect_order_stats_match(const NumArray& a, const std::string& what) {
  SCOPED_TRACE(what + " (n=" + std::to_string(a.size()) + ")");
  const OrderStats got = compute_order_stats(a, kQuantiles);
  const bool any_nan =
      std::any_of(a.values.begin(), a.values.end(), [](double x) { return std::isnan(x); });
  const size_t n = a.size();
  const double want_median =
      n == 0    ? 0.0
      : any_nan ? kNan
                : expected_at(a.values, static_cast<double>(n - 1) / 2, false, a.kind);
  EXPECT_TRUE(same(got.median, want_median)) << got.median << " vs " << want_median;
  for (double q : kQuantiles) {
    const double want = n == 0 ? kInf
                        : any_nan
                            ? kNan
                            : expected_at(a.values, q * static_cast<double>(n - 1), true, a.kind);
    EXPECT_TRUE(same(got.quantile(q), want))
        << "q=" << q << ": " << got.quantile(q) << " vs " << want;
  }
}

// Sequential min/max/argmin/argmax/first NaN as compute_basic_stats always defined them.
void expect_extremes_match(const NumArray& a, const std::string& what) {
  SCOPED_TRACE(what);
  const BasicStats s = compute_basic_stats(a);
  int64_t argmin = -1, argmax = -1, first_nan = -1;
  double mn = 0, mx = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double x = a.values[i];
    const int64_t at = static_cast<int64_t>(i);
    if (std::isnan(x)) {
      if (first_nan < 0) first_nan = at;
      continue;
    }
    if (argmin < 0 || x < mn) mn = x, argmin = at;
    if (argmax < 0 || x > mx) mx = x, argmax = at;
  }
  if (a.size() == 0) return;
  if (first_nan >= 0) {
    EXPECT_TRUE(std::isnan(s.min) && std::isnan(s.max));
    EXPECT_EQ(s.argmin, first_nan);
    EXPECT_EQ(s.argmax, first_nan);
    return;
  }
  EXPECT_EQ(s.argmin, argmin);
  EXPECT_EQ(s.argmax, argmax);
  EXPECT_EQ(std::signbit(s.min), std::signbit(mn));  // the element's own zero
  EXPECT_EQ(s.min, mn);
  EXPECT_EQ(s.max, mx);
}

NumArray floats(std::vector<double> v) {
  for (double& x : v) x = static_cast<double>(static_cast<float>(x));
  const int64_t n = static_cast<int64_t>(v.size());
  return NumArray{std::move(v), NumKind::kFloat32, {n}};
}
NumArray doubles(std::vector<double> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return NumArray{std::move(v), NumKind::kFloat64, {n}};
}

void expect_both(const NumArray& a, const std::string& what) {
  expect_order_stats_match(a, what);
  expect_extremes_match(a, what);
}

TEST(FusedStats, SmallSizes) {
  for (size_t n = 0; n <= 3; ++n) {
    std::vector<double> v;
    for (size_t i = 0; i < n; ++i) v.push_back(3.0 - static_cast<double>(i) * 1.25);
    expect_both(floats(v), "float32");
    expect_both(doubles(v), "float64");
  }
}

// Sizes beyond the gather limit go through sampled brackets (radix selection when they miss).
constexpr size_t kLarge = 300000;

TEST(FusedStats, AllEqualAndTwoValues) {
  for (size_t n : {size_t{5}, size_t{6}, kLarge}) {
    expect_both(floats(std::vector<double>(n, 0.7)), "all equal float32");
    expect_both(doubles(std::vector<double>(n, -1e300)), "all equal float64");
    std::vector<double> two(n);
    for (size_t i = 0; i < n; ++i) two[i] = i % 3 == 0 ? 2.5 : -4.0;
    expect_both(floats(two), "two values float32");
    expect_both(doubles(two), "two values float64");
  }
}

TEST(FusedStats, NanAnywhereMakesOrderStatisticsNan) {
  for (size_t n : {size_t{1}, size_t{4}, kLarge}) {
    for (size_t at : {size_t{0}, n / 2, n - 1}) {
      std::vector<double> v(n);
      for (size_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<double>(i));
      v[at] = kNan;
      expect_both(floats(v), "NaN at " + std::to_string(at));
      expect_both(doubles(v), "NaN at " + std::to_string(at));
    }
  }
}

TEST(FusedStats, InfinitiesDenormalsAndSignedZeros) {
  const double denorm = std::numeric_limits<float>::denorm_min();
  for (size_t n : {size_t{7}, size_t{8}, kLarge + 1}) {
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) {
      switch (i % 7) {
        case 0:
          v[i] = kInf;
          break;
        case 1:
          v[i] = -kInf;
          break;
        case 2:
          v[i] = denorm * static_cast<double>(i % 5);
          break;
        case 3:
          v[i] = -denorm * static_cast<double>(i % 11);
          break;
        case 4:
          v[i] = -0.0;
          break;
        case 5:
          v[i] = 0.0;
          break;
        default:
          v[i] = static_cast<double>(i % 13) - 6;
      }
    }
    expect_both(floats(v), "specials float32");
    expect_both(doubles(v), "specials float64");
  }
  // Zeros of both signs only: min and max are the first zero, whatever its sign.
  expect_extremes_match(floats({-0.0, 0.0, -0.0}), "zeros");
  expect_extremes_match(floats({0.0, -0.0}), "zeros");
}

TEST(FusedStats, LargeRandomAndNarrowRanges) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  std::vector<double> v(1 << 20), narrow(1 << 20), ints(1 << 20);
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = normal(rng) * 1e3;
    // Many near-equal doubles: every level of the 64-bit keys is refined.
    narrow[i] = 1.0 + static_cast<double>(rng() % 4096) * 1e-15;
    ints[i] = static_cast<double>(static_cast<int64_t>(rng() % 2000001) - 1000000);
  }
  expect_both(floats(v), "normal float32");
  expect_both(doubles(v), "normal float64");
  expect_both(doubles(narrow), "narrow float64");
  expect_both(NumArray{ints, NumKind::kInt, {static_cast<int64_t>(ints.size())}}, "int");
}

// Values whose sampled blocks (every sample_stride-th block) lie above all the others: the
// sample brackets the wrong keys, and radix selection (histograms, refinement of every level of
// the keys) must still give the exact ranks.
std::vector<double> misleading_sample(std::vector<double> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  const int64_t step = radix::sample_stride(n) * kStatsBlock;
  for (int64_t at = 0; at < n; at += step)
    for (int64_t i = at; i < std::min(n, at + kStatsBlock); ++i)
      v[static_cast<size_t>(i)] = 1e6 + static_cast<double>(i);
  return v;
}

// The keys at `ranks` by bracket selection alone, or nothing when it misses (32-bit keys for
// float values, 64-bit ones for doubles, as compute_fused_stats).
template <typename T>
std::optional<std::vector<uint64_t>> bracketed(const std::vector<T>& v,
                                               const std::vector<int64_t>& ranks) {
  using Key = decltype(radix::key_of(T{}));
  const int64_t n = static_cast<int64_t>(v.size());
  std::vector<Key> sample;
  const int64_t step = radix::sample_stride(n) * kStatsBlock;
  for (int64_t at = 0; at < n; at += step)
    for (int64_t i = at; i < std::min(n, at + kStatsBlock); ++i)
      sample.push_back(radix::key_of(v[static_cast<size_t>(i)]));
  const radix::Bracket b = radix::bracket_from_sample(sample, n, ranks, sizeof(T) == 4);
  radix::BracketFound found(b);
  radix::BracketFound::Slab slab(found);
  kernels::Lanes lanes;
  for (int64_t at = 0; at < n; at += kStatsBlock)
    found.scan(v.data() + at, std::min(kStatsBlock, n - at), 0.0, lanes, true, slab);
  found.finish(slab);
  std::map<int64_t, uint64_t> keys;
  if (!found.resolve(ranks, keys)) return std::nullopt;
  std::vector<uint64_t> r;
  for (int64_t rank : ranks) r.push_back(keys.at(rank));
  return r;
}

TEST(FusedStats, SampledBracketsSelectExactlyOrMiss) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal;
  const size_t n = 1 << 20;
  std::vector<double> random(n), steps(n);
  for (size_t i = 0; i < n; ++i) {
    random[i] = normal(rng);
    steps[i] = std::floor(normal(rng) * 8) / 8;  // few values, each repeated: the ends repeat
  }
  const std::vector<int64_t> ranks = {0, 1, 524287, 524288, 943718, 996147, 1038090, 1048575};
  for (const auto* v : {&random, &steps}) {
    const auto got = bracketed(*v, ranks);
    ASSERT_TRUE(got.has_value());
    for (size_t k = 0; k < ranks.size(); ++k)
      EXPECT_EQ((*got)[k], radix::key_of(nth(*v, static_cast<size_t>(ranks[k])))) << ranks[k];
  }
  EXPECT_FALSE(bracketed(misleading_sample(random), ranks).has_value());
  // float32 data: the sample and the gathered keys are 32-bit.
  for (const auto* v : {&random, &steps}) {
    const std::vector<float> f(v->begin(), v->end());
    const auto got = bracketed(f, ranks);
    ASSERT_TRUE(got.has_value());
    for (size_t k = 0; k < ranks.size(); ++k)
      EXPECT_EQ((*got)[k], radix::key_of(nth(f, static_cast<size_t>(ranks[k])))) << ranks[k];
  }
}

TEST(FusedStats, SampleUnlikeTheWholeFallsBackToRadixSelection) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal;
  std::vector<double> v(1 << 20), narrow(1 << 20);
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = normal(rng);
    narrow[i] = 1.0 + static_cast<double>(rng() % 4096) * 1e-15;
  }
  expect_both(floats(misleading_sample(v)), "misleading sample float32");
  expect_both(doubles(misleading_sample(v)), "misleading sample float64");
  expect_both(doubles(misleading_sample(narrow)), "misleading sample, narrow float64");
}

// float16 and integer outputs are cast up (to float32 and int) before their statistics.
TEST(FusedStats, CastUpTypes) {
  std::mt19937 rng(3);
  std::vector<float> f(kLarge);
  std::vector<int8_t> i8(kLarge);
  for (size_t i = 0; i < kLarge; ++i) {
    f[i] = static_cast<float>(static_cast<int>(rng() % 20001) - 10000) / 64.0f;
    i8[i] = static_cast<int8_t>(rng() % 256);
  }
  const Tensor half = cast_tensor(Tensor::from_vector<float>({static_cast<int64_t>(kLarge)}, f),
                                  DataType::kFloat16);
  const Tensor small_ints = Tensor::from_vector<int8_t>({static_cast<int64_t>(kLarge)}, i8);
  for (const Tensor* t : {&half, &small_ints}) {
    const NumArray a = to_num_array(*t);
    expect_both(a, std::string(dtype_name(t->dtype())));
  }
}

// The differences of float32 pairs computed in float32 equal the double computation rounded to
// float32, for every kind of value (the fused pass uses the first, the double path the second).
TEST(FusedStats, Float32DifferencesEqualRoundedDoubleDifferences) {
  std::mt19937 rng(11);
  const float specials[] = {0.0f,
                            -0.0f,
                            std::numeric_limits<float>::denorm_min(),
                            -std::numeric_limits<float>::denorm_min() * 3,
                            std::numeric_limits<float>::min(),
                            std::numeric_limits<float>::max(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            NAN,
                            1.0f,
                            -1.0f};
  const int64_t n = 1 << 16;
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i) {
    auto draw = [&] {
      if (rng() % 4 == 0) return specials[rng() % std::size(specials)];
      uint32_t bits = static_cast<uint32_t>(rng());
      float v;
      std::memcpy(&v, &bits, sizeof v);
      return v;
    };
    x[static_cast<size_t>(i)] = draw();
    y[static_cast<size_t>(i)] = rng() % 3 == 0 ? x[static_cast<size_t>(i)] : draw();
  }
  for (bool inf_equal : {false, true}) {
    const DiffRules rules(DataType::kFloat32, DataType::kFloat32, inf_equal);
    std::vector<float> fa(n), fr(n);
    std::vector<double> dx(x.begin(), x.end()), dy(y.begin(), y.end()), da(n), dr(n);
    rules.diff_block(x.data(), y.data(), n, fa.data(), fr.data());
    rules.diff_block(dx.data(), dy.data(), n, da.data(), dr.data());
    for (int64_t i = 0; i < n; ++i) {
      const size_t k = static_cast<size_t>(i);
      ASSERT_TRUE(same(fa[k], da[k]) && std::signbit(fa[k]) == std::signbit(da[k]))
          << x[k] << " " << y[k];
      ASSERT_TRUE(same(fr[k], dr[k])) << x[k] << " " << y[k] << ": " << fr[k] << " vs " << dr[k];
    }
  }
}

// Streams of both outputs and both differences: the same statistics as the arrays themselves.
TEST(FusedStats, PairStreamsMatchMaterialisedDifferences) {
  std::mt19937 rng(5);
  const int64_t n = 200003;
  std::vector<float> a(n), b(n);
  for (int64_t i = 0; i < n; ++i) {
    a[static_cast<size_t>(i)] = static_cast<float>(static_cast<int>(rng() % 1000) - 500) / 7.0f;
    b[static_cast<size_t>(i)] = i % 5 == 0 ? 0.0f : a[static_cast<size_t>(i)] * 1.001f;
  }
  const Tensor t0 = Tensor::from_vector<float>({n}, a);
  for (DataType other : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16,
                         DataType::kFloat8E4M3FN, DataType::kInt32}) {
    SCOPED_TRACE(std::string(dtype_name(other)));
    const Tensor t1 = cast_tensor(Tensor::from_vector<float>({n}, b), other);
    const DiffRules rules(t0.dtype(), t1.dtype(), false);
    const PairStreams pair(t0, t1, rules, true);
    std::vector<StreamRequest> requests(4, StreamRequest{true, kQuantiles});
    const FusedStats fused = compute_fused_stats(pair, requests);
    const NumArray x = to_num_array(t0), y = to_num_array(t1);
    NumArray abs{{}, rules.abs_kind, {n}}, rel{{}, rules.rel_kind, {n}};
    for (int64_t i = 0; i < n; ++i) {
      double d = 0, r = 0;
      rules.diff(x.values[static_cast<size_t>(i)], y.values[static_cast<size_t>(i)], d, r);
      abs.values.push_back(d);
      rel.values.push_back(r);
    }
    const NumArray* arrays[] = {&x, &y, &abs, &rel};
    for (int s = 0; s < 4; ++s) {
      const NumArray& arr = *arrays[s];
      const BasicStats want = compute_basic_stats(arr);
      const BasicStats& got = fused.basic[static_cast<size_t>(s)];
      EXPECT_TRUE(same(got.mean, want.mean)) << s;
      EXPECT_TRUE(same(got.var, want.var)) << s;
      EXPECT_EQ(got.argmax, want.argmax) << s;
      const OrderStats want_order = compute_order_stats(arr, kQuantiles);
      EXPECT_TRUE(same(fused.order[static_cast<size_t>(s)].median, want_order.median)) << s;
      for (double q : kQuantiles)
        EXPECT_TRUE(same(fused.order[static_cast<size_t>(s)].quantile(q), want_order.quantile(q)))
            << s;
      expect_order_stats_match(arr, "stream " + std::to_string(s));
    }
  }
}

TEST(FusedStats, SameBitsOnOneAndFourThreads) {
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(3 << 20);
  for (double& x : v) x = u(rng) * u(rng) * 1e6;
  const NumArray a = floats(v), d = doubles(v);
  auto run = [&](int threads) {
    set_num_threads(threads);
    std::vector<double> r;
    for (const NumArray* arr : {&a, &d}) {
      const BasicStats s = compute_basic_stats(*arr);
      const OrderStats o = compute_order_stats(*arr, kQuantiles);
      r.insert(r.end(), {s.mean, s.var, s.stddev, s.avg_magnitude, s.min, s.max,
                         static_cast<double>(s.argmin), static_cast<double>(s.argmax), o.median});
      for (double q : kQuantiles) r.push_back(o.quantile(q));
    }
    set_num_threads(0);
    return r;
  };
  const std::vector<double> one = run(1), four = run(4);
  ASSERT_EQ(one.size(), four.size());
  for (size_t i = 0; i < one.size(); ++i)
    EXPECT_EQ(std::memcmp(&one[i], &four[i], sizeof(double)), 0) << i;
}

// The layer-wise pass and CompareFunc.simple sum the mean error in the same lanes and chunks.
TEST(FusedStats, LayerwiseMeanErrorHasSimplesBits) {
  std::mt19937 rng(13);
  const int64_t n = 777777;
  std::vector<float> a(n), b(n);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(rng()) / 4e9f;
    b[i] = a[i] + static_cast<float>(rng() % 100) * 1e-7f;
  }
  IterationResult r0, r1;
  r0.runner_name = "a";
  r1.runner_name = "b";
  r0.outputs.set("out", Tensor::from_vector<float>({n}, a));
  r1.outputs.set("out", Tensor::from_vector<float>({n}, b));
  const IterationCompareResult simple = compare_func::simple()(r0, r1);
  const TensorErrorStats layer =
      compare_tensors("out", r0.outputs.at("out"), r1.outputs.at("out"), {});
  EXPECT_EQ(layer.mean_abs, simple[0].second.mean_absdiff);
  EXPECT_EQ(layer.mean_rel, simple[0].second.mean_reldiff);
  TensorCompareOptions median;
  median.check_error_stat = ErrorStat::kMedian;
  const TensorErrorStats layer_median =
      compare_tensors("out", r0.outputs.at("out"), r1.outputs.at("out"), median);
  EXPECT_EQ(*layer_median.median_abs, simple[0].second.median_absdiff);
  EXPECT_EQ(*layer_median.median_rel, simple[0].second.median_reldiff);
}

}  // namespace
}  // namespace parity
