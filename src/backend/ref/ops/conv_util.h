// Shared by the convolution family (Conv, ConvInteger, QLinearConv, ConvTranspose, DeformConv):
// reading the attributes, checking X/W/group, and the direct convolution loop over one
// (batch, output channel) plane, generic in the accumulator type (double for floating
// convolutions, int64 for integer ones).
#pragma once

#include <algorithm>
#include <vector>

#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {

struct ConvAttrs {
  WindowAttrs window;
  std::vector<int64_t> kernel_shape;  // empty when absent: W's spatial shape
  int64_t group = 1;
};

// auto_pad, strides, dilations, pads, kernel_shape and group (checked to be 1 or more).
ConvAttrs read_conv_attrs(const OpContext& ctx);

// Checks that X [N, C, D...] and W [M, C/group, k...] fit each other, `group` and
// kernel_shape, and returns the output geometry. `transposed` reads W as [C, M/group, k...]
// (ConvTranspose) and only checks the shapes (its geometry differs).
WindowGeometry conv_geometry(const ConvAttrs& attrs, const Shape& x, const Shape& w,
                             const RunContext& ctx);

// The output channels of a group cut into GEMM work items (Conv, ConvTranspose): `count`
// blocks of `panels_per_block` weight panels of kGemmMR channels (the last may be smaller),
// `panels` in all, with at most kMaxBlockPanels per block.
constexpr int64_t kMaxBlockPanels = 16;
struct MapBlocks {
  int64_t panels, panels_per_block, count;
};
MapBlocks map_blocks(int64_t panels, int64_t other_items);

// acc += the convolution of one input plane with one kernel, in 3-D geometry (window_lifted).
// Products are added tap by tap (depth, height, width) along contiguous output rows.
template <typename Acc>
void accumulate_channel(const WindowGeometry& g, const Acc* plane, const Acc* wk, Acc* acc) {
  const int64_t in_h = g.in[1], in_w = g.in[2];
  const int64_t out_h = g.out[1], out_w = g.out[2];
  const int64_t sw = g.strides[2];
  for (int64_t kd = 0; kd < g.kernel[0]; ++kd)
    for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
      for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
        const Acc wv = wk[(kd * g.kernel[1] + kh) * g.kernel[2] + kw];
        // Output columns whose input column ow * sw + base lies inside the row.
        const int64_t base = kw * g.dilations[2] - g.pad_begin[2];
        const int64_t lo = base >= 0 ? 0 : (-base + sw - 1) / sw;
        const int64_t hi = in_w - 1 - base < 0 ? 0 : std::min(out_w, (in_w - 1 - base) / sw + 1);
        if (lo >= hi) continue;
        for (int64_t od = 0; od < g.out[0]; ++od) {
          const int64_t id = od * g.strides[0] + kd * g.dilations[0] - g.pad_begin[0];
          if (id < 0 || id >= g.in[0]) continue;
          for (int64_t oh = 0; oh < out_h; ++oh) {
            const int64_t ih = oh * g.strides[1] + kh * g.dilations[1] - g.pad_begin[1];
            if (ih < 0 || ih >= in_h) continue;
            const Acc* row = plane + (id * in_h + ih) * in_w;
            Acc* out_row = acc + (od * out_h + oh) * out_w;
            if (sw == 1) {
              for (int64_t ow = lo; ow < hi; ++ow) out_row[ow] += wv * row[ow + base];
            } else {
              for (int64_t ow = lo; ow < hi; ++ow) out_row[ow] += wv * row[ow * sw + base];
            }
          }
        }
      }
}

// acc += the convolution of one input plane with one kernel over more than 3 spatial dims: the
// dims before the last three walk tap by tap, output by output, down to accumulate_channel. An
// output element meets each leading tap once, so its products come in increasing flat tap
// index, as in 3-D.
template <typename Acc>
struct NdAccumulate {
  const WindowGeometry& g;
  WindowGeometry last3;
  std::vector<int64_t> in_stride, out_stride, w_stride;

  explicit NdAccumulate(const WindowGeometry& geometry) : g(geometry) {
    const size_t n = g.in.size();
    auto tail = [&](const std::vector<int64_t>& v) {
      return std::vector<int64_t>(v.end() - std::min<size_t>(3, n), v.end());
    };
    last3 = {tail(g.in),        tail(g.out),       tail(g.kernel), tail(g.strides),
             tail(g.dilations), tail(g.pad_begin), tail(g.pad_end)};
    in_stride.assign(n, 1);
    out_stride.assign(n, 1);
    w_stride.assign(n, 1);
    for (size_t d = n - 1; d-- > 0;) {
      in_stride[d] = in_stride[d + 1] * g.in[d + 1];
      out_stride[d] = out_stride[d + 1] * g.out[d + 1];
      w_stride[d] = w_stride[d + 1] * g.kernel[d + 1];
    }
  }

  void operator()(size_t dim, const Acc* plane, const Acc* wk, Acc* acc) const {
    if (g.in.size() - dim <= 3) return accumulate_channel(last3, plane, wk, acc);
    for (int64_t k = 0; k < g.kernel[dim]; ++k)
      for (int64_t o = 0; o < g.out[dim]; ++o) {
        const int64_t i = o * g.strides[dim] + k * g.dilations[dim] - g.pad_begin[dim];
        if (i < 0 || i >= g.in[dim]) continue;
        (*this)(dim + 1, plane + i * in_stride[dim], wk + k * w_stride[dim],
                acc + o * out_stride[dim]);
      }
  }
};

// Direct grouped convolution of x [N, C, in...] with w [M, C/group, k...], both already in the
// accumulator type, over any number of spatial dims. For each (n, m), one chunk sums input
// channel by input channel into a zeroed plane of out-size accumulators and calls
// finish(n, m, plane); the order of the sums is fixed, so the bits do not depend on the thread
// count.
template <typename Acc, typename Finish>
void direct_conv(const WindowGeometry& geometry, int64_t batch, int64_t channels, int64_t maps,
                 int64_t group, const Acc* x, const Acc* w, Finish&& finish) {
  const WindowGeometry g = window_lifted(geometry, std::max<size_t>(geometry.in.size(), 3));
  const NdAccumulate<Acc> accumulate(g);
  const int64_t cg = channels / group, mg = maps / group;
  const int64_t in_size = shape_numel(g.in), out_size = shape_numel(g.out);
  const int64_t taps = shape_numel(g.kernel);
  parallel_for(batch * maps, grain_for(out_size * cg * taps), [&](int64_t first, int64_t last) {
    std::vector<Acc> acc(static_cast<size_t>(out_size));
    for (int64_t item = first; item < last; ++item) {
      const int64_t n = item / maps, m = item % maps, grp = m / mg;
      std::fill(acc.begin(), acc.end(), Acc(0));
      for (int64_t ci = 0; ci < cg; ++ci)
        accumulate(0, x + (n * channels + grp * cg + ci) * in_size, w + (m * cg + ci) * taps,
                   acc.data());
      finish(n, m, acc.data());
    }
  });
}

// The values of a tensor converted to the accumulator type once, so inner loops are pure
// multiply-adds.
template <typename T, typename Acc>
std::vector<Acc> converted(const Tensor& t, Acc offset = Acc(0)) {
  std::vector<Acc> out(static_cast<size_t>(t.numel()));
  const T* src = t.data<T>();
  parallel_for(t.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = static_cast<Acc>(widen(src[i])) - offset;
  });
  return out;
}

}  // namespace parity::ref
