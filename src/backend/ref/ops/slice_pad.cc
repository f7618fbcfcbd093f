// Windows onto a tensor: Slice, Pad, CenterCropPad, DepthToSpace, SpaceToDepth,
// ReverseSequence. All move elements by size, so they serve every element type.
#include <cmath>
#include <cstdint>

#include "backend/ref/ops/movement_util.h"
#include "core/checked_math.h"
#include "core/limits.h"

namespace parity::ref {
namespace {

// ---------------------------------------------------------------------------------------------
// Slice

class Slice : public Kernel {
 public:
  explicit Slice(const OpContext& ctx) : opset_(ctx.opset()) {
    if (opset_ < 10) {  // version 1 takes attributes and has no steps
      starts_ = ctx.attr_ints("starts");
      ends_ = ctx.attr_ints("ends");
      if (ctx.has_attr("axes")) axes_ = ctx.attr_ints("axes");
    }
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "data");
    std::vector<int64_t> starts = starts_, ends = ends_;
    std::optional<std::vector<int64_t>> axes = axes_, steps;
    if (opset_ >= 10) {
      starts = read_indices(input_tensor(in, 1, "starts"), "input 'starts'");
      ends = read_indices(input_tensor(in, 2, "ends"), "input 'ends'");
      if (const Tensor* a = optional_input(in, 3, "axes")) axes = read_indices(*a, "input 'axes'");
      if (const Tensor* s = optional_input(in, 4, "steps"))
        steps = read_indices(*s, "input 'steps'");
    }
    if (!axes) {  // the first starts.size() axes
      axes.emplace();
      for (size_t i = 0; i < starts.size(); ++i) axes->push_back(static_cast<int64_t>(i));
    }
    if (!steps) steps.emplace(starts.size(), 1);
    if (ends.size() != starts.size() || axes->size() != starts.size() ||
        steps->size() != starts.size())
      ctx.fail(
          "starts, ends, axes and steps have {}, {}, {} and {} values; they must have "
          "as many",
          starts.size(), ends.size(), axes->size(), steps->size());
    const std::vector<int64_t> axis_list = normalize_axes(*axes, x.rank());

    Shape out = x.shape(), in_strides = strides_of(x.shape()), strides = in_strides;
    int64_t base = 0;
    for (size_t i = 0; i < axis_list.size(); ++i) {
      const int64_t a = axis_list[i], dim = x.shape()[a], step = (*steps)[i];
      if (step == 0) ctx.fail("steps [{}] has a 0; steps must not be 0", fmt::join(*steps, ", "));
      auto [start, count] = slice_range(starts[i], ends[i], step, dim);
      out[a] = count;
      base += start * in_strides[a];  // start < dim: within the tensor
      // With one element or none the stride is never used; with more, |step| < dim bounds it.
      strides[a] = count > 1 ? step * in_strides[a] : 0;
    }
    if (shape_numel(out) == 0) base = 0;
    return {strided_copy(x, base, out, strides)};
  }

 private:
  // ONNX's rule: negative values count from the end, then start and end are clamped to
  // [0, dim] for a positive step and to [0, dim-1] / [-1, dim-1] for a negative one.
  static std::pair<int64_t, int64_t> slice_range(int64_t start, int64_t end, int64_t step,
                                                 int64_t dim) {
    if (dim == 0) return {0, 0};
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    int64_t count;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      count = end > start ? (end - start - 1) / step + 1 : 0;  // no overflow for a huge step
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      const int64_t magnitude = step == INT64_MIN ? INT64_MAX : -step;
      count = start > end ? (start - end - 1) / magnitude + 1 : 0;
    }
    return {count > 0 ? start : 0, count};
  }

  int64_t opset_;
  std::vector<int64_t> starts_, ends_;
  std::optional<std::vector<int64_t>> axes_;
};
// Versions 1 (attributes), 10 (inputs, steps), 11 (negative axes), 13.
PARITY_REF_OP("", "Slice", 1, kOpsetMax, Slice);

// ---------------------------------------------------------------------------------------------
// Pad and CenterCropPad

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

// Output index o along an axis reads input index o - begin; outside [0, dim) each mode maps
// it back in (numpy.pad's rules, also for pads longer than the axis), or -1 for a constant.
inline int64_t pad_source(int64_t j, int64_t dim, PadMode mode) {
  if (j >= 0 && j < dim) return j;
  switch (mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kEdge:
      return j < 0 ? 0 : dim - 1;
    case PadMode::kWrap:
      return ((j % dim) + dim) % dim;
    case PadMode::kReflect: {
      if (dim == 1) return 0;
      const int64_t period = 2 * (dim - 1);
      int64_t m = ((j % period) + period) % period;
      return m < dim ? m : period - m;
    }
  }
  return -1;
}

// Pads (or, with negative pads, crops) x by pad_begin/pad_end per axis; `fill` is a
// one-element tensor of x's type used by the constant mode.
template <typename S>
Tensor pad_tensor(const Tensor& x, const std::vector<int64_t>& pad_begin,
                  const std::vector<int64_t>& pad_end, PadMode mode, const S& fill) {
  const Shape& in = x.shape();
  const size_t rank = in.size();
  Shape out(rank);
  for (size_t d = 0; d < rank; ++d)
    out[d] =
        checked_add(checked_add(in[d], pad_begin[d], "a padded dim"), pad_end[d], "a padded dim");
  Tensor y = uninitialized_tensor(x.dtype(), out);
  const int64_t numel = y.numel();
  if (numel == 0) return y;
  const S* src = static_cast<const S*>(x.raw_data());
  S* dst = static_cast<S*>(y.raw_data());
  if (rank == 0) {
    dst[0] = src[0];
    return y;
  }
  const Shape in_strides = strides_of(in);
  const int64_t inner = out[rank - 1], in_inner = in[rank - 1], begin = pad_begin[rank - 1];
  // The part of an output row that copies the input row as it is.
  const int64_t copy_lo = std::clamp<int64_t>(begin, 0, inner);
  const int64_t copy_hi = std::clamp<int64_t>(begin + in_inner, 0, inner);
  parallel_for(numel / inner, grain_for(inner), [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      S* o = dst + row * inner;
      int64_t off = 0, r = row;
      bool in_fill = false;
      for (size_t d = rank - 1; d-- > 0;) {
        const int64_t j = pad_source(r % out[d] - pad_begin[d], in[d], mode);
        r /= out[d];
        if (j < 0) in_fill = true;
        off += j * in_strides[d];
      }
      if (in_fill) {
        std::fill(o, o + inner, fill);
        continue;
      }
      const S* irow = src + off;
      for (int64_t i = 0; i < copy_lo; ++i) {
        const int64_t j = pad_source(i - begin, in_inner, mode);
        o[i] = j < 0 ? fill : irow[j];
      }
      if (copy_hi > copy_lo)
        std::copy(irow + (copy_lo - begin), irow + (copy_hi - begin), o + copy_lo);
      for (int64_t i = copy_hi; i < inner; ++i) {
        const int64_t j = pad_source(i - begin, in_inner, mode);
        o[i] = j < 0 ? fill : irow[j];
      }
    }
  });
  return y;
}

// Checks the pads against x's shape, then pads; `fill` is a one-element tensor of x's type.
Tensor pad_checked(const Tensor& x, const std::vector<int64_t>& pad_begin,
                   const std::vector<int64_t>& pad_end, PadMode mode, const Tensor& fill,
                   RunContext& ctx) {
  for (size_t d = 0; d < pad_begin.size(); ++d) {
    const int64_t dim = x.shape()[d];
    // A pad below -dim would crop past the far end of the axis (and make offsets overflow).
    if (pad_begin[d] < -dim || pad_end[d] < -dim)
      ctx.fail(
          "pads {} and {} on axis {} of size {}: a negative pad crops and can remove at "
          "most the {} elements the axis holds",
          pad_begin[d], pad_end[d], d, dim, dim);
    if (checked_add(checked_add(dim, pad_begin[d], "a padded dim"), pad_end[d], "a padded dim") < 0)
      ctx.fail("pads {} and {} on axis {} of size {} remove more than the axis holds", pad_begin[d],
               pad_end[d], d, dim);
    if (mode != PadMode::kConstant && dim == 0 && (pad_begin[d] > 0 || pad_end[d] > 0))
      ctx.fail(
          "axis {} has size 0 and cannot be padded by copying its own values; only the "
          "constant mode pads an empty axis",
          d);
  }
  return on_bytes(x, [&](const Tensor& bx) {
    const Tensor f = is_4bit(fill.dtype()) ? unpack_4bit(fill) : fill;
    return dispatch_storage(bx.dtype(), [&]<typename S>() {
      return pad_tensor<S>(bx, pad_begin, pad_end, mode, static_cast<const S*>(f.raw_data())[0]);
    });
  });
}

// A one-element tensor of `dtype` holding `value` (Pad's 'value' attribute before opset 11).
Tensor fill_of_type(DataType dtype, double value) {
  if (dtype == DataType::kString) return Tensor(dtype, {});
  Tensor f(dtype, {});
  if (is_4bit(dtype)) {
    Tensor b = unpack_4bit(f);
    static_cast<int8_t*>(b.raw_data())[0] = static_cast<int8_t>(value);
    return pack_4bit(b, dtype);
  }
  dispatch<Concat<AllTypes, TypeList<float8e4m3fn, float8e4m3fnuz, float8e5m2, float8e5m2fnuz>>>(
      dtype,
      [&]<typename T>() {
        if constexpr (std::is_same_v<T, float8e4m3fn> || std::is_same_v<T, float8e4m3fnuz> ||
                      std::is_same_v<T, float8e5m2> || std::is_same_v<T, float8e5m2fnuz>)
          f.data<T>()[0] = T::from_double(value);
        else
          f.data<T>()[0] = narrow<T>(value);
      },
      "input 'data'");
  return f;
}

class Pad : public Kernel {
 public:
  explicit Pad(const OpContext& ctx) : opset_(ctx.opset()) {
    const std::string mode = ctx.attr_string("mode", "constant");
    if (mode == "constant")
      mode_ = PadMode::kConstant;
    else if (mode == "reflect")
      mode_ = PadMode::kReflect;
    else if (mode == "edge")
      mode_ = PadMode::kEdge;
    else if (mode == "wrap" && opset_ >= 19)
      mode_ = PadMode::kWrap;
    else
      ctx.fail("attribute 'mode' is '{}'; valid modes: constant, reflect, edge{}", mode,
               opset_ >= 19 ? ", wrap" : "");
    if (opset_ < 11) {  // pads and value are attributes: 'paddings' in version 1, 'pads' in 2
      pads_ = ctx.attr_ints(opset_ < 2 ? "paddings" : "pads");
      value_ = ctx.attr_float("value", 0.0f);
    }
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "data");
    const int64_t rank = x.rank();
    std::vector<int64_t> pads = pads_, axes;
    Tensor fill;
    if (opset_ < 11) {
      fill = fill_of_type(x.dtype(), value_);
    } else {
      pads = read_int64s(input_tensor(in, 1, "pads"), "input 'pads'");
      const Tensor* value = optional_input(in, 2, "constant_value");
      if (value && value->numel() != 1)
        ctx.fail("input 'constant_value' has shape {}; it must hold one value",
                 shape_str(value->shape()));
      if (value && value->dtype() != x.dtype())
        ctx.fail("input 'constant_value' is {} and input 'data' is {}; they must be equal",
                 dtype_name(value->dtype()), dtype_name(x.dtype()));
      fill = value ? *value : fill_of_type(x.dtype(), 0.0);
    }
    if (const Tensor* a = opset_ >= 18 ? optional_input(in, 3, "axes") : nullptr)
      axes = normalize_axes(read_indices(*a, "input 'axes'"), rank);
    else
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    const size_t n = axes.size();
    if (pads.size() != 2 * n)
      ctx.fail("pads [{}] has {} values; the {} padded axes need {} (all begins, then all ends)",
               fmt::join(pads, ", "), pads.size(), n, 2 * n);
    std::vector<int64_t> begin(rank, 0), end(rank, 0);
    for (size_t i = 0; i < n; ++i) {
      begin[axes[i]] = pads[i];
      end[axes[i]] = pads[i + n];
    }
    return {pad_checked(x, begin, end, mode_, fill, ctx)};
  }

 private:
  int64_t opset_;
  PadMode mode_ = PadMode::kConstant;
  std::vector<int64_t> pads_;
  float value_ = 0.0f;
};
// Versions 1 ('paddings'), 2 ('pads'), 11 (pads and constant_value inputs), 13 (bool),
// 18 (axes input), 19 (wrap mode), 21, 23 (types).
PARITY_REF_OP("", "Pad", 1, kOpsetMax, Pad);

class CenterCropPad : public Kernel {
 public:
  explicit CenterCropPad(const OpContext& ctx) : axes_(ctx.attr_ints("axes", {})) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "input_data");
    const int64_t rank = x.rank();
    std::vector<int64_t> shape = read_indices(input_tensor(in, 1, "shape"), "input 'shape'");
    std::vector<int64_t> axes = axes_;
    if (axes.empty())
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    axes = normalize_axes(axes, rank);
    if (shape.size() != axes.size())
      ctx.fail("shape [{}] has {} values; the {} axes need one each", fmt::join(shape, ", "),
               shape.size(), axes.size());
    // Cropping and padding are both centred, with the odd element on the end side: a pad of
    // floor(diff / 2) at the beginning, negative when cropping.
    std::vector<int64_t> begin(rank, 0), end(rank, 0);
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t dim = x.shape()[axes[i]], target = shape[i];
      if (target < 0)
        ctx.fail("shape [{}] has a negative size; sizes must be 0 or more", fmt::join(shape, ", "));
      const int64_t diff = target - dim;
      begin[axes[i]] = diff >= 0 ? diff / 2 : -((-diff) / 2);
      end[axes[i]] = diff - begin[axes[i]];
    }
    return {pad_checked(x, begin, end, PadMode::kConstant, fill_of_type(x.dtype(), 0.0), ctx)};
  }

 private:
  std::vector<int64_t> axes_;
};
// Version 18, 23 (types).
PARITY_REF_OP("", "CenterCropPad", 18, kOpsetMax, CenterCropPad);

// ---------------------------------------------------------------------------------------------
// DepthToSpace and SpaceToDepth: a reshape to 6 dims, a transpose, a reshape back.

// Copies x (seen with shape `view`) transposed by `perm` and gives the result shape `out`.
Tensor permuted(const Tensor& x, const Shape& view, const std::vector<int64_t>& perm,
                const Shape& out) {
  Shape view_strides = strides_of(view), shape(perm.size()), strides(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) {
    shape[d] = view[perm[d]];
    strides[d] = view_strides[perm[d]];
  }
  return strided_copy(x, 0, shape, strides).reshaped(out);
}

class DepthToSpace : public Kernel {
 public:
  explicit DepthToSpace(const OpContext& ctx) : block_(ctx.attr_int("blocksize")) {
    const std::string mode = ctx.opset() >= 11 ? ctx.attr_string("mode", "DCR") : "DCR";
    if (mode != "DCR" && mode != "CRD")
      ctx.fail("attribute 'mode' is '{}'; valid modes: DCR, CRD", mode);
    crd_ = mode == "CRD";
    if (block_ < 1) ctx.fail("attribute 'blocksize' is {}; it must be 1 or more", block_);
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "input");
    check_rank(x, 4, 4, "input 'input'");
    const int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
    const int64_t b = block_;
    checked_mul(checked_mul(h, b, "the output height"), checked_mul(w, b, "the output width"),
                "the output's spatial size");
    const int64_t bb = checked_mul(b, b, "blocksize * blocksize");
    if (c % bb != 0)
      ctx.fail("input has {} channels, not a multiple of blocksize * blocksize = {}", c, bb);
    const int64_t oc = c / (b * b);
    const Shape out{n, oc, h * b, w * b};
    if (crd_) return {permuted(x, {n, oc, b, b, h, w}, {0, 1, 4, 2, 5, 3}, out)};
    return {permuted(x, {n, b, b, oc, h, w}, {0, 3, 4, 1, 5, 2}, out)};
  }

 private:
  int64_t block_;
  bool crd_ = false;
};
// Versions 1 (DCR only), 11 (mode), 13.
PARITY_REF_OP("", "DepthToSpace", 1, kOpsetMax, DepthToSpace);

class SpaceToDepth : public Kernel {
 public:
  explicit SpaceToDepth(const OpContext& ctx) : block_(ctx.attr_int("blocksize")) {
    if (block_ < 1) ctx.fail("attribute 'blocksize' is {}; it must be 1 or more", block_);
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "input");
    check_rank(x, 4, 4, "input 'input'");
    const int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
    const int64_t b = block_;
    if (h % b != 0 || w % b != 0)
      ctx.fail("input of shape {} has a height or width that is not a multiple of blocksize {}",
               shape_str(x.shape()), b);
    return {permuted(
        x, {n, c, h / b, b, w / b, b}, {0, 3, 5, 1, 2, 4},
        {n, checked_mul(c, checked_mul(b, b, "blocksize * blocksize"), "the output channels"),
         h / b, w / b})};
  }

 private:
  int64_t block_;
};
// Versions 1, 13.
PARITY_REF_OP("", "SpaceToDepth", 1, kOpsetMax, SpaceToDepth);

// ---------------------------------------------------------------------------------------------
// ReverseSequence

class ReverseSequence : public Kernel {
 public:
  explicit ReverseSequence(const OpContext& ctx)
      : batch_axis_(ctx.attr_int("batch_axis", 1)), time_axis_(ctx.attr_int("time_axis", 0)) {
    if (!((batch_axis_ == 0 && time_axis_ == 1) || (batch_axis_ == 1 && time_axis_ == 0)))
      ctx.fail("attributes batch_axis {} and time_axis {} must be 0 and 1 in some order",
               batch_axis_, time_axis_);
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "input");
    check_rank(x, 2, std::numeric_limits<int64_t>::max(), "input 'input'");
    const int64_t batch = x.shape()[batch_axis_], time = x.shape()[time_axis_];
    std::vector<int64_t> lens =
        read_indices(input_tensor(in, 1, "sequence_lens"), "input 'sequence_lens'");
    if (static_cast<int64_t>(lens.size()) != batch)
      ctx.fail("sequence_lens has {} values; the batch axis has size {}", lens.size(), batch);
    for (size_t i = 0; i < lens.size(); ++i)
      if (lens[i] < 0 || lens[i] > time)
        ctx.fail("sequence_lens[{}] is {}; lengths must be in [0, {}] (the time axis)", i, lens[i],
                 time);
    const int64_t inner = dims_product(x.shape(), 2, x.rank());
    // Offsets of (batch b, time t) rows of `inner` elements.
    const int64_t bstride = (batch_axis_ == 0 ? time : 1) * inner;
    const int64_t tstride = (time_axis_ == 0 ? batch : 1) * inner;
    return {on_bytes(x, [&](const Tensor& bx) {
      return dispatch_storage(bx.dtype(), [&]<typename S>() {
        Tensor y = uninitialized_tensor(bx.dtype(), bx.shape());
        const S* src = static_cast<const S*>(bx.raw_data());
        S* dst = static_cast<S*>(y.raw_data());
        parallel_for(batch * time, grain_for(inner), [&](int64_t b0, int64_t e0) {
          for (int64_t k = b0; k < e0; ++k) {
            const int64_t b = k / time, t = k % time;
            const int64_t from = t < lens[b] ? lens[b] - 1 - t : t;
            const S* row = src + b * bstride + from * tstride;
            std::copy(row, row + inner, dst + b * bstride + t * tstride);
          }
        });
        return y;
      });
    })};
  }

 private:
  int64_t batch_axis_, time_axis_;
};
// Version 10.
PARITY_REF_OP("", "ReverseSequence", 10, kOpsetMax, ReverseSequence);

}  // namespace
}  // namespace parity::ref
