// CompareFunc.simple and CompareFunc.indices: the cases of Polygraphy's
// tests/comparator/test_compare.py, plus empty, integer, bool, string, NaN and infinity outputs.
#include "comparator/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/error.h"
#include "support/test_util.h"

namespace parity {
namespace {

using testing::LogCapture;

template <typename T>
Tensor vec(const std::vector<T>& v) {
  return Tensor::from_vector<T>({static_cast<int64_t>(v.size())}, v);
}

Tensor half(const std::vector<double>& v) {
  Tensor t(DataType::kFloat16, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data<float16>()[i] = float16::from_double(v[i]);
  return t;
}

Tensor filled(DataType dtype, Shape shape, double value) {
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dtype == DataType::kFloat32)
      t.data<float>()[i] = static_cast<float>(value);
    else if (dtype == DataType::kFloat64)
      t.data<double>()[i] = value;
    else if (dtype == DataType::kBool)
      t.data<bool>()[i] = value != 0;
  }
  return t;
}

IterationResult result(std::vector<std::pair<std::string, Tensor>> outputs,
                       const std::string& runner = "custom_runner") {
  IterationResult r;
  for (auto& [name, t] : outputs) r.outputs.set(name, t);
  r.runner_name = runner;
  return r;
}

IterationResult single(Tensor t) { return result({{"output", std::move(t)}}); }

const OutputCompareResult& get(const IterationCompareResult& r, const std::string& name) {
  for (const auto& [n, res] : r)
    if (n == name) return res;
  throw std::runtime_error("no result for " + name);
}

OutputCompareResult compare(const Tensor& a, const Tensor& b, SimpleCompareOptions options = {}) {
  LogCapture quiet;
  return get(compare_func::simple(options)(single(a), single(b)), "output");
}

// Low-precision types are cast up so that differences neither overflow nor underflow.
TEST(SimpleCompare, CastsUpBeforeSubtracting) {
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    Tensor a, b;
    double absdiff, reldiff;
  };
  std::vector<Case> cases = {
      {vec<uint8_t>({0}), vec<uint8_t>({1}), 1, 1.0},
      {vec<uint8_t>({1}), vec<uint8_t>({0}), 1, inf},
      {vec<uint16_t>({0}), vec<uint16_t>({1}), 1, 1.0},
      {vec<uint16_t>({1}), vec<uint16_t>({0}), 1, inf},
      {vec<uint32_t>({0}), vec<uint32_t>({1}), 1, 1.0},
      {vec<uint32_t>({1}), vec<uint32_t>({0}), 1, inf},
      {vec<int8_t>({25}), vec<int8_t>({30}), 5, 5.0 / 30.0},
      {half({25}), half({30}), 5, static_cast<double>(5.0f / 30.0f)},
      {half({1}), half({0}), 1, 1 / std::numeric_limits<double>::epsilon()},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(dtype_name(c.a.dtype())));
    OutputCompareResult r = compare(c.a, c.b);
    EXPECT_NEAR(r.max_absdiff, c.absdiff, 1e-8 * c.absdiff);
    EXPECT_EQ(r.max_absdiff, r.mean_absdiff);
    EXPECT_EQ(r.max_absdiff, r.median_absdiff);
    if (std::isinf(c.reldiff))
      EXPECT_EQ(r.max_reldiff, c.reldiff);
    else
      EXPECT_NEAR(r.max_reldiff, c.reldiff, 1e-5 * c.reldiff);
    EXPECT_EQ(r.max_reldiff, r.mean_reldiff);
    EXPECT_EQ(r.max_reldiff, r.median_reldiff);
  }
}

TEST(SimpleCompare, Quantile) {
  struct Case {
    Tensor a, b;
    double q, abs_q, rel_q;
  };
  std::vector<Case> cases = {
      {half({0, 0.1, 0.5, 0.75, 1}), half({2, 2, 2, 2, 2}), 0.5, 1.5, 0.75},
      {half({0, 0.1, 0.5, 0.75, 1}), half({2, 2, 2, 2, 2}), 0.75, 1.9, 0.95},
      {half({0.2, 0.2, 0.125, 0.11}), half({0.1, 0.1, 0.1, 0.1}), 0.5, 0.0625, 0.625},
      {vec<uint8_t>({0, 1, 2, 3, 4}), vec<uint8_t>({2, 2, 2, 2, 2}), 0.5, 1, 0.5},
      {vec<uint8_t>({0, 1, 2, 3, 4}), vec<uint8_t>({2, 2, 2, 2, 2}), 0.75, 2, 1},
  };
  for (const Case& c : cases) {
    SimpleCompareOptions options;
    options.check_error_stat = ErrorStat::kQuantile;
    options.error_quantile = c.q;
    OutputCompareResult r = compare(c.a, c.b, options);
    ASSERT_TRUE(r.quantile_absdiff && r.quantile_reldiff);
    EXPECT_NEAR(*r.quantile_absdiff, c.abs_q, 1e-4 + 1e-4 * c.abs_q);
    EXPECT_LE(*r.quantile_absdiff, r.max_absdiff);
    EXPECT_EQ(c.q >= 0.5, *r.quantile_absdiff >= r.median_absdiff);
    EXPECT_NEAR(*r.quantile_reldiff, c.rel_q, 1e-4 + 1e-4 * c.rel_q);
    EXPECT_LE(*r.quantile_reldiff, r.max_reldiff);
    EXPECT_EQ(c.q >= 0.5, *r.quantile_reldiff >= r.median_reldiff);
  }
}

TEST(SimpleCompare, Bool) {
  EXPECT_FALSE(compare(filled(DataType::kBool, {4, 4}, 0), filled(DataType::kBool, {4, 4}, 1)));
  EXPECT_TRUE(compare(filled(DataType::kBool, {4, 4}, 1), filled(DataType::kBool, {4, 4}, 1)));
}

TEST(SimpleCompare, Integers) {
  EXPECT_TRUE(compare(vec<int64_t>({1, 2, 3}), vec<int64_t>({1, 2, 3})));
  OutputCompareResult r = compare(vec<int32_t>({10, 20}), vec<int32_t>({11, 20}));
  EXPECT_FALSE(r);
  EXPECT_EQ(r.max_absdiff, 1);
  EXPECT_DOUBLE_EQ(r.max_reldiff, 1.0 / 11.0);
  // Integer references get no epsilon: 1/0 is inf (fails), 0/0 is NaN but absdiff 0 passes.
  EXPECT_EQ(compare(vec<int32_t>({1}), vec<int32_t>({0})).max_reldiff, INFINITY);
  EXPECT_TRUE(compare(vec<int32_t>({0}), vec<int32_t>({0})));
  SimpleCompareOptions loose;
  loose.atol = 1.0;
  EXPECT_TRUE(compare(vec<int32_t>({10, 20}), vec<int32_t>({11, 20}), loose));
  // int4 values are unpacked before comparing.
  Tensor a(DataType::kInt4, {3}), b(DataType::kInt4, {3});
  for (size_t i = 0; i < 3; ++i) {
    int4_set(static_cast<uint8_t*>(a.raw_data()), i, static_cast<int8_t>(i) - 3);
    int4_set(static_cast<uint8_t*>(b.raw_data()), i, static_cast<int8_t>(i) - 3);
  }
  EXPECT_TRUE(compare(a, b));
  int4_set(static_cast<uint8_t*>(b.raw_data()), 2, 7);
  EXPECT_EQ(compare(a, b).max_absdiff, 8);
}

TEST(SimpleCompare, NarrowFloats) {
  Tensor a(DataType::kBFloat16, {2}), b(DataType::kBFloat16, {2});
  a.data<bfloat16>()[0] = bfloat16::from_double(1.5);
  b.data<bfloat16>()[0] = bfloat16::from_double(1.5);
  a.data<bfloat16>()[1] = bfloat16::from_double(2);
  b.data<bfloat16>()[1] = bfloat16::from_double(3);
  OutputCompareResult r = compare(a, b);
  EXPECT_FALSE(r);
  EXPECT_EQ(r.max_absdiff, 1);
  Tensor f8a(DataType::kFloat8E4M3FN, {1}), f8b(DataType::kFloat8E4M3FN, {1});
  f8a.data<float8e4m3fn>()[0] = float8e4m3fn::from_double(0.5);
  f8b.data<float8e4m3fn>()[0] = float8e4m3fn::from_double(0.5);
  EXPECT_TRUE(compare(f8a, f8b));
}

TEST(SimpleCompare, Strings) {
  EXPECT_TRUE(compare(vec<std::string>({"a", "b"}), vec<std::string>({"a", "b"})));
  EXPECT_FALSE(compare(vec<std::string>({"a", "b"}), vec<std::string>({"a", "c"})));
}

TEST(SimpleCompare, PerOutputTolerance) {
  for (bool abs_mode : {true, false}) {
    Tensor ones = filled(DataType::kFloat64, {4, 4}, 1),
           twos = filled(DataType::kFloat64, {4, 4}, 2);
    IterationResult r0 = result({{"output0", ones}, {"output1", ones}});
    IterationResult r1 = result({{"output0", ones}, {"output1", twos}});
    LogCapture quiet;
    auto acc = compare_func::simple()(r0, r1);
    EXPECT_TRUE(get(acc, "output0"));
    EXPECT_FALSE(get(acc, "output1"));
    PerOutput<double> tols;
    tols.values = {{"output0", 0.0}, {"output1", 1.0}};
    SimpleCompareOptions options;
    (abs_mode ? options.atol : options.rtol) = tols;
    acc = compare_func::simple(options)(r0, r1);
    EXPECT_TRUE(get(acc, "output0"));
    EXPECT_TRUE(get(acc, "output1"));
  }
}

TEST(SimpleCompare, PerOutputToleranceFallsBackToDefault) {
  for (bool abs_mode : {true, false}) {
    Tensor ones = filled(DataType::kFloat64, {4, 4}, 1),
           twos = filled(DataType::kFloat64, {4, 4}, 2);
    IterationResult r0 = result({{"output0", twos}, {"output1", ones}});
    IterationResult r1 = result({{"output0", ones}, {"output1", twos}});
    LogCapture quiet;
    auto acc = compare_func::simple()(r0, r1);
    EXPECT_FALSE(get(acc, "output0"));
    EXPECT_FALSE(get(acc, "output1"));
    PerOutput<double> tols;
    tols.values = {{"output1", 1.0}};
    SimpleCompareOptions options;
    (abs_mode ? options.atol : options.rtol) = tols;
    acc = compare_func::simple(options)(r0, r1);
    EXPECT_FALSE(get(acc, "output0"));
    EXPECT_TRUE(get(acc, "output1"));
  }
}

TEST(SimpleCompare, DefaultToleranceInMap) {
  for (bool abs_mode : {true, false}) {
    PerOutput<double> tols;
    tols.values = {{"", 1.0}};
    SimpleCompareOptions options;
    (abs_mode ? options.atol : options.rtol) = tols;
    EXPECT_TRUE(compare(filled(DataType::kFloat64, {4, 4}, 1),
                        filled(DataType::kFloat64, {4, 4}, 2), options));
  }
}

// Zeros against ones fail for every shape with elements; an empty output has nothing to fail.
// Runs at ULTRA_VERBOSE so that every report line is produced.
TEST(SimpleCompare, NonMatchingOutputs) {
  for (Shape shape : {Shape{}, Shape{0, 2, 1, 2}, Shape{1}, Shape{2, 2, 2, 2}}) {
    LogCapture all(Severity::kUltraVerbose);
    auto acc = compare_func::simple()(single(filled(DataType::kFloat32, shape, 0)),
                                      single(filled(DataType::kFloat32, shape, 1)));
    EXPECT_EQ(bool(get(acc, "output")), shape_numel(shape) == 0) << shape_str(shape);
  }
}

TEST(SimpleCompare, EmptyOutputsReportPolygraphysZeroOnEmptyStats) {
  LogCapture log;
  auto acc = compare_func::simple()(single(filled(DataType::kFloat32, {0, 2}, 0)),
                                    single(filled(DataType::kFloat32, {0, 2}, 0)));
  EXPECT_TRUE(get(acc, "output"));
  EXPECT_TRUE(
      log.contains("custom_runner: output | Stats: mean=nan, std-dev=0, var=0, median=0, "
                   "min=0 at 0, max=0 at 0, avg-magnitude=nan, p90=inf, p95=inf, p99=inf"))
      << log.text();
}

TEST(SimpleCompare, CheckErrorStat) {
  for (double base : {0.0, 1.0})
    for (ErrorStat stat :
         {ErrorStat::kMax, ErrorStat::kMedian, ErrorStat::kMean, ErrorStat::kElemwise}) {
      Tensor a = filled(DataType::kFloat32, {100}, base),
             b = filled(DataType::kFloat32, {100}, base);
      a.data<float>()[0] += 100;
      SimpleCompareOptions options;
      options.check_error_stat = stat;
      options.atol = 1.0;
      bool strict = stat == ErrorStat::kMax || stat == ErrorStat::kElemwise;
      EXPECT_EQ(bool(compare(a, b, options)), !strict) << error_stat_name(stat);
    }
}

TEST(SimpleCompare, EitherToleranceSuffices) {
  for (ErrorStat stat :
       {ErrorStat::kMax, ErrorStat::kMedian, ErrorStat::kMean, ErrorStat::kElemwise}) {
    Tensor a = vec<float>({1, 2}), b = vec<float>({1.25, 2.5});
    SimpleCompareOptions options;
    options.check_error_stat = stat;
    EXPECT_FALSE(compare(a, b, options));
    options.rtol = 0.25;
    EXPECT_TRUE(compare(a, b, options));
    options.rtol = 1e-5;
    options.atol = 0.5;
    EXPECT_TRUE(compare(a, b, options));
  }
}

TEST(SimpleCompare, ElementsMayPassByDifferentTolerances) {
  Tensor a = vec<float>({0, 1, 2, 3}), b = vec<float>({0.15f, 1.25f, 2.5f, 3.75f});
  EXPECT_FALSE(compare(a, b));
  SimpleCompareOptions options;
  options.atol = 0.3;
  EXPECT_FALSE(compare(a, b, options));
  options.atol = 1e-5;
  options.rtol = 0.25;
  EXPECT_FALSE(compare(a, b, options));
  options.atol = 0.3;
  EXPECT_TRUE(compare(a, b, options));
}

TEST(SimpleCompare, PerOutputErrorStat) {
  std::vector<std::map<std::string, ErrorStat>> choices = {
      {{"output0", ErrorStat::kMean}, {"output1", ErrorStat::kMax}},
      {{"", ErrorStat::kMean}, {"output1", ErrorStat::kElemwise}},
      {{"output0", ErrorStat::kMean}},
      {{"", ErrorStat::kMean}},
  };
  IterationResult r0 =
      result({{"output0", vec<float>({0, 1, 2, 3})}, {"output1", vec<float>({0, 1, 2, 3})}});
  IterationResult r1 = result({{"output0", vec<float>({0.15f, 1.25f, 2.5f, 3.75f})},
                               {"output1", vec<float>({0, 1, 2, 3})}});
  LogCapture quiet;
  SimpleCompareOptions options;
  options.atol = 0.4125;
  EXPECT_FALSE(get(compare_func::simple(options)(r0, r1), "output0"));
  for (const auto& choice : choices) {
    options.check_error_stat.values = choice;
    auto acc = compare_func::simple(options)(r0, r1);
    EXPECT_TRUE(get(acc, "output0"));
    EXPECT_TRUE(get(acc, "output1"));
  }
}

TEST(SimpleCompare, InvalidErrorStat) {
  try {
    error_stat_from_name("invalid-stat");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "Invalid choice for check_error_stat: invalid-stat.\nNote: Valid choices are: "
                 "['max', 'mean', 'median', 'elemwise', 'quantile']");
  }
  EXPECT_EQ(error_stat_from_name("quantile"), ErrorStat::kQuantile);
}

TEST(SimpleCompare, NansAlwaysFail) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (ErrorStat stat : {ErrorStat::kMax, ErrorStat::kMedian, ErrorStat::kMean,
                         ErrorStat::kElemwise, ErrorStat::kQuantile}) {
    SimpleCompareOptions options;
    options.check_error_stat = stat;
    EXPECT_FALSE(compare(vec<float>({nan}), vec<float>({0.15f}), options));
    EXPECT_FALSE(compare(vec<float>({0.15f}), vec<float>({nan}), options));
    EXPECT_FALSE(compare(vec<float>({nan}), vec<float>({nan}), options));
  }
}

TEST(SimpleCompare, InfinitiesCompareEqualOnlyOnRequest) {
  const float inf = std::numeric_limits<float>::infinity();
  for (bool flag : {false, true})
    for (float v : {inf, -inf}) {
      SimpleCompareOptions options;
      options.infinities_compare_equal = flag;
      EXPECT_EQ(bool(compare(vec<float>({v}), vec<float>({v}), options)), flag);
      EXPECT_FALSE(compare(vec<float>({v}), vec<float>({-v}), options));
    }
}

TEST(SimpleCompare, DifferentShapesFail) {
  LogCapture log;
  auto acc = compare_func::simple()(single(filled(DataType::kFloat32, {2, 2}, 0)),
                                    single(filled(DataType::kFloat32, {4}, 0)));
  EXPECT_FALSE(get(acc, "output"));
  EXPECT_TRUE(
      log.contains("[E]     FAILED | Output: `output` | Will not compare outputs of "
                   "different shapes.\n        Note: Output shapes are (2, 2) and (4,)."))
      << log.text();
  SimpleCompareOptions options;
  options.check_shapes = false;
  EXPECT_TRUE(
      compare(filled(DataType::kFloat32, {2, 2}, 0), filled(DataType::kFloat32, {4}, 0), options));
}

TEST(SimpleCompare, MatchesOutputNames) {
  LogCapture log;
  Tensor t = vec<float>({1});
  // Case-insensitive substring.
  auto acc = compare_func::simple()(result({{"Output", t}}), result({{"output:0", t}}, "r1"));
  EXPECT_TRUE(get(acc, "Output"));
  EXPECT_TRUE(
      log.contains("Output names did not match exactly. Assuming r1 output: output:0 "
                   "corresponds to output: Output"));
  // Position, when nothing matches by name.
  acc = compare_func::simple()(result({{"a", t}, {"b", t}}), result({{"x", t}, {"y", t}}));
  EXPECT_EQ(acc.size(), 2u);
  // Nothing in common at all is an error.
  EXPECT_THROW(compare_func::simple()(result({{"a", t}}), result({})), Error);
  try {
    compare_func::simple()(result({{"a", t}}, "r0"), result({}, "r1"));
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "All outputs were skipped, no common outputs found! Note:\nr0 outputs: "
                 "['a']\nr1 outputs: []");
  }
}

TEST(SimpleCompare, FailFastStopsAtTheFirstMismatch) {
  IterationResult r0 = result({{"a", vec<float>({1})}, {"b", vec<float>({1})}});
  IterationResult r1 = result({{"a", vec<float>({2})}, {"b", vec<float>({1})}});
  SimpleCompareOptions options;
  options.fail_fast = true;
  LogCapture quiet;
  EXPECT_EQ(compare_func::simple(options)(r0, r1).size(), 1u);
  EXPECT_EQ(compare_func::simple()(r0, r1).size(), 2u);
}

TEST(SimpleCompare, VerboseDumpsOfMismatches) {
  LogCapture log(Severity::kSuperVerbose);
  compare_func::simple()(result({{"y", vec<float>({1, 2, 3})}}, "r0"),
                         result({{"y", vec<float>({1, 5, 3})}}, "r1"));
  EXPECT_TRUE(log.contains("[S]         Mismatched indices:\n            [[1]]\n")) << log.text();
  EXPECT_TRUE(
      log.contains("[X]         r0                                  | Mismatched values:\n"
                   "            [2.]\n"));
  EXPECT_TRUE(
      log.contains("[X]         r1                                  | Mismatched values:\n"
                   "            [5.]\n"));
  EXPECT_TRUE(
      log.contains("[S]     r0                                  | Output: y (dtype=float32, "
                   "shape=(3,)):\n            [1. 2. 3.]\n"));
}

TEST(IndicesCompare, IndexTolerance) {
  struct Case {
    std::vector<int32_t> a, b;
    Shape shape;
    PerOutput<int64_t> tol;
    bool expected;
  };
  PerOutput<int64_t> default_zero, named_zero;
  default_zero.values = {{"", 0}};
  named_zero.values = {{"output", 0}};
  std::vector<Case> cases = {
      {{0, 1, 2, 3}, {0, 1, 2, 3}, {4}, int64_t{0}, true},
      {{0, 1, 2, 3}, {0, 1, 2, 3}, {4}, default_zero, true},
      {{0, 1, 2, 3}, {0, 1, 2, 3}, {4}, named_zero, true},
      {{0, 1, 0, 1, 0, 1}, {0, 1, 0, 1, 0, 1}, {3, 2}, int64_t{0}, true},
      {{1, 0, 2, 3}, {0, 1, 2, 3}, {4}, int64_t{0}, false},
      {{1, 0, 2, 3}, {0, 1, 2, 3}, {4}, int64_t{1}, true},
      {{0, 1, 2, 3}, {0, 1, 3, 2}, {4}, int64_t{1}, true},
      {{1, 0, 2, 7}, {0, 1, 2, 3}, {4}, int64_t{0}, false},
      {{1, 0, 2, 7}, {0, 1, 2, 3}, {4}, int64_t{1}, true},
      {{2, 3, 4, 5, 6, 9}, {3, 2, 4, 5, 9, 6}, {2, 3}, int64_t{0}, false},
      {{2, 3, 4, 5, 6, 9}, {3, 2, 4, 5, 9, 6}, {2, 3}, int64_t{1}, true},
      {{0, 1, 2, 3, 4, 5, 6}, {0, 3, 2, 1, 4, 5, 6}, {7}, int64_t{0}, false},
      {{0, 1, 2, 3, 4, 5, 6}, {0, 3, 2, 1, 4, 5, 6}, {7}, int64_t{2}, true},
  };
  LogCapture quiet;
  for (const Case& c : cases) {
    IndicesCompareOptions options;
    options.index_tolerance = c.tol;
    auto acc = compare_func::indices(options)(single(Tensor::from_vector<int32_t>(c.shape, c.a)),
                                              single(Tensor::from_vector<int32_t>(c.shape, c.b)));
    EXPECT_EQ(bool(get(acc, "output")), c.expected);
  }
}

}  // namespace
}  // namespace parity
