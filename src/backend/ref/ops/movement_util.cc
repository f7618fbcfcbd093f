#include "backend/ref/ops/movement_util.h"
#include "core/mx_types.h"

namespace parity::ref {

StridedLayout coalesce(const Shape& out, const Shape& strides) {
  StridedLayout l;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    // Dim d continues the previous one when stepping the previous dim once equals stepping
    // d through all its values.
    if (!l.sizes.empty() && l.strides.back() == strides[d] * out[d]) {
      l.sizes.back() *= out[d];
      l.strides.back() = strides[d];
      continue;
    }
    l.sizes.push_back(out[d]);
    l.strides.push_back(strides[d]);
  }
  return l;
}

Tensor strided_copy(const Tensor& x, int64_t base, const Shape& out, const Shape& strides) {
  return on_bytes(x, [&](const Tensor& b) {
    return dispatch_storage(b.dtype(), [&]<typename S>() {
      Tensor y = uninitialized_tensor(b.dtype(), out);
      strided_copy<S>(static_cast<const S*>(b.raw_data()), base, out, strides,
                      static_cast<S*>(y.raw_data()));
      return y;
    });
  });
}

bool is_4bit(DataType t) { return dtype_is_4bit(t); }

Tensor unpack_4bit(const Tensor& t) {
  const bool is_signed = t.dtype() == DataType::kInt4;
  Tensor u = uninitialized_tensor(is_signed ? DataType::kInt8 : DataType::kUInt8, t.shape());
  const auto* packed = static_cast<const uint8_t*>(t.raw_data());
  auto* dst = static_cast<uint8_t*>(u.raw_data());
  const size_t n = static_cast<size_t>(t.numel());
  for (size_t i = 0; i < n; ++i)
    dst[i] = is_signed ? static_cast<uint8_t>(int4_get(packed, i)) : uint4_get(packed, i);
  return u;
}

Tensor pack_4bit(const Tensor& t, DataType packed_type) {
  Tensor p(packed_type, t.shape());  // zero-filled, so an odd count leaves a clean high nibble
  auto* dst = static_cast<uint8_t*>(p.raw_data());
  const auto* src = static_cast<const uint8_t*>(t.raw_data());
  const size_t n = static_cast<size_t>(t.numel());
  for (size_t i = 0; i < n; ++i) {
    if (packed_type == DataType::kInt4)
      int4_set(dst, i, static_cast<int8_t>(src[i]));
    else  // uint4, and float4e2m1's 4-bit codes
      uint4_set(dst, i, src[i]);
  }
  return p;
}

std::vector<int64_t> read_indices(const Tensor& t, std::string_view what) {
  return dispatch<TypeList<int32_t, int64_t>>(
      t.dtype(),
      [&]<typename T>() {
        const T* p = t.data<T>();
        return std::vector<int64_t>(p, p + t.numel());
      },
      what);
}

}  // namespace parity::ref
