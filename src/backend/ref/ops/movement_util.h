// Helpers shared by the data-movement kernels (shape_ops, slice_pad, gather_scatter,
// indexing, sort): strided copies, 4-bit types, and index checks.
//
// A strided copy writes every element of an output of shape `out` from
// src[base + sum_d i_d * strides[d]]: Transpose, Slice, Expand, DepthToSpace and SpaceToDepth
// are all such copies (a stride may be negative for a reversed slice, or 0 for a broadcast).
#pragma once

#include <cstring>
#include <string_view>
#include <type_traits>
#include <vector>

#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {

// The output dims and source strides of a strided copy, with dims of size 1 dropped and
// adjacent dims merged where the source is contiguous across them, so the innermost run is
// as long as possible.
struct StridedLayout {
  Shape sizes;
  Shape strides;
};
StridedLayout coalesce(const Shape& out, const Shape& strides);

template <typename S>
void strided_copy(const S* src, int64_t base, const Shape& out, const Shape& strides, S* dst) {
  const int64_t numel = shape_numel(out);
  if (numel == 0) return;
  StridedLayout l = coalesce(out, strides);
  if (l.sizes.empty()) {
    dst[0] = src[base];
    return;
  }
  const size_t rank = l.sizes.size();
  const int64_t inner = l.sizes[rank - 1], inner_stride = l.strides[rank - 1];
  parallel_for(numel / inner, grain_for(inner), [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      int64_t off = base, r = row;
      for (size_t d = rank - 1; d-- > 0;) {
        off += (r % l.sizes[d]) * l.strides[d];
        r /= l.sizes[d];
      }
      S* out_row = dst + row * inner;
      const S* in_row = src + off;
      if constexpr (std::is_trivially_copyable_v<S>) {
        if (inner_stride == 1) {
          std::memcpy(out_row, in_row, static_cast<size_t>(inner) * sizeof(S));
          continue;
        }
      }
      for (int64_t i = 0; i < inner; ++i) out_row[i] = in_row[i * inner_stride];
    }
  });
}

// A new tensor of x's type holding the strided copy of x's elements.
Tensor strided_copy(const Tensor& x, int64_t base, const Shape& out, const Shape& strides);

// 4-bit types (int4, uint4) pack two elements per byte, so kernels that move elements see them
// unpacked to int8 / uint8 and pack their result back.
bool is_4bit(DataType t);
Tensor unpack_4bit(const Tensor& t);                 // int4 -> int8, uint4 -> uint8
Tensor pack_4bit(const Tensor& t, DataType packed);  // the inverse

// Runs f(x) → Tensor on x, or on its unpacked form when x holds a 4-bit type (then packs the
// result back to x's type).
template <typename F>
Tensor on_bytes(const Tensor& x, F&& f) {
  if (!is_4bit(x.dtype())) return f(x);
  return pack_4bit(f(unpack_4bit(x)), x.dtype());
}

// An index read from data, checked against an axis of size `dim`: negative values count from
// the end. Throws "index <v> (element <pos> of <what>) is out of range for an axis of size
// <dim>; indices must be in [-dim, dim-1]".
inline int64_t checked_index(int64_t v, int64_t dim, int64_t pos, std::string_view what) {
  if (v < -dim || v >= dim) [[unlikely]]
    fail(
        "failed to read index {} (element {} of {}): it is out of range for an axis of size "
        "{}; indices must be in [{}, {}]",
        v, pos, what, dim, -dim, dim - 1);
  return v < 0 ? v + dim : v;
}

// The integer input `t` (int32 or int64) as int64 values.
std::vector<int64_t> read_indices(const Tensor& t, std::string_view what);

}  // namespace parity::ref
