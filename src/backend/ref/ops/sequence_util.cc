#include "backend/ref/ops/sequence_util.h"

#include <algorithm>

#include "backend/ref/ops/movement_util.h"

namespace parity::ref {

Tensor slice_range(const Tensor& x, int64_t axis, int64_t begin, int64_t length) {
  Shape strides = strides_of(x.shape());
  Shape out = x.shape();
  out[axis] = length;
  return strided_copy(x, begin * strides[axis], out, strides);
}

Tensor slice_at(const Tensor& x, int64_t axis, int64_t index) {
  Shape out = x.shape();
  out.erase(out.begin() + axis);
  if (axis == 0 && !is_4bit(x.dtype())) {
    // Rows of axis 0 are contiguous: a view that keeps x's buffer alive.
    const size_t row_bytes = dtype_storage_bytes(x.dtype(), static_cast<size_t>(shape_numel(out)));
    auto keep = std::make_shared<Tensor>(x);
    auto* base = static_cast<uint8_t*>(keep->raw_data());
    if (x.dtype() == DataType::kString)
      return Tensor::borrow(x.dtype(), out,
                            static_cast<std::string*>(keep->raw_data()) + index * shape_numel(out),
                            keep);
    return Tensor::borrow(x.dtype(), out, base + index * row_bytes, keep);
  }
  Shape strides = strides_of(x.shape());
  Shape out_strides = strides;
  out_strides.erase(out_strides.begin() + axis);
  return strided_copy(x, index * strides[axis], out, out_strides);
}

namespace {

// Copies each item's [outer, block_t] rows into the output's [outer, sum(block_t)] rows.
template <typename S>
void join_blocks(const std::vector<Tensor>& items, int64_t outer,
                 const std::vector<int64_t>& blocks, S* dst) {
  int64_t row = 0;
  for (int64_t b : blocks) row += b;
  int64_t col = 0;
  for (size_t t = 0; t < items.size(); ++t) {
    const S* src = static_cast<const S*>(items[t].raw_data());
    const int64_t block = blocks[t];
    parallel_for(outer, grain_for(block), [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o)
        std::copy(src + o * block, src + (o + 1) * block, dst + o * row + col);
    });
    col += block;
  }
}

}  // namespace

Tensor join_along(const std::vector<Tensor>& items, int64_t axis, bool new_axis,
                  std::string_view what) {
  if (items.empty()) fail("failed to join {}: there are none; at least one tensor is needed", what);
  const Tensor& first = items.front();
  const Shape& ref = first.shape();
  Shape out = ref;
  if (new_axis) {
    out.insert(out.begin() + axis, static_cast<int64_t>(items.size()));
  } else {
    out[axis] = 0;
  }
  for (size_t t = 0; t < items.size(); ++t) {
    const Tensor& item = items[t];
    if (item.dtype() != first.dtype())
      fail(
          "failed to join {} with element type {} at item {}: every item must have the first "
          "one's type {}",
          what, dtype_name(item.dtype()), t, dtype_name(first.dtype()));
    bool fits = item.rank() == first.rank();
    for (int64_t d = 0; fits && d < item.rank(); ++d)
      fits = item.shape()[d] == ref[d] || (!new_axis && d == axis);
    if (!fits)
      fail("failed to join {} with shape {} at item {}: {} the first item's shape {}", what,
           shape_str(item.shape()), t,
           new_axis ? "every item must have" : "every dim but the joined one must match",
           shape_str(ref));
    if (!new_axis) out[axis] += item.shape()[axis];
  }
  // Viewed as [outer, block] rows, with outer the product of the dims before the axis.
  const int64_t outer = dims_product(ref, 0, axis);
  std::vector<int64_t> blocks;
  blocks.reserve(items.size());
  for (const Tensor& item : items) blocks.push_back(outer == 0 ? 0 : item.numel() / outer);
  auto join = [&](const std::vector<Tensor>& parts, DataType dtype) {
    return dispatch_storage(dtype, [&]<typename S>() {
      Tensor y = uninitialized_tensor(dtype, out);
      if (y.numel() > 0) join_blocks<S>(parts, outer, blocks, static_cast<S*>(y.raw_data()));
      return y;
    });
  };
  if (!is_4bit(first.dtype())) return join(items, first.dtype());
  std::vector<Tensor> unpacked;
  for (const Tensor& item : items) unpacked.push_back(unpack_4bit(item));
  return pack_4bit(join(unpacked, unpacked.front().dtype()), first.dtype());
}

const Value& input_sequence(const Inputs& inputs, size_t i, std::string_view name) {
  if (i >= inputs.size() || !inputs[i].is_sequence())
    fail("failed to read input '{}': it is {}; it must be a sequence of tensors", name,
         i >= inputs.size() || inputs[i].is_none() ? "absent" : "a tensor");
  return inputs[i];
}

int64_t read_position(const Tensor& t, std::string_view what) {
  if (t.numel() != 1)
    fail("failed to read {} of shape {}: it must hold exactly one value", what,
         shape_str(t.shape()));
  if (t.dtype() != DataType::kInt32 && t.dtype() != DataType::kInt64)
    fail("failed to read {} of element type {}: it must be int32 or int64", what,
         dtype_name(t.dtype()));
  return read_int64s(t, what)[0];
}

}  // namespace parity::ref
