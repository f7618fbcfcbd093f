// DeformConv (19): a convolution whose kernel taps are moved by learned offsets and scaled by
// an optional mask. Tap t of output position o reads X at
//   -pad_begin + o * stride + t * dilation + offset[n, og, t, dim, o]
// (per spatial dim), interpolated (multi)linearly from the pixels around it, pixels outside
// the image reading 0; og is the offset group of the input channel.
//
// Per batch and tile of output positions, the sampled values form a [C * taps, tile] matrix in
// double (memory stays bounded), and each output channel sums its group's rows in a fixed
// order, so the bits do not depend on the thread count.
#include <cmath>

#include "backend/ref/ops/conv_util.h"

namespace parity::ref {
namespace {

class DeformConv : public Kernel {
 public:
  explicit DeformConv(const OpContext& ctx)
      : attrs_(read_conv_attrs(ctx)), offset_group_(ctx.attr_int("offset_group", 1)) {
    if (offset_group_ < 1)
      ctx.fail("attribute 'offset_group' is {}; it must be 1 or more", offset_group_);
    if (ctx.num_inputs() < 3)
      ctx.fail("it has {} inputs; it needs X, W and offset", ctx.num_inputs());
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const Tensor& w = input_tensor(in, 1, "W");
    const Tensor& offset = input_tensor(in, 2, "offset");
    const Tensor* bias = optional_input(in, 3, "B");
    const Tensor* mask = optional_input(in, 4, "mask");
    for (const Tensor* t : {&w, &offset, bias, mask})
      if (t && t->dtype() != x.dtype())
        ctx.fail("inputs have element types {} and {}; they must be equal", dtype_name(x.dtype()),
                 dtype_name(t->dtype()));
    WindowGeometry g = conv_geometry(attrs_, x.shape(), w.shape(), ctx);
    const int64_t r = x.rank() - 2, taps = dims_product(w.shape(), 2, w.rank());
    const int64_t batch = x.shape()[0], channels = x.shape()[1], maps = w.shape()[0];
    if (channels % offset_group_ != 0)
      ctx.fail("X has {} channels; they must divide by offset_group {}", channels, offset_group_);
    auto expect_shape = [&](const Tensor& t, const char* name, int64_t per_tap) {
      Shape s = {batch, offset_group_ * taps * per_tap};
      s.insert(s.end(), g.out.begin(), g.out.end());
      if (t.shape() != s)
        ctx.fail("{} has shape {}; it must be {} (offset_group {}, {} taps, output {})", name,
                 shape_str(t.shape()), shape_str(s), offset_group_, taps, shape_str(g.out));
    };
    expect_shape(offset, "offset", r);
    if (mask) expect_shape(*mask, "mask", 1);
    if (bias && bias->numel() != maps)
      ctx.fail("B has shape {}; it must hold one value per output channel ({})",
               shape_str(bias->shape()), maps);
    return {dispatch<FloatTypes>(
        x.dtype(), [&]<typename T>() { return convolve<T>(x, w, offset, bias, mask, g); },
        "input X")};
  }

 private:
  template <typename T>
  Tensor convolve(const Tensor& x, const Tensor& w, const Tensor& offset, const Tensor* bias,
                  const Tensor* mask, const WindowGeometry& g) const {
    const int64_t r = x.rank() - 2, batch = x.shape()[0], channels = x.shape()[1];
    const int64_t maps = w.shape()[0], group = attrs_.group;
    const int64_t cg = channels / group, mg = maps / group, cog = channels / offset_group_;
    const Shape kernel(w.shape().begin() + 2, w.shape().end());
    const int64_t taps = shape_numel(kernel), positions = shape_numel(g.out);
    const int64_t plane = shape_numel(g.in), corners = int64_t{1} << r;
    Shape out_shape = {batch, maps};
    out_shape.insert(out_shape.end(), g.out.begin(), g.out.end());
    Tensor y = uninitialized_tensor(x.dtype(), out_shape);
    if (y.numel() == 0) return y;
    const std::vector<double> xd = converted<T, double>(x), wd = converted<T, double>(w);
    const std::vector<double> od = converted<T, double>(offset);
    const std::vector<double> md = mask ? converted<T, double>(*mask) : std::vector<double>();
    const T* bs = bias ? bias->data<T>() : nullptr;
    T* dst = y.data<T>();
    const Shape in_strides = strides_of(g.in);
    const int64_t tile = std::clamp<int64_t>((int64_t{1} << 19) / (channels * taps), 1, positions);
    const int64_t tiles = (positions + tile - 1) / tile;
    parallel_for(batch * tiles, 1, [&](int64_t first, int64_t last) {
      std::vector<double> col(static_cast<size_t>(channels * taps * tile));
      std::vector<int64_t> at(static_cast<size_t>(corners));
      std::vector<double> wt(static_cast<size_t>(corners));
      std::vector<int64_t> pos(static_cast<size_t>(r)), tap(static_cast<size_t>(r));
      for (int64_t item = first; item < last; ++item) {
        const int64_t n = item / tiles, p0 = item % tiles * tile;
        const int64_t len = std::min(tile, positions - p0);
        for (int64_t og = 0; og < offset_group_; ++og)
          for (int64_t t = 0; t < taps; ++t)
            for (int64_t i = 0; i < len; ++i) {
              const int64_t p = p0 + i;
              unravel(p, g.out, pos.data());
              unravel(t, kernel, tap.data());
              // The corners around the sampling point and their weights (-1: outside).
              std::fill(at.begin(), at.end(), 0);
              std::fill(wt.begin(), wt.end(), 1.0);
              for (int64_t d = 0; d < r; ++d) {
                const double off =
                    od[((n * offset_group_ + og) * taps * r + t * r + d) * positions + p];
                const double c =
                    double(pos[d] * g.strides[d] + tap[d] * g.dilations[d] - g.pad_begin[d]) + off;
                const double c0 = std::floor(c), f = c - c0;
                // A point a pixel or more outside (or at a non-finite offset) reads 0 at every
                // corner: tested before the cast, which is undefined for such a coordinate.
                const bool near = c0 > -2.0 && c0 < double(g.in[d]);
                const int64_t i0 = near ? static_cast<int64_t>(c0) : -2;
                for (int64_t k = 0; k < corners; ++k) {
                  const bool hi = (k >> (r - 1 - d)) & 1;
                  const int64_t idx = i0 + (hi ? 1 : 0);
                  if (at[k] < 0 || idx < 0 || idx >= g.in[d]) {
                    at[k] = -1;
                    continue;
                  }
                  at[k] += idx * in_strides[d];
                  wt[k] *= hi ? f : 1 - f;
                }
              }
              const double m =
                  mask ? md[((n * offset_group_ + og) * taps + t) * positions + p] : 1.0;
              for (int64_t c = og * cog; c < (og + 1) * cog; ++c) {
                const double* img = xd.data() + (n * channels + c) * plane;
                double v = 0;
                for (int64_t k = 0; k < corners; ++k)
                  if (at[k] >= 0) v += wt[k] * img[at[k]];
                col[(c * taps + t) * tile + i] = v * m;
              }
            }
        for (int64_t mo = 0; mo < maps; ++mo) {
          const int64_t grp = mo / mg;
          const double b = bs ? to_double(bs[mo]) : 0.0;
          T* out = dst + (n * maps + mo) * positions + p0;
          for (int64_t i = 0; i < len; ++i) {
            double acc = 0;
            for (int64_t ci = 0; ci < cg; ++ci) {
              const double* wk = wd.data() + (mo * cg + ci) * taps;
              const double* rows = col.data() + ((grp * cg + ci) * taps) * tile + i;
              for (int64_t t = 0; t < taps; ++t) acc += wk[t] * rows[t * tile];
            }
            out[i] = narrow<T>(acc + b);
          }
        }
      }
    });
    return y;
  }

  static void unravel(int64_t index, const Shape& dims, int64_t* out) {
    for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
      out[d] = index % dims[d];
      index /= dims[d];
    }
  }

  ConvAttrs attrs_;
  int64_t offset_group_;
};
// Version 19 (introduced), 22 (bfloat16).
PARITY_REF_OP("", "DeformConv", 19, kOpsetMax, DeformConv);

}  // namespace
}  // namespace parity::ref
