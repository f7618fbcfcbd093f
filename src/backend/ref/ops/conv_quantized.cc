// Integer convolutions: ConvInteger (int32 sums of zero-point-shifted 8-bit values) and
// QLinearConv (the same sums plus an int32 bias, requantised to 8 bits). Sums are exact in
// int64; QLinearConv scales once in double and rounds half to even (the spec's rounding),
// then saturates to the output type.
#include <cmath>

#include "backend/ref/ops/conv_util.h"

namespace parity::ref {
namespace {

using Int8Types = TypeList<int8_t, uint8_t>;

// A zero point: one value for the tensor, or (for W) one per output channel.
std::vector<int64_t> zero_points(const Tensor* zp, int64_t per_channel, std::string_view what,
                                 const RunContext& ctx) {
  if (!zp) return {0};
  std::vector<int64_t> v = read_int64s(*zp, what);
  if (v.size() != 1 && static_cast<int64_t>(v.size()) != per_channel)
    ctx.fail("{} has shape {}; it must hold 1 value{}", what, shape_str(zp->shape()),
             per_channel > 1 ? fmt::format(" or one per output channel ({})", per_channel) : "");
  return v;
}

// x - x_zero_point and w - w_zero_point[m], as int64.
struct ShiftedOperands {
  std::vector<int64_t> x, w;
};

ShiftedOperands shift_operands(const Tensor& x, const Tensor& w, const std::vector<int64_t>& xzp,
                               const std::vector<int64_t>& wzp) {
  ShiftedOperands s;
  dispatch<Int8Types>(
      x.dtype(), [&]<typename T>() { s.x = converted<T, int64_t>(x, xzp[0]); }, "input X");
  dispatch<Int8Types>(
      w.dtype(), [&]<typename T>() { s.w = converted<T, int64_t>(w, 0); }, "input W");
  const int64_t maps = w.shape()[0], per_map = maps ? w.numel() / maps : 0;
  for (int64_t m = 0; m < maps; ++m) {
    const int64_t z = wzp.size() == 1 ? wzp[0] : wzp[m];
    for (int64_t i = 0; i < per_map; ++i) s.w[m * per_map + i] -= z;
  }
  return s;
}

Shape conv_out_shape(const Tensor& x, const Tensor& w, const WindowGeometry& g) {
  Shape s = {x.shape()[0], w.shape()[0]};
  s.insert(s.end(), g.out.begin(), g.out.end());
  return s;
}

class ConvInteger : public Kernel {
 public:
  explicit ConvInteger(const OpContext& ctx) : attrs_(read_conv_attrs(ctx)) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "x");
    const Tensor& w = input_tensor(in, 1, "w");
    WindowGeometry geometry = conv_geometry(attrs_, x.shape(), w.shape(), ctx);
    const auto xzp = zero_points(optional_input(in, 2, "x_zero_point"), 1, "x_zero_point", ctx);
    const auto wzp =
        zero_points(optional_input(in, 3, "w_zero_point"), w.shape()[0], "w_zero_point", ctx);
    ShiftedOperands s = shift_operands(x, w, xzp, wzp);
    Tensor y = uninitialized_tensor(DataType::kInt32, conv_out_shape(x, w, geometry));
    if (y.numel() == 0) return {y};
    const int64_t maps = w.shape()[0], out_size = shape_numel(geometry.out);
    int32_t* dst = y.data<int32_t>();
    direct_conv<int64_t>(geometry, x.shape()[0], x.shape()[1], maps, attrs_.group, s.x.data(),
                         s.w.data(), [&](int64_t n, int64_t m, const int64_t* acc) {
                           int32_t* out = dst + (n * maps + m) * out_size;
                           for (int64_t i = 0; i < out_size; ++i)
                             out[i] = static_cast<int32_t>(acc[i]);
                         });
    return {y};
  }

 private:
  ConvAttrs attrs_;
};
PARITY_REF_OP("", "ConvInteger", 10, kOpsetMax, ConvInteger);

class QLinearConv : public Kernel {
 public:
  explicit QLinearConv(const OpContext& ctx) : attrs_(read_conv_attrs(ctx)) {
    if (ctx.num_inputs() < 8)
      ctx.fail(
          "it has {} inputs; it needs x, x_scale, x_zero_point, w, w_scale, w_zero_point, "
          "y_scale and y_zero_point",
          ctx.num_inputs());
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "x");
    const Tensor& w = input_tensor(in, 3, "w");
    const Tensor* bias = optional_input(in, 8, "B");
    WindowGeometry geometry = conv_geometry(attrs_, x.shape(), w.shape(), ctx);
    const int64_t maps = w.shape()[0], out_size = shape_numel(geometry.out);
    const double x_scale = read_scalar(input_tensor(in, 1, "x_scale"), "x_scale");
    const double y_scale = read_scalar(input_tensor(in, 6, "y_scale"), "y_scale");
    const Tensor& w_scale_t = input_tensor(in, 4, "w_scale");
    std::vector<double> w_scale(static_cast<size_t>(w_scale_t.numel()));
    dispatch<FloatTypes>(
        w_scale_t.dtype(),
        [&]<typename T>() {
          for (size_t i = 0; i < w_scale.size(); ++i)
            w_scale[i] = to_double(w_scale_t.data<T>()[i]);
        },
        "input w_scale");
    if (w_scale.size() != 1 && static_cast<int64_t>(w_scale.size()) != maps)
      ctx.fail("w_scale has shape {}; it must hold 1 value or one per output channel ({})",
               shape_str(w_scale_t.shape()), maps);
    const auto xzp = zero_points(optional_input(in, 2, "x_zero_point"), 1, "x_zero_point", ctx);
    const auto wzp = zero_points(optional_input(in, 5, "w_zero_point"), maps, "w_zero_point", ctx);
    const auto yzp = zero_points(optional_input(in, 7, "y_zero_point"), 1, "y_zero_point", ctx);
    std::vector<int64_t> b(static_cast<size_t>(maps), 0);
    if (bias) {
      if (bias->numel() != maps)
        ctx.fail("B has shape {}; it must hold one value per output channel ({})",
                 shape_str(bias->shape()), maps);
      b = read_int64s(*bias, "B");
    }
    ShiftedOperands s = shift_operands(x, w, xzp, wzp);
    const Tensor* y_zp_t = optional_input(in, 7, "y_zero_point");
    const DataType y_type = y_zp_t ? y_zp_t->dtype() : x.dtype();
    Tensor y = uninitialized_tensor(y_type, conv_out_shape(x, w, geometry));
    if (y.numel() == 0) return {y};
    dispatch<Int8Types>(
        y_type,
        [&]<typename T>() {
          T* dst = y.data<T>();
          constexpr double lo = std::numeric_limits<T>::lowest(),
                           hi = std::numeric_limits<T>::max();
          direct_conv<int64_t>(
              geometry, x.shape()[0], x.shape()[1], maps, attrs_.group, s.x.data(), s.w.data(),
              [&](int64_t n, int64_t m, const int64_t* acc) {
                const double scale = x_scale * w_scale[w_scale.size() == 1 ? 0 : m] / y_scale;
                T* out = dst + (n * maps + m) * out_size;
                for (int64_t i = 0; i < out_size; ++i) {
                  const double v = std::nearbyint(static_cast<double>(acc[i] + b[m]) * scale) +
                                   static_cast<double>(yzp[0]);
                  out[i] = static_cast<T>(std::clamp(v, lo, hi));
                }
              });
        },
        "input y_zero_point");
    return {y};
  }

 private:
  ConvAttrs attrs_;
};
PARITY_REF_OP("", "QLinearConv", 10, kOpsetMax, QLinearConv);

}  // namespace
}  // namespace parity::ref
