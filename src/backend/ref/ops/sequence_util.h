// Helpers shared by the sequence and control-flow kernels: taking one slice of a tensor along
// an axis (Scan's inputs, SplitToSequence), joining tensors along an axis (ConcatFromSequence,
// and the scan outputs of Loop and Scan, which stack per-iteration values), and reading the
// sequence and position inputs of the Sequence* ops.
#pragma once

#include <string_view>
#include <vector>

#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {

// x[..., index, ...] at `axis`: the tensor of rank rank(x) - 1. A slice along axis 0 shares
// x's buffer; others are copied.
Tensor slice_at(const Tensor& x, int64_t axis, int64_t index);
// x[..., begin:begin+length, ...] at `axis` (same rank as x).
Tensor slice_range(const Tensor& x, int64_t axis, int64_t begin, int64_t length);

// Joins `items` along `axis`. With new_axis, every item must have the same shape and the
// result gains a dim of size items.size() at `axis` (in [0, rank]); without it, items must
// agree on every dim but `axis` (in [0, rank)). Items must share one element type; `what`
// names them in errors. At least one item is required.
Tensor join_along(const std::vector<Tensor>& items, int64_t axis, bool new_axis,
                  std::string_view what);

// Input i as a sequence; throws "input '<name>' must be a sequence" otherwise.
const Value& input_sequence(const Inputs& inputs, size_t i, std::string_view name);
// A position input (int32 or int64 scalar, or one-element tensor) as int64.
int64_t read_position(const Tensor& t, std::string_view what);

}  // namespace parity::ref
