// Conv: 1-D, 2-D and 3-D convolution with pads/auto_pad, strides, dilations, groups and bias,
// plus the attribute and shape checks the whole convolution family shares (conv_util.h).
//
// Floating convolutions run as a blocked GEMM in double on the micro-kernel of gemm_kernel.h:
// per (batch, group, tile of output positions, block of output channels), the im2col matrix is
// built kGemmKc rows at a time straight into packed panels (so memory stays bounded whatever
// the input size) and multiplied by the packed weights (packed once when W is a constant).
// Every output element starts at 0 and adds its products one by one in increasing k = (input
// channel, kernel depth, height, width), computed by one work item, so the bits do not depend
// on the thread count, the tiling or the CPU; float, float16 and bfloat16 products are exact in
// double, so fused multiply-adds give the same bits as separate ones (double inputs multiply
// and add separately).
#include <optional>
#include <tuple>
#include <utility>

#include "backend/ref/ops/conv_util.h"
#include "backend/ref/ops/gemm_kernel.h"

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

constexpr int64_t kTile = 16 * kGemmNR;  // output positions per work item
constexpr int64_t kMaxBlockPanels = 16;  // weight panels (of kGemmMR channels) per work item
constexpr int64_t kMinItems = 8;         // work items per convolution, when the channels allow

// Each group's weights [mg x K] in double, packed in panels of kGemmMR rows (zero rows pad the
// last panel), each panel stored k-major: panel[k * kGemmMR + row].
struct PackedWeights {
  DataType dtype;
  Shape shape;
  int64_t panels = 0;  // per group
  std::vector<double> values;
};

template <typename T>
PackedWeights pack_weights(const Tensor& w, int64_t group) {
  PackedWeights p;
  p.dtype = w.dtype();
  p.shape = w.shape();
  const int64_t mg = w.shape()[0] / group, k_total = shape_numel(w.shape()) / w.shape()[0];
  p.panels = (mg + kGemmMR - 1) / kGemmMR;
  p.values.assign(static_cast<size_t>(group * p.panels * kGemmMR * k_total), 0.0);
  const T* src = w.data<T>();
  parallel_for(group * p.panels, grain_for(kGemmMR * k_total), [&](int64_t first, int64_t last) {
    for (int64_t item = first; item < last; ++item) {
      const int64_t g = item / p.panels, panel = item % p.panels;
      double* dst = p.values.data() + item * kGemmMR * k_total;
      for (int64_t i = 0; i < kGemmMR && panel * kGemmMR + i < mg; ++i) {
        const T* row = src + (g * mg + panel * kGemmMR + i) * k_total;
        for (int64_t k = 0; k < k_total; ++k) dst[k * kGemmMR + i] = to_double(row[k]);
      }
    }
  });
  return p;
}

// Where one output position's window starts in the input, per spatial dim (3-D geometry).
struct WindowStart {
  int64_t d, h, w;
};
// Where one im2col row reads, relative to the window start: input channel offset and the
// dilated tap position.
struct TapOffset {
  int64_t channel, d, h, w;
  int64_t kw;  // the kernel column, which alone decides where a row of positions is in bounds
};

// Consecutive output positions of one output row, inside one panel of kGemmNR positions: their
// windows start at (d, h, w + q * stride) for q < len, and they sit at index `first` of the
// tile. bounds[kw] = the positions [lo, hi) of the run whose input column, for kernel column kw,
// lies inside the input row (worked out once per tile, so packing needs no division).
struct PositionRun {
  int64_t first, len, d, h, w;
  std::vector<std::pair<int64_t, int64_t>> bounds;
};

// The runs of the tile's positions (window starts `starts`, `len` of them).
void position_runs(const WindowGeometry& g, const WindowStart* starts, int64_t len,
                   std::vector<PositionRun>& runs) {
  const int64_t sw = g.strides[2], in_w = g.in[2];
  size_t count = 0;
  for (int64_t i = 0; i < len; ++i) {
    const WindowStart& s = starts[i];
    if (count > 0 && i % kGemmNR != 0) {
      PositionRun& r = runs[count - 1];
      if (r.d == s.d && r.h == s.h && r.w + r.len * sw == s.w) {
        ++r.len;
        continue;
      }
    }
    if (runs.size() == count) runs.emplace_back();  // (keeps the bounds' storage when reused)
    PositionRun& r = runs[count++];
    r.first = i;
    r.len = 1;
    r.d = s.d;
    r.h = s.h;
    r.w = s.w;
  }
  runs.resize(count);
  for (PositionRun& r : runs) {
    r.bounds.resize(static_cast<size_t>(g.kernel[2]));
    for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
      const int64_t iw0 = r.w + kw * g.dilations[2];
      const int64_t hi = iw0 > in_w - 1 ? 0 : std::min(r.len, (in_w - 1 - iw0) / sw + 1);
      const int64_t lo = iw0 >= 0 ? 0 : (-iw0 + sw - 1) / sw;
      r.bounds[kw] = {std::min(lo, hi), hi};
    }
  }
}

// The im2col rows [k0, k0 + kc) for the tile's positions (`runs`, `len` in all), packed in
// panels of kGemmNR positions (k-major within a panel); padding reads 0. Panels are written one
// after the other, so the copy is a strided read and a sequential write.
void pack_columns(const WindowGeometry& g, const double* x, const TapOffset* rows, int64_t kc,
                  const std::vector<PositionRun>& runs, int64_t len, double* packed) {
  const int64_t sw = g.strides[2], in_w = g.in[2];
  for (size_t r0 = 0; r0 < runs.size();) {
    const int64_t panel = runs[r0].first / kGemmNR, i0 = panel * kGemmNR;
    size_t r1 = r0;
    while (r1 < runs.size() && runs[r1].first / kGemmNR == panel) ++r1;
    const int64_t width = std::min(kGemmNR, len - i0);
    double* dst = packed + panel * kc * kGemmNR;
    for (int64_t k = 0; k < kc; ++k, dst += kGemmNR) {
      const TapOffset& t = rows[k];
      for (size_t ri = r0; ri < r1; ++ri) {
        const PositionRun& r = runs[ri];
        const int64_t id = r.d + t.d, ih = r.h + t.h;
        int64_t lo = 0, hi = 0;  // the run's positions [lo, hi) read inside the input row
        if (static_cast<uint64_t>(id) < static_cast<uint64_t>(g.in[0]) &&
            static_cast<uint64_t>(ih) < static_cast<uint64_t>(g.in[1]))
          std::tie(lo, hi) = r.bounds[t.kw];
        double* out = dst + (r.first - i0);
        for (int64_t q = 0; q < lo; ++q) out[q] = 0.0;
        if (lo < hi) {
          const double* src = x + t.channel + (id * g.in[1] + ih) * in_w + r.w + t.w;
          if (sw == 1)
            for (int64_t q = lo; q < hi; ++q) out[q] = src[q];
          else
            for (int64_t q = lo; q < hi; ++q) out[q] = src[q * sw];
        }
        for (int64_t q = hi; q < r.len; ++q) out[q] = 0.0;
      }
      for (int64_t i = width; i < kGemmNR; ++i) dst[i] = 0.0;
    }
    r0 = r1;
  }
}

// The output channels of a group cut into work items: `count` blocks of `panels_per_block`
// weight panels (the last may be smaller), `panels` in all.
struct MapBlocks {
  int64_t panels, panels_per_block, count;
};

// Blocks of about equal numbers of weight panels, at most kMaxBlockPanels each, and enough of
// them for kMinItems work items with the `other_items` (batch, group, tile, ...) the output is
// cut into besides, so both cores stay busy on late layers with few positions. The blocking
// never changes a sum.
MapBlocks map_blocks(int64_t panels, int64_t other_items) {
  int64_t count = std::max((panels + kMaxBlockPanels - 1) / kMaxBlockPanels,
                           (kMinItems + other_items - 1) / std::max<int64_t>(other_items, 1));
  count = std::clamp<int64_t>(count, 1, std::max<int64_t>(panels, 1));
  const int64_t per = std::max<int64_t>((panels + count - 1) / count, 1);
  return {panels, per, (panels + per - 1) / per};
}

// Unit strides and no negative pads: the kernel can read B straight from a zero-padded copy of
// the input, without im2col (see convolve_in_place).
bool reads_in_place(const WindowGeometry& g) {
  for (size_t d = 0; d < 3; ++d)
    if (g.strides[d] != 1 || g.pad_begin[d] < 0 || g.pad_end[d] < 0) return false;
  return true;
}

bool is_floating(DataType dtype) {
  return dtype == DataType::kFloat32 || dtype == DataType::kFloat64 ||
         dtype == DataType::kFloat16 || dtype == DataType::kBFloat16;
}

class Conv : public Kernel {
 public:
  explicit Conv(const OpContext& ctx) : attrs_(read_conv_attrs(ctx)) {
    const Tensor* w = ctx.constant_input(1);
    if (w && w->rank() >= 3 && w->shape()[0] % attrs_.group == 0 && is_floating(w->dtype()))
      dispatch<FloatTypes>(w->dtype(),
                           [&]<typename T>() { weights_ = pack_weights<T>(*w, attrs_.group); });
  }

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
    std::optional<PackedWeights> packed_here;
    const PackedWeights* wp =
        weights_ && weights_->dtype == w.dtype() && weights_->shape == w.shape() ? &*weights_
                                                                                 : nullptr;
    if (!wp) wp = &packed_here.emplace(pack_weights<T>(w, group));
    if (reads_in_place(g)) {
      convolve_in_place<T>(x, g, *wp, bias, y);
      return y;
    }
    const std::vector<double> xd = converted<T, double>(x);
    const int64_t panels = wp->panels;
    const int64_t tiles = (positions + kTile - 1) / kTile;
    const MapBlocks blocks = map_blocks(panels, batch * group * tiles);
    const int64_t mblocks = blocks.count, block_panels = blocks.panels_per_block;
    const T* bs = bias ? bias->data<T>() : nullptr;
    T* dst = y.data<T>();
    // Where each im2col row reads: (input channel, kernel depth, height, width) in order.
    std::vector<TapOffset> rows(static_cast<size_t>(k_total));
    for (int64_t k = 0; k < k_total; ++k) {
      const int64_t tap = k % taps;
      rows[k] = {k / taps * in_plane, tap / (g.kernel[1] * g.kernel[2]) * g.dilations[0],
                 tap / g.kernel[2] % g.kernel[1] * g.dilations[1],
                 tap % g.kernel[2] * g.dilations[2], tap % g.kernel[2]};
    }
    std::vector<WindowStart> starts(static_cast<size_t>(positions));
    for (int64_t p = 0; p < positions; ++p)
      starts[p] = {p / (g.out[1] * g.out[2]) * g.strides[0] - g.pad_begin[0],
                   p / g.out[2] % g.out[1] * g.strides[1] - g.pad_begin[1],
                   p % g.out[2] * g.strides[2] - g.pad_begin[2]};
    const int64_t items = batch * group * tiles * mblocks;
    const int64_t item_work = block_panels * kGemmMR * std::min(kTile, positions) * k_total;
    parallel_for(items, grain_for(item_work), [&](int64_t first, int64_t last) {
      // Reused by every call on this thread: no allocation per convolution once warm.
      thread_local std::vector<double> cols, acc;
      thread_local std::vector<PositionRun> runs;
      cols.resize(static_cast<size_t>(kGemmKc * kTile));
      acc.resize(static_cast<size_t>(kMaxBlockPanels * kGemmMR * kTile));
      for (int64_t item = first; item < last; ++item) {
        const int64_t mb = item % mblocks, tile = item / mblocks % tiles;
        const int64_t grp = item / mblocks / tiles % group, n = item / mblocks / tiles / group;
        const int64_t p0 = tile * kTile, len = std::min(kTile, positions - p0);
        const int64_t col_panels = (len + kGemmNR - 1) / kGemmNR, ld = col_panels * kGemmNR;
        const int64_t panel0 = mb * block_panels;
        const int64_t row_panels = std::min(panels, panel0 + block_panels) - panel0;
        std::fill(acc.begin(), acc.begin() + row_panels * kGemmMR * ld, 0.0);
        const double* image = xd.data() + (n * channels + grp * cg) * in_plane;
        position_runs(g, starts.data() + p0, len, runs);
        const double* wg = wp->values.data() + (grp * panels + panel0) * k_total * kGemmMR;
        for (int64_t k0 = 0; k0 < k_total; k0 += kGemmKc) {
          const int64_t kc = std::min(kGemmKc, k_total - k0);
          pack_columns(g, image, rows.data() + k0, kc, runs, len, cols.data());
          gemm_panels(kc, wg + k0 * kGemmMR, k_total * kGemmMR, row_panels, cols.data(),
                      kc * kGemmNR, col_panels, acc.data(), ld, gemm_exact_products_v<T>);
        }
        for (int64_t m = panel0 * kGemmMR; m < std::min(mg, (panel0 + row_panels) * kGemmMR);
             ++m) {
          const int64_t map = grp * mg + m;
          const double b = bs ? to_double(bs[map]) : 0.0;
          const double* row = acc.data() + (m - panel0 * kGemmMR) * ld;
          T* out = dst + (n * maps + map) * positions + p0;
          for (int64_t i = 0; i < len; ++i) out[i] = narrow<T>(row[i] + b);
        }
      }
    });
    return y;
  }

  // With unit strides, output position (od, oh, ow) reads input (od, oh, ow) + tap offset of a
  // zero-padded copy of the input [Dp, Hp, Wp]. Numbering positions of one output depth slice
  // over the padded width, q = oh * Wp + ow, makes the tap offset a constant per k: kGemmNR
  // consecutive q are kGemmNR consecutive inputs, so the kernel reads B in place through a
  // table of row offsets (one per k, in the same (channel, kd, kh, kw) order as im2col, so the
  // same sums). Columns ow >= OW are computed and dropped.
  template <typename T>
  void convolve_in_place(const Tensor& x, const WindowGeometry& g, const PackedWeights& wp,
                         const Tensor* bias, Tensor& y) const {
    const int64_t batch = x.shape()[0], channels = x.shape()[1], maps = y.shape()[1];
    const int64_t group = attrs_.group, cg = channels / group, mg = maps / group;
    const int64_t dp = g.in[0] + g.pad_begin[0] + g.pad_end[0];
    const int64_t hp = g.in[1] + g.pad_begin[1] + g.pad_end[1];
    const int64_t wpad = g.in[2] + g.pad_begin[2] + g.pad_end[2];
    const int64_t plane = dp * hp * wpad, slice = hp * wpad;
    const int64_t taps = g.kernel[0] * g.kernel[1] * g.kernel[2], k_total = cg * taps;
    // The padded input in double, plus kGemmNR values read (and dropped) past the last plane.
    std::vector<double> xp(static_cast<size_t>(batch * channels * plane + kGemmNR), 0.0);
    const T* src = x.data<T>();
    parallel_for(batch * channels, grain_for(plane), [&](int64_t first, int64_t last) {
      for (int64_t c = first; c < last; ++c)
        for (int64_t d = 0; d < g.in[0]; ++d)
          for (int64_t h = 0; h < g.in[1]; ++h) {
            const T* row = src + ((c * g.in[0] + d) * g.in[1] + h) * g.in[2];
            double* out = xp.data() + c * plane + (d + g.pad_begin[0]) * slice +
                          (h + g.pad_begin[1]) * wpad + g.pad_begin[2];
            for (int64_t w = 0; w < g.in[2]; ++w) out[w] = to_double(row[w]);
          }
    });
    std::vector<int64_t> offsets(static_cast<size_t>(k_total));
    for (int64_t k = 0; k < k_total; ++k) {
      const int64_t tap = k % taps;
      offsets[k] = k / taps * plane +
                   tap / (g.kernel[1] * g.kernel[2]) * g.dilations[0] * slice +
                   tap / g.kernel[2] % g.kernel[1] * g.dilations[1] * wpad +
                   tap % g.kernel[2] * g.dilations[2];
    }
    const int64_t out_h = g.out[1], out_w = g.out[2], out_slice = out_h * out_w;
    const int64_t span = (out_h - 1) * wpad + out_w;  // q of one output depth slice
    const int64_t tiles = (span + kTile - 1) / kTile;
    const MapBlocks blocks = map_blocks(wp.panels, batch * group * g.out[0] * tiles);
    const int64_t items = batch * group * g.out[0] * tiles * blocks.count;
    const int64_t item_work = blocks.panels_per_block * kGemmMR * std::min(kTile, span) * k_total;
    const T* bs = bias ? bias->data<T>() : nullptr;
    T* dst = y.data<T>();
    parallel_for(items, grain_for(item_work), [&](int64_t first, int64_t last) {
      // Reused by every call on this thread: no allocation per convolution once warm.
      thread_local std::vector<double> acc;
      acc.resize(static_cast<size_t>(kMaxBlockPanels * kGemmMR * kTile));
      for (int64_t item = first; item < last; ++item) {
        int64_t rest = item;
        const int64_t mb = rest % blocks.count;
        rest /= blocks.count;
        const int64_t tile = rest % tiles;
        rest /= tiles;
        const int64_t od = rest % g.out[0];
        rest /= g.out[0];
        const int64_t grp = rest % group, n = rest / group;
        const int64_t q0 = tile * kTile, len = std::min(kTile, span - q0);
        const int64_t col_panels = (len + kGemmNR - 1) / kGemmNR, ld = col_panels * kGemmNR;
        const int64_t panel0 = mb * blocks.panels_per_block;
        const int64_t row_panels =
            std::min(blocks.panels, panel0 + blocks.panels_per_block) - panel0;
        std::fill(acc.begin(), acc.begin() + row_panels * kGemmMR * ld, 0.0);
        const double* b = xp.data() + (n * channels + grp * cg) * plane + od * slice + q0;
        const double* wg = wp.values.data() + (grp * blocks.panels + panel0) * k_total * kGemmMR;
        for (int64_t k0 = 0; k0 < k_total; k0 += kGemmKc)
          gemm_rows(std::min(kGemmKc, k_total - k0), wg + k0 * kGemmMR, k_total * kGemmMR,
                    row_panels, b, offsets.data() + k0, col_panels, acc.data(), ld,
                    gemm_exact_products_v<T>);
        for (int64_t m = panel0 * kGemmMR; m < std::min(mg, (panel0 + row_panels) * kGemmMR);
             ++m) {
          const int64_t map = grp * mg + m;
          const double bv = bs ? to_double(bs[map]) : 0.0;
          const double* row = acc.data() + (m - panel0 * kGemmMR) * ld;
          T* out = dst + (n * maps + map) * g.out[0] * out_slice + od * out_slice;
          // The tile's q, output row by output row, skipping the dropped columns.
          for (int64_t q = q0; q < q0 + len; q = (q / wpad + 1) * wpad) {
            const int64_t oh = q / wpad, end = std::min(q0 + len, oh * wpad + out_w);
            for (int64_t i = q; i < end; ++i)
              out[oh * out_w + (i - oh * wpad)] = narrow<T>(row[i - q0] + bv);
          }
        }
      }
    });
  }

  ConvAttrs attrs_;
  std::optional<PackedWeights> weights_;  // W packed when it is a constant
};
// Versions 1, 11 (auto_pad and default-stride fixes), 22 (bfloat16).
PARITY_REF_OP("", "Conv", 1, kOpsetMax, Conv);

}  // namespace
}  // namespace parity::ref
