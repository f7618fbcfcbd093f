// Conv: convolution over any number of spatial dims with pads/auto_pad, strides, dilations, groups
// and bias, plus the attribute and shape checks the whole convolution family shares (conv_util.h).
//
// Floating convolutions run as a blocked GEMM in double on the micro-kernel of gemm_kernel.h,
// with no im2col matrix: the input is copied once, zero-padded and split into stride phases,
// so that for every k = (input channel, kernel depth, height, width) the kGemmNR output
// positions of a panel read kGemmNR consecutive values, kept in place; the kernel reads them
// through a table of row offsets (see convolve). The weights are packed once when W is a
// constant. Every output element starts at 0 and adds its products one by one in increasing k,
// computed by one work item, so the bits do not depend on the thread count, the tiling or the
// CPU; float, float16 and bfloat16 products are exact in double, so fused multiply-adds give
// the same bits as separate ones (double inputs multiply and add separately).
#include <optional>

#include "backend/ref/ops/conv_util.h"
#include "backend/ref/ops/gemm_kernel.h"
#include "core/checked_math.h"
#include "core/limits.h"

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
  if (channels % group != 0 || maps % group != 0 || saturating_mul(w[1], group) != channels)
    ctx.fail(
        "X has {} channels and W shape {} with group={}; W's dim 1 times group must "
        "equal the channels, and both channel counts must divide by group",
        channels, shape_str(w), group);
  Shape w_spatial(w.begin() + 2, w.end());
  if (!attrs.kernel_shape.empty() && attrs.kernel_shape != w_spatial)
    ctx.fail("attribute 'kernel_shape' [{}] disagrees with W's spatial shape {}",
             fmt::join(attrs.kernel_shape, ", "), shape_str(w_spatial));
  return window_geometry(attrs.window, Shape(x.begin() + 2, x.end()), w_spatial);
}

// Blocks of about equal numbers of weight panels, at most kMaxBlockPanels each, and enough of
// them for kMinItems work items with the `other_items` (batch, group, tile, ...) the output is
// cut into besides, so both cores stay busy on late layers with few positions. The blocking
// never changes a sum.
MapBlocks map_blocks(int64_t panels, int64_t other_items) {
  constexpr int64_t kMinItems = 8;  // work items per convolution, when the channels allow
  int64_t count = std::max((panels + kMaxBlockPanels - 1) / kMaxBlockPanels,
                           (kMinItems + other_items - 1) / std::max<int64_t>(other_items, 1));
  count = std::clamp<int64_t>(count, 1, std::max<int64_t>(panels, 1));
  const int64_t per = std::max<int64_t>((panels + count - 1) / count, 1);
  return {panels, per, (panels + per - 1) / per};
}

namespace {

constexpr int64_t kTile = 16 * kGemmNR;  // output positions per work item, at most

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

// Groups with at most this many maps (depthwise convolutions have one) skip the GEMM: its
// panels of kGemmMR rows would multiply kGemmMR - mg zero rows. Measured in bench/README.md
// ("Depthwise convolution").
constexpr int64_t kDirectMaxMaps = 2;

// acc[i] = sum over k of w[k * w_stride] * b[offsets[k] + i] for i < len: one map's row of a
// tile, each sum from 0 in increasing k with every product rounded before its add. That is
// the GEMM's order, and its rounding for double inputs; for narrower inputs the products are
// exact in double, so the GEMM's fused multiply-adds give these bits too. 32 positions at a
// time stay in registers over all of k.
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"),
               optimize("fp-contract=off"))) void
one_map_rows(int64_t k_total, const double* w, int64_t w_stride, const double* b,
             const int64_t* offsets, int64_t len, double* acc) {
  constexpr int64_t kBlock = 32;
  int64_t i0 = 0;
  for (; i0 + kBlock <= len; i0 += kBlock) {
    double sum[kBlock] = {};
    for (int64_t k = 0; k < k_total; ++k) {
      const double wk = w[k * w_stride];
      const double* row = b + offsets[k] + i0;
      for (int64_t i = 0; i < kBlock; ++i) sum[i] += wk * row[i];
    }
    for (int64_t i = 0; i < kBlock; ++i) acc[i0 + i] = sum[i];
  }
  for (int64_t i = i0; i < len; ++i) {
    double sum = 0;
    for (int64_t k = 0; k < k_total; ++k) sum += w[k * w_stride] * b[offsets[k] + i];
    acc[i] = sum;
  }
}

// The input as the kernel reads it. Padded coordinate P = i + pad_begin along a dim of stride s
// lands in phase P % s at index P / s; per (batch, channel) the phases are stored one after the
// other (in lexicographic order of the per-dim phases), each of the phase dims q (zeros where
// the padding is). Output position o and kernel tap t (dilated offset e = t * dilation per dim)
// then read phase (e % s) at index o + e / s: with positions of one slice of the last two
// output dims numbered over the phase width, q = oh * wq + ow, a tap is one constant offset, and
// consecutive q read consecutive values. Columns ow >= the output width are computed and
// dropped. The dims before the last two are walked by the work items (any number of them).
struct PhaseLayout {
  std::vector<int64_t> q, stride;  // phase dims, and each dim's stride inside a phase
  int64_t phase, channel;          // phase size, channel stride

  explicit PhaseLayout(const WindowGeometry& g) {
    // Pads and strides come from attributes: the sizes are checked (window_geometry has
    // checked the padded sizes themselves).
    const size_t n = g.in.size();
    const char* what = "the size of the padded input";
    for (size_t d = 0; d < n; ++d) {
      const int64_t padded = g.in[d] + g.pad_begin[d] + g.pad_end[d];
      q.push_back(padded == 0 ? 0 : (padded - 1) / g.strides[d] + 1);
    }
    stride.assign(n, 1);
    for (size_t d = n - 1; d-- > 0;) stride[d] = checked_mul(stride[d + 1], q[d + 1], what);
    phase = checked_mul(stride[0], q[0], what);
    channel = phase;
    for (size_t d = 0; d < n; ++d) channel = checked_mul(channel, g.strides[d], what);
  }

  // Which phase padded coordinates p[0..count) fall in, counted over the phases of all dims.
  int64_t which(const WindowGeometry& g, const int64_t* p, size_t count) const {
    int64_t w = 0;
    for (size_t d = 0; d < g.in.size(); ++d)
      w = w * g.strides[d] + (d < count ? p[d] % g.strides[d] : 0);
    return w;
  }

  // Where kernel tap t (one index per dim) of input channel c reads, relative to the position.
  int64_t offset(const WindowGeometry& g, int64_t c, const std::vector<int64_t>& t) const {
    std::vector<int64_t> e(t.size());
    int64_t at = 0;
    for (size_t d = 0; d < t.size(); ++d) {
      e[d] = t[d] * g.dilations[d];
      at += e[d] / g.strides[d] * stride[d];
    }
    return c * channel + which(g, e.data(), e.size()) * phase + at;
  }
};

// x [channels, in...] (all batches) copied into xp in the phase layout, in double. A slice of
// zeros follows the last channel: the dropped columns of the last positions read up to there.
template <typename T>
void phase_input(const Tensor& x, const WindowGeometry& g, const PhaseLayout& l,
                 std::vector<double>& xp) {
  const size_t n = g.in.size();
  const int64_t planes = x.shape()[0] * x.shape()[1];
  const char* what = "the padded input";
  const int64_t size =
      checked_add(checked_mul(planes, l.channel, what),
                  checked_add(checked_mul(l.q[n - 2] + 1, l.q[n - 1], what), kGemmNR, what), what);
  check_scratch_allocation(size, sizeof(double), "the padded input (in double)");
  xp.assign(static_cast<size_t>(size), 0.0);
  const T* src = x.data<T>();
  const int64_t sw = g.strides[n - 1], in_w = g.in[n - 1], pad_w = g.pad_begin[n - 1];
  const int64_t rows = shape_numel(g.in) / std::max<int64_t>(in_w, 1);
  // Where each input row (its coordinates in the dims before the last) starts inside a
  // channel: the same for every channel, so worked out once.
  std::vector<int64_t> row_at(static_cast<size_t>(rows)), p(n - 1);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t rest = r, at = 0;
    for (size_t d = n - 1; d-- > 0;) {
      p[d] = rest % g.in[d] + g.pad_begin[d];
      rest /= g.in[d];
      at += p[d] / g.strides[d] * l.stride[d];
    }
    row_at[r] = l.which(g, p.data(), n - 1) * l.phase + at;
  }
  parallel_for(planes, grain_for(l.channel), [&](int64_t first, int64_t last) {
    for (int64_t c = first; c < last; ++c)
      for (int64_t r = 0; r < rows; ++r) {
        const T* row = src + (c * rows + r) * in_w;
        double* base = xp.data() + c * l.channel + row_at[r];
        // Phase by phase, so that no element pays for a division: padded column pw = w + pad
        // goes to phase pw % sw at index pw / sw.
        for (int64_t phase = 0; phase < sw; ++phase) {
          int64_t w = ((phase - pad_w) % sw + sw) % sw;  // the first column of this phase
          double* dst = base + phase * l.phase + (w + pad_w) / sw;
          for (; w < in_w; w += sw) *dst++ = to_double(row[w]);
        }
      }
  });
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
        ctx.fail("inputs have element types {} and {}; they must be equal", dtype_name(x.dtype()),
                 dtype_name(t->dtype()));
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
    const int64_t batch = x.shape()[0], channels = x.shape()[1], maps = w.shape()[0];
    Shape out_shape = {batch, maps};
    out_shape.insert(out_shape.end(), geometry.out.begin(), geometry.out.end());
    Tensor y = uninitialized_tensor(x.dtype(), out_shape);
    if (y.numel() == 0) return y;
    // At least 3 spatial dims (leading dims of size 1 change neither an offset nor the order
    // of k), so that work items walk the dims before the last two.
    const WindowGeometry g = window_lifted(geometry, std::max<size_t>(geometry.in.size(), 3));
    const size_t nd = g.in.size();
    const int64_t group = attrs_.group, cg = channels / group, mg = maps / group;
    std::optional<PackedWeights> packed_here;
    const PackedWeights* wp =
        weights_ && weights_->dtype == w.dtype() && weights_->shape == w.shape() ? &*weights_
                                                                                 : nullptr;
    if (!wp) wp = &packed_here.emplace(pack_weights<T>(w, group));
    const PhaseLayout l(g);
    // Kept by the calling thread for its next convolution (no fresh pages to fault in); the
    // workers read it through this pointer, not their own thread_local.
    thread_local std::vector<double> xp_buffer;
    phase_input<T>(x, g, l, xp_buffer);
    const double* const xp = xp_buffer.data();
    // One row offset per k, in the order (input channel, kernel tap in increasing flat index).
    const int64_t taps = shape_numel(g.kernel), k_total = cg * taps;
    std::vector<int64_t> offsets(static_cast<size_t>(k_total)), t(nd);
    for (int64_t k = 0; k < k_total; ++k) {
      for (int64_t d = static_cast<int64_t>(nd) - 1, rest = k % taps; d >= 0; --d) {
        t[d] = rest % g.kernel[d];
        rest /= g.kernel[d];
      }
      offsets[k] = l.offset(g, k / taps, t);
    }
    const int64_t out_h = g.out[nd - 2], out_w = g.out[nd - 1], out_slice = out_h * out_w;
    const int64_t wq = l.q[nd - 1];
    const int64_t leads = shape_numel(g.out) / std::max<int64_t>(out_slice, 1);
    const int64_t span = (out_h - 1) * wq + out_w;  // q of one slice of the last two dims
    // Tiles of about equal size (whole panels), so that work items are alike.
    const int64_t tiles = (span + kTile - 1) / kTile;
    const int64_t tile_size = ((span + tiles - 1) / tiles + kGemmNR - 1) / kGemmNR * kGemmNR;
    const MapBlocks blocks = map_blocks(wp->panels, batch * group * leads * tiles);
    const int64_t items = batch * group * leads * tiles * blocks.count;
    const int64_t item_work = blocks.panels_per_block * kGemmMR * tile_size * k_total;
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
        const int64_t lead = rest % leads;
        rest /= leads;
        const int64_t grp = rest % group, n = rest / group;
        // Where the slice of the leading output position reads: index o per leading dim.
        int64_t lead_at = 0;
        for (int64_t d = static_cast<int64_t>(nd) - 3, r = lead; d >= 0; --d) {
          lead_at += r % g.out[d] * l.stride[d];
          r /= g.out[d];
        }
        const int64_t q0 = tile * tile_size, len = std::min(tile_size, span - q0);
        const int64_t col_panels = (len + kGemmNR - 1) / kGemmNR, ld = col_panels * kGemmNR;
        const int64_t panel0 = mb * blocks.panels_per_block;
        const int64_t row_panels =
            std::min(blocks.panels, panel0 + blocks.panels_per_block) - panel0;
        const double* b = xp + (n * channels + grp * cg) * l.channel + lead_at + q0;
        const double* wg = wp->values.data() + (grp * blocks.panels + panel0) * k_total * kGemmMR;
        if (mg <= kDirectMaxMaps) {
          for (int64_t m = 0; m < mg; ++m)
            one_map_rows(k_total, wg + m, kGemmMR, b, offsets.data(), len, acc.data() + m * ld);
        } else {
          std::fill(acc.begin(), acc.begin() + row_panels * kGemmMR * ld, 0.0);
          for (int64_t k0 = 0; k0 < k_total; k0 += kGemmKc)
            gemm_rows(std::min(kGemmKc, k_total - k0), wg + k0 * kGemmMR, k_total * kGemmMR,
                      row_panels, b, offsets.data() + k0, col_panels, acc.data(), ld,
                      gemm_exact_products_v<T>);
        }
        for (int64_t m = panel0 * kGemmMR; m < std::min(mg, (panel0 + row_panels) * kGemmMR); ++m) {
          const int64_t map = grp * mg + m;
          const double bv = bs ? to_double(bs[map]) : 0.0;
          const double* row = acc.data() + (m - panel0 * kGemmMR) * ld;
          T* out = dst + ((n * maps + map) * leads + lead) * out_slice;
          // The tile's q, output row by output row, skipping the dropped columns.
          for (int64_t q = q0; q < q0 + len; q = (q / wq + 1) * wq) {
            const int64_t oh = q / wq, end = std::min(q0 + len, oh * wq + out_w);
            for (int64_t i = q; i < end; ++i)
              out[oh * out_w + (i - oh * wq)] = narrow<T>(row[i - q0] + bv);
          }
        }
      }
    });
    return y;
  }

  ConvAttrs attrs_;
  std::optional<PackedWeights> weights_;  // W packed when it is a constant
};
// Versions 1, 11 (auto_pad and default-stride fixes), 22 (bfloat16).
PARITY_REF_OP("", "Conv", 1, kOpsetMax, Conv);

}  // namespace
}  // namespace parity::ref
