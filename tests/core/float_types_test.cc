#include "core/float_types.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "support/test_util.h"

namespace parity {
namespace {

using testing::run_python;
using testing::TempDir;

template <typename T>
std::vector<T> read_raw(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  size_t n = static_cast<size_t>(f.tellg()) / sizeof(T);
  std::vector<T> v(n);
  f.seekg(0);
  f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * sizeof(T)));
  return v;
}

// ---------------------------------------------------------------------------------------
// An independent oracle: a format described by its bit layout, its values enumerated from the
// definition (sign, exponent, mantissa), and rounding done by comparing distances to the two
// neighbouring values. It shares no code with float_types.cc.

struct Spec {
  int exp_bits, mant_bits, bias;
  uint32_t max_finite;  // magnitude bits of the largest finite value
  bool has_inf;         // IEEE-like: max_finite + 1 is infinity
  bool fnuz;            // NaN is 0x80 (the would-be -0), no negative zero
};

double value_of(uint32_t mag, const Spec& s) {
  uint32_t e = mag >> s.mant_bits, m = mag & ((1u << s.mant_bits) - 1);
  double frac = static_cast<double>(m) / static_cast<double>(1u << s.mant_bits);
  if (e == 0) return std::ldexp(frac, 1 - s.bias);
  return std::ldexp(1.0 + frac, static_cast<int>(e) - s.bias);
}

struct Oracle {
  Spec spec;
  std::vector<double> values;  // values[i] is the value of magnitude bits i, 0..max_finite
  explicit Oracle(Spec s) : spec(s) {
    for (uint32_t m = 0; m <= s.max_finite; ++m) values.push_back(value_of(m, s));
  }
  uint32_t sign_bit() const { return 1u << (spec.exp_bits + spec.mant_bits); }

  // Magnitude bits of |x| rounded to nearest even; max_finite + 1 stands for "overflowed".
  uint32_t round(double x) const {
    x = std::fabs(x);
    // The next value past the largest finite one, as if the exponent range went on.
    double max = values.back();
    double beyond = max + (max - values[values.size() - 2]);
    if (x >= beyond) return spec.max_finite + 1;
    auto it = std::upper_bound(values.begin(), values.end(), x);
    uint32_t hi = static_cast<uint32_t>(it - values.begin());  // first value > x
    uint32_t lo = hi - 1;
    if (values[lo] == x) return lo;
    double vhi = hi <= spec.max_finite ? values[hi] : beyond;
    double dlo = x - values[lo], dhi = vhi - x;
    if (dlo < dhi) return lo;
    if (dhi < dlo) return hi;
    return (lo & 1) ? hi : lo;  // tie: the even mantissa
  }

  // The whole conversion, following ONNX Cast-19's tables.
  uint32_t convert(double x, bool saturate) const {
    uint32_t sign = std::signbit(x) ? sign_bit() : 0;
    uint32_t nan = spec.fnuz ? 0x80 : (sign | (spec.has_inf ? 0x7F : spec.max_finite + 1));
    if (spec.exp_bits + spec.mant_bits == 15) nan = sign | 0x7E00;  // float16 quiet NaN
    if (std::isnan(x)) return nan;
    uint32_t m = std::isinf(x) ? spec.max_finite + 1 : round(x);
    if (m > spec.max_finite) {
      if (saturate) return sign | spec.max_finite;
      return spec.has_inf ? (sign | (spec.max_finite + 1)) : nan;
    }
    if (m == 0 && spec.fnuz) return 0;
    return sign | m;
  }
};

const Spec kHalfSpec{5, 10, 15, 0x7BFF, true, false};
const Spec kBF16Spec{8, 7, 127, 0x7F7F, true, false};
const Spec kE4M3FNSpec{4, 3, 7, 0x7E, false, false};
const Spec kE4M3FNUZSpec{4, 3, 8, 0x7F, false, true};
const Spec kE5M2Spec{5, 2, 15, 0x7B, true, false};
const Spec kE5M2FNUZSpec{5, 2, 16, 0x7F, false, true};

// Inputs that probe every rounding decision of a format: each value, the midpoints between
// neighbours (ties), and the doubles and floats just either side of each midpoint, plus the
// same around the overflow threshold; all with both signs.
std::vector<double> probes(const Oracle& o) {
  std::vector<double> xs;
  auto add = [&](double x) {
    for (double v : {x, std::nextafter(x, 0.0), std::nextafter(x, INFINITY)}) {
      xs.push_back(v);
      xs.push_back(-v);
      float f = static_cast<float>(v);
      xs.push_back(std::nextafter(f, 0.0f));
      xs.push_back(std::nextafter(f, INFINITY));
    }
  };
  const auto& v = o.values;
  for (size_t i = 0; i < v.size(); ++i) {
    add(v[i]);
    if (i + 1 < v.size()) add((v[i] + v[i + 1]) / 2);
  }
  double beyond = v.back() + (v.back() - v[v.size() - 2]);
  add((v.back() + beyond) / 2);
  add(beyond);
  add(beyond * 4);
  add(v[1] / 2);  // half the smallest subnormal: ties to zero
  add(v[1] / 4);
  for (double x : {0.0, 1e300, 1e-300, 5e-324, double(INFINITY), double(NAN)}) add(x);
  return xs;
}

template <typename F8>
void check_float8(const Spec& spec) {
  Oracle o(spec);
  for (double x : probes(o)) {
    for (bool sat : {true, false}) {
      uint32_t want = o.convert(x, sat);
      EXPECT_EQ(F8::from_double(x, sat).bits, want) << fmt::format("x={:a} saturate={}", x, sat);
      if (static_cast<double>(static_cast<float>(x)) == x || std::isnan(x)) {
        EXPECT_EQ(F8::from_float(static_cast<float>(x), sat).bits, want)
            << fmt::format("x={:a} saturate={}", x, sat);
      }
    }
  }
  // to_float is exact, and every pattern survives the round trip.
  for (uint32_t b = 0; b < 256; ++b) {
    F8 v{static_cast<uint8_t>(b)};
    float f = v.to_float();
    uint32_t mag = b & 0x7F;
    bool is_nan = spec.fnuz ? b == 0x80 : mag > spec.max_finite + (spec.has_inf ? 1 : 0);
    if (is_nan) {
      EXPECT_TRUE(std::isnan(f)) << b;
      EXPECT_TRUE(std::isnan(F8::from_float(f).to_float()));
      continue;
    }
    if (spec.has_inf && mag == spec.max_finite + 1) {
      EXPECT_TRUE(std::isinf(f)) << b;
    } else {
      double want = value_of(mag, spec) * ((b & 0x80) ? -1 : 1);
      EXPECT_EQ(static_cast<double>(f), want) << b;
    }
    EXPECT_EQ(F8::from_float(f, false).bits, b) << b;
  }
}

TEST(Float8, E4M3FNMatchesTheOnnxTables) { check_float8<float8e4m3fn>(kE4M3FNSpec); }
TEST(Float8, E4M3FNUZMatchesTheOnnxTables) { check_float8<float8e4m3fnuz>(kE4M3FNUZSpec); }
TEST(Float8, E5M2MatchesTheOnnxTables) { check_float8<float8e5m2>(kE5M2Spec); }
TEST(Float8, E5M2FNUZMatchesTheOnnxTables) { check_float8<float8e5m2fnuz>(kE5M2FNUZSpec); }

// The constants the ONNX float8 documentation states for each type.
TEST(Float8, StatedLimitsAndSpecialCodes) {
  EXPECT_EQ(float8e4m3fn{0x7E}.to_float(), 448.0f);
  EXPECT_EQ(float8e4m3fnuz{0x7F}.to_float(), 240.0f);
  EXPECT_EQ(float8e5m2{0x7B}.to_float(), 57344.0f);
  EXPECT_EQ(float8e5m2fnuz{0x7F}.to_float(), 57344.0f);
  EXPECT_EQ(float8e4m3fn{0x01}.to_float(), std::ldexp(1.0f, -9));
  EXPECT_EQ(float8e4m3fnuz{0x01}.to_float(), std::ldexp(1.0f, -10));
  EXPECT_EQ(float8e5m2{0x01}.to_float(), std::ldexp(1.0f, -16));
  EXPECT_EQ(float8e5m2fnuz{0x01}.to_float(), std::ldexp(1.0f, -17));
  EXPECT_EQ(float8e4m3fn::from_float(NAN).bits, 0x7F);
  EXPECT_EQ(float8e4m3fn::from_float(-NAN).bits, 0xFF);
  EXPECT_EQ(float8e4m3fnuz::from_float(-NAN).bits, 0x80);
  EXPECT_EQ(float8e5m2fnuz::from_float(NAN).bits, 0x80);
  EXPECT_EQ(float8e5m2::from_float(INFINITY, false).bits, 0x7C);
  EXPECT_EQ(float8e5m2::from_float(-INFINITY, true).bits, 0xFB);
  EXPECT_EQ(float8e4m3fn::from_float(INFINITY, false).bits, 0x7F);
  EXPECT_EQ(float8e4m3fnuz::from_float(-0.0f).bits, 0x00);
  EXPECT_EQ(float8e4m3fn::from_float(-0.0f).bits, 0x80);
  // 464 is halfway between 448 and 480 (not finite): it ties to the even 448 even without
  // saturation, while anything above overflows.
  EXPECT_EQ(float8e4m3fn::from_float(464.0f, false).bits, 0x7E);
  EXPECT_EQ(float8e4m3fn::from_float(464.5f, false).bits, 0x7F);
  EXPECT_EQ(float8e5m2::from_float(61440.0f, false).bits, 0x7C);  // ties up to 65536: inf
}

// ---------------------------------------------------------------------------------------
// float16 and bfloat16

TEST(Float16, EveryPatternRoundTrips) {
  for (uint32_t b = 0; b < 65536; ++b) {
    float16 h = float16::from_bits(static_cast<uint16_t>(b));
    float f = h.to_float();
    if ((b & 0x7C00) == 0x7C00 && (b & 0x03FF)) {  // NaN: quiet, same sign
      ASSERT_TRUE(std::isnan(f)) << b;
      uint16_t back = float16::from_float(f).bits;
      EXPECT_EQ(back & 0x8000, b & 0x8000);
      EXPECT_EQ(back & 0x7E00, 0x7E00) << b;
      continue;
    }
    ASSERT_EQ(float16::from_float(f).bits, b) << b;
    ASSERT_EQ(float16::from_double(f).bits, b) << b;
    if ((b & 0x7C00) != 0x7C00) {
      double want = value_of(b & 0x7FFF, kHalfSpec) * ((b & 0x8000) ? -1 : 1);
      ASSERT_EQ(static_cast<double>(f), want) << b;
    }
  }
}

// The bulk conversion gives to_float's bits for every pattern (runs of odd lengths, so that the
// vector loops' tails are used too).
TEST(Float16, BulkConversionMatchesToFloatForEveryPattern) {
  std::vector<float16> all(65536);
  for (uint32_t b = 0; b < 65536; ++b) all[b] = float16::from_bits(static_cast<uint16_t>(b));
  std::vector<float> got(all.size());
  for (size_t at = 0; at < all.size(); at += 1021)
    float16_to_float(all.data() + at, static_cast<int64_t>(std::min<size_t>(1021, all.size() - at)),
                     got.data() + at);
  for (uint32_t b = 0; b < 65536; ++b)
    ASSERT_EQ(std::bit_cast<uint32_t>(got[b]), std::bit_cast<uint32_t>(all[b].to_float())) << b;
}

TEST(BFloat16, EveryPatternRoundTrips) {
  for (uint32_t b = 0; b < 65536; ++b) {
    bfloat16 h = bfloat16::from_bits(static_cast<uint16_t>(b));
    float f = h.to_float();
    if (std::isnan(f)) {
      EXPECT_EQ(bfloat16::from_float(f).bits & 0x8000, b & 0x8000);
      EXPECT_TRUE(std::isnan(bfloat16::from_double(f).to_float()));
      continue;
    }
    ASSERT_EQ(bfloat16::from_float(f).bits, b) << b;
    ASSERT_EQ(bfloat16::from_double(f).bits, b) << b;
  }
}

TEST(Float16, ProbesMatchTheOracle) {
  Oracle o(kHalfSpec);
  for (double x : probes(o)) ASSERT_EQ(float16::from_double(x).bits, o.convert(x, false)) << x;
}

TEST(BFloat16, RoundsToNearestEvenFromTheBitDefinition) {
  Oracle o(kBF16Spec);
  // Every upper half with lower halves at and around the tie, and random ones.
  std::mt19937 rng(7);
  for (uint32_t hi = 0; hi < 65536; ++hi) {
    auto random_lo = static_cast<uint32_t>(rng() & 0xFFFFu);
    for (uint32_t lo : {0u, 1u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu, random_lo}) {
      float f = std::bit_cast<float>((hi << 16) | lo);
      if (std::isnan(f)) {
        uint16_t r = bfloat16::from_float(f).bits;
        ASSERT_TRUE((r & 0x7F80) == 0x7F80 && (r & 0x7F) && (r & 0x8000) == (hi & 0x8000));
        continue;
      }
      ASSERT_EQ(bfloat16::from_float(f).bits, o.convert(f, false)) << fmt::format("{:a}", f);
    }
  }
  for (double x : probes(o)) {
    if (std::isnan(x)) continue;
    ASSERT_EQ(bfloat16::from_double(x).bits, o.convert(x, false)) << fmt::format("{:a}", x);
  }
}

// Compares float16 rounding with NumPy's astype(np.float16) on values NumPy itself produces:
// every tie and its neighbours, subnormals, overflow, and random bit patterns, from float32
// and from float64 (where a double just past a tie must not be rounded twice).
TEST(Float16, MatchesNumpyAstype) {
  TempDir dir;
  auto r = run_python(fmt::format(R"(
import numpy as np
d = '{}'
rng = np.random.default_rng(20240601)
h = np.arange(0x7C00, dtype=np.uint16).view(np.float16).astype(np.float64)
mid = (h[:-1] + h[1:]) / 2
big = np.array([65504.0, 65519.0, 65520.0, 65536.0, 1e10, 2.0**-25, 2.0**-26, 3 * 2.0**-26,
                np.inf, np.nan, 1e-30, 5e-324, 1e300])
base64 = np.concatenate([h, mid, big])
x64 = np.concatenate([base64, np.nextafter(base64, np.inf), np.nextafter(base64, 0),
                      rng.uniform(-70000, 70000, 100000),
                      rng.integers(0, 2**64, 100000, dtype=np.uint64).view(np.float64)])
x64 = np.concatenate([x64, -x64])
x32 = np.concatenate([base64.astype(np.float32),
                      np.nextafter(base64.astype(np.float32), np.float32(np.inf)),
                      np.nextafter(base64.astype(np.float32), np.float32(0)),
                      rng.integers(0, 2**32, 200000, dtype=np.uint64)
                         .astype(np.uint32).view(np.float32)])
x32 = np.concatenate([x32, -x32])
with np.errstate(all='ignore'):
    x64.tofile(d + '/x64'); x64.astype(np.float16).tofile(d + '/h64')
    x32.tofile(d + '/x32'); x32.astype(np.float16).tofile(d + '/h32')
)",
                                  dir.path().string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto x64 = read_raw<double>(dir.file("x64"));
  auto h64 = read_raw<uint16_t>(dir.file("h64"));
  auto x32 = read_raw<float>(dir.file("x32"));
  auto h32 = read_raw<uint16_t>(dir.file("h32"));
  ASSERT_EQ(x64.size(), h64.size());
  ASSERT_EQ(x32.size(), h32.size());
  ASSERT_GT(x64.size(), 400000u);
  auto same = [](uint16_t a, uint16_t b) {
    bool nan_a = (a & 0x7C00) == 0x7C00 && (a & 0x3FF);
    bool nan_b = (b & 0x7C00) == 0x7C00 && (b & 0x3FF);
    if (nan_a || nan_b) return nan_a && nan_b && (a & 0x8000) == (b & 0x8000);
    return a == b;
  };
  size_t bad = 0;
  for (size_t i = 0; i < x64.size(); ++i) {
    uint16_t got = float16::from_double(x64[i]).bits;
    if (!same(got, h64[i]) && ++bad <= 10)
      ADD_FAILURE() << fmt::format("double {:a}: got {:#06x}, numpy {:#06x}", x64[i], got, h64[i]);
  }
  for (size_t i = 0; i < x32.size(); ++i) {
    uint16_t got = float16::from_float(x32[i]).bits;
    if (!same(got, h32[i]) && ++bad <= 20)
      ADD_FAILURE() << fmt::format("float {:a}: got {:#06x}, numpy {:#06x}", x32[i], got, h32[i]);
  }
  EXPECT_EQ(bad, 0u);
}

// NumPy's exact widening of every float16 pattern.
TEST(Float16, ToFloatMatchesNumpy) {
  TempDir dir;
  auto r = run_python(fmt::format(R"(
import numpy as np
np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32).tofile('{}')
)",
                                  dir.file("f")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto f = read_raw<float>(dir.file("f"));
  ASSERT_EQ(f.size(), 65536u);
  for (uint32_t b = 0; b < 65536; ++b) {
    float got = float16::from_bits(static_cast<uint16_t>(b)).to_float();
    if (std::isnan(f[b])) {
      EXPECT_TRUE(std::isnan(got)) << b;
      EXPECT_EQ(std::signbit(got), std::signbit(f[b])) << b;
    } else {
      EXPECT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(f[b])) << b;
    }
  }
}

// ---------------------------------------------------------------------------------------
// int4 / uint4

TEST(Int4, LowNibbleFirstAndClamped) {
  uint8_t buf[3] = {0, 0, 0xFF};
  int4_set(buf, 0, 3);
  int4_set(buf, 1, -2);
  EXPECT_EQ(buf[0], 0xE3);  // element 0 in the low nibble, -2 = 0xE in the high one
  int4_set(buf, 2, 100);
  int4_set(buf, 3, -100);
  EXPECT_EQ(int4_get(buf, 2), 7);
  EXPECT_EQ(int4_get(buf, 3), -8);
  EXPECT_EQ(int4_get(buf, 0), 3);
  EXPECT_EQ(int4_get(buf, 1), -2);
  EXPECT_EQ(uint4_get(buf, 4), 15);  // untouched byte
  uint4_set(buf, 4, 200);
  uint4_set(buf, 5, 9);
  EXPECT_EQ(buf[2], 0x9F);
  for (int v = -8; v <= 7; ++v) {
    int4_set(buf, 1, static_cast<int8_t>(v));
    EXPECT_EQ(int4_get(buf, 1), v);
    EXPECT_EQ(int4_get(buf, 0), 3);  // the neighbour is kept
  }
  for (int v = 0; v <= 15; ++v) {
    uint4_set(buf, 5, static_cast<uint8_t>(v));
    EXPECT_EQ(uint4_get(buf, 5), v);
    EXPECT_EQ(uint4_get(buf, 4), 15);
  }
}

}  // namespace
}  // namespace parity
