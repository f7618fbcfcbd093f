// QuantizeLinear, DequantizeLinear (per tensor, per axis, and per block from opset 21) and
// DynamicQuantizeLinear.
//
// QuantizeLinear: y = saturate(round(x / scale) + zero_point), rounding half to even. The
// quotient is first rounded to x's type, as the spec's reference and ONNX Runtime compute it
// (x / scale in float32 for float32 x), so that a quotient landing on .5 in float32 rounds the
// same way. For float8 outputs y = cast(x / scale + zero_point) with `saturate`; float4e2m1
// outputs (opset 23) likewise, always saturating.
// DequantizeLinear: y = (x - zero_point) * scale, in double, rounded once to scale's type.
#include <cmath>

#include "backend/ref/ops/mx_util.h"

namespace parity::ref {
namespace {

// QuantizeLinear's outputs; DequantizeLinear also reads int32.
using QuantizedTypes =
    Concat<TypeList<uint8_t, int8_t, uint16_t, int16_t, Int4, UInt4, Float4E2M1>, Float8Types>;
using DequantizeInputTypes = Concat<QuantizedTypes, TypeList<int32_t>>;

// How scale and zero point map onto x: one value, one per index of `axis`, or one per block
// of `block_size` indices along `axis` (the parameters then have x's rank).
struct ParamLayout {
  int64_t outer = 1, dim = 1, inner = 1;  // x as [outer, dim, inner] around the axis
  int64_t block = 0;                      // 0: per tensor or per axis
  int64_t blocks = 1;                     // scale's size along the axis when blocked
  bool per_tensor = true;

  // The parameter index of x's element (o, a, i).
  int64_t index(int64_t o, int64_t a, int64_t i) const {
    if (per_tensor) return 0;
    if (block == 0) return a;
    return (o * blocks + a / block) * inner + i;
  }
};

ParamLayout param_layout(const Tensor& x, const Tensor& scale, const Tensor* zero_point,
                         int64_t axis_attr, int64_t block_size, int64_t opset, RunContext& ctx) {
  ParamLayout p;
  p.dim = x.numel();
  const bool one_zero_point = !zero_point || zero_point->numel() == 1;
  if (block_size == 0 && scale.rank() <= 1 && scale.numel() == 1 && one_zero_point)
    return p;  // per tensor (a scalar or a 1-element vector)
  if (zero_point && zero_point->shape() != scale.shape())
    ctx.fail("zero point has shape {} and scale {}; they must be equal",
             shape_str(zero_point->shape()), shape_str(scale.shape()));
  if (opset < 13)
    ctx.fail("scale has shape {}; before opset 13 it must be a scalar", shape_str(scale.shape()));
  const int64_t axis = normalize_axis(axis_attr, x.rank());
  p.per_tensor = false;
  p.outer = dims_product(x.shape(), 0, axis);
  p.dim = x.shape()[axis];
  p.inner = dims_product(x.shape(), axis + 1, x.rank());
  if (block_size == 0) {
    if (scale.rank() != 1 || scale.numel() != p.dim)
      ctx.fail("scale has shape {}; per axis it must be 1-D with x's dim {} along axis {} ({})",
               shape_str(scale.shape()), p.dim, axis, shape_str(x.shape()));
    return p;
  }
  if (block_size < 0) ctx.fail("attribute 'block_size' is {}; it must be 0 or more", block_size);
  p.block = block_size;
  p.blocks = (p.dim + block_size - 1) / block_size;
  Shape expected = x.shape();
  expected[axis] = p.blocks;
  if (scale.shape() != expected)
    ctx.fail("scale has shape {}; with block_size {} along axis {} of x {} it must be {}",
             shape_str(scale.shape()), block_size, axis, shape_str(x.shape()), shape_str(expected));
  return p;
}

// Runs fn(x_index, param_index) over every element of x, in parallel chunks.
template <typename F>
void for_each_element(const ParamLayout& p, F&& fn) {
  parallel_for(p.outer * p.dim * p.inner, kElementwiseGrain, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t row = k / p.inner;
      fn(k, p.index(row / p.dim, row % p.dim, k % p.inner));
    }
  });
}

template <typename Q>
void store_quantized(void* dst, int64_t k, double quotient, double zero_point, bool saturate) {
  const size_t i = static_cast<size_t>(k);
  if constexpr (is_float8_v<Q>) {
    static_cast<Q*>(dst)[i] = Q::from_double(quotient + zero_point, saturate);
  } else if constexpr (std::is_same_v<Q, Float4E2M1>) {
    float4e2m1_set(static_cast<uint8_t*>(dst), i, quotient + zero_point);  // always saturates
  } else {
    double lo = -8, hi = 7;  // Int4
    if constexpr (std::is_same_v<Q, UInt4>) {
      lo = 0;
      hi = 15;
    } else if constexpr (!std::is_same_v<Q, Int4>) {
      lo = static_cast<double>(std::numeric_limits<Q>::lowest());
      hi = static_cast<double>(std::numeric_limits<Q>::max());
    }
    double v = std::nearbyint(quotient) + zero_point;
    v = std::isnan(v) ? 0 : std::clamp(v, lo, hi);
    if constexpr (std::is_same_v<Q, Int4>)
      int4_set(static_cast<uint8_t*>(dst), i, static_cast<int8_t>(v));
    else if constexpr (std::is_same_v<Q, UInt4>)
      uint4_set(static_cast<uint8_t*>(dst), i, static_cast<uint8_t>(v));
    else
      static_cast<Q*>(dst)[i] = static_cast<Q>(v);
  }
}

class QuantizeLinear : public Kernel {
 public:
  explicit QuantizeLinear(const OpContext& ctx)
      : opset_(ctx.opset()),
        axis_(ctx.attr_int("axis", 1)),
        block_size_(ctx.attr_int("block_size", 0)),
        saturate_(ctx.attr_int("saturate", 1) != 0) {
    if (int64_t t = ctx.attr_int("output_dtype", 0); t != 0) {
      if (!dtype_is_valid(static_cast<int32_t>(t)))
        ctx.fail("attribute 'output_dtype' is {}; it must be a TensorProto data type", t);
      output_dtype_ = static_cast<DataType>(t);
    }
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "x");
    const Tensor& scale = input_tensor(in, 1, "y_scale");
    const Tensor* zp = optional_input(in, 2, "y_zero_point");
    DataType out_type = zp ? zp->dtype() : output_dtype_.value_or(DataType::kUInt8);
    if (zp && output_dtype_ && *output_dtype_ != zp->dtype())
      ctx.fail("attribute 'output_dtype' is {} and y_zero_point's type {}; they must be equal",
               dtype_name(*output_dtype_), dtype_name(zp->dtype()));
    ParamLayout layout = param_layout(x, scale, zp, axis_, block_size_, opset_, ctx);
    Tensor y = uninitialized_tensor(out_type, x.shape());
    if (dtype_is_4bit(out_type))
      std::fill_n(static_cast<uint8_t*>(y.raw_data()), y.nbytes(), uint8_t{0});
    const bool saturate = saturate_;
    dispatch<Concat<FloatTypes, TypeList<int32_t>>>(
        x.dtype(),
        [&]<typename X>() {
          dispatch<FloatTypes>(
              scale.dtype(),
              [&]<typename S>() {
                dispatch_elem(
                    QuantizedTypes{}, out_type,
                    [&]<typename Q>() {
                      const X* px = x.data<X>();
                      const S* ps = scale.data<S>();
                      const void* pz = zp ? zp->raw_data() : nullptr;
                      void* py = y.raw_data();
                      for_each_element(layout, [&](int64_t k, int64_t p) {
                        double q = to_double(px[k]) / to_double(ps[p]);
                        if constexpr (is_float_like_v<X>) q = to_double(narrow<X>(q));
                        const double z =
                            pz ? mx_load_as_double<Q>(pz, static_cast<size_t>(p)) : 0.0;
                        store_quantized<Q>(py, k, q, z, saturate);
                      });
                    },
                    "the output (y_zero_point or output_dtype)");
              },
              "input y_scale");
        },
        "input x");
    return {y};
  }

 private:
  int64_t opset_, axis_, block_size_;
  bool saturate_;
  std::optional<DataType> output_dtype_;
};
// Versions 10, 13 (axis), 19 (float8, saturate, float16 inputs), 21 (blocks, 16- and 4-bit
// outputs, output_dtype).
PARITY_REF_OP("", "QuantizeLinear", 10, kOpsetMax, QuantizeLinear);

class DequantizeLinear : public Kernel {
 public:
  explicit DequantizeLinear(const OpContext& ctx)
      : opset_(ctx.opset()),
        axis_(ctx.attr_int("axis", 1)),
        block_size_(ctx.attr_int("block_size", 0)) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "x");
    const Tensor& scale = input_tensor(in, 1, "x_scale");
    const Tensor* zp = optional_input(in, 2, "x_zero_point");
    if (zp) check_same_dtype(x, *zp, ctx, "x", "x_zero_point");
    ParamLayout layout = param_layout(x, scale, zp, axis_, block_size_, opset_, ctx);
    Tensor y = uninitialized_tensor(scale.dtype(), x.shape());
    dispatch_elem(
        DequantizeInputTypes{}, x.dtype(),
        [&]<typename Q>() {
          dispatch<FloatTypes>(
              scale.dtype(),
              [&]<typename S>() {
                const void* px = x.raw_data();
                const S* ps = scale.data<S>();
                const void* pz = zp ? zp->raw_data() : nullptr;
                S* py = y.data<S>();
                for_each_element(layout, [&](int64_t k, int64_t p) {
                  const double z = pz ? mx_load_as_double<Q>(pz, static_cast<size_t>(p)) : 0.0;
                  py[k] = narrow<S>((mx_load_as_double<Q>(px, static_cast<size_t>(k)) - z) *
                                    to_double(ps[p]));
                });
              },
              "input x_scale");
        },
        "input x");
    return {y};
  }

 private:
  int64_t opset_, axis_, block_size_;
};
// Versions 10, 13 (axis), 19 (float8, float16 scales), 21 (blocks, 16- and 4-bit inputs).
PARITY_REF_OP("", "DequantizeLinear", 10, kOpsetMax, DequantizeLinear);

// DynamicQuantizeLinear: uint8 quantization with a scale and zero point chosen from x's range
// (widened to include 0). Each step is the spec's float32 formula, every operation rounded to
// float32 as the spec's reference computes it.
class DynamicQuantizeLinear : public Kernel {
 public:
  explicit DynamicQuantizeLinear(const OpContext&) {}
  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "x");
    if (x.dtype() != DataType::kFloat32)
      fail_unsupported_type(x.dtype(), "input x", {DataType::kFloat32});
    const float* px = x.data<float>();
    const int64_t n = x.numel();
    float lo = 0, hi = 0;
    for (int64_t i = 0; i < n; ++i) {
      lo = std::min(lo, px[i]);
      hi = std::max(hi, px[i]);
    }
    const float scale = (hi - lo) / 255.0f;
    // NaN quantizes to 0, as in QuantizeLinear: a NaN or infinite x (inf / inf), or a
    // zero point from an x spanning -inf to inf, would otherwise be cast to uint8 undefined.
    auto to_uint8 = [](float q) {
      return static_cast<uint8_t>(std::isnan(q) ? 0.0f : std::clamp(q, 0.0f, 255.0f));
    };
    float zero_point = 0;
    if (scale != 0)
      zero_point = to_uint8(std::nearbyint(std::clamp(0.0f - lo / scale, 0.0f, 255.0f)));
    Tensor y = uninitialized_tensor(DataType::kUInt8, x.shape());
    uint8_t* py = y.data<uint8_t>();
    parallel_for(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        // An all-zero x has scale 0: every value quantizes to the zero point 0.
        const float q = scale == 0 ? 0.0f : std::nearbyint(px[i] / scale) + zero_point;
        py[i] = to_uint8(q);
      }
    });
    return {y, Tensor::scalar<float>(scale),
            Tensor::scalar<uint8_t>(static_cast<uint8_t>(zero_point))};
  }
};
// Version 11.
PARITY_REF_OP("", "DynamicQuantizeLinear", 11, kOpsetMax, DynamicQuantizeLinear);

}  // namespace
}  // namespace parity::ref
