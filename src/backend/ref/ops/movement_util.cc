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

namespace {

// Tile edge (elements) of tiled_copy: a tile's source lines stay in L1 while it is written.
constexpr int64_t kTile = 32;

// A strided copy whose source-contiguous dim j is not the output's innermost (a transpose):
// copied in kTile x kTile tiles of (dim j, innermost dim), so that both the reads along j and
// the writes along the innermost dim use whole cache lines, instead of one strided read per
// element. False when the layout has no such dim (or one too short to pay).
template <typename S>
bool tiled_copy(const S* src, int64_t base, const StridedLayout& l, S* dst) {
  const size_t rank = l.sizes.size();
  if (rank < 2 || l.strides[rank - 1] == 1) return false;
  size_t j = rank;
  for (size_t d = 0; d + 1 < rank; ++d)
    if (l.strides[d] == 1) j = d;
  if (j == rank || l.sizes[j] < kTile || l.sizes[rank - 1] < kTile) return false;
  Shape out_strides(rank, 1);  // the output's row-major strides
  for (size_t d = rank - 1; d-- > 0;) out_strides[d] = out_strides[d + 1] * l.sizes[d + 1];
  const int64_t inner = l.sizes[rank - 1], inner_stride = l.strides[rank - 1];
  const int64_t nj = l.sizes[j], dst_j = out_strides[j];
  const int64_t tiles_j = (nj + kTile - 1) / kTile;
  const int64_t outer = shape_numel(l.sizes) / (nj * inner);
  parallel_for(outer * tiles_j, grain_for(kTile * inner), [&](int64_t b, int64_t e) {
    for (int64_t unit = b; unit < e; ++unit) {
      // The offsets of this unit's outer index over the dims other than j and the innermost.
      int64_t o = unit / tiles_j, from = base, to = 0;
      for (size_t d = rank - 1; d-- > 0;) {
        if (d == j) continue;
        from += (o % l.sizes[d]) * l.strides[d];
        to += (o % l.sizes[d]) * out_strides[d];
        o /= l.sizes[d];
      }
      const int64_t j0 = (unit % tiles_j) * kTile, j1 = std::min(nj, j0 + kTile);
      for (int64_t i0 = 0; i0 < inner; i0 += kTile) {
        const int64_t i1 = std::min(inner, i0 + kTile);
        for (int64_t jj = j0; jj < j1; ++jj) {
          const S* in = src + from + jj;
          S* out = dst + to + jj * dst_j;
          for (int64_t ii = i0; ii < i1; ++ii) out[ii] = in[ii * inner_stride];
        }
      }
    }
  });
  return true;
}

}  // namespace

Tensor strided_copy(const Tensor& x, int64_t base, const Shape& out, const Shape& strides) {
  return on_bytes(x, [&](const Tensor& b) {
    return dispatch_storage(b.dtype(), [&]<typename S>() {
      Tensor y = uninitialized_tensor(b.dtype(), out);
      const auto* from = static_cast<const S*>(b.raw_data());
      auto* to = static_cast<S*>(y.raw_data());
      if (shape_numel(out) > 0 && tiled_copy<S>(from, base, coalesce(out, strides), to)) return y;
      strided_copy<S>(from, base, out, strides, to);
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
