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

// FLOAT8E8M0 (opset 24): a bare exponent, the value 2^(bits - 127); 0xFF is NaN. It has no
// sign, no zero and no infinity: a value converts by its magnitude, zero and everything below
// 2^-127 give the smallest code (2^-127), NaN and infinities give NaN. `round_mode` is Cast's
// (opset 25; opset 24 has no attribute and means "up"): up takes the next power of two at or
// above the magnitude, down the one at or below, nearest the closer one (ties up). A
// magnitude rounded past 2^127 gives 2^127 with `saturate`, else NaN.
enum class E8M0Rounding { kUp, kDown, kNearest };
struct float8e8m0 {
  uint8_t bits = 0;
  static float8e8m0 from_bits(uint8_t b) { return float8e8m0{b}; }
  static float8e8m0 from_double(double d, bool saturate = true,
                                E8M0Rounding mode = E8M0Rounding::kUp);
  static float8e8m0 from_float(float f, bool saturate = true,
                               E8M0Rounding mode = E8M0Rounding::kUp) {
    return from_double(f, saturate, mode);
  }
  float to_float() const;  // exact: 2^-127 is a float subnormal
};

// FLOAT4E2M1 (opset 23): one sign bit, two exponent bits (bias 1), one mantissa bit; the 16
// codes are 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives. No infinity and no NaN: a value
// rounds to nearest even and saturates at +-6 (infinities too); NaN becomes +6, as in ONNX's
// reference implementation. Stored two per byte like int4 (element 2k in the low nibble).
uint8_t float4e2m1_from_double(double d);   // the 4-bit code
double float4e2m1_to_double(uint8_t code);  // exact; the code's low 4 bits
float float4e2m1_get(const uint8_t* packed, size_t index);
void float4e2m1_set(uint8_t* packed, size_t index, double value);  // rounded as above

// 4-bit integers are stored two per byte, element 2k in the low nibble (ONNX's layout).
// These helpers read and write one element of such a packed buffer.
int8_t int4_get(const uint8_t* packed, size_t index);
uint8_t uint4_get(const uint8_t* packed, size_t index);
void int4_set(uint8_t* packed, size_t index, int8_t value);    // value clamped to [-8, 7]
void uint4_set(uint8_t* packed, size_t index, uint8_t value);  // value clamped to [0, 15]

}  // namespace parity
