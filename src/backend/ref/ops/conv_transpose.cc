// ConvTranspose: the gradient of Conv with respect to its input, any number of spatial dims,
// with strides, dilations, groups, pads or auto_pad, output_padding and output_shape.
//
// y[o] sums x[i] * w[t] over o = i * stride + t * dilation - pad_begin. Along one dim, the
// outputs with (o + pad_begin) % stride == r (phase r) are reached only by the taps with
// (t * dilation) % stride == r, from input q - (t * dilation) / stride where
// o = q * stride + r - pad_begin: per phase, a stride-1 correlation of the input with a subset
// of the taps. That is a GEMM over k = (input channel, tap of the phase) with the same
// read-in-place layout as Conv (conv.cc): the input zero-padded once, a table of row offsets,
// kGemmNR consecutive positions per panel along the last dim, columns past a row's end computed
// and dropped. Each output element is computed by one work item, its products added in the
// direct kernel's order (input channel, then tap, increasing), so both give the same bits
// (conv_transpose.h); the padding's extra terms are 0 * w, which change nothing for finite w.
#include "backend/ref/ops/conv_transpose.h"

#include <cmath>
#include <map>

#include "backend/ref/ops/conv_util.h"
#include "backend/ref/ops/gemm_kernel.h"
#include "core/checked_math.h"
#include "core/limits.h"

namespace parity::ref {
namespace {

int64_t floor_div(int64_t a, int64_t b) {  // b > 0
  return a / b - (a % b != 0 && a < 0 ? 1 : 0);
}
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

int64_t product(const std::vector<int64_t>& v) {
  return checked_dims_product(v, 0, v.size(), "the kernel's size");
}

// The multi-index of `flat` in a row-major array of shape `dims`.
void unflatten(int64_t flat, const std::vector<int64_t>& dims, std::vector<int64_t>& index) {
  index.resize(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    index[d] = flat % dims[d];
    flat /= dims[d];
  }
}

// `v` with `count` copies of `fill` in front.
std::vector<int64_t> lifted(const std::vector<int64_t>& v, size_t count, int64_t fill) {
  std::vector<int64_t> r(count, fill);
  r.insert(r.end(), v.begin(), v.end());
  return r;
}

template <typename T>
ConvTransposeWeights pack_typed(const Tensor& w, int64_t group, const std::vector<int64_t>& strides,
                                const std::vector<int64_t>& dilations) {
  ConvTransposeWeights p;
  p.dtype = w.dtype();
  p.shape = w.shape();
  p.strides = strides;
  p.dilations = dilations;
  p.group = group;
  const int64_t channels = w.shape()[0], mg = w.shape()[1], cg = channels / group;
  const std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  const int64_t taps = product(kernel);
  p.phases = transpose_phases(kernel, strides, dilations);
  p.panels = (mg + kGemmMR - 1) / kGemmMR;
  int64_t total = 0;
  for (const TransposePhase& ph : p.phases) {
    p.phase_start.push_back(total);
    total += group * p.panels * kGemmMR * cg * static_cast<int64_t>(ph.taps.size());
  }
  check_scratch_allocation(total, sizeof(double), "ConvTranspose's weights (in double)");
  p.values.assign(static_cast<size_t>(total), 0.0);
  const T* src = w.data<T>();
  for (int64_t i = 0; i < w.numel() && p.finite; ++i) p.finite = std::isfinite(to_double(src[i]));
  const int64_t per_phase = group * p.panels;
  parallel_for(static_cast<int64_t>(p.phases.size()) * per_phase, grain_for(kGemmMR * cg * taps),
               [&](int64_t first, int64_t last) {
                 for (int64_t item = first; item < last; ++item) {
                   const TransposePhase& ph = p.phases[item / per_phase];
                   const int64_t grp = item % per_phase / p.panels, panel = item % p.panels;
                   const int64_t ntaps = static_cast<int64_t>(ph.taps.size()), k_r = cg * ntaps;
                   double* dst = p.values.data() + p.phase_start[item / per_phase] +
                                 (grp * p.panels + panel) * k_r * kGemmMR;
                   for (int64_t row = 0; row < kGemmMR && panel * kGemmMR + row < mg; ++row) {
                     const int64_t m = panel * kGemmMR + row;
                     for (int64_t ci = 0; ci < cg; ++ci) {
                       const T* wk = src + ((grp * cg + ci) * mg + m) * taps;
                       for (int64_t j = 0; j < ntaps; ++j)
                         dst[(ci * ntaps + j) * kGemmMR + row] = to_double(wk[ph.taps[j]]);
                     }
                   }
                 }
               });
  return p;
}

// One stride phase as it runs on this input: positions q' = q - q_lo (per dim, nq of them), the
// row offset of every k relative to a position, and its positions cut into tiles.
struct PhaseRun {
  int64_t index;                     // in ConvTransposeWeights::phases
  std::vector<int64_t> r, q_lo, nq;  // per (lifted) dim
  std::vector<int64_t> offsets;      // per k = (input channel, tap)
  int64_t leads, span, tiles, tile_size;
};

constexpr int64_t kTile = 16 * kGemmNR;  // output positions per work item, at most

template <typename T>
std::optional<Tensor> gemm_typed(const Tensor& x, const Tensor& w, const Tensor* bias,
                                 const ConvTransposeShape& shape,
                                 const ConvTransposeWeights* packed) {
  const WindowGeometry& g0 = shape.g;
  const int64_t batch = x.shape()[0], channels = x.shape()[1], group = shape.group;
  const int64_t mg = w.shape()[1], maps = mg * group, cg = channels / group;
  Shape out_shape = {batch, maps};
  out_shape.insert(out_shape.end(), g0.out.begin(), g0.out.end());
  Tensor y = uninitialized_tensor(x.dtype(), out_shape);
  if (y.numel() == 0) return y;
  std::optional<ConvTransposeWeights> packed_here;
  const ConvTransposeWeights* wp = packed;
  if (!wp || wp->dtype != w.dtype() || wp->shape != w.shape() || wp->group != group ||
      wp->strides != g0.strides || wp->dilations != g0.dilations)
    wp = &packed_here.emplace(pack_conv_transpose_weights(w, group, g0.strides, g0.dilations));
  if (!wp->finite) return std::nullopt;

  // At least two spatial dims, so that positions run along the last two.
  const size_t n0 = g0.in.size(), lift = n0 < 2 ? 2 - n0 : 0, n = n0 + lift;
  const std::vector<int64_t> in = lifted(g0.in, lift, 1), out = lifted(g0.out, lift, 1),
                             kernel = lifted(g0.kernel, lift, 1), s = lifted(g0.strides, lift, 1),
                             dil = lifted(g0.dilations, lift, 1),
                             pad = lifted(g0.pad_begin, lift, 0);
  // Each phase's positions, and the input range they read: [q_lo - max a, q_lo + nq - 1].
  std::vector<PhaseRun> runs;
  std::vector<int64_t> i_min(n, 0), i_max(n), t;
  for (size_t d = 0; d < n; ++d) i_max[d] = in[d] - 1;
  for (size_t ph = 0; ph < wp->phases.size(); ++ph) {
    PhaseRun run{
        static_cast<int64_t>(ph), lifted(wp->phases[ph].r, lift, 0), {}, {}, {}, 1, 0, 0, 0};
    bool empty = false;
    for (size_t d = 0; d < n; ++d) {
      run.q_lo.push_back(ceil_div(pad[d] - run.r[d], s[d]));
      run.nq.push_back(floor_div(out[d] - 1 + pad[d] - run.r[d], s[d]) - run.q_lo[d] + 1);
      empty = empty || run.nq[d] <= 0;
    }
    if (empty) continue;
    for (int64_t tap : wp->phases[ph].taps) {
      unflatten(tap, kernel, t);
      for (size_t d = 0; d < n; ++d) {
        i_min[d] = std::min(i_min[d], run.q_lo[d] - t[d] * dil[d] / s[d]);
      }
    }
    for (size_t d = 0; d < n; ++d) i_max[d] = std::max(i_max[d], run.q_lo[d] + run.nq[d] - 1);
    runs.push_back(std::move(run));
  }
  // The padded input's dims. A gap between the input and the positions (pads of millions)
  // could make it far larger than input and output: the direct kernel serves that case.
  std::vector<int64_t> padded(n), pstride(n);
  int64_t padded_numel = x.shape()[0] * x.shape()[1];
  for (size_t d = 0; d < n; ++d) {
    padded[d] = i_max[d] - i_min[d] + 1;
    padded_numel = saturating_mul(padded_numel, padded[d]);
  }
  if (padded_numel / 4 > x.numel() + y.numel() + 65536) return std::nullopt;
  const char* what = "the padded input of ConvTranspose";
  pstride[n - 1] = 1;
  for (size_t d = n - 1; d-- > 0;) pstride[d] = checked_mul(pstride[d + 1], padded[d + 1], what);
  const int64_t plane = checked_mul(pstride[0], padded[0], what);
  const int64_t pw = padded[n - 1];
  const int64_t planes = batch * channels;
  const int64_t size = checked_add(checked_mul(planes, plane, what), pw + kGemmNR, what);
  check_scratch_allocation(size, sizeof(double), "the padded input of ConvTranspose (in double)");
  thread_local std::vector<double> xp_buffer;  // kept by the calling thread (see conv.cc)
  xp_buffer.assign(static_cast<size_t>(size), 0.0);
  double* const xp = xp_buffer.data();
  {
    const int64_t in_w = in[n - 1], rows = shape_numel(in) / std::max<int64_t>(in_w, 1);
    const T* src = x.data<T>();
    parallel_for(planes * rows, grain_for(in_w), [&](int64_t first, int64_t last) {
      std::vector<int64_t> idx;
      std::vector<int64_t> row_dims(in.begin(), in.end() - 1);
      for (int64_t item = first; item < last; ++item) {
        unflatten(item % rows, row_dims, idx);
        int64_t at = item / rows * plane - i_min[n - 1];
        for (size_t d = 0; d + 1 < n; ++d) at += (idx[d] - i_min[d]) * pstride[d];
        const T* row = src + item * in_w;
        for (int64_t i = 0; i < in_w; ++i) xp[at + i] = to_double(row[i]);
      }
    });
  }
  // Offsets and tiles; the jobs (phase, leading position, tile) every (batch, group) runs.
  struct Job {
    int64_t run, lead, tile;
  };
  std::vector<Job> jobs;
  int64_t covered = 0, k_sum = 0;
  for (size_t ri = 0; ri < runs.size(); ++ri) {
    PhaseRun& run = runs[ri];
    const std::vector<int64_t>& taps = wp->phases[run.index].taps;
    run.offsets.resize(static_cast<size_t>(cg) * taps.size());
    for (size_t j = 0; j < taps.size(); ++j) {
      unflatten(taps[j], kernel, t);
      int64_t off = 0;
      for (size_t d = 0; d < n; ++d)
        off += (run.q_lo[d] - t[d] * dil[d] / s[d] - i_min[d]) * pstride[d];
      for (int64_t ci = 0; ci < cg; ++ci) run.offsets[ci * taps.size() + j] = ci * plane + off;
    }
    for (size_t d = 0; d + 2 < n; ++d) run.leads *= run.nq[d];
    run.span = (run.nq[n - 2] - 1) * pw + run.nq[n - 1];
    run.tiles = (run.span + kTile - 1) / kTile;
    run.tile_size = ((run.span + run.tiles - 1) / run.tiles + kGemmNR - 1) / kGemmNR * kGemmNR;
    for (int64_t lead = 0; lead < run.leads; ++lead)
      for (int64_t tile = 0; tile < run.tiles; ++tile)
        jobs.push_back({static_cast<int64_t>(ri), lead, tile});
    covered += run.leads * run.nq[n - 2] * run.nq[n - 1];
    k_sum += static_cast<int64_t>(run.offsets.size());
  }
  const int64_t out_size = shape_numel(out);
  std::vector<int64_t> ostride(n);
  ostride[n - 1] = 1;
  for (size_t d = n - 1; d-- > 0;) ostride[d] = ostride[d + 1] * out[d + 1];
  const T* bs = bias ? bias->data<T>() : nullptr;
  T* dst = y.data<T>();
  // Outputs no tap reaches (a stride larger than the kernel's reach) are the bias alone.
  if (covered < out_size)
    parallel_for(batch * maps, grain_for(out_size), [&](int64_t first, int64_t last) {
      for (int64_t item = first; item < last; ++item) {
        const T v = narrow<T>(0.0 + (bs ? to_double(bs[item % maps]) : 0.0));
        std::fill(dst + item * out_size, dst + (item + 1) * out_size, v);
      }
    });
  if (jobs.empty()) return y;

  const MapBlocks blocks =
      map_blocks(wp->panels, batch * group * static_cast<int64_t>(jobs.size()));
  const int64_t njobs = static_cast<int64_t>(jobs.size());
  const int64_t items = batch * group * njobs * blocks.count;
  const int64_t item_work =
      blocks.panels_per_block * kGemmMR * kTile * std::max<int64_t>(k_sum / runs.size(), 1);
  parallel_for(items, grain_for(item_work), [&](int64_t first, int64_t last) {
    thread_local std::vector<double> acc;
    acc.resize(static_cast<size_t>(kMaxBlockPanels * kGemmMR * kTile));
    std::vector<int64_t> lead_idx;
    for (int64_t item = first; item < last; ++item) {
      const int64_t mb = item % blocks.count;
      int64_t rest = item / blocks.count;
      const Job job = jobs[rest % njobs];
      rest /= njobs;
      const int64_t grp = rest % group, nb = rest / group;
      const PhaseRun& run = runs[job.run];
      const int64_t q0 = job.tile * run.tile_size, len = std::min(run.tile_size, run.span - q0);
      const int64_t col_panels = (len + kGemmNR - 1) / kGemmNR, ld = col_panels * kGemmNR;
      const int64_t panel0 = mb * blocks.panels_per_block;
      const int64_t row_panels = std::min(blocks.panels, panel0 + blocks.panels_per_block) - panel0;
      std::fill(acc.begin(), acc.begin() + row_panels * kGemmMR * ld, 0.0);
      // The leading dims' position: where it reads, and where its outputs go.
      const std::vector<int64_t> lead_dims(run.nq.begin(), run.nq.end() - 2);
      unflatten(job.lead, lead_dims, lead_idx);
      int64_t read = 0, write = 0;
      for (size_t d = 0; d + 2 < n; ++d) {
        read += lead_idx[d] * pstride[d];
        write += ((lead_idx[d] + run.q_lo[d]) * s[d] + run.r[d] - pad[d]) * ostride[d];
      }
      const int64_t k_r = static_cast<int64_t>(run.offsets.size());
      const double* b = xp + (nb * channels + grp * cg) * plane + read + q0;
      const double* wg = wp->values.data() + wp->phase_start[run.index] +
                         (grp * blocks.panels + panel0) * k_r * kGemmMR;
      for (int64_t k0 = 0; k0 < k_r; k0 += kGemmKc)
        gemm_rows(std::min(kGemmKc, k_r - k0), wg + k0 * kGemmMR, k_r * kGemmMR, row_panels, b,
                  run.offsets.data() + k0, col_panels, acc.data(), ld, gemm_exact_products_v<T>);
      const int64_t nq_w = run.nq[n - 1];
      const int64_t h0 = run.q_lo[n - 2] * s[n - 2] + run.r[n - 2] - pad[n - 2];
      const int64_t w0 = run.q_lo[n - 1] * s[n - 1] + run.r[n - 1] - pad[n - 1];
      for (int64_t m = panel0 * kGemmMR; m < std::min(mg, (panel0 + row_panels) * kGemmMR); ++m) {
        const int64_t map = grp * mg + m;
        const double bv = bs ? to_double(bs[map]) : 0.0;
        const double* row = acc.data() + (m - panel0 * kGemmMR) * ld;
        T* o = dst + (nb * maps + map) * out_size + write;
        // The tile's positions row by row, skipping the dropped columns.
        for (int64_t q = q0; q < q0 + len; q = (q / pw + 1) * pw) {
          const int64_t qh = q / pw, end = std::min(q0 + len, qh * pw + nq_w);
          T* orow = o + (h0 + qh * s[n - 2]) * ostride[n - 2] + w0;
          for (int64_t i = q; i < end; ++i)
            orow[(i - qh * pw) * s[n - 1]] = narrow<T>(row[i - q0] + bv);
        }
      }
    }
  });
  return y;
}

// acc += the scatter of one input plane through one kernel, in 3-D geometry (window_as_3d):
// acc[o] += plane[i] * wk[k] for o = i * stride + k * dilation - pad_begin inside the output.
void scatter_channel(const WindowGeometry& g, const double* plane, const double* wk, double* acc) {
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

// The scatter for more than 3 spatial dims: the leading dims walk tap by tap, input by input,
// down to the 3-D loop of the last three. An output element meets each leading tap once, so its
// products still come in increasing flat tap index.
struct NdScatter {
  const WindowGeometry& g;
  WindowGeometry last3;
  std::vector<int64_t> in_stride, out_stride, w_stride;

  explicit NdScatter(const WindowGeometry& geometry) : g(geometry) {
    const size_t n = g.in.size();
    auto tail = [&](const std::vector<int64_t>& v) {
      return std::vector<int64_t>(v.end() - 3, v.end());
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

  void operator()(size_t dim, const double* plane, const double* wk, double* acc) const {
    if (g.in.size() - dim == 3) return scatter_channel(last3, plane, wk, acc);
    for (int64_t k = 0; k < g.kernel[dim]; ++k)
      for (int64_t i = 0; i < g.in[dim]; ++i) {
        const int64_t o = i * g.strides[dim] + k * g.dilations[dim] - g.pad_begin[dim];
        if (o < 0 || o >= g.out[dim]) continue;
        (*this)(dim + 1, plane + i * in_stride[dim], wk + k * w_stride[dim],
                acc + o * out_stride[dim]);
      }
  }
};

template <typename T>
Tensor direct_typed(const Tensor& x, const Tensor& w, const Tensor* bias,
                    const ConvTransposeShape& shape) {
  const WindowGeometry& geometry = shape.g;
  const int64_t batch = x.shape()[0], channels = x.shape()[1];
  const int64_t mg = w.shape()[1], maps = mg * shape.group, cg = channels / shape.group;
  Shape out_shape = {batch, maps};
  out_shape.insert(out_shape.end(), geometry.out.begin(), geometry.out.end());
  Tensor y = uninitialized_tensor(x.dtype(), out_shape);
  if (y.numel() == 0) return y;
  const bool nd = geometry.in.size() > 3;
  const WindowGeometry g = nd ? geometry : window_as_3d(geometry);
  const NdScatter scatter(g);
  const int64_t in_size = shape_numel(g.in), out_size = shape_numel(g.out);
  const int64_t taps = shape_numel(g.kernel);
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
        const double* plane = xd.data() + (n * channels + c) * in_size;
        const double* wk = wd.data() + (c * mg + m % mg) * taps;
        if (nd)
          scatter(0, plane, wk, acc.data());
        else
          scatter_channel(g, plane, wk, acc.data());
      }
      const double b = bs ? to_double(bs[m]) : 0.0;
      T* out = dst + item * out_size;
      for (int64_t i = 0; i < out_size; ++i) out[i] = narrow<T>(acc[i] + b);
    }
  });
  return y;
}

}  // namespace

std::vector<TransposePhase> transpose_phases(const std::vector<int64_t>& kernel,
                                             const std::vector<int64_t>& strides,
                                             const std::vector<int64_t>& dilations) {
  const size_t n = kernel.size();
  std::map<std::vector<int64_t>, size_t> index;
  std::vector<TransposePhase> phases;
  std::vector<int64_t> t, r(n);
  const int64_t taps = product(kernel);
  for (int64_t flat = 0; flat < taps; ++flat) {
    unflatten(flat, kernel, t);
    for (size_t d = 0; d < n; ++d)
      r[d] = checked_mul(t[d], dilations[d], "the kernel's dilated extent") % strides[d];
    auto [it, fresh] = index.try_emplace(r, phases.size());
    if (fresh) phases.push_back({r, {}});
    phases[it->second].taps.push_back(flat);
  }
  return phases;
}

ConvTransposeWeights pack_conv_transpose_weights(const Tensor& w, int64_t group,
                                                 const std::vector<int64_t>& strides,
                                                 const std::vector<int64_t>& dilations) {
  return dispatch<FloatTypes>(
      w.dtype(), [&]<typename T>() { return pack_typed<T>(w, group, strides, dilations); });
}

std::optional<Tensor> conv_transpose_gemm(const Tensor& x, const Tensor& w, const Tensor* bias,
                                          const ConvTransposeShape& shape,
                                          const ConvTransposeWeights* packed) {
  return dispatch<FloatTypes>(
      x.dtype(), [&]<typename T>() { return gemm_typed<T>(x, w, bias, shape, packed); }, "input X");
}

Tensor conv_transpose_direct(const Tensor& x, const Tensor& w, const Tensor* bias,
                             const ConvTransposeShape& shape) {
  return dispatch<FloatTypes>(
      x.dtype(), [&]<typename T>() { return direct_typed<T>(x, w, bias, shape); }, "input X");
}

namespace {

class ConvTranspose : public Kernel {
 public:
  explicit ConvTranspose(const OpContext& ctx)
      : attrs_(read_conv_attrs(ctx)),
        output_padding_(ctx.attr_ints("output_padding", {})),
        output_shape_(ctx.attr_ints("output_shape", {})) {
    // W packed once when it is a constant whose shape fits the attributes.
    const Tensor* w = ctx.constant_input(1);
    if (!w || w->rank() < 3 || !is_floating(w->dtype()) || w->shape()[0] % attrs_.group != 0)
      return;
    const size_t n = static_cast<size_t>(w->rank() - 2);
    const WindowAttrs& a = attrs_.window;
    auto or_ones = [&](const std::vector<int64_t>& v) {
      return v.empty() ? std::vector<int64_t>(n, 1) : v;
    };
    const std::vector<int64_t> strides = or_ones(a.strides), dilations = or_ones(a.dilations);
    if (strides.size() == n && dilations.size() == n)
      weights_ = pack_conv_transpose_weights(*w, attrs_.group, strides, dilations);
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const Tensor& w = input_tensor(in, 1, "W");
    const Tensor* bias = optional_input(in, 2, "B");
    for (const Tensor* t : {&w, bias})
      if (t && t->dtype() != x.dtype())
        ctx.fail("inputs have element types {} and {}; they must be equal", dtype_name(x.dtype()),
                 dtype_name(t->dtype()));
    const ConvTransposeShape shape{geometry(x.shape(), w.shape(), ctx), attrs_.group};
    const int64_t maps = w.shape()[1] * attrs_.group;
    if (bias && bias->numel() != maps)
      ctx.fail("B has shape {}; it must hold one value per output channel ({})",
               shape_str(bias->shape()), maps);
    std::optional<Tensor> y =
        conv_transpose_gemm(x, w, bias, shape, weights_ ? &*weights_ : nullptr);
    return {y ? std::move(*y) : conv_transpose_direct(x, w, bias, shape)};
  }

 private:
  static bool is_floating(DataType dtype) {
    return dtype == DataType::kFloat32 || dtype == DataType::kFloat64 ||
           dtype == DataType::kFloat16 || dtype == DataType::kBFloat16;
  }

  // The output sizes and pads: from output_shape (pads split around the excess), auto_pad
  // SAME_* (output = input * stride) or explicit pads.
  WindowGeometry geometry(const Shape& x, const Shape& w, const RunContext& ctx) const {
    if (x.size() < 3 || w.size() != x.size())
      ctx.fail(
          "X has shape {} and W {}; they must have the same rank, with at least one spatial "
          "dim",
          shape_str(x), shape_str(w));
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

  ConvAttrs attrs_;
  std::vector<int64_t> output_padding_, output_shape_;
  std::optional<ConvTransposeWeights> weights_;  // W packed when it is a constant
};
// Versions 1, 11 (auto_pad/output_shape rules restated), 22 (bfloat16).
PARITY_REF_OP("", "ConvTranspose", 1, kOpsetMax, ConvTranspose);

}  // namespace
}  // namespace parity::ref
