// Shape manipulation: Reshape, Flatten, Shape, Transpose, Concat. Reshape and Flatten return
// views of their input's buffer (values are never written once made); Transpose and Concat
// move elements by size, so they serve every element type, strings included.
#include <cstring>

#include "backend/ref/ops/movement_util.h"

namespace parity::ref {
namespace {

class Reshape : public Kernel {
 public:
  explicit Reshape(const OpContext& ctx) : allow_zero_(ctx.attr_int("allowzero", 0) != 0) {
    if (ctx.opset() < 5) {
      shape_ = ctx.attr_ints("shape");  // version 1 takes the shape as an attribute
    } else if (const Tensor* s = ctx.constant_input(1)) {
      shape_ = read_int64s(*s, "input 'shape'");  // a constant shape is read once
    }
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "data");
    std::vector<int64_t> requested =
        shape_ ? *shape_ : read_int64s(input_tensor(in, 1, "shape"), "input 'shape'");
    return {x.reshaped(resolve(x.shape(), requested, ctx))};
  }

 private:
  // ONNX's rules: 0 copies the input's dim (unless allowzero), one -1 takes what is left.
  Shape resolve(const Shape& in, const std::vector<int64_t>& req, RunContext& ctx) const {
    Shape out(req.begin(), req.end());
    int64_t infer_at = -1, known = 1;
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i] == -1) {
        if (infer_at >= 0)
          ctx.fail("shape [{}] has more than one -1; at most one dim can be inferred",
                   fmt::join(req, ", "));
        infer_at = static_cast<int64_t>(i);
        continue;
      }
      if (out[i] < -1)
        ctx.fail("shape [{}] has the negative dim {}; dims must be -1 or more",
                 fmt::join(req, ", "), out[i]);
      if (out[i] == 0 && !allow_zero_) {
        if (i >= in.size())
          ctx.fail("shape [{}] copies dim {} (a 0) of the input shape {}, which has no such dim",
                   fmt::join(req, ", "), i, shape_str(in));
        out[i] = in[i];
      }
      known *= out[i];
    }
    const int64_t total = shape_numel(in);
    if (infer_at >= 0) {
      if (known == 0 || total % known != 0)
        ctx.fail("input of shape {} cannot be reshaped to [{}]: the -1 dim has no whole size",
                 shape_str(in), fmt::join(req, ", "));
      out[infer_at] = total / known;
    } else if (known != total) {
      ctx.fail("input of shape {} ({} elements) cannot be reshaped to {} ({} elements)",
               shape_str(in), total, shape_str(out), known);
    }
    return out;
  }

  bool allow_zero_;
  std::optional<std::vector<int64_t>> shape_;
};
// Versions 1 (shape attribute), 5 (shape input), 13, 14 (allowzero), 19, 21, 23 (types).
PARITY_REF_OP("", "Reshape", 1, kOpsetMax, Reshape);

class Flatten : public Kernel {
 public:
  explicit Flatten(const OpContext& ctx) : axis_(ctx.attr_int("axis", 1)) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "input");
    const int64_t rank = x.rank();
    // The axis may equal the rank (everything goes to the first dim).
    if (axis_ < -rank || axis_ > rank)
      ctx.fail("axis {} is out of range for a tensor of rank {}; it must be in [{}, {}]", axis_,
               rank, -rank, rank);
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    return {x.reshaped({dims_product(x.shape(), 0, axis), dims_product(x.shape(), axis, rank)})};
  }

 private:
  int64_t axis_;
};
// Versions 1, 9 (types), 11 (negative axis), 13, 21, 23 (types).
PARITY_REF_OP("", "Flatten", 1, kOpsetMax, Flatten);

class ShapeOp : public Kernel {
 public:
  explicit ShapeOp(const OpContext& ctx) {
    if (ctx.opset() >= 15) {
      start_ = ctx.attr_int("start", 0);
      if (ctx.has_attr("end")) end_ = ctx.attr_int("end");
    }
  }

  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "data");
    const int64_t rank = x.rank();
    // start/end are clamped to [0, rank] after adding rank to negative values.
    auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
    const int64_t start = clamp(start_), end = clamp(end_.value_or(rank));
    std::vector<int64_t> dims;
    for (int64_t d = start; d < end; ++d) dims.push_back(x.shape()[d]);
    return {Tensor::from_vector<int64_t>({static_cast<int64_t>(dims.size())}, dims)};
  }

 private:
  int64_t start_ = 0;
  std::optional<int64_t> end_;
};
// Versions 1, 13, 15 (start, end), 19, 21, 23 (types).
PARITY_REF_OP("", "Shape", 1, kOpsetMax, ShapeOp);

class Transpose : public Kernel {
 public:
  explicit Transpose(const OpContext& ctx) : perm_(ctx.attr_ints("perm", {})) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "data");
    const int64_t rank = x.rank();
    std::vector<int64_t> perm = perm_;
    if (perm.empty())
      for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
    if (static_cast<int64_t>(perm.size()) != rank)
      ctx.fail("attribute 'perm' [{}] has {} values; the input of shape {} needs {}",
               fmt::join(perm_, ", "), perm.size(), shape_str(x.shape()), rank);
    perm = normalize_axes(perm, rank, "perm");
    Shape out_shape(rank), in_strides = strides_of(x.shape()), src_strides(rank);
    for (int64_t d = 0; d < rank; ++d) {
      out_shape[d] = x.shape()[perm[d]];
      src_strides[d] = in_strides[perm[d]];  // input stride along output dim d
    }
    return {strided_copy(x, 0, out_shape, src_strides)};
  }

 private:
  std::vector<int64_t> perm_;
};
// Versions 1, 13, 21, 23 (types).
PARITY_REF_OP("", "Transpose", 1, kOpsetMax, Transpose);

class Concat : public Kernel {
 public:
  explicit Concat(const OpContext& ctx)
      : axis_(ctx.opset() < 4 ? ctx.attr_int("axis", 1) : ctx.attr_int("axis")) {
    if (ctx.num_inputs() < 1) ctx.fail("it has no inputs; it needs 1 or more");
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    std::vector<const Tensor*> parts;
    for (size_t i = 0; i < in.size(); ++i) parts.push_back(&input_tensor(in, i, "inputs"));
    const Tensor& first = *parts[0];
    const int64_t rank = first.rank();
    if (rank == 0) ctx.fail("input 0 is a scalar; Concat needs inputs of rank 1 or more");
    const int64_t axis = normalize_axis(axis_, rank);
    Shape out_shape = first.shape();
    out_shape[axis] = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
      const Tensor& t = *parts[i];
      bool fits = t.dtype() == first.dtype() && t.rank() == rank;
      for (int64_t d = 0; fits && d < rank; ++d)
        fits = d == axis || t.shape()[d] == first.shape()[d];
      if (!fits)
        ctx.fail("input {} is {} {} and input 0 is {} {}; inputs must have one element type "
                 "and equal dims except on axis {}",
                 i, dtype_name(t.dtype()), shape_str(t.shape()), dtype_name(first.dtype()),
                 shape_str(first.shape()), axis);
      out_shape[axis] += t.shape()[axis];
    }
    return {dispatch_storage(
        first.dtype(), [&]<typename S>() { return concat<S>(parts, out_shape, axis); },
        "input 0")};
  }

 private:
  template <typename S>
  static Tensor concat(const std::vector<const Tensor*>& parts, const Shape& out_shape,
                       int64_t axis) {
    Tensor y = uninitialized_tensor(parts[0]->dtype(), out_shape);
    S* dst = static_cast<S*>(y.raw_data());
    const int64_t outer = dims_product(out_shape, 0, axis);
    const int64_t inner = dims_product(out_shape, axis + 1, out_shape.size());
    const int64_t out_block = out_shape[axis] * inner;
    parallel_for(outer, grain_for(out_block), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        S* out = dst + o * out_block;
        for (const Tensor* t : parts) {
          const int64_t block = t->shape()[axis] * inner;
          const S* src = static_cast<const S*>(t->raw_data()) + o * block;
          if constexpr (std::is_trivially_copyable_v<S>) {
            if (block > 0) std::memcpy(out, src, static_cast<size_t>(block) * sizeof(S));
          } else {
            std::copy(src, src + block, out);
          }
          out += block;
        }
      }
    });
    return y;
  }

  int64_t axis_;
};
// Versions 1 (axis optional), 4 (axis required), 11 (negative axis), 13.
PARITY_REF_OP("", "Concat", 1, kOpsetMax, Concat);

}  // namespace
}  // namespace parity::ref
