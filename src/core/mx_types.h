// The OCP microscaling (MX) element types of ONNX: FLOAT4E2M1 (type 23, opset 23) and
// FLOAT8E8M0 (type 24, opset 24), with exact conversions. They are DataType values like every
// other (dtype_is_valid accepts them and dtype.cc's tables have their names, bits and kinds);
// their names are declared here, beside the enum of core/dtype.h, with the conversions they
// need.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/tensor.h"

namespace parity {

inline constexpr DataType kDtypeFloat4E2M1 = static_cast<DataType>(23);  // packed like int4
inline constexpr DataType kDtypeFloat8E8M0 = static_cast<DataType>(24);  // an exponent only

// int4, uint4 and float4e2m1: two elements per byte, element 2k in the low nibble.
bool dtype_is_4bit(DataType t);

// FLOAT8E8M0: a bare exponent, the value 2^(bits - 127); 0xFF is NaN. It has no sign, no zero
// and no infinity: a value converts by its magnitude, zero and everything below 2^-127 give
// the smallest code (2^-127), NaN and infinities give NaN. `mode` is Cast's `round_mode`
// (opset 25; opset 24 has no attribute and rounds up): up takes the next power of two at or
// above the magnitude, down the one at or below, nearest the closer one (ties up). A magnitude
// rounded past 2^127 gives 2^127 with `saturate`, else NaN.
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
template <>
struct DTypeOf<float8e8m0> {
  static constexpr DataType value = kDtypeFloat8E8M0;
};

// FLOAT4E2M1: one sign bit, two exponent bits (bias 1), one mantissa bit; the 16 codes are 0,
// 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives. No infinity and no NaN: a value rounds to
// nearest even and saturates at +-6 (infinities too); NaN becomes +6, as in ONNX's reference
// implementation.
uint8_t float4e2m1_from_double(double d);   // the 4-bit code
double float4e2m1_to_double(uint8_t code);  // exact; the code's low 4 bits
float float4e2m1_get(const uint8_t* packed, size_t index);
void float4e2m1_set(uint8_t* packed, size_t index, double value);  // rounded as above

}  // namespace parity
