// Conv: 1-D, 2-D and 3-D convolution with pads/auto_pad, strides, dilations, groups and bias.
//
// Direct loops with double accumulators: for one (batch, output channel) pair, the whole
// output plane is accumulated in a double buffer while each input channel's plane is swept
// once per kernel tap, so the innermost loop runs along contiguous output and input rows.
// Every output element sums its products in the same order (input channel, then kernel
// depth, height, width), and one chunk computes it, whatever the thread count.
#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {
namespace {

class Conv : public Kernel {
 public:
  explicit Conv(const OpContext& ctx)
      : window_(read_window_attrs(ctx, /*with_ceil_mode=*/false)),
        kernel_shape_(ctx.attr_ints("kernel_shape", {})),
        group_(ctx.attr_int("group", 1)) {
    if (group_ < 1) ctx.fail("attribute 'group' is {}; it must be 1 or more", group_);
    if (ctx.num_inputs() < 2) ctx.fail("it has {} inputs; it needs X and W", ctx.num_inputs());
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const Tensor& w = input_tensor(in, 1, "W");
    const Tensor* bias = optional_input(in, 2, "B");
    check_rank(x, 3, 5, "input X");
    if (w.rank() != x.rank())
      ctx.fail("X has shape {} and W {}; they must have the same rank", shape_str(x.shape()),
               shape_str(w.shape()));
    for (const Tensor* t : {&w, bias})
      if (t && t->dtype() != x.dtype())
        ctx.fail("inputs have element types {} and {}; they must be equal",
                 dtype_name(x.dtype()), dtype_name(t->dtype()));
    const int64_t channels = x.shape()[1], maps = w.shape()[0];
    if (channels % group_ != 0 || maps % group_ != 0 || w.shape()[1] * group_ != channels)
      ctx.fail("X has {} channels and W shape {} with group={}; W's dim 1 times group must "
               "equal the channels, and both channel counts must divide by group",
               channels, shape_str(w.shape()), group_);
    if (bias && bias->numel() != maps)
      ctx.fail("B has shape {}; it must hold one value per output channel ({})",
               shape_str(bias->shape()), maps);
    Shape w_spatial(w.shape().begin() + 2, w.shape().end());
    if (!kernel_shape_.empty() && kernel_shape_ != w_spatial)
      ctx.fail("attribute 'kernel_shape' [{}] disagrees with W's spatial shape {}",
               fmt::join(kernel_shape_, ", "), shape_str(w_spatial));
    Shape x_spatial(x.shape().begin() + 2, x.shape().end());
    WindowGeometry geometry = window_geometry(window_, x_spatial, w_spatial);
    return {dispatch<FloatTypes>(
        x.dtype(), [&]<typename T>() { return convolve<T>(x, w, bias, geometry); }, "input X")};
  }

 private:
  template <typename T>
  Tensor convolve(const Tensor& x, const Tensor& w, const Tensor* bias,
                  const WindowGeometry& geometry) const {
    const WindowGeometry g = window_as_3d(geometry);
    const int64_t batch = x.shape()[0], channels = x.shape()[1], maps = w.shape()[0];
    const int64_t cg = channels / group_, mg = maps / group_;
    const int64_t in_size = g.in[0] * g.in[1] * g.in[2];
    const int64_t out_size = g.out[0] * g.out[1] * g.out[2];
    const int64_t taps = g.kernel[0] * g.kernel[1] * g.kernel[2];

    // Inputs in double once, so the inner loop is a pure multiply-add.
    std::vector<double> xd(static_cast<size_t>(x.numel())), wd(static_cast<size_t>(w.numel()));
    const T* xs = x.data<T>();
    const T* ws = w.data<T>();
    parallel_for(x.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) xd[i] = to_double(xs[i]);
    });
    for (int64_t i = 0; i < w.numel(); ++i) wd[i] = to_double(ws[i]);
    const T* bs = bias ? bias->data<T>() : nullptr;

    Shape out_shape = {batch, maps};
    out_shape.insert(out_shape.end(), geometry.out.begin(), geometry.out.end());
    Tensor y = uninitialized_tensor(x.dtype(), out_shape);
    T* dst = y.data<T>();

    parallel_for(batch * maps, grain_for(out_size * cg * taps), [&](int64_t first, int64_t last) {
      std::vector<double> acc(static_cast<size_t>(out_size));
      for (int64_t item = first; item < last; ++item) {
        const int64_t n = item / maps, m = item % maps, grp = m / mg;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t ci = 0; ci < cg; ++ci) {
          const double* plane = xd.data() + (n * channels + grp * cg + ci) * in_size;
          const double* wk = wd.data() + (m * cg + ci) * taps;
          accumulate_channel(g, plane, wk, acc.data());
        }
        const double b = bs ? to_double(bs[m]) : 0.0;
        T* out = dst + item * out_size;
        for (int64_t i = 0; i < out_size; ++i) out[i] = narrow<T>(acc[i] + b);
      }
    });
    return y;
  }

  // acc += the convolution of one input plane with one kernel (3-D geometry).
  static void accumulate_channel(const WindowGeometry& g, const double* plane, const double* wk,
                                 double* acc) {
    const int64_t in_h = g.in[1], in_w = g.in[2];
    const int64_t out_h = g.out[1], out_w = g.out[2];
    const int64_t sw = g.strides[2];
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd)
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
          const double wv = wk[(kd * g.kernel[1] + kh) * g.kernel[2] + kw];
          // Output columns whose input column ow * sw + base lies inside the row.
          const int64_t base = kw * g.dilations[2] - g.pad_begin[2];
          const int64_t lo = base >= 0 ? 0 : (-base + sw - 1) / sw;
          const int64_t hi =
              in_w - 1 - base < 0 ? 0 : std::min(out_w, (in_w - 1 - base) / sw + 1);
          if (lo >= hi) continue;
          for (int64_t od = 0; od < g.out[0]; ++od) {
            const int64_t id = od * g.strides[0] + kd * g.dilations[0] - g.pad_begin[0];
            if (id < 0 || id >= g.in[0]) continue;
            for (int64_t oh = 0; oh < out_h; ++oh) {
              const int64_t ih = oh * g.strides[1] + kh * g.dilations[1] - g.pad_begin[1];
              if (ih < 0 || ih >= in_h) continue;
              const double* row = plane + (id * in_h + ih) * in_w;
              double* out_row = acc + (od * out_h + oh) * out_w;
              if (sw == 1) {
                for (int64_t ow = lo; ow < hi; ++ow) out_row[ow] += wv * row[ow + base];
              } else {
                for (int64_t ow = lo; ow < hi; ++ow) out_row[ow] += wv * row[ow * sw + base];
              }
            }
          }
        }
  }

  WindowAttrs window_;
  std::vector<int64_t> kernel_shape_;
  int64_t group_;
};
// Versions 1, 11 (auto_pad and default-stride fixes), 22 (bfloat16).
PARITY_REF_OP("", "Conv", 1, kOpsetMax, Conv);

}  // namespace
}  // namespace parity::ref
