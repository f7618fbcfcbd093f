// Narrow floating-point and 4-bit integer storage types. Each is a bit pattern with exact
// conversions: to float/double is exact; from float/double rounds to nearest even, with each
// type's rules for NaN, infinity, subnormals and saturation (see the ONNX Cast specification).
#pragma once

#include <cstddef>
#include <cstdint>

namespace parity {

struct float16 {
  uint16_t bits = 0;
  static float16 from_bits(uint16_t b) { return float16{b}; }
  static float16 from_float(float f);
  static float16 from_double(double d);  // rounds once from double (no double rounding)
  float to_float() const;
};

// float16::to_float of n values at once, in loops the compiler vectorises (no branch per value,
// no subnormal arithmetic): the same bits, NaN payloads included.
void float16_to_float(const float16* in, int64_t n, float* out);

struct bfloat16 {
  uint16_t bits = 0;
  static bfloat16 from_bits(uint16_t b) { return bfloat16{b}; }
  static bfloat16 from_float(float f);
  static bfloat16 from_double(double d);
  float to_float() const;
};

// The four float8 types. `saturate` follows ONNX Cast-19: when true, values beyond the
// largest finite value, infinities included, clamp to ±max for all four types; when false,
// they become infinity (E5M2) or NaN (the types without infinity).
struct float8e4m3fn {
  uint8_t bits = 0;
  static float8e4m3fn from_float(float f, bool saturate = true);
  static float8e4m3fn from_double(double d, bool saturate = true);
  float to_float() const;
};
struct float8e4m3fnuz {
  uint8_t bits = 0;
  static float8e4m3fnuz from_float(float f, bool saturate = true);
  static float8e4m3fnuz from_double(double d, bool saturate = true);
  float to_float() const;
};
struct float8e5m2 {
  uint8_t bits = 0;
  static float8e5m2 from_float(float f, bool saturate = true);
  static float8e5m2 from_double(double d, bool saturate = true);
  float to_float() const;
};
struct float8e5m2fnuz {
  uint8_t bits = 0;
  static float8e5m2fnuz from_float(float f, bool saturate = true);
  static float8e5m2fnuz from_double(double d, bool saturate = true);
  float to_float() const;
};

// 4-bit integers are stored two per byte, element 2k in the low nibble (ONNX's layout).
// These helpers read and write one element of such a packed buffer.
int8_t int4_get(const uint8_t* packed, size_t index);
uint8_t uint4_get(const uint8_t* packed, size_t index);
void int4_set(uint8_t* packed, size_t index, int8_t value);    // value clamped to [-8, 7]
void uint4_set(uint8_t* packed, size_t index, uint8_t value);  // value clamped to [0, 15]

}  // namespace parity
