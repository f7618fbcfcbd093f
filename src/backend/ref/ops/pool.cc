// Pooling: MaxPool (with its optional Indices output), AveragePool, LpPool, GlobalAveragePool,
// GlobalMaxPool and GlobalLpPool. Windows follow ONNX's geometry (kernel_util's window_geometry):
// pads or auto_pad, strides, dilations, ceil_mode. Maxima propagate NaN, as NumPy's max does;
// averages sum in double and divide once.
#include <array>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

#include "backend/ref/ops/kernel_util.h"
#include "core/checked_math.h"
#include "core/limits.h"

namespace parity::ref {
namespace {

using MaxPoolTypes = Concat<FloatTypes, TypeList<int8_t, uint8_t>>;

// The input positions a window covers along one dim: first, step, and which taps are inside
// the input; also how many taps lie inside the padded extent (for count_include_pad).
struct Taps {
  int64_t start, step, count;
  int64_t first_valid, end_valid;  // taps [first_valid, end_valid) read the input
  int64_t in_padded;               // taps inside [-pad_begin, in + pad_end)
};

// How many taps k in [0, count) land on start + k * step inside [lo, hi), as the range of k:
// worked out in closed form, since a kernel may be far larger than its input (a loop over the
// taps would take the kernel's size in time for every output).
std::pair<int64_t, int64_t> taps_inside(int64_t start, int64_t step, int64_t count, int64_t lo,
                                        int64_t hi) {
  // First k with start + k * step >= lo, and one past the last with start + k * step < hi.
  const int64_t first = start >= lo ? 0 : (lo - start + step - 1) / step;
  const int64_t end = hi - 1 - start < 0 ? 0 : (hi - 1 - start) / step + 1;
  const int64_t b = std::min(first, count), e = std::clamp<int64_t>(end, b, count);
  return {b, e};
}

Taps taps_at(const WindowGeometry& g, int dim, int64_t o) {
  Taps t;
  t.start = o * g.strides[dim] - g.pad_begin[dim];
  t.step = g.dilations[dim];
  t.count = g.kernel[dim];
  std::tie(t.first_valid, t.end_valid) = taps_inside(t.start, t.step, t.count, 0, g.in[dim]);
  auto [pb, pe] =
      taps_inside(t.start, t.step, t.count, -g.pad_begin[dim], g.in[dim] + g.pad_end[dim]);
  t.in_padded = pe - pb;
  return t;
}

// Calls fn(plane_index, out_offset, taps) for every output position of every plane, with
// taps[i] the taps of spatial dim i (the geometry has at least 3: window_lifted). The taps of
// each output coordinate are the same for every plane, so they are worked out once.
template <typename F>
void for_each_window(const WindowGeometry& g, int64_t planes, F&& fn) {
  const size_t n = g.in.size();
  const int64_t out_size = shape_numel(g.out);
  const int64_t out_d = g.out[n - 3], out_h = g.out[n - 2], out_w = g.out[n - 1];
  const int64_t leads = out_size == 0 ? 0 : out_size / (out_d * out_h * out_w);
  // The work per output, for the grain: at most the taps inside the input.
  int64_t window = 1;
  for (size_t d = 0; d < n; ++d) window = saturating_mul(window, std::min(g.in[d], g.kernel[d]));
  std::vector<std::vector<Taps>> taps(n);
  for (size_t dim = 0; dim < n; ++dim)
    for (int64_t o = 0; o < g.out[dim]; ++o)
      taps[dim].push_back(taps_at(g, static_cast<int>(dim), o));
  parallel_for(planes, grain_for(saturating_mul(out_size, window)), [&](int64_t b, int64_t e) {
    std::vector<Taps> at(n);
    for (int64_t p = b; p < e; ++p)
      for (int64_t lead = 0; lead < leads; ++lead) {
        for (int64_t d = static_cast<int64_t>(n) - 4, r = lead; d >= 0; --d) {
          at[d] = taps[d][r % g.out[d]];
          r /= g.out[d];
        }
        for (int64_t od = 0; od < out_d; ++od) {
          at[n - 3] = taps[n - 3][od];
          for (int64_t oh = 0; oh < out_h; ++oh) {
            at[n - 2] = taps[n - 2][oh];
            const int64_t row = ((lead * out_d + od) * out_h + oh) * out_w;
            for (int64_t ow = 0; ow < out_w; ++ow) {
              at[n - 1] = taps[n - 1][ow];
              fn(p, row + ow, static_cast<const Taps*>(at.data()));
            }
          }
        }
      }
  });
}

// Calls f(at, col) for every combination of valid taps of the dims before the last three, in
// increasing order: at is the row-major input offset of those coordinates, col their
// column-major one (storage_order 1). Once with (0, 0) when there are no such dims.
template <typename F>
void for_each_lead_tap(const WindowGeometry& g, const Taps* t, F&& f) {
  const size_t lead_dims = g.in.size() - 3;
  if (lead_dims == 0) return f(int64_t{0}, int64_t{0});
  std::vector<int64_t> k(lead_dims), row_stride(lead_dims), col_stride(lead_dims);
  int64_t row = shape_numel(std::vector<int64_t>(g.in.end() - 3, g.in.end())), col = 1;
  for (size_t d = lead_dims; d-- > 0;) {
    row_stride[d] = row;
    row *= g.in[d];
  }
  for (size_t d = 0; d < lead_dims; ++d) {
    col_stride[d] = col;
    col *= g.in[d];
    if (t[d].first_valid >= t[d].end_valid) return;
    k[d] = t[d].first_valid;
  }
  while (true) {
    int64_t at = 0, at_col = 0;
    for (size_t d = 0; d < lead_dims; ++d) {
      const int64_t c = t[d].start + k[d] * t[d].step;
      at += c * row_stride[d];
      at_col += c * col_stride[d];
    }
    f(at, at_col);
    size_t d = lead_dims;
    while (d-- > 0 && ++k[d] == t[d].end_valid) k[d] = t[d].first_valid;
    if (d == static_cast<size_t>(-1)) return;
  }
}

// What the pools that work a row at a time need of a geometry of three spatial dims: the taps
// of every output coordinate, and the output columns whose taps all lie inside the input
// (one contiguous run [inner_begin, inner_end), maybe empty).
struct RowTaps {
  std::array<std::vector<Taps>, 3> taps;
  int64_t inner_begin = 0, inner_end = 0;

  explicit RowTaps(const WindowGeometry& g) {
    for (int dim = 0; dim < 3; ++dim)
      for (int64_t o = 0; o < g.out[dim]; ++o) taps[dim].push_back(taps_at(g, dim, o));
    for (int64_t ow = 0; ow < g.out[2]; ++ow) {
      const Taps& tw = taps[2][ow];
      if (tw.first_valid != 0 || tw.end_valid != tw.count) continue;
      if (inner_end == inner_begin) inner_begin = ow;
      inner_end = ow + 1;
    }
  }

  // Calls f(ow) for every output column outside [inner_begin, inner_end).
  template <typename F>
  void for_each_edge_column(F&& f) const {
    const int64_t out_w = static_cast<int64_t>(taps[2].size());
    for (int64_t ow = 0; ow < inner_begin; ++ow) f(ow);
    for (int64_t ow = inner_end; ow < out_w; ++ow) f(ow);
  }
};

Shape pooled_shape(const Tensor& x, const std::vector<int64_t>& out_spatial) {
  Shape s = {x.shape()[0], x.shape()[1]};
  s.insert(s.end(), out_spatial.begin(), out_spatial.end());
  return s;
}

class MaxPool : public Kernel {
 public:
  explicit MaxPool(const OpContext& ctx)
      : window_(read_window_attrs(ctx, /*with_ceil_mode=*/true)),
        kernel_(ctx.attr_ints("kernel_shape")),
        column_major_(ctx.attr_int("storage_order", 0) != 0) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    check_rank(x, 3, 64, "input X");
    Shape spatial(x.shape().begin() + 2, x.shape().end());
    WindowGeometry geometry = window_geometry(window_, spatial, kernel_);
    const bool want_indices = ctx.node().outputs.size() > 1 && !ctx.node().outputs[1].empty();
    Outputs out = dispatch<MaxPoolTypes>(
        x.dtype(), [&]<typename T>() { return pool<T>(x, geometry, want_indices); }, "input X");
    out.resize(ctx.node().outputs.size());
    return out;
  }

 private:
  template <typename T>
  Outputs pool(const Tensor& x, const WindowGeometry& geometry, bool want_indices) const {
    const WindowGeometry g = window_lifted(geometry, std::max<size_t>(geometry.in.size(), 3));
    const size_t n = g.in.size();
    const int64_t planes = x.shape()[0] * x.shape()[1];
    const int64_t in_size = shape_numel(g.in), out_size = shape_numel(g.out);
    const int64_t in_d = g.in[n - 3], in_h = g.in[n - 2], in_w = g.in[n - 1];
    // Column-major offsets of the last three dims scale by the dims before them.
    const int64_t col_scale = in_size == 0 ? 0 : in_size / (in_d * in_h * in_w);
    Tensor y = uninitialized_tensor(x.dtype(), pooled_shape(x, geometry.out));
    Tensor indices = want_indices ? uninitialized_tensor(DataType::kInt64, y.shape()) : Tensor();
    const T* src = x.data<T>();
    T* dst = y.data<T>();
    int64_t* idx = want_indices ? indices.data<int64_t>() : nullptr;
    if (!want_indices && n == 3) {
      pool_by_rows(g, planes, src, dst);
      Outputs out{Value(y)};
      return out;
    }
    for_each_window(g, planes, [&](int64_t p, int64_t o, const Taps* t) {
      const Taps &td = t[n - 3], &th = t[n - 2], &tw = t[n - 1];
      const T* plane = src + p * in_size;
      bool found = false;
      compute_t<T> best{};
      int64_t best_at = 0;
      for_each_lead_tap(g, t, [&](int64_t lead_at, int64_t lead_col) {
        for (int64_t a = td.first_valid; a < td.end_valid; ++a)
          for (int64_t b = th.first_valid; b < th.end_valid; ++b)
            for (int64_t c = tw.first_valid; c < tw.end_valid; ++c) {
              const int64_t d = td.start + a * td.step, h = th.start + b * th.step,
                            w = tw.start + c * tw.step;
              const int64_t at = lead_at + (d * in_h + h) * in_w + w;
              const compute_t<T> v = widen(plane[at]);
              if (!found || later_wins(best, v)) {
                best = v;
                best_at = column_major_ ? lead_col + ((w * in_h + h) * in_d + d) * col_scale : at;
                found = true;
              }
            }
      });
      if (!found) best = lowest<T>();  // a window entirely in padding
      dst[p * out_size + o] = narrow<T>(best);
      if (idx) idx[p * out_size + o] = p * in_size + best_at;
    });
    Outputs out{Value(y)};
    if (want_indices) out.push_back(Value(indices));
    return out;
  }

  // The scan's rule: the window is read in increasing (depth, row, column), the first maximum
  // wins and a NaN, once met, stays (NumPy's max). Folding contiguous runs of that order and
  // then folding their results in order gives the same value, sign of zero and NaN included.
  template <typename V>
  static bool later_wins(V best, V v) {
    return v > best || (is_nan(v) && !is_nan(best));
  }

  // later_wins without short-circuits, so that loops over it compile to selects.
  template <typename V>
  static bool later_wins_branchless(V best, V v) {
    if constexpr (std::is_floating_point_v<V>)
      return (v > best) | ((v != v) & (best == best));
    else
      return v > best;
  }

  // MaxPool without Indices over at most three spatial dims, in two passes per plane: each
  // input row's maximum over every output column's taps (a contiguous run of the scan), then
  // each output's fold of those over its window's rows, in order; a row shared by overlapping
  // windows is read once, and the second pass runs along contiguous columns.
  template <typename T>
  static void pool_by_rows(const WindowGeometry& g, int64_t planes, const T* src, T* dst) {
    using V = compute_t<T>;
    const int64_t in_d = g.in[0], in_h = g.in[1], in_w = g.in[2];
    const int64_t out_d = g.out[0], out_h = g.out[1], out_w = g.out[2];
    const int64_t in_size = in_d * in_h * in_w, out_size = out_d * out_h * out_w;
    const RowTaps row_taps(g);
    const auto& taps = row_taps.taps;
    const int64_t inner_begin = row_taps.inner_begin, inner_end = row_taps.inner_end;
    const int64_t rows = in_d * in_h, step = g.strides[2], dil = g.dilations[2];
    const int64_t work = saturating_mul(rows, saturating_mul(out_w, g.kernel[2])) + out_size;
    parallel_for(planes, grain_for(work), [&](int64_t first, int64_t last) {
      std::vector<V> row_max(static_cast<size_t>(rows * out_w)), acc(static_cast<size_t>(out_w));
      for (int64_t p = first; p < last; ++p) {
        const T* plane = src + p * in_size;
        for (int64_t r = 0; r < rows; ++r) {
          const T* in = plane + r * in_w;
          V* out = row_max.data() + r * out_w;
          // Columns whose taps all lie inside the row: tap by tap across the columns, without
          // branches (each column still reads its taps in increasing order).
          const T* at = in - g.pad_begin[2];
          for (int64_t ow = inner_begin; ow < inner_end; ++ow) out[ow] = widen(at[ow * step]);
          for (int64_t c = 1; c < g.kernel[2]; ++c)
            for (int64_t ow = inner_begin; ow < inner_end; ++ow) {
              const V v = widen(at[ow * step + c * dil]), best = out[ow];
              out[ow] = later_wins_branchless(best, v) ? v : best;
            }
          row_taps.for_each_edge_column([&](int64_t ow) {
            const Taps& tw = taps[2][ow];
            if (tw.first_valid >= tw.end_valid) return;  // the output is lowest<T>()
            V best = widen(in[tw.start + tw.first_valid * tw.step]);
            for (int64_t c = tw.first_valid + 1; c < tw.end_valid; ++c) {
              const V v = widen(in[tw.start + c * tw.step]);
              best = later_wins(best, v) ? v : best;
            }
            out[ow] = best;
          });
        }
        T* plane_out = dst + p * out_size;
        for (int64_t od = 0; od < out_d; ++od)
          for (int64_t oh = 0; oh < out_h; ++oh) {
            const Taps &td = taps[0][od], &th = taps[1][oh];
            T* out = plane_out + (od * out_h + oh) * out_w;
            bool any = false;
            for (int64_t a = td.first_valid; a < td.end_valid; ++a)
              for (int64_t b = th.first_valid; b < th.end_valid; ++b) {
                const V* m = row_max.data() +
                             ((td.start + a * td.step) * in_h + th.start + b * th.step) * out_w;
                if (!any)
                  std::copy(m, m + out_w, acc.begin());
                else
                  for (int64_t ow = 0; ow < out_w; ++ow)
                    acc[ow] = later_wins_branchless(acc[ow], m[ow]) ? m[ow] : acc[ow];
                any = true;
              }
            for (int64_t ow = 0; ow < out_w; ++ow) {
              const Taps& tw = taps[2][ow];
              const bool empty = !any || tw.first_valid >= tw.end_valid;
              out[ow] = narrow<T>(empty ? lowest<T>() : acc[ow]);
            }
          }
      }
    });
  }

  template <typename V>
  static bool is_nan(V v) {
    if constexpr (std::is_floating_point_v<V>)
      return std::isnan(v);
    else
      return false;
  }
  template <typename T>
  static compute_t<T> lowest() {
    if constexpr (is_float_like_v<T>)
      return -std::numeric_limits<double>::infinity();
    else
      return std::numeric_limits<T>::lowest();
  }

  WindowAttrs window_;
  std::vector<int64_t> kernel_;
  bool column_major_;
};
// Versions 1, 8 (Indices, storage_order), 10 (ceil_mode, dilations), 11, 12 (int8/uint8),
// 22 (bfloat16).
PARITY_REF_OP("", "MaxPool", 1, kOpsetMax, MaxPool);

// acc[ow] = the sum of term(x) over the taps of output column ow whose depth and row taps are
// td and th, in the window's order: depth, row, then column. The columns whose taps all lie
// inside the input add tap by tap across the row; the columns at the edges window by window.
template <typename T, typename Term>
void sum_output_row(const WindowGeometry& g, const RowTaps& row_taps, const Taps& td,
                    const Taps& th, const T* plane, Term term, std::vector<double>& acc) {
  const int64_t in_h = g.in[1], in_w = g.in[2];
  const int64_t step = g.strides[2], dil = g.dilations[2], pad = g.pad_begin[2];
  std::fill(acc.begin(), acc.end(), 0.0);
  for (int64_t a = td.first_valid; a < td.end_valid; ++a)
    for (int64_t b = th.first_valid; b < th.end_valid; ++b) {
      const int64_t d = td.start + a * td.step, h = th.start + b * th.step;
      // Indexed from the row's start: a pointer `pad` before it would lie outside the array.
      const T* row = plane + (d * in_h + h) * in_w;
      for (int64_t c = 0; c < g.kernel[2]; ++c) {
        const int64_t tap = c * dil - pad;
        for (int64_t ow = row_taps.inner_begin; ow < row_taps.inner_end; ++ow)
          acc[ow] += term(to_double(row[ow * step + tap]));
      }
      row_taps.for_each_edge_column([&](int64_t ow) {
        const Taps& tw = row_taps.taps[2][ow];
        for (int64_t c = tw.first_valid; c < tw.end_valid; ++c)
          acc[ow] += term(to_double(row[tw.start + c * tw.step]));
      });
    }
}

// window_sums over at most three spatial dims, an output row at a time (each output still
// adds its taps in increasing depth, row, column, from 0, so the sums are the
// window-by-window ones).
template <typename T, typename Term, typename Finish>
void sums_by_rows(const WindowGeometry& g, int64_t planes, const T* src, T* dst, Term term,
                  Finish finish) {
  const int64_t out_d = g.out[0], out_h = g.out[1], out_w = g.out[2];
  const int64_t in_size = g.in[0] * g.in[1] * g.in[2], out_size = out_d * out_h * out_w;
  const RowTaps row_taps(g);
  const auto& taps = row_taps.taps;
  int64_t window = 1;
  for (int d = 0; d < 3; ++d) window = saturating_mul(window, std::min(g.in[d], g.kernel[d]));
  parallel_for(
      planes, grain_for(saturating_mul(out_size, window)), [&](int64_t first, int64_t last) {
        std::vector<double> acc(static_cast<size_t>(out_w));
        for (int64_t p = first; p < last; ++p)
          for (int64_t od = 0; od < out_d; ++od)
            for (int64_t oh = 0; oh < out_h; ++oh) {
              sum_output_row(g, row_taps, taps[0][od], taps[1][oh], src + p * in_size, term, acc);
              T* out = dst + p * out_size + (od * out_h + oh) * out_w;
              Taps at[3] = {taps[0][od], taps[1][oh], Taps{}};
              for (int64_t ow = 0; ow < out_w; ++ow) {
                at[2] = taps[2][ow];
                out[ow] = narrow<T>(finish(acc[ow], at, size_t{3}));
              }
            }
      });
}

// The windows of a pool that sums over the taps inside the input: each output is
// finish(sum of term(x) over its window's valid taps, in a fixed order), in double.
template <typename T, typename Term, typename Finish>
Tensor window_sums(const Tensor& x, const WindowGeometry& geometry, Term term, Finish finish) {
  const WindowGeometry g = window_lifted(geometry, std::max<size_t>(geometry.in.size(), 3));
  const size_t n = g.in.size();
  const int64_t planes = x.shape()[0] * x.shape()[1];
  const int64_t in_size = shape_numel(g.in), out_size = shape_numel(g.out);
  const int64_t in_h = g.in[n - 2], in_w = g.in[n - 1];
  Tensor y = uninitialized_tensor(x.dtype(), pooled_shape(x, geometry.out));
  const T* src = x.data<T>();
  T* dst = y.data<T>();
  if (n == 3) {
    sums_by_rows(g, planes, src, dst, term, finish);
    return y;
  }
  for_each_window(g, planes, [&](int64_t p, int64_t o, const Taps* t) {
    const Taps &td = t[n - 3], &th = t[n - 2], &tw = t[n - 1];
    const T* plane = src + p * in_size;
    double sum = 0;
    for_each_lead_tap(g, t, [&](int64_t lead_at, int64_t) {
      for (int64_t a = td.first_valid; a < td.end_valid; ++a)
        for (int64_t b = th.first_valid; b < th.end_valid; ++b)
          for (int64_t c = tw.first_valid; c < tw.end_valid; ++c) {
            const int64_t d = td.start + a * td.step, h = th.start + b * th.step,
                          w = tw.start + c * tw.step;
            sum += term(to_double(plane[lead_at + (d * in_h + h) * in_w + w]));
          }
    });
    dst[p * out_size + o] = narrow<T>(finish(sum, t, n));
  });
  return y;
}

// What a floating-point window pool's run() does: checks X, works out the window geometry
// and calls pool.template operator()<T>(x, geometry) for X's element type.
template <typename Pool>
Outputs run_float_pool(const Inputs& in, const WindowAttrs& window,
                       const std::vector<int64_t>& kernel, Pool&& pool) {
  const Tensor& x = input_tensor(in, 0, "X");
  check_rank(x, 3, 64, "input X");
  Shape spatial(x.shape().begin() + 2, x.shape().end());
  WindowGeometry geometry = window_geometry(window, spatial, kernel);
  return {dispatch<FloatTypes>(
      x.dtype(), [&]<typename T>() { return pool.template operator()<T>(x, geometry); },
      "input X")};
}

class AveragePool : public Kernel {
 public:
  explicit AveragePool(const OpContext& ctx)
      : window_(read_window_attrs(ctx, /*with_ceil_mode=*/true)),
        kernel_(ctx.attr_ints("kernel_shape")),
        count_include_pad_(ctx.attr_int("count_include_pad", 0) != 0) {}

  Outputs run(const Inputs& in, RunContext&) override {
    return run_float_pool(
        in, window_, kernel_,
        [&]<typename T>(const Tensor& x, const WindowGeometry& g) { return pool<T>(x, g); });
  }

 private:
  template <typename T>
  Tensor pool(const Tensor& x, const WindowGeometry& geometry) const {
    return window_sums<T>(
        x, geometry, [](double v) { return v; },
        [&](double sum, const Taps* t, size_t n) {
          // The divisor counts the taps inside the input, or with count_include_pad those
          // inside the padded input (not those a ceil_mode window adds beyond the end padding).
          int64_t count = 1;
          for (size_t d = 0; d < n; ++d)
            count *= count_include_pad_ ? t[d].in_padded : t[d].end_valid - t[d].first_valid;
          return sum / static_cast<double>(count);
        });
  }

  WindowAttrs window_;
  std::vector<int64_t> kernel_;
  bool count_include_pad_;
};
// Versions 1, 7 (count_include_pad), 10 (ceil_mode), 11, 19 (dilations), 22 (bfloat16).
PARITY_REF_OP("", "AveragePool", 1, kOpsetMax, AveragePool);

// The p of LpPool and GlobalLpPool: a float attribute at version 1, an int from version 2.
double read_p(const OpContext& ctx) {
  const ir::Attribute* a = ctx.attr("p");
  const double p = a && a->type == ir::Attribute::Type::kFloat ? ctx.attr_float("p")
                                                               : double(ctx.attr_int("p", 2));
  if (!(p > 0)) ctx.fail("attribute 'p' is {}; it must be positive", p);
  return p;
}

// (sum |x|^p)^(1/p) in double, with the common p = 1 and p = 2 kept exact.
struct LpNorm {
  double p;
  double term(double v) const {
    return p == 1 ? std::abs(v) : p == 2 ? v * v : std::pow(std::abs(v), p);
  }
  double finish(double sum) const {
    return p == 1 ? sum : p == 2 ? std::sqrt(sum) : std::pow(sum, 1.0 / p);
  }
};

// LpPool: the p-norm of each window; padding contributes zeros.
class LpPool : public Kernel {
 public:
  explicit LpPool(const OpContext& ctx)
      : window_(read_window_attrs(ctx, /*with_ceil_mode=*/ctx.opset() >= 18)),
        kernel_(ctx.attr_ints("kernel_shape")),
        norm_{read_p(ctx)} {}

  Outputs run(const Inputs& in, RunContext&) override {
    return run_float_pool(
        in, window_, kernel_,
        [&]<typename T>(const Tensor& x, const WindowGeometry& g) { return pool<T>(x, g); });
  }

 private:
  template <typename T>
  Tensor pool(const Tensor& x, const WindowGeometry& geometry) const {
    return window_sums<T>(
        x, geometry, [&](double v) { return norm_.term(v); },
        [&](double sum, const Taps*, size_t) { return norm_.finish(sum); });
  }

  WindowAttrs window_;
  std::vector<int64_t> kernel_;
  LpNorm norm_;
};
// Versions 1 (float p), 2 (int p), 11 (auto_pad rules), 18 (ceil_mode, dilations), 22.
PARITY_REF_OP("", "LpPool", 1, kOpsetMax, LpPool);

// Global pooling: one value per (batch, channel) over every spatial element.
template <bool kMax>
class GlobalPool : public Kernel {
 public:
  explicit GlobalPool(const OpContext&) {}

  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "X");
    check_rank(x, 2, 64, "input X");
    return {dispatch<FloatTypes>(
        x.dtype(), [&]<typename T>() { return pool<T>(x); }, "input X")};
  }

 private:
  template <typename T>
  static Tensor pool(const Tensor& x) {
    Shape out_shape = {x.shape()[0], x.shape()[1]};
    out_shape.resize(x.shape().size(), 1);
    const int64_t planes = x.shape()[0] * x.shape()[1];
    const int64_t size = dims_product(x.shape(), 2, x.rank());
    Tensor y = uninitialized_tensor(x.dtype(), out_shape);
    const T* src = x.data<T>();
    T* dst = y.data<T>();
    parallel_for(planes, grain_for(size), [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        const T* plane = src + p * size;
        double r = kMax ? -std::numeric_limits<double>::infinity() : 0.0;
        for (int64_t i = 0; i < size; ++i) {
          const double v = to_double(plane[i]);
          if constexpr (kMax) {
            if (v > r || std::isnan(v)) r = std::isnan(r) ? r : v;
          } else {
            r += v;
          }
        }
        dst[p] = narrow<T>(kMax ? r : r / static_cast<double>(size));
      }
    });
    return y;
  }
};
using GlobalAveragePool = GlobalPool<false>;
using GlobalMaxPool = GlobalPool<true>;
// Versions 1, 22 (bfloat16).
PARITY_REF_OP("", "GlobalAveragePool", 1, kOpsetMax, GlobalAveragePool);
PARITY_REF_OP("", "GlobalMaxPool", 1, kOpsetMax, GlobalMaxPool);

class GlobalLpPool : public Kernel {
 public:
  explicit GlobalLpPool(const OpContext& ctx) : norm_{read_p(ctx)} {}

  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "X");
    check_rank(x, 2, 64, "input X");
    return {dispatch<FloatTypes>(
        x.dtype(), [&]<typename T>() { return pool<T>(x); }, "input X")};
  }

 private:
  template <typename T>
  Tensor pool(const Tensor& x) const {
    Shape out_shape = {x.shape()[0], x.shape()[1]};
    out_shape.resize(x.shape().size(), 1);
    const int64_t planes = x.shape()[0] * x.shape()[1];
    const int64_t size = dims_product(x.shape(), 2, x.rank());
    Tensor y = uninitialized_tensor(x.dtype(), out_shape);
    const T* src = x.data<T>();
    T* dst = y.data<T>();
    parallel_for(planes, grain_for(size), [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        double sum = 0;
        for (int64_t i = 0; i < size; ++i) sum += norm_.term(to_double(src[p * size + i]));
        dst[p] = narrow<T>(norm_.finish(sum));
      }
    });
    return y;
  }

  LpNorm norm_;
};
// Versions 1 (float p), 2 (int p), 22 (bfloat16).
PARITY_REF_OP("", "GlobalLpPool", 1, kOpsetMax, GlobalLpPool);

}  // namespace
}  // namespace parity::ref
