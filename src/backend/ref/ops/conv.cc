// Conv: 1-D, 2-D and 3-D convolution with pads/auto_pad, strides, dilations, groups and bias,
// plus the attribute and shape checks the whole convolution family shares (conv_util.h).
//
// Direct loops with double accumulators: for one (batch, output channel) pair, the whole
// output plane is accumulated in a double buffer while each input channel's plane is swept
// once per kernel tap, so the innermost loop runs along contiguous output and input rows.
// Every output element sums its products in the same order (input channel, then kernel
// depth, height, width), and one chunk computes it, whatever the thread count.
#include "backend/ref/ops/conv_util.h"

namespace parity::ref {

ConvAttrs read_conv_attrs(const OpContext& ctx) {
  ConvAttrs a;
  a.window = read_window_attrs(ctx, /*with_ceil_mode=*/false);
  a.kernel_shape = ctx.attr_ints("kernel_shape", {});
  a.group = ctx.attr_int("group", 1);
  if (a.group < 1) ctx.fail("attribute 'group' is {}; it must be 1 or more", a.group);
  if (ctx.num_inputs() < 2) ctx.fail("it has {} inputs; it needs X and W", ctx.num_inputs());
  return a;
}

WindowGeometry conv_geometry(const ConvAttrs& attrs, const Shape& x, const Shape& w,
                             const RunContext& ctx) {
  if (x.size() < 3)
    ctx.fail("X has shape {}; it needs a batch, a channel and at least one spatial dim",
             shape_str(x));
  if (w.size() != x.size())
    ctx.fail("X has shape {} and W {}; they must have the same rank", shape_str(x), shape_str(w));
  const int64_t channels = x[1], maps = w[0], group = attrs.group;
  if (channels % group != 0 || maps % group != 0 || w[1] * group != channels)
    ctx.fail("X has {} channels and W shape {} with group={}; W's dim 1 times group must "
             "equal the channels, and both channel counts must divide by group",
             channels, shape_str(w), group);
  Shape w_spatial(w.begin() + 2, w.end());
  if (!attrs.kernel_shape.empty() && attrs.kernel_shape != w_spatial)
    ctx.fail("attribute 'kernel_shape' [{}] disagrees with W's spatial shape {}",
             fmt::join(attrs.kernel_shape, ", "), shape_str(w_spatial));
  return window_geometry(attrs.window, Shape(x.begin() + 2, x.end()), w_spatial);
}

namespace {

class Conv : public Kernel {
 public:
  explicit Conv(const OpContext& ctx) : attrs_(read_conv_attrs(ctx)) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const Tensor& w = input_tensor(in, 1, "W");
    const Tensor* bias = optional_input(in, 2, "B");
    for (const Tensor* t : {&w, bias})
      if (t && t->dtype() != x.dtype())
        ctx.fail("inputs have element types {} and {}; they must be equal",
                 dtype_name(x.dtype()), dtype_name(t->dtype()));
    WindowGeometry geometry = conv_geometry(attrs_, x.shape(), w.shape(), ctx);
    if (bias && bias->numel() != w.shape()[0])
      ctx.fail("B has shape {}; it must hold one value per output channel ({})",
               shape_str(bias->shape()), w.shape()[0]);
    return {dispatch<FloatTypes>(
        x.dtype(), [&]<typename T>() { return convolve<T>(x, w, bias, geometry); }, "input X")};
  }

 private:
  template <typename T>
  Tensor convolve(const Tensor& x, const Tensor& w, const Tensor* bias,
                  const WindowGeometry& geometry) const {
    const int64_t batch = x.shape()[0], maps = w.shape()[0];
    Shape out_shape = {batch, maps};
    out_shape.insert(out_shape.end(), geometry.out.begin(), geometry.out.end());
    Tensor y = uninitialized_tensor(x.dtype(), out_shape);
    if (y.numel() == 0) return y;
    const int64_t out_size = shape_numel(geometry.out);
    // Inputs in double once, so the inner loop is a pure multiply-add.
    std::vector<double> xd = converted<T, double>(x), wd = converted<T, double>(w);
    const T* bs = bias ? bias->data<T>() : nullptr;
    T* dst = y.data<T>();
    direct_conv<double>(geometry, batch, x.shape()[1], maps, attrs_.group, xd.data(), wd.data(),
                        [&](int64_t n, int64_t m, const double* acc) {
                          const double b = bs ? to_double(bs[m]) : 0.0;
                          T* out = dst + (n * maps + m) * out_size;
                          for (int64_t i = 0; i < out_size; ++i) out[i] = narrow<T>(acc[i] + b);
                        });
    return y;
  }

  ConvAttrs attrs_;
};
// Versions 1, 11 (auto_pad and default-stride fixes), 22 (bfloat16).
PARITY_REF_OP("", "Conv", 1, kOpsetMax, Conv);

}  // namespace
}  // namespace parity::ref
