#include "core/numeric.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/mx_types.h"

namespace parity {

namespace {

// Calls fn(const T* data) for the C++ element type of `t`; the 4-bit types are handled by
// callers.
template <typename Fn>
void visit_plain(DataType dtype, Fn&& fn) {
  if (dtype == kDtypeFloat8E8M0) return fn(float8e8m0{});
  switch (dtype) {
    case DataType::kFloat32:
      fn(float{});
      break;
    case DataType::kFloat64:
      fn(double{});
      break;
    case DataType::kFloat16:
      fn(float16{});
      break;
    case DataType::kBFloat16:
      fn(bfloat16{});
      break;
    case DataType::kFloat8E4M3FN:
      fn(float8e4m3fn{});
      break;
    case DataType::kFloat8E4M3FNUZ:
      fn(float8e4m3fnuz{});
      break;
    case DataType::kFloat8E5M2:
      fn(float8e5m2{});
      break;
    case DataType::kFloat8E5M2FNUZ:
      fn(float8e5m2fnuz{});
      break;
    case DataType::kInt8:
      fn(int8_t{});
      break;
    case DataType::kInt16:
      fn(int16_t{});
      break;
    case DataType::kInt32:
      fn(int32_t{});
      break;
    case DataType::kInt64:
      fn(int64_t{});
      break;
    case DataType::kUInt8:
      fn(uint8_t{});
      break;
    case DataType::kUInt16:
      fn(uint16_t{});
      break;
    case DataType::kUInt32:
      fn(uint32_t{});
      break;
    case DataType::kUInt64:
      fn(uint64_t{});
      break;
    case DataType::kBool:
      fn(bool{});
      break;
    default:
      fail(
          "failed to read elements of type {}: only numeric and bool types can be compared; "
          "string, complex and undefined types cannot",
          dtype_name(dtype));
  }
}

template <typename T>
double to_double(T v) {
  if constexpr (std::is_arithmetic_v<T>)
    return static_cast<double>(v);
  else
    return static_cast<double>(v.to_float());
}

template <typename T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;  // NaN is true, as in NumPy
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else if constexpr (std::is_integral_v<T>) {
    // NumPy leaves out-of-range and NaN conversions undefined; Parity saturates (NaN -> 0).
    if (std::isnan(v)) return T{0};
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest()))
      return std::numeric_limits<T>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<T>::max()))
      return std::numeric_limits<T>::max();
    return static_cast<T>(std::trunc(v));
  } else {
    return T::from_double(v);
  }
}

}  // namespace

bool dtype_is_numeric(DataType t) {
  return dtype_is_float(t) || dtype_is_integer(t) || t == DataType::kBool;
}

std::vector<double> tensor_to_doubles(const Tensor& t) {
  const size_t n = static_cast<size_t>(t.numel());
  std::vector<double> out(n);
  if (t.dtype() == DataType::kInt4 || t.dtype() == DataType::kUInt4) {
    const auto* packed = static_cast<const uint8_t*>(t.raw_data());
    for (size_t i = 0; i < n; ++i)
      out[i] = t.dtype() == DataType::kInt4 ? int4_get(packed, i) : uint4_get(packed, i);
    return out;
  }
  if (t.dtype() == kDtypeFloat4E2M1) {
    const auto* packed = static_cast<const uint8_t*>(t.raw_data());
    for (size_t i = 0; i < n; ++i) out[i] = float4e2m1_get(packed, i);
    return out;
  }
  visit_plain(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* data = static_cast<const T*>(t.raw_data());
    for (size_t i = 0; i < n; ++i) out[i] = to_double(data[i]);
  });
  return out;
}

Tensor cast_tensor(const Tensor& t, DataType dtype) {
  if (t.dtype() == dtype) return t.clone();
  std::vector<double> values = tensor_to_doubles(t);
  Tensor out(dtype, t.shape());
  if (dtype == DataType::kInt4 || dtype == DataType::kUInt4) {
    auto* packed = static_cast<uint8_t*>(out.raw_data());
    for (size_t i = 0; i < values.size(); ++i) {
      double v = std::isnan(values[i]) ? 0.0 : std::trunc(values[i]);
      if (dtype == DataType::kInt4)
        int4_set(packed, i, static_cast<int8_t>(std::clamp(v, -8.0, 7.0)));
      else
        uint4_set(packed, i, static_cast<uint8_t>(std::clamp(v, 0.0, 15.0)));
    }
    return out;
  }
  if (dtype == kDtypeFloat4E2M1) {
    auto* packed = static_cast<uint8_t*>(out.raw_data());
    for (size_t i = 0; i < values.size(); ++i) float4e2m1_set(packed, i, values[i]);
    return out;
  }
  visit_plain(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* data = static_cast<T*>(out.raw_data());
    for (size_t i = 0; i < values.size(); ++i) data[i] = from_double<T>(values[i]);
  });
  return out;
}

}  // namespace parity
