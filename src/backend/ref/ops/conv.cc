// Conv: 1-D, 2-D and 3-D convolution with pads/auto_pad, strides, dilations, groups and bias,
// plus the attribute and shape checks the whole convolution family shares (conv_util.h).
//
// Floating convolutions run as a blocked GEMM in double: per (batch, group, tile of output
// positions, block of output channels), the im2col matrix is built kc rows at a time straight
// into packed panels (so memory stays bounded whatever the input size) and multiplied by the
// packed weights with a register-blocked micro-kernel. Every output element starts at 0 and
// adds its products one by one in increasing k = (input channel, kernel depth, height,
// width), computed by one chunk, so the bits do not depend on the thread count or the tiling;
// float, float16 and bfloat16 products are exact in double, so fused multiply-adds give the
// same bits as separate ones.
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

// The GEMM's register block: kMR output channels by kNR output positions.
constexpr int64_t kMR = 6, kNR = 8;
constexpr int64_t kKc = 256;         // rows of the im2col matrix per packed block
constexpr int64_t kTile = 256;       // output positions per work item
constexpr int64_t kMBlock = 16 * kMR;  // output channels per work item

typedef double v4d __attribute__((vector_size(32), aligned(8)));

// c[kMR x kNR] (row stride ldc) += a[kc x kMR] (packed by k) * b[kc x kNR] (packed by k), each
// element adding its kc products in increasing k.
__attribute__((target_clones("arch=x86-64-v3", "default"), optimize("fp-contract=fast")))
void micro_kernel(int64_t kc, const double* a, const double* b, double* c, int64_t ldc) {
  v4d acc[kMR][2];
  for (int64_t i = 0; i < kMR; ++i) {
    acc[i][0] = *reinterpret_cast<const v4d*>(c + i * ldc);
    acc[i][1] = *reinterpret_cast<const v4d*>(c + i * ldc + 4);
  }
  for (int64_t k = 0; k < kc; ++k) {
    const v4d b0 = *reinterpret_cast<const v4d*>(b + k * kNR);
    const v4d b1 = *reinterpret_cast<const v4d*>(b + k * kNR + 4);
    for (int64_t i = 0; i < kMR; ++i) {
      const v4d av = v4d{} + a[k * kMR + i];
      acc[i][0] += av * b0;
      acc[i][1] += av * b1;
    }
  }
  for (int64_t i = 0; i < kMR; ++i) {
    *reinterpret_cast<v4d*>(c + i * ldc) = acc[i][0];
    *reinterpret_cast<v4d*>(c + i * ldc + 4) = acc[i][1];
  }
}

// Each group's weights [mg x K] in double, packed in panels of kMR rows (zero rows pad the
// last panel), each panel stored k-major: panel[k * kMR + row].
std::vector<double> pack_weights(const std::vector<double>& w, int64_t group, int64_t mg,
                                 int64_t k_total) {
  const int64_t panels = (mg + kMR - 1) / kMR;
  std::vector<double> packed(static_cast<size_t>(group * panels * kMR * k_total), 0.0);
  for (int64_t g = 0; g < group; ++g)
    for (int64_t p = 0; p < panels; ++p) {
      double* dst = packed.data() + (g * panels + p) * kMR * k_total;
      for (int64_t i = 0; i < kMR && p * kMR + i < mg; ++i) {
        const double* row = w.data() + (g * mg + p * kMR + i) * k_total;
        for (int64_t k = 0; k < k_total; ++k) dst[k * kMR + i] = row[k];
      }
    }
  return packed;
}

// Where one output position's window starts in the input, per spatial dim (3-D geometry).
struct WindowStart {
  int64_t d, h, w;
};
// Where one im2col row reads, relative to the window start: input channel offset and the
// dilated tap position.
struct TapOffset {
  int64_t channel, d, h, w;
};

// The im2col rows [k0, k0 + kc) for the output positions whose window starts are `starts`,
// packed in panels of kNR positions (k-major within a panel); padding reads 0.
void pack_columns(const WindowGeometry& g, const double* x, const TapOffset* rows, int64_t kc,
                  const WindowStart* starts, int64_t len, double* packed) {
  const int64_t panels = (len + kNR - 1) / kNR;
  for (int64_t panel = 0; panel < panels; ++panel) {
    const int64_t i0 = panel * kNR, n = std::min(kNR, len - i0);
    double* dst = packed + panel * kc * kNR;
    for (int64_t k = 0; k < kc; ++k, dst += kNR) {
      const TapOffset& t = rows[k];
      for (int64_t i = 0; i < n; ++i) {
        const WindowStart& s = starts[i0 + i];
        const int64_t id = s.d + t.d, ih = s.h + t.h, iw = s.w + t.w;
        const bool inside = static_cast<uint64_t>(id) < static_cast<uint64_t>(g.in[0]) &&
                            static_cast<uint64_t>(ih) < static_cast<uint64_t>(g.in[1]) &&
                            static_cast<uint64_t>(iw) < static_cast<uint64_t>(g.in[2]);
        dst[i] = inside ? x[t.channel + (id * g.in[1] + ih) * g.in[2] + iw] : 0.0;
      }
      for (int64_t i = n; i < kNR; ++i) dst[i] = 0.0;
    }
  }
}

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
    const WindowGeometry g = window_as_3d(geometry);
    const int64_t channels = x.shape()[1], group = attrs_.group;
    const int64_t cg = channels / group, mg = maps / group;
    const int64_t taps = g.kernel[0] * g.kernel[1] * g.kernel[2], k_total = cg * taps;
    const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
    const int64_t positions = g.out[0] * g.out[1] * g.out[2];
    const std::vector<double> xd = converted<T, double>(x);
    const std::vector<double> wp = pack_weights(converted<T, double>(w), group, mg, k_total);
    const int64_t panels = (mg + kMR - 1) / kMR;
    const int64_t tiles = (positions + kTile - 1) / kTile;
    const int64_t mblocks = (panels * kMR + kMBlock - 1) / kMBlock;
    const T* bs = bias ? bias->data<T>() : nullptr;
    T* dst = y.data<T>();
    // Where each im2col row reads: (input channel, kernel depth, height, width) in order.
    std::vector<TapOffset> rows(static_cast<size_t>(k_total));
    for (int64_t k = 0; k < k_total; ++k) {
      const int64_t tap = k % taps;
      rows[k] = {k / taps * in_plane, tap / (g.kernel[1] * g.kernel[2]) * g.dilations[0],
                 tap / g.kernel[2] % g.kernel[1] * g.dilations[1],
                 tap % g.kernel[2] * g.dilations[2]};
    }
    std::vector<WindowStart> starts(static_cast<size_t>(positions));
    for (int64_t p = 0; p < positions; ++p)
      starts[p] = {p / (g.out[1] * g.out[2]) * g.strides[0] - g.pad_begin[0],
                   p / g.out[2] % g.out[1] * g.strides[1] - g.pad_begin[1],
                   p % g.out[2] * g.strides[2] - g.pad_begin[2]};
    const int64_t items = batch * group * tiles * mblocks;
    parallel_for(items, 1, [&](int64_t first, int64_t last) {
      std::vector<double> cols(static_cast<size_t>(kKc * kTile));
      std::vector<double> acc(static_cast<size_t>(kMBlock * kTile));
      for (int64_t item = first; item < last; ++item) {
        const int64_t mb = item % mblocks, tile = item / mblocks % tiles;
        const int64_t grp = item / mblocks / tiles % group, n = item / mblocks / tiles / group;
        const int64_t p0 = tile * kTile, len = std::min(kTile, positions - p0);
        const int64_t ld = (len + kNR - 1) / kNR * kNR;
        const int64_t panel0 = mb * (kMBlock / kMR);
        const int64_t panel1 = std::min(panels, panel0 + kMBlock / kMR);
        std::fill(acc.begin(), acc.end(), 0.0);
        const double* image = xd.data() + (n * channels + grp * cg) * in_plane;
        for (int64_t k0 = 0; k0 < k_total; k0 += kKc) {
          const int64_t kc = std::min(kKc, k_total - k0);
          pack_columns(g, image, rows.data() + k0, kc, starts.data() + p0, len, cols.data());
          for (int64_t p = panel0; p < panel1; ++p) {
            const double* a = wp.data() + ((grp * panels + p) * k_total + k0) * kMR;
            double* c = acc.data() + (p - panel0) * kMR * ld;
            for (int64_t j = 0; j < ld; j += kNR)
              micro_kernel(kc, a, cols.data() + j * kc, c + j, ld);
          }
        }
        for (int64_t m = panel0 * kMR; m < std::min(mg, panel1 * kMR); ++m) {
          const int64_t map = grp * mg + m;
          const double b = bs ? to_double(bs[map]) : 0.0;
          const double* row = acc.data() + (m - panel0 * kMR) * ld;
          T* out = dst + (n * maps + map) * positions + p0;
          for (int64_t i = 0; i < len; ++i) out[i] = narrow<T>(row[i] + b);
        }
      }
    });
    return y;
  }

  ConvAttrs attrs_;
};
// Versions 1, 11 (auto_pad and default-stride fixes), 22 (bfloat16).
PARITY_REF_OP("", "Conv", 1, kOpsetMax, Conv);

}  // namespace
}  // namespace parity::ref
