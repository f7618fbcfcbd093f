// The MX element types (core/mx_types.h) in the kernels' type lists: float4e2m1 has no C++
// element type, so it is a tag like Int4 (elementwise_util.h), packed two per byte; float8e8m0
// is a struct with its own rounding.
#pragma once

#include <type_traits>

#include "backend/ref/ops/elementwise_util.h"
#include "core/mx_types.h"

namespace parity::ref {
struct Float4E2M1 {};
}  // namespace parity::ref

namespace parity {
template <>
struct DTypeOf<ref::Float4E2M1> {
  static constexpr DataType value = kDtypeFloat4E2M1;
};
}  // namespace parity

namespace parity::ref {

// Int4, UInt4 and Float4E2M1: two elements per byte, element 2k in the low nibble.
template <typename T>
inline constexpr bool is_packed_v = is_4bit_v<T> || std::is_same_v<T, Float4E2M1>;

// Any element as double, float8e8m0 included (exact).
template <typename T>
inline double mx_value_as_double(const T& v) {
  if constexpr (std::is_same_v<T, float8e8m0>)
    return static_cast<double>(v.to_float());
  else
    return value_as_double(v);
}

// Element i of a buffer of T (the 4-bit tags and float8e8m0 included) as double.
template <typename T>
inline double mx_load_as_double(const void* data, size_t i) {
  if constexpr (std::is_same_v<T, Float4E2M1>)
    return float4e2m1_get(static_cast<const uint8_t*>(data), i);
  else if constexpr (std::is_same_v<T, float8e8m0>)
    return static_cast<const float8e8m0*>(data)[i].to_float();
  else
    return load_as_double<T>(data, i);
}

}  // namespace parity::ref
