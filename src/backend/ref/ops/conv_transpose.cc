// ConvTranspose: the gradient of Conv with respect to its input, 1-D to 3-D, with strides,
// dilations, groups, pads or auto_pad, output_padding and output_shape.
//
// Each input element scatters its products into the output: y[o] += x[i] * w[k] where
// o = i * stride + k * dilation - pad_begin. For one (batch, output channel) plane, one chunk
// adds input channel by input channel, tap by tap, into a double plane, so every output
// element sums in a fixed order whatever the thread count.
#include "backend/ref/ops/conv_util.h"

namespace parity::ref {
namespace {

class ConvTranspose : public Kernel {
 public:
  explicit ConvTranspose(const OpContext& ctx)
      : attrs_(read_conv_attrs(ctx)),
        output_padding_(ctx.attr_ints("output_padding", {})),
        output_shape_(ctx.attr_ints("output_shape", {})) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const Tensor& w = input_tensor(in, 1, "W");
    const Tensor* bias = optional_input(in, 2, "B");
    for (const Tensor* t : {&w, bias})
      if (t && t->dtype() != x.dtype())
        ctx.fail("inputs have element types {} and {}; they must be equal", dtype_name(x.dtype()),
                 dtype_name(t->dtype()));
    WindowGeometry g = geometry(x.shape(), w.shape(), ctx);
    const int64_t maps = w.shape()[1] * attrs_.group;
    if (bias && bias->numel() != maps)
      ctx.fail("B has shape {}; it must hold one value per output channel ({})",
               shape_str(bias->shape()), maps);
    return {dispatch<FloatTypes>(
        x.dtype(), [&]<typename T>() { return convolve<T>(x, w, bias, g); }, "input X")};
  }

 private:
  // The output sizes and pads: from output_shape (pads split around the excess), auto_pad
  // SAME_* (output = input * stride) or explicit pads.
  WindowGeometry geometry(const Shape& x, const Shape& w, const RunContext& ctx) const {
    if (x.size() < 3 || x.size() > 5 || w.size() != x.size())
      ctx.fail("X has shape {} and W {}; they must have the same rank, 3 to 5", shape_str(x),
               shape_str(w));
    const int64_t group = attrs_.group;
    if (x[1] != w[0] || x[1] % group != 0)
      ctx.fail(
          "X has {} channels and W shape {} with group={}; W's dim 0 must equal the "
          "channels, which must divide by group",
          x[1], shape_str(w), group);
    const size_t n = x.size() - 2;
    WindowGeometry g;
    g.in.assign(x.begin() + 2, x.end());
    g.kernel.assign(w.begin() + 2, w.end());
    if (!attrs_.kernel_shape.empty() && attrs_.kernel_shape != g.kernel)
      ctx.fail("attribute 'kernel_shape' [{}] disagrees with W's spatial shape {}",
               fmt::join(attrs_.kernel_shape, ", "), shape_str(g.kernel));
    auto values = [&](const std::vector<int64_t>& v, const char* name, size_t count, int64_t dflt) {
      if (v.empty()) return std::vector<int64_t>(count, dflt);
      if (v.size() != count)
        ctx.fail(
            "attribute '{}' has {} values; it must have {} for an input with {} spatial "
            "dims",
            name, v.size(), count, n);
      return v;
    };
    const WindowAttrs& a = attrs_.window;
    g.strides = values(a.strides, "strides", n, 1);
    g.dilations = values(a.dilations, "dilations", n, 1);
    std::vector<int64_t> pads = values(a.pads, "pads", 2 * n, 0);
    std::vector<int64_t> out_pad = values(output_padding_, "output_padding", n, 0);
    // output_shape may also be given with its batch and channel dims.
    std::vector<int64_t> out_shape = output_shape_;
    if (out_shape.size() == n + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
    if (!out_shape.empty()) values(out_shape, "output_shape", n, 0);
    g.out.resize(n);
    g.pad_begin.resize(n);
    g.pad_end.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const int64_t full =
          g.strides[i] * (g.in[i] - 1) + out_pad[i] + g.dilations[i] * (g.kernel[i] - 1) + 1;
      const bool same = a.auto_pad == AutoPad::kSameUpper || a.auto_pad == AutoPad::kSameLower;
      if (!out_shape.empty() || same) {
        g.out[i] = !out_shape.empty() ? out_shape[i] : g.in[i] * g.strides[i];
        // A negative total (an output larger than the full result) pads the end with zeros.
        const int64_t total = full - g.out[i];
        const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);  // floor(total / 2)
        const bool upper = a.auto_pad == AutoPad::kSameUpper;
        g.pad_begin[i] = upper ? half : total - half;
        g.pad_end[i] = total - g.pad_begin[i];
      } else {
        if (a.auto_pad == AutoPad::kNotSet) {
          g.pad_begin[i] = pads[i];
          g.pad_end[i] = pads[i + n];
        }
        g.out[i] = full - g.pad_begin[i] - g.pad_end[i];
      }
      if (g.out[i] < 0)
        ctx.fail(
            "failed to size the output of spatial dim {} with {}: pads [{}, {}] exceed the "
            "full output size {}",
            i, g.out[i], g.pad_begin[i], g.pad_end[i], full);
    }
    return g;
  }

  template <typename T>
  Tensor convolve(const Tensor& x, const Tensor& w, const Tensor* bias,
                  const WindowGeometry& geometry) const {
    const int64_t batch = x.shape()[0], channels = x.shape()[1];
    const int64_t mg = w.shape()[1], maps = mg * attrs_.group, cg = channels / attrs_.group;
    Shape out_shape = {batch, maps};
    out_shape.insert(out_shape.end(), geometry.out.begin(), geometry.out.end());
    Tensor y = uninitialized_tensor(x.dtype(), out_shape);
    if (y.numel() == 0) return y;
    const WindowGeometry g = window_as_3d(geometry);
    const int64_t in_size = g.in[0] * g.in[1] * g.in[2];
    const int64_t out_size = g.out[0] * g.out[1] * g.out[2];
    const int64_t taps = g.kernel[0] * g.kernel[1] * g.kernel[2];
    std::vector<double> xd = converted<T, double>(x), wd = converted<T, double>(w);
    const T* bs = bias ? bias->data<T>() : nullptr;
    T* dst = y.data<T>();
    parallel_for(batch * maps, grain_for(in_size * cg * taps), [&](int64_t first, int64_t last) {
      std::vector<double> acc(static_cast<size_t>(out_size));
      for (int64_t item = first; item < last; ++item) {
        const int64_t n = item / maps, m = item % maps, grp = m / mg;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t ci = 0; ci < cg; ++ci) {
          const int64_t c = grp * cg + ci;
          scatter_channel(g, xd.data() + (n * channels + c) * in_size,
                          wd.data() + (c * mg + m % mg) * taps, acc.data());
        }
        const double b = bs ? to_double(bs[m]) : 0.0;
        T* out = dst + item * out_size;
        for (int64_t i = 0; i < out_size; ++i) out[i] = narrow<T>(acc[i] + b);
      }
    });
    return y;
  }

  // acc[o] += plane[i] * wk[k] for o = i * stride + k * dilation - pad_begin inside the output.
  static void scatter_channel(const WindowGeometry& g, const double* plane, const double* wk,
                              double* acc) {
    const int64_t in_h = g.in[1], in_w = g.in[2], out_h = g.out[1], out_w = g.out[2];
    const int64_t sw = g.strides[2];
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd)
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
          const double wv = wk[(kd * g.kernel[1] + kh) * g.kernel[2] + kw];
          // Input columns iw whose output column iw * sw + base lies inside the row.
          const int64_t base = kw * g.dilations[2] - g.pad_begin[2];
          const int64_t lo = base >= 0 ? 0 : (-base + sw - 1) / sw;
          const int64_t hi = out_w - 1 - base < 0 ? 0 : std::min(in_w, (out_w - 1 - base) / sw + 1);
          if (lo >= hi) continue;
          for (int64_t id = 0; id < g.in[0]; ++id) {
            const int64_t od = id * g.strides[0] + kd * g.dilations[0] - g.pad_begin[0];
            if (od < 0 || od >= g.out[0]) continue;
            for (int64_t ih = 0; ih < in_h; ++ih) {
              const int64_t oh = ih * g.strides[1] + kh * g.dilations[1] - g.pad_begin[1];
              if (oh < 0 || oh >= out_h) continue;
              const double* row = plane + (id * in_h + ih) * in_w;
              double* out_row = acc + (od * out_h + oh) * out_w;
              if (sw == 1) {
                for (int64_t iw = lo; iw < hi; ++iw) out_row[iw + base] += wv * row[iw];
              } else {
                for (int64_t iw = lo; iw < hi; ++iw) out_row[iw * sw + base] += wv * row[iw];
              }
            }
          }
        }
  }

  ConvAttrs attrs_;
  std::vector<int64_t> output_padding_, output_shape_;
};
// Versions 1, 11 (auto_pad/output_shape rules restated), 22 (bfloat16).
PARITY_REF_OP("", "ConvTranspose", 1, kOpsetMax, ConvTranspose);

}  // namespace
}  // namespace parity::ref
