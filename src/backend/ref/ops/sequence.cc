// The sequence ops: SequenceEmpty, SequenceConstruct, SequenceAt, SequenceErase,
// SequenceInsert, SequenceLength, SplitToSequence, ConcatFromSequence. A sequence holds its
// tensors by value; the tensors share their buffers, so building a new sequence copies no
// elements (values are never written once made).
#include "backend/ref/ops/sequence_util.h"
#include "core/mx_types.h"

namespace parity::ref {
namespace {

void check_arity(const OpContext& ctx, size_t min_inputs, size_t max_inputs) {
  if (ctx.num_inputs() < min_inputs || ctx.num_inputs() > max_inputs || ctx.num_outputs() != 1)
    ctx.fail("it has {} inputs and {} outputs; it takes {} to {} inputs and makes 1 output",
             ctx.num_inputs(), ctx.num_outputs(), min_inputs, max_inputs);
}

// A position into a sequence of `size` tensors, which may be negative (counting from the end);
// `allow_end` admits `size` itself (SequenceInsert's "append").
int64_t checked_position(const Tensor& t, int64_t size, bool allow_end, RunContext& ctx) {
  const int64_t p = read_position(t, "input 'position'");
  const int64_t hi = allow_end ? size : size - 1;
  if (p < -size || p > hi)
    ctx.fail("position {} is out of range for a sequence of {} tensors; it must be in [{}, {}]", p,
             size, -size, hi);
  return p < 0 ? p + size : p;
}

class SequenceEmpty : public Kernel {
 public:
  explicit SequenceEmpty(const OpContext& ctx) {
    check_arity(ctx, 0, 0);
    const int64_t dtype = ctx.attr_int("dtype", static_cast<int64_t>(DataType::kFloat32));
    if (!dtype_is_valid(static_cast<int32_t>(dtype)) || dtype == 0)
      ctx.fail("attribute 'dtype' is {}, which is not an ONNX element type; valid: 1 to {}", dtype,
               static_cast<int>(kDtypeFloat8E8M0));
    dtype_ = static_cast<DataType>(dtype);
  }
  Outputs run(const Inputs&, RunContext&) override { return {Value::make_sequence({}, dtype_)}; }

 private:
  DataType dtype_;
};
PARITY_REF_OP("", "SequenceEmpty", 11, kOpsetMax, SequenceEmpty);

class SequenceConstruct : public Kernel {
 public:
  explicit SequenceConstruct(const OpContext& ctx) {
    if (ctx.num_inputs() < 1 || ctx.num_outputs() != 1)
      ctx.fail("it has {} inputs and {} outputs; it takes 1 or more inputs and makes 1 output",
               ctx.num_inputs(), ctx.num_outputs());
  }
  Outputs run(const Inputs& in, RunContext& ctx) override {
    std::vector<Tensor> items;
    items.reserve(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      const Tensor& t = input_tensor(in, i, "inputs");
      if (!items.empty() && t.dtype() != items.front().dtype())
        ctx.fail("input {} has element type {}; every input must have the first one's type {}", i,
                 dtype_name(t.dtype()), dtype_name(items.front().dtype()));
      items.push_back(t);
    }
    const DataType dtype = items.front().dtype();
    return {Value::make_sequence(std::move(items), dtype)};
  }
};
PARITY_REF_OP("", "SequenceConstruct", 11, kOpsetMax, SequenceConstruct);

class SequenceAt : public Kernel {
 public:
  explicit SequenceAt(const OpContext& ctx) { check_arity(ctx, 2, 2); }
  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Value& seq = input_sequence(in, 0, "input_sequence");
    const int64_t size = static_cast<int64_t>(seq.sequence.size());
    return {seq.sequence[checked_position(input_tensor(in, 1, "position"), size, false, ctx)]};
  }
};
PARITY_REF_OP("", "SequenceAt", 11, kOpsetMax, SequenceAt);

class SequenceErase : public Kernel {
 public:
  explicit SequenceErase(const OpContext& ctx) { check_arity(ctx, 1, 2); }
  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Value& seq = input_sequence(in, 0, "input_sequence");
    const int64_t size = static_cast<int64_t>(seq.sequence.size());
    if (size == 0) ctx.fail("the input sequence is empty; there is nothing to erase");
    const Tensor* position = optional_input(in, 1, "position");
    const int64_t at = position ? checked_position(*position, size, false, ctx) : size - 1;
    std::vector<Tensor> items = seq.sequence;
    items.erase(items.begin() + at);
    return {Value::make_sequence(std::move(items), seq.elem_type)};
  }
};
PARITY_REF_OP("", "SequenceErase", 11, kOpsetMax, SequenceErase);

class SequenceInsert : public Kernel {
 public:
  explicit SequenceInsert(const OpContext& ctx) { check_arity(ctx, 2, 3); }
  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Value& seq = input_sequence(in, 0, "input_sequence");
    const Tensor& t = input_tensor(in, 1, "tensor");
    DataType elem_type = seq.elem_type;
    if (!seq.sequence.empty()) elem_type = seq.sequence.front().dtype();
    if (elem_type != DataType::kUndefined && t.dtype() != elem_type)
      ctx.fail("input 'tensor' has element type {}; it must match the sequence's {}",
               dtype_name(t.dtype()), dtype_name(elem_type));
    const int64_t size = static_cast<int64_t>(seq.sequence.size());
    const Tensor* position = optional_input(in, 2, "position");
    const int64_t at = position ? checked_position(*position, size, true, ctx) : size;
    std::vector<Tensor> items;
    items.reserve(seq.sequence.size() + 1);
    items.insert(items.end(), seq.sequence.begin(), seq.sequence.begin() + at);
    items.push_back(t);
    items.insert(items.end(), seq.sequence.begin() + at, seq.sequence.end());
    return {Value::make_sequence(std::move(items), t.dtype())};
  }
};
PARITY_REF_OP("", "SequenceInsert", 11, kOpsetMax, SequenceInsert);

class SequenceLength : public Kernel {
 public:
  explicit SequenceLength(const OpContext& ctx) { check_arity(ctx, 1, 1); }
  Outputs run(const Inputs& in, RunContext&) override {
    const Value& seq = input_sequence(in, 0, "input_sequence");
    return {Tensor::scalar<int64_t>(static_cast<int64_t>(seq.sequence.size()))};
  }
};
PARITY_REF_OP("", "SequenceLength", 11, kOpsetMax, SequenceLength);

class SplitToSequence : public Kernel {
 public:
  explicit SplitToSequence(const OpContext& ctx)
      : axis_(ctx.attr_int("axis", 0)), keepdims_(ctx.attr_int("keepdims", 1) != 0) {
    check_arity(ctx, 1, 2);
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "input");
    if (x.rank() == 0) ctx.fail("input 'input' is a scalar; it must have rank 1 or more");
    const int64_t axis = normalize_axis(axis_, x.rank());
    const int64_t dim = x.shape()[axis];
    std::vector<Tensor> items;
    const Tensor* split = optional_input(in, 1, "split");
    if (!split) {
      // Pieces of length 1; keepdims = 0 drops the split axis from each.
      items.reserve(static_cast<size_t>(dim));
      for (int64_t i = 0; i < dim; ++i)
        items.push_back(keepdims_ ? slice_range(x, axis, i, 1) : slice_at(x, axis, i));
    } else {
      int64_t begin = 0;
      for (int64_t length : lengths(*split, dim, ctx)) {
        items.push_back(slice_range(x, axis, begin, length));
        begin += length;
      }
    }
    return {Value::make_sequence(std::move(items), x.dtype())};
  }

 private:
  // A scalar split gives equal pieces (the last one shorter when `dim` is not a multiple);
  // a 1-D split lists the lengths, which must add up to `dim`.
  static std::vector<int64_t> lengths(const Tensor& split, int64_t dim, RunContext& ctx) {
    if (split.rank() > 1)
      ctx.fail("input 'split' has shape {}; it must be a scalar or 1-D", shape_str(split.shape()));
    std::vector<int64_t> values = read_int64s(split, "input 'split'");
    if (split.rank() == 0) {
      const int64_t chunk = values[0];
      if (chunk <= 0) ctx.fail("input 'split' is {}; a scalar split must be positive", chunk);
      std::vector<int64_t> pieces;
      for (int64_t begin = 0; begin < dim; begin += chunk)
        pieces.push_back(std::min(chunk, dim - begin));
      return pieces;
    }
    int64_t total = 0;
    for (int64_t v : values) {
      if (v < 0) ctx.fail("input 'split' [{}] has a negative length", fmt::join(values, ", "));
      total += v;
    }
    if (total != dim)
      ctx.fail("input 'split' [{}] adds up to {}; it must add up to the split axis' size {}",
               fmt::join(values, ", "), total, dim);
    return values;
  }

  int64_t axis_;
  bool keepdims_;
};
PARITY_REF_OP("", "SplitToSequence", 11, kOpsetMax, SplitToSequence);

class ConcatFromSequence : public Kernel {
 public:
  explicit ConcatFromSequence(const OpContext& ctx)
      : axis_(ctx.attr_int("axis")), new_axis_(ctx.attr_int("new_axis", 0) != 0) {
    check_arity(ctx, 1, 1);
  }
  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Value& seq = input_sequence(in, 0, "input_sequence");
    if (seq.sequence.empty()) ctx.fail("the input sequence is empty; there is nothing to join");
    const int64_t rank = seq.sequence.front().rank();
    const int64_t axis = normalize_axis(axis_, new_axis_ ? rank + 1 : rank);
    return {join_along(seq.sequence, axis, new_axis_, "the tensors of the sequence")};
  }

 private:
  int64_t axis_;
  bool new_axis_;
};
PARITY_REF_OP("", "ConcatFromSequence", 11, kOpsetMax, ConcatFromSequence);

}  // namespace
}  // namespace parity::ref
