#include "core/mx_types.h"

#include <cmath>
#include <limits>

namespace parity {

bool dtype_is_4bit(DataType t) {
  return t == DataType::kInt4 || t == DataType::kUInt4 || t == kDtypeFloat4E2M1;
}

float8e8m0 float8e8m0::from_double(double d, bool saturate, E8M0Rounding mode) {
  if (std::isnan(d) || std::isinf(d)) return from_bits(0xFF);
  const double a = std::fabs(d);
  if (a == 0) return from_bits(0);
  int e = 0;
  const double f = std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1): exact
  // a = (2f) * 2^(e-1) with 2f in [1, 2): the power at or below is 2^(e-1).
  int64_t p = e - 1;
  const bool exact = f == 0.5;
  if (!exact) {
    if (mode == E8M0Rounding::kUp || (mode == E8M0Rounding::kNearest && f >= 0.75)) ++p;
  }
  const int64_t code = p + 127;
  if (code < 0) return from_bits(0);  // below 2^-127: the smallest value
  if (code > 254) return from_bits(saturate ? 0xFE : 0xFF);
  return from_bits(static_cast<uint8_t>(code));
}

float float8e8m0::to_float() const {
  if (bits == 0xFF) return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, static_cast<int>(bits) - 127);
}

uint8_t float4e2m1_from_double(double d) {
  if (std::isnan(d)) return 0x7;
  const uint8_t sign = std::signbit(d) ? 0x8 : 0x0;
  const double a = std::fabs(d);
  // Codes 0..7 hold 0, 0.5, 1, 1.5, 2, 3, 4, 6; between two neighbours the nearer wins, a
  // tie goes to the even code.
  static constexpr double kValues[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  if (a >= 6) return sign | 0x7;
  uint8_t code = 0;
  while (code < 7 && kValues[code + 1] <= a) ++code;
  if (code < 7 && a > kValues[code]) {
    const double mid = (kValues[code] + kValues[code + 1]) / 2;  // exact in double
    if (a > mid || (a == mid && code % 2 == 1)) ++code;
  }
  return sign | code;
}

double float4e2m1_to_double(uint8_t code) {
  static constexpr double kValues[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  const double v = kValues[code & 0x7];
  return (code & 0x8) ? -v : v;
}

float float4e2m1_get(const uint8_t* packed, size_t index) {
  return static_cast<float>(float4e2m1_to_double(uint4_get(packed, index)));
}

void float4e2m1_set(uint8_t* packed, size_t index, double value) {
  uint4_set(packed, index, float4e2m1_from_double(value));
}

}  // namespace parity
