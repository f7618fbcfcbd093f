// Shape manipulation: Reshape, Flatten, Shape, Size, Squeeze, Unsqueeze, Transpose, Concat,
// Split, Expand, Tile. Reshape, Flatten, Squeeze and Unsqueeze return views of their input's
// buffer (values are never written once made); the others move elements by size, so they serve
// every element type, strings included.
#include <cstring>

#include "backend/ref/ops/movement_util.h"
#include "core/checked_math.h"
#include "core/limits.h"

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
      known = checked_mul(known, out[i], "the element count of the requested shape");
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

class Size : public Kernel {
 public:
  explicit Size(const OpContext&) {}
  Outputs run(const Inputs& in, RunContext&) override {
    return {Tensor::scalar<int64_t>(input_tensor(in, 0, "data").numel())};
  }
};
// Versions 1, 13, 19, 21, 23 (types).
PARITY_REF_OP("", "Size", 1, kOpsetMax, Size);

// The axes of Squeeze/Unsqueeze: an attribute before opset 13, an input from 13 on.
class AxesSource {
 public:
  AxesSource(const OpContext& ctx, size_t input_index) : from_input_(ctx.opset() >= 13) {
    if (!from_input_) {
      if (ctx.has_attr("axes")) axes_ = ctx.attr_ints("axes");
    } else if (const Tensor* t = ctx.constant_input(input_index)) {
      axes_ = read_int64s(*t, "input 'axes'");
    }
    input_index_ = input_index;
  }
  // The axes, or nullopt when none are given.
  std::optional<std::vector<int64_t>> get(const Inputs& in) const {
    if (axes_ || !from_input_) return axes_;
    const Tensor* t = optional_input(in, input_index_, "axes");
    if (!t) return std::nullopt;
    return read_int64s(*t, "input 'axes'");
  }

 private:
  bool from_input_;
  size_t input_index_ = 1;
  std::optional<std::vector<int64_t>> axes_;
};

class Squeeze : public Kernel {
 public:
  explicit Squeeze(const OpContext& ctx) : axes_(ctx, 1) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "data");
    const Shape& shape = x.shape();
    std::vector<bool> drop(shape.size(), false);
    if (auto axes = axes_.get(in)) {
      for (int64_t a : normalize_axes(*axes, x.rank())) {
        if (shape[a] != 1)
          ctx.fail(
              "axis {} of the input of shape {} has size {}; only axes of size 1 can be "
              "squeezed",
              a, shape_str(shape), shape[a]);
        drop[a] = true;
      }
    } else {
      for (size_t d = 0; d < shape.size(); ++d) drop[d] = shape[d] == 1;
    }
    Shape out;
    for (size_t d = 0; d < shape.size(); ++d)
      if (!drop[d]) out.push_back(shape[d]);
    return {x.reshaped(out)};
  }

 private:
  AxesSource axes_;
};
// Versions 1 (axes attribute), 11 (negative axes), 13 (axes input), 21, 23 (types).
PARITY_REF_OP("", "Squeeze", 1, kOpsetMax, Squeeze);

class Unsqueeze : public Kernel {
 public:
  explicit Unsqueeze(const OpContext& ctx) : axes_(ctx, 1) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "data");
    auto axes = axes_.get(in);
    if (!axes) ctx.fail("it has no axes; Unsqueeze needs the axes to insert");
    // Axes count in the output, whose rank is the input's plus the number of axes.
    const int64_t out_rank = x.rank() + static_cast<int64_t>(axes->size());
    std::vector<bool> inserted(out_rank, false);
    for (int64_t a : normalize_axes(*axes, out_rank)) inserted[a] = true;
    Shape out;
    size_t next = 0;
    for (int64_t d = 0; d < out_rank; ++d) out.push_back(inserted[d] ? 1 : x.shape()[next++]);
    return {x.reshaped(out)};
  }

 private:
  AxesSource axes_;
};
// Versions 1 (axes attribute), 11 (negative axes), 13 (axes input), 21, 23 (types).
PARITY_REF_OP("", "Unsqueeze", 1, kOpsetMax, Unsqueeze);

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
        ctx.fail(
            "input {} is {} {} and input 0 is {} {}; inputs must have one element type "
            "and equal dims except on axis {}",
            i, dtype_name(t.dtype()), shape_str(t.shape()), dtype_name(first.dtype()),
            shape_str(first.shape()), axis);
      out_shape[axis] = checked_add(out_shape[axis], t.shape()[axis], "the output's concat axis");
    }
    if (is_4bit(first.dtype())) {  // int4, uint4, float4e2m1: concatenated unpacked
      std::vector<Tensor> unpacked;
      std::vector<const Tensor*> unpacked_parts;
      for (const Tensor* t : parts) unpacked.push_back(unpack_4bit(*t));
      for (const Tensor& t : unpacked) unpacked_parts.push_back(&t);
      return {pack_4bit(concat<uint8_t>(unpacked_parts, out_shape, axis), first.dtype())};
    }
    return {dispatch_storage(
        first.dtype(), [&]<typename S>() { return concat<S>(parts, out_shape, axis); }, "input 0")};
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
    auto copy = [](const S* from, int64_t n, S* to) {
      if constexpr (std::is_trivially_copyable_v<S>) {
        if (n > 0) std::memcpy(to, from, static_cast<size_t>(n) * sizeof(S));
      } else {
        std::copy(from, from + n, to);
      }
    };
    if (outer < 8 && outer * out_block >= 2 * kElementwiseGrain) {
      // A few large blocks (on axis 0 there is one row): each block's copy is split over the
      // threads instead, or one thread would copy everything.
      for (int64_t o = 0; o < outer; ++o) {
        S* out = dst + o * out_block;
        for (const Tensor* t : parts) {
          const int64_t block = t->shape()[axis] * inner;
          const S* src = static_cast<const S*>(t->raw_data()) + o * block;
          parallel_for(block, kElementwiseGrain,
                       [&](int64_t b, int64_t e) { copy(src + b, e - b, out + b); });
          out += block;
        }
      }
      return y;
    }
    parallel_for(outer, grain_for(out_block), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        S* out = dst + o * out_block;
        for (const Tensor* t : parts) {
          const int64_t block = t->shape()[axis] * inner;
          copy(static_cast<const S*>(t->raw_data()) + o * block, block, out);
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

class Split : public Kernel {
 public:
  explicit Split(const OpContext& ctx) : axis_(ctx.attr_int("axis", 0)), opset_(ctx.opset()) {
    // The sizes come from the 'split' attribute (versions 1 to 11) or from input 1 (version 1,
    // and 13 on); version 18 adds num_outputs for parts of ceil(dim / n).
    if (opset_ < 13 && ctx.has_attr("split")) split_ = ctx.attr_ints("split");
    if ((opset_ < 2 || opset_ >= 13) && ctx.has_input(1)) {
      split_input_ = true;
      if (const Tensor* t = ctx.constant_input(1)) split_ = read_int64s(*t, "input 'split'");
    }
    if (opset_ >= 18 && ctx.has_attr("num_outputs")) {
      num_outputs_ = ctx.attr_int("num_outputs");
      if (split_input_)
        ctx.fail("it has both input 'split' and attribute 'num_outputs'; give one of them");
      if (*num_outputs_ != static_cast<int64_t>(ctx.num_outputs()))
        ctx.fail("attribute 'num_outputs' is {} but the node has {} outputs; they must be equal",
                 *num_outputs_, ctx.num_outputs());
    }
    if (ctx.num_outputs() < 1) ctx.fail("it has no outputs; it needs 1 or more");
    num_parts_ = static_cast<int64_t>(ctx.num_outputs());
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "input");
    const int64_t axis = normalize_axis(axis_, x.rank());
    const int64_t dim = x.shape()[axis];
    std::vector<int64_t> sizes = part_sizes(in, dim, ctx);
    Outputs out;
    const int64_t outer = dims_product(x.shape(), 0, axis);
    const int64_t inner = dims_product(x.shape(), axis + 1, x.rank());
    int64_t begin = 0;
    for (int64_t size : sizes) {
      Shape part_shape = x.shape();
      part_shape[axis] = size;
      // Part = the rows [begin, begin + size) of the axis: a strided copy of x.
      out.push_back(strided_copy(x, begin * inner, {outer, size * inner}, {dim * inner, 1})
                        .reshaped(part_shape));
      begin += size;
    }
    return out;
  }

 private:
  std::vector<int64_t> part_sizes(const Inputs& in, int64_t dim, RunContext& ctx) const {
    std::vector<int64_t> sizes;
    if (split_) {
      sizes = *split_;
    } else if (split_input_) {
      sizes = read_int64s(input_tensor(in, 1, "split"), "input 'split'");
    } else if (num_outputs_) {
      const int64_t chunk = (dim + num_parts_ - 1) / num_parts_;  // the last part is smaller
      for (int64_t i = 0, left = dim; i < num_parts_; ++i, left -= chunk)
        sizes.push_back(std::clamp<int64_t>(left, 0, chunk));
      return sizes;
    } else {
      if (dim % num_parts_ != 0)
        ctx.fail("axis of size {} cannot be split into {} equal parts; give 'split'{}", dim,
                 num_parts_, opset_ >= 18 ? " or 'num_outputs'" : "");
      return std::vector<int64_t>(static_cast<size_t>(num_parts_), dim / num_parts_);
    }
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 0)
        ctx.fail("split [{}] has a negative size; sizes must be 0 or more", fmt::join(sizes, ", "));
      total = checked_add(total, s, "the sum of the split sizes");
    }
    if (static_cast<int64_t>(sizes.size()) != num_parts_ || total != dim)
      ctx.fail(
          "split [{}] has {} parts summing to {}; the node has {} outputs and the axis "
          "has size {}",
          fmt::join(sizes, ", "), sizes.size(), total, num_parts_, dim);
    return sizes;
  }

  int64_t axis_, opset_;
  int64_t num_parts_ = 1;
  bool split_input_ = false;
  std::optional<std::vector<int64_t>> split_;
  std::optional<int64_t> num_outputs_;
};
// Versions 1 (split attribute or input), 2 (attribute), 11 (negative axis), 13 (input),
// 18 (num_outputs).
PARITY_REF_OP("", "Split", 1, kOpsetMax, Split);

class Expand : public Kernel {
 public:
  explicit Expand(const OpContext&) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "input");
    Shape requested = read_int64s(input_tensor(in, 1, "shape"), "input 'shape'");
    for (int64_t d : requested)
      if (d < 0)
        ctx.fail("shape {} has a negative dim; dims must be 0 or more", shape_str(requested));
    // Bidirectional broadcast: a requested 1 keeps the input's dim.
    Shape out = broadcast_shapes({x.shape(), requested});
    const size_t offset = out.size() - x.shape().size();
    Shape in_strides = strides_of(x.shape()), strides(out.size(), 0);
    for (size_t d = 0; d < x.shape().size(); ++d)
      strides[offset + d] = x.shape()[d] == 1 ? 0 : in_strides[d];
    return {strided_copy(x, 0, out, strides)};
  }
};
// Versions 8, 13 (types).
PARITY_REF_OP("", "Expand", 8, kOpsetMax, Expand);

class Tile : public Kernel {
 public:
  explicit Tile(const OpContext& ctx) : opset_(ctx.opset()) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "input");
    std::vector<int64_t> repeats;
    if (opset_ < 6) {
      // Version 1: 'tiles' copies along the one axis given by input 'axis'.
      const int64_t tiles = read_int64s(input_tensor(in, 1, "tiles"), "input 'tiles'").at(0);
      const int64_t axis =
          normalize_axis(read_int64s(input_tensor(in, 2, "axis"), "input 'axis'").at(0), x.rank());
      repeats.assign(x.shape().size(), 1);
      repeats[axis] = tiles;
    } else {
      repeats = read_int64s(input_tensor(in, 1, "repeats"), "input 'repeats'");
    }
    if (static_cast<int64_t>(repeats.size()) != x.rank())
      ctx.fail("repeats [{}] has {} values; the input of shape {} needs {}",
               fmt::join(repeats, ", "), repeats.size(), shape_str(x.shape()), x.rank());
    Shape out = x.shape();
    for (size_t d = 0; d < out.size(); ++d) {
      if (repeats[d] < 0)
        ctx.fail("repeats [{}] has a negative count; counts must be 0 or more",
                 fmt::join(repeats, ", "));
      out[d] = checked_mul(out[d], repeats[d], "an output dim (input dim * repeats)");
    }
    return {dispatch_storage(
        x.dtype(), [&]<typename S>() { return tile<S>(x, out); }, "input 'input'")};
  }

 private:
  template <typename S>
  static Tensor tile(const Tensor& x, const Shape& out) {
    Tensor y = uninitialized_tensor(x.dtype(), out);
    const int64_t numel = y.numel();
    if (numel == 0) return y;
    if (out.empty()) return x.clone();
    const S* src = static_cast<const S*>(x.raw_data());
    S* dst = static_cast<S*>(y.raw_data());
    const Shape& in_shape = x.shape();
    const Shape in_strides = strides_of(in_shape);
    const size_t rank = out.size();
    const int64_t inner = out[rank - 1], in_inner = in_shape[rank - 1];
    parallel_for(numel / inner, grain_for(inner), [&](int64_t b, int64_t e) {
      for (int64_t row = b; row < e; ++row) {
        // Output index i reads input index i mod dim on every axis.
        int64_t off = 0, r = row;
        for (size_t d = rank - 1; d-- > 0;) {
          off += (r % out[d]) % in_shape[d] * in_strides[d];
          r /= out[d];
        }
        // The innermost axis is the input's row repeated.
        S* o = dst + row * inner;
        for (int64_t i = 0; i < inner; i += in_inner)
          std::copy(src + off, src + off + in_inner, o + i);
      }
    });
    return y;
  }

  int64_t opset_;
};
// Versions 1 (tiles and axis inputs), 6 (repeats input), 13.
PARITY_REF_OP("", "Tile", 1, kOpsetMax, Tile);

}  // namespace
}  // namespace parity::ref
