#include "core/float_types.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace parity {

namespace {

// How one narrow floating format encodes numbers. Every format here stores sign, exponent and
// mantissa in that order; they differ in widths, bias, and what the top codes mean.
struct Format {
  int mant_bits;        // stored mantissa bits
  int bias;             // exponent bias
  uint32_t max_finite;  // the magnitude bits of the largest finite value
  uint32_t sign_bit;
};

constexpr Format kHalf{10, 15, 0x7BFF, 0x8000};
constexpr Format kBFloat{7, 127, 0x7F7F, 0x8000};
constexpr Format kE4M3FN{3, 7, 0x7E, 0x80};     // 0x7F is NaN, no infinity
constexpr Format kE4M3FNUZ{3, 8, 0x7F, 0x80};   // 0x80 is NaN, no -0, no infinity
constexpr Format kE5M2{2, 15, 0x7B, 0x80};      // 0x7C is infinity, above is NaN
constexpr Format kE5M2FNUZ{2, 16, 0x7F, 0x80};  // 0x80 is NaN, no -0, no infinity

// Rounds |d| (finite, not negative) to nearest even in format `f` and returns the magnitude
// bits; a result above f.max_finite means the rounded value overflows. Rounding happens once,
// on the exact value of the double, so converting from float (exactly widened) is also exact.
uint64_t round_magnitude(double d, const Format& f) {
  uint64_t bits = std::bit_cast<uint64_t>(d) & 0x7FFFFFFFFFFFFFFFull;
  if (bits == 0) return 0;
  int biased = static_cast<int>(bits >> 52);
  uint64_t sig = bits & 0xFFFFFFFFFFFFFull;
  int exp2;  // value = sig * 2^exp2
  if (biased == 0) {
    exp2 = -1074;
  } else {
    sig |= 1ull << 52;
    exp2 = biased - 1075;
  }
  // The unbiased exponent of the value, from the position of its leading bit.
  int lead = 63 - std::countl_zero(sig);
  int e = exp2 + lead;
  const int emin = 1 - f.bias;
  const int emax_overflow = static_cast<int>(f.max_finite >> f.mant_bits) - f.bias + 2;
  if (e >= emax_overflow) return uint64_t{f.max_finite} + 1;  // far beyond the range
  // Units of the result: 2^(max(e, emin) - mant_bits). Drop the bits below one unit.
  int eq = std::max(e, emin);
  int shift = (eq - f.mant_bits) - exp2;
  uint64_t q;
  if (shift <= 0) {
    q = sig << -shift;  // exact (never happens for these formats, kept for completeness)
  } else if (shift >= 64) {
    q = 0;  // below half the smallest subnormal
  } else {
    q = sig >> shift;
    uint64_t rem = sig & ((1ull << shift) - 1);
    uint64_t half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
  }
  // q is the mantissa with its implicit bit (subnormals: without), so adding it to the
  // exponent field below the implicit bit's place both encodes it and carries a rounding
  // overflow into the exponent.
  return (static_cast<uint64_t>(eq + f.bias - 1) << f.mant_bits) + q;
}

// Exact value of finite magnitude bits `m` of format `f`.
float decode_magnitude(uint32_t m, const Format& f) {
  uint32_t e = m >> f.mant_bits;
  uint32_t mant = m & ((1u << f.mant_bits) - 1);
  if (e == 0) return std::ldexp(static_cast<float>(mant), 1 - f.bias - f.mant_bits);
  // Normal numbers of every format here are normal floats too: build the bits directly.
  uint32_t fe = e - static_cast<uint32_t>(f.bias) + 127;
  return std::bit_cast<float>((fe << 23) | (mant << (23 - f.mant_bits)));
}

uint64_t double_payload(double d) { return std::bit_cast<uint64_t>(d) & 0xFFFFFFFFFFFFFull; }
bool sign_of(double d) { return std::signbit(d); }

// IEEE-style 16-bit formats (float16, bfloat16): infinity exists, overflow gives infinity,
// NaN stays a quiet NaN with its sign and the top bits of its payload.
uint16_t ieee16_from_double(double d, const Format& f) {
  uint32_t sign = sign_of(d) ? f.sign_bit : 0;
  uint32_t inf = f.max_finite + 1;
  if (std::isnan(d)) {
    uint32_t quiet = 1u << (f.mant_bits - 1);
    uint32_t payload = static_cast<uint32_t>(double_payload(d) >> (52 - f.mant_bits));
    return static_cast<uint16_t>(sign | inf | quiet | payload);
  }
  if (std::isinf(d)) return static_cast<uint16_t>(sign | inf);
  uint64_t m = round_magnitude(d, f);
  if (m > f.max_finite) m = inf;
  return static_cast<uint16_t>(sign | m);
}

float ieee16_to_float(uint16_t bits, const Format& f) {
  uint32_t m = bits & (f.sign_bit - 1);
  bool neg = bits & f.sign_bit;
  float v;
  if (m > f.max_finite) {
    if (m == f.max_finite + 1) {
      v = INFINITY;
    } else {
      // NaN: keep the payload, as a widening conversion does.
      uint32_t payload = m & ((1u << f.mant_bits) - 1);
      v = std::bit_cast<float>(0x7F800000u | (payload << (23 - f.mant_bits)) | 0x00400000u);
    }
  } else {
    v = decode_magnitude(m, f);
  }
  return neg ? -v : v;
}

// The float8 formats, following ONNX Cast-19's two tables.
enum class F8Kind { kFN, kFNUZ, kIEEE };

uint8_t f8_from_double(double d, const Format& f, F8Kind kind, bool saturate) {
  bool neg = sign_of(d);
  uint8_t sign = neg ? static_cast<uint8_t>(f.sign_bit) : 0;
  // NaN codes: S.1111.111 for E4M3FN, S.11111.11 for E5M2, 0x80 for the FNUZ types.
  auto nan = [&]() -> uint8_t {
    if (kind == F8Kind::kFNUZ) return 0x80;
    return static_cast<uint8_t>(sign | 0x7F);
  };
  auto overflow = [&]() -> uint8_t {
    if (saturate) return static_cast<uint8_t>(sign | f.max_finite);
    if (kind == F8Kind::kIEEE) return static_cast<uint8_t>(sign | (f.max_finite + 1));
    return nan();
  };
  if (std::isnan(d)) return nan();
  if (std::isinf(d)) return overflow();
  uint64_t m = round_magnitude(d, f);
  if (m > f.max_finite) return overflow();
  if (m == 0 && kind == F8Kind::kFNUZ) return 0;  // no negative zero
  return static_cast<uint8_t>(sign | m);
}

float f8_to_float(uint8_t bits, const Format& f, F8Kind kind) {
  uint32_t m = bits & 0x7F;
  bool neg = bits & 0x80;
  switch (kind) {
    case F8Kind::kFNUZ:
      if (bits == 0x80) return NAN;
      break;
    case F8Kind::kFN:
      if (m == 0x7F) return neg ? -NAN : NAN;
      break;
    case F8Kind::kIEEE:
      if (m == f.max_finite + 1) return neg ? -INFINITY : INFINITY;
      if (m > f.max_finite + 1) return neg ? -NAN : NAN;
      break;
  }
  float v = decode_magnitude(m, f);
  return neg ? -v : v;
}

}  // namespace

float16 float16::from_float(float f) { return from_double(f); }
float16 float16::from_double(double d) { return float16{ieee16_from_double(d, kHalf)}; }
float float16::to_float() const { return ieee16_to_float(bits, kHalf); }

namespace {

// A normal half's exponent is rebiased (127 - 15) and its fraction moved up 13 bits; a subnormal
// is its fraction times 2^-24 (an integer conversion and an exact product); infinity and NaN
// keep exponent 255 and the payload, NaN made quiet, as ieee16_to_float.
__attribute__((always_inline)) inline float half_bits_to_float(uint16_t bits) {
  // Every candidate computed, one selected by masks (no control flow: the loop vectorises).
  const uint32_t h = bits, em = h & 0x7FFFu;
  const uint32_t normal = (em << 13) + ((127u - 15u) << 23);
  const uint32_t subnormal =
      std::bit_cast<uint32_t>(static_cast<float>(static_cast<int32_t>(em)) * 0x1p-24f);
  const uint32_t special = 0x7F800000u | (em << 13) | (static_cast<uint32_t>(em > 0x7C00u) << 22);
  const uint32_t is_subnormal = 0u - static_cast<uint32_t>(em < 0x0400u);
  const uint32_t is_special = 0u - static_cast<uint32_t>(em >= 0x7C00u);
  uint32_t u = (subnormal & is_subnormal) | (normal & ~is_subnormal);
  u = (special & is_special) | (u & ~is_special);
  return std::bit_cast<float>(u | ((h & 0x8000u) << 16));
}

}  // namespace

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void float16_to_float(
    const float16* in, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = half_bits_to_float(in[i].bits);
}

bfloat16 bfloat16::from_float(float f) {
  // The top half of a float is a bfloat16: round the bottom half away, to nearest even.
  uint32_t b = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return bfloat16{static_cast<uint16_t>((b >> 16) | 0x0040)};
  uint32_t lsb = (b >> 16) & 1;
  b += 0x7FFF + lsb;  // carries into the exponent, up to infinity, as rounding should
  return bfloat16{static_cast<uint16_t>(b >> 16)};
}
bfloat16 bfloat16::from_double(double d) { return bfloat16{ieee16_from_double(d, kBFloat)}; }
float bfloat16::to_float() const { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

float8e4m3fn float8e4m3fn::from_float(float f, bool saturate) { return from_double(f, saturate); }
float8e4m3fn float8e4m3fn::from_double(double d, bool saturate) {
  return {f8_from_double(d, kE4M3FN, F8Kind::kFN, saturate)};
}
float float8e4m3fn::to_float() const { return f8_to_float(bits, kE4M3FN, F8Kind::kFN); }

float8e4m3fnuz float8e4m3fnuz::from_float(float f, bool saturate) {
  return from_double(f, saturate);
}
float8e4m3fnuz float8e4m3fnuz::from_double(double d, bool saturate) {
  return {f8_from_double(d, kE4M3FNUZ, F8Kind::kFNUZ, saturate)};
}
float float8e4m3fnuz::to_float() const { return f8_to_float(bits, kE4M3FNUZ, F8Kind::kFNUZ); }

float8e5m2 float8e5m2::from_float(float f, bool saturate) { return from_double(f, saturate); }
float8e5m2 float8e5m2::from_double(double d, bool saturate) {
  return {f8_from_double(d, kE5M2, F8Kind::kIEEE, saturate)};
}
float float8e5m2::to_float() const { return f8_to_float(bits, kE5M2, F8Kind::kIEEE); }

float8e5m2fnuz float8e5m2fnuz::from_float(float f, bool saturate) {
  return from_double(f, saturate);
}
float8e5m2fnuz float8e5m2fnuz::from_double(double d, bool saturate) {
  return {f8_from_double(d, kE5M2FNUZ, F8Kind::kFNUZ, saturate)};
}
float float8e5m2fnuz::to_float() const { return f8_to_float(bits, kE5M2FNUZ, F8Kind::kFNUZ); }

int8_t int4_get(const uint8_t* packed, size_t index) {
  uint8_t nibble = (packed[index / 2] >> (4 * (index % 2))) & 0x0F;
  return static_cast<int8_t>(nibble >= 8 ? nibble - 16 : nibble);  // sign-extend
}

uint8_t uint4_get(const uint8_t* packed, size_t index) {
  return (packed[index / 2] >> (4 * (index % 2))) & 0x0F;
}

namespace {
void set_nibble(uint8_t* packed, size_t index, uint8_t nibble) {
  int shift = 4 * (index % 2);
  uint8_t& byte = packed[index / 2];
  byte = static_cast<uint8_t>((byte & ~(0x0F << shift)) | ((nibble & 0x0F) << shift));
}
}  // namespace

void int4_set(uint8_t* packed, size_t index, int8_t value) {
  int v = std::clamp<int>(value, -8, 7);
  set_nibble(packed, index, static_cast<uint8_t>(v & 0x0F));
}

void uint4_set(uint8_t* packed, size_t index, uint8_t value) {
  set_nibble(packed, index, std::min<uint8_t>(value, 15));
}

}  // namespace parity
