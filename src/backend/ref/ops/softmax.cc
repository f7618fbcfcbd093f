// Softmax and LogSoftmax, in double: y = exp(x - max) / sum(exp(x - max)), and
// log y = (x - max) - log(sum(exp(x - max))), with glibc's exp and log; float, float16 and
// bfloat16 blocks compute the exps with the vector exp and keep glibc's bits (see vector_block).
// Hardmax: 1 at the first maximum, 0 elsewhere.
//
// Before opset 13 the input is seen as a 2-D matrix [prod(dims before axis), prod(the rest)]
// and each row is normalised (axis defaults to 1); from opset 13 the normalisation runs along
// the one axis (default -1).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "backend/ref/ops/kernel_util.h"
#include "backend/ref/ops/vector_math.h"

namespace parity::ref {
namespace {

// The shape a normalisation axis sees: `outer` blocks of `n` values along the axis, `inner`
// apart. Before opset 13 the input is a 2-D matrix [prod(dims before axis), prod(the rest)].
struct AxisLayout {
  int64_t outer, n, inner;
};

AxisLayout axis_layout(const Shape& shape, int64_t axis_attr, bool coerce_2d) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  // A scalar is a single element along an implied axis.
  const int64_t axis = rank == 0 ? 0 : normalize_axis(axis_attr, rank);
  const int64_t outer = dims_product(shape, 0, axis);
  if (coerce_2d) return {outer, dims_product(shape, axis, rank), 1};
  return {outer, rank == 0 ? 1 : shape[axis], dims_product(shape, axis + 1, rank)};
}

// Values of exp kept per outer block (256 KiB of doubles) instead of computed twice.
constexpr int64_t kKeptExps = int64_t{1} << 15;
// The largest outer block (1 MiB of doubles) that float, float16 and bfloat16 inputs compute
// with SLEEF's exp (vector_math.h); larger ones, and double inputs, use glibc's.
constexpr int64_t kVectorBlock = int64_t{1} << 17;

template <bool kLog, bool kCoerce2d>
class Softmax : public Kernel {
 public:
  explicit Softmax(const OpContext& ctx) : axis_(ctx.attr_int("axis", kCoerce2d ? 1 : -1)) {}

  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "input");
    const AxisLayout l = axis_layout(x.shape(), axis_, kCoerce2d);
    return {dispatch<FloatTypes>(
        x.dtype(), [&]<typename T>() { return normalize<T>(x, l.outer, l.n, l.inner); }, "input")};
  }

 private:
  template <typename T>
  static Tensor normalize(const Tensor& x, int64_t outer, int64_t n, int64_t inner) {
    Tensor y = uninitialized_tensor(x.dtype(), x.shape());
    if (y.numel() == 0) return y;  // no columns to tile (inner may be 0)
    const T* src = x.data<T>();
    T* dst = y.data<T>();
    // Each column (an outer block's values along the axis at one inner index) is normalised
    // on its own, so a block may be cut into tiles of `width` columns without changing any
    // value: blocks too large to take the vector path (or, for double, to keep their exps; a
    // softmax over axis 0, say, is one block) are, into the widest tiles that can, and the
    // tiles are spread over the threads. Wide tiles matter: a tile's rows lie `inner` apart,
    // and each row of it is one more page to walk.
    constexpr bool kVector = !std::is_same_v<T, double>;
    const int64_t tile_cap = kVector ? kVectorBlock : kKeptExps;
    int64_t width = inner;
    if (n * inner > tile_cap && inner > 1)
      width = std::clamp<int64_t>(tile_cap / std::max<int64_t>(n, 1), 1, inner);
    const int64_t tiles = (inner + width - 1) / width;
    // exp(x - max) of one tile is kept between the sum and the division when it fits, so each
    // is computed once (the same values either way).
    const bool keep = !kLog && n * width <= kKeptExps;
    const bool vector = kVector && n * width <= kVectorBlock;
    parallel_for(outer * tiles, grain_for(3 * n * width), [&](int64_t b, int64_t e) {
      std::vector<double> max(width), sum(width), exps(keep || vector ? n * width : 0);
      for (int64_t item = b; item < e; ++item) {
        const int64_t o = item / tiles, first = (item % tiles) * width;
        const int64_t w = std::min(width, inner - first);
        const T* xs = src + o * n * inner + first;
        T* ys = dst + o * n * inner + first;
        if (vector && vector_block(xs, ys, n, w, inner, max, sum, exps)) continue;
        exact_block(xs, ys, n, w, inner, max, sum, exps, keep);
      }
    });
    return y;
  }

  // The maxima of `width` columns whose rows are `stride` apart (NaN wins).
  template <typename T>
  static void column_max(const T* xs, int64_t n, int64_t width, int64_t stride,
                         std::vector<double>& max) {
    std::fill(max.begin(), max.end(), -std::numeric_limits<double>::infinity());
    for (int64_t k = 0; k < n; ++k)
      for (int64_t i = 0; i < width; ++i) {
        // Written as a select, so that it vectorizes: a NaN maximum stays, a NaN or larger
        // value replaces it.
        const double v = to_double(xs[k * stride + i]), m = max[i];
        max[i] = std::isnan(m) || !(v > m || std::isnan(v)) ? m : v;
      }
  }

  // One tile (n rows of `width` columns, rows `stride` apart) with glibc's exp and log: the
  // values that define the bits.
  template <typename T>
  static void exact_block(const T* xs, T* ys, int64_t n, int64_t width, int64_t stride,
                          std::vector<double>& max, std::vector<double>& sum,
                          std::vector<double>& exps, bool keep) {
    column_max(xs, n, width, stride, max);
    std::fill(sum.begin(), sum.end(), 0.0);
    for (int64_t k = 0; k < n; ++k)
      for (int64_t i = 0; i < width; ++i) {
        const double ex = std::exp(to_double(xs[k * stride + i]) - max[i]);
        if (keep) exps[k * width + i] = ex;
        sum[i] += ex;
      }
    if constexpr (kLog) {
      for (int64_t i = 0; i < width; ++i) sum[i] = std::log(sum[i]);
      for (int64_t k = 0; k < n; ++k)
        for (int64_t i = 0; i < width; ++i)
          ys[k * stride + i] = narrow<T>((to_double(xs[k * stride + i]) - max[i]) - sum[i]);
    } else {
      for (int64_t k = 0; k < n; ++k)
        for (int64_t i = 0; i < width; ++i) {
          const double ex =
              keep ? exps[k * width + i] : std::exp(to_double(xs[k * stride + i]) - max[i]);
          ys[k * stride + i] = narrow<T>(ex / sum[i]);
        }
    }
  }

  // One tile with the vector exp over the whole tile. Each exp is within kRelTol of glibc's; a
  // sum of n positive terms adds at most n roundings on each side, the division or the
  // subtraction of log(sum) a few more, so the results differ from exact_block's by at most
  // `tol` below. A column with an output not provably rounded to exact_block's value is
  // redone alone by exact_block (columns are independent), so a rare doubtful output costs
  // one column of glibc exps, not the tile's. False when the tile is best redone whole (a
  // contiguous row that vector_row could not prove).
  template <typename T>
  static bool vector_block(const T* xs, T* ys, int64_t n, int64_t width, int64_t stride,
                           std::vector<double>& max, std::vector<double>& sum,
                           std::vector<double>& exps) {
    if constexpr (std::is_same_v<T, float>) {
      if (stride == 1) return vector_row(xs, ys, n, exps);
    }
    column_max(xs, n, width, stride, max);
    double* ex = exps.data();
    for (int64_t k = 0; k < n; ++k)
      for (int64_t i = 0; i < width; ++i)
        ex[k * width + i] = to_double(xs[k * stride + i]) - max[i];
    vmath::apply(vmath::Fn::kExp, ex, ex, n * width);
    std::fill(sum.begin(), sum.end(), 0.0);
    for (int64_t k = 0; k < n; ++k)
      for (int64_t i = 0; i < width; ++i) sum[i] += ex[k * width + i];
    const double rel = tolerance(n);
    std::vector<char> exact;  // the columns redone by exact_block
    std::vector<double> col_max(1), col_sum(1), col_exps;
    auto redo = [&](int64_t i) {
      if (exact.empty()) exact.assign(static_cast<size_t>(width), 0);
      exact[i] = 1;
      exact_block(xs + i, ys + i, n, 1, stride, col_max, col_sum, col_exps, false);
    };
    if constexpr (kLog) {
      double widest = 0;  // the largest |log(sum)| of the tile's columns
      for (int64_t i = 0; i < width; ++i) {
        sum[i] = std::log(sum[i]);
        widest = std::max(widest, std::fabs(sum[i]));
      }
      // The exps are summed: their rows now hold d = x - max, beside r = d - log(sum).
      std::vector<double> r(static_cast<size_t>(width));
      std::vector<float> row(static_cast<size_t>(width));
      for (int64_t k = 0; k < n; ++k) {
        double* d = ex + k * width;
        for (int64_t i = 0; i < width; ++i) {
          d[i] = to_double(xs[k * stride + i]) - max[i];
          r[i] = d[i] - sum[i];
        }
        if constexpr (std::is_same_v<T, float>) {
          // The vector guard over the row with the widest column's |log(sum)| in the bound's
          // constant: at least each column's own bound, so a value it passes is exact.
          if (!std::isnan(widest) &&
              vmath::narrow_checked(r.data(), d, {rel * (1 + widest), rel, rel}, false, row.data(),
                                    width)) {
            std::memcpy(ys + k * stride, row.data(), static_cast<size_t>(width) * sizeof(float));
            continue;
          }
        }
        for (int64_t i = 0; i < width; ++i) {
          if (!exact.empty() && exact[i]) continue;
          // log(sum) differs by the sum's relative difference (absolute in the log).
          const double tol = rel * (1 + std::fabs(sum[i]) + std::fabs(d[i]) + std::fabs(r[i]));
          if (!vmath::rounds_alike<T>(r[i], tol))
            redo(i);
          else
            ys[k * stride + i] = narrow<T>(r[i]);
        }
      }
    } else {
      for (int64_t k = 0; k < n; ++k)
        for (int64_t i = 0; i < width; ++i) ex[k * width + i] /= sum[i];
      std::vector<float> row(static_cast<size_t>(width));
      for (int64_t k = 0; k < n; ++k) {
        const double* r = ex + k * width;
        if constexpr (std::is_same_v<T, float>) {
          // The guard's vector kernels over one row of the tile (lane by lane the scalar
          // guard's decision: a passing value is exact_block's, so it may also overwrite a
          // column already redone); any doubt and the row is decided element by element.
          if (vmath::narrow_checked(r, r, {0, rel, 0}, true, row.data(), width)) {
            std::memcpy(ys + k * stride, row.data(), static_cast<size_t>(width) * sizeof(float));
            continue;
          }
        }
        for (int64_t i = 0; i < width; ++i) {
          if (!exact.empty() && exact[i]) continue;
          if (!vmath::rounds_alike<T>(r[i], rel * r[i], true))
            redo(i);
          else
            ys[k * stride + i] = narrow<T>(r[i]);
        }
      }
    }
    return true;
  }

  // The relative bound of vector_block's results against exact_block's for a row of n: each
  // exp within kRelTol, a sum of n positive terms within n roundings (2^-53 each) in any
  // order, each side, and the division or the subtraction of log(sum) a few more (the 16).
  static double tolerance(int64_t n) {
    return vmath::kRelTol + static_cast<double>(n + 16) * 0x1p-50;
  }

  // vector_block for one contiguous float row (the normalised axis is the last), every pass
  // through the vector kernels: the maximum, x - max, the vector exp, the sum in 8 partial sums
  // (its order is free: tolerance(n) bounds any order), the scaling, and the guard. Softmax
  // multiplies by 1 / sum rather than dividing: one more rounding (2^-53 relative), inside the
  // 16 roundings tolerance() allows beyond the sum's. `buf` holds 2 n doubles.
  static bool vector_row(const float* xs, float* ys, int64_t n, std::vector<double>& buf) {
    if (n == 0) return true;
    const double max = vmath::max_or_nan(xs, n);
    // NaN (exact_block's NaN rule), an infinite maximum, or a zero of either sign: exactly.
    if (!std::isfinite(max) || max == 0) return false;
    if (buf.size() < static_cast<size_t>(2 * n)) buf.resize(2 * n);
    double* d = buf.data();
    double* r = d + n;
    vmath::widen_shift(xs, max, d, n);
    vmath::apply(vmath::Fn::kExp, d, r, n);
    const double sum = vmath::unordered_sum(r, n);
    const double rel = tolerance(n);
    if constexpr (kLog) {
      const double log_sum = std::log(sum);
      for (int64_t k = 0; k < n; ++k) r[k] = d[k] - log_sum;
      // The bound of vector_block: rel (1 + |log sum| + |d| + |r|).
      return vmath::narrow_checked(r, d, {rel * (1 + std::fabs(log_sum)), rel, rel}, false, ys, n);
    } else {
      const double inverse = 1 / sum;
      for (int64_t k = 0; k < n; ++k) r[k] *= inverse;
      return vmath::narrow_checked(r, d, {0, rel, 0}, true, ys, n);
    }
  }

  int64_t axis_;
};

using SoftmaxV1 = Softmax<false, true>;
using SoftmaxV13 = Softmax<false, false>;
using LogSoftmaxV1 = Softmax<true, true>;
using LogSoftmaxV13 = Softmax<true, false>;
// Versions 1, 11 (coerced to 2-D), 13 (one axis).
PARITY_REF_OP("", "Softmax", 1, 12, SoftmaxV1);
PARITY_REF_OP("", "Softmax", 13, kOpsetMax, SoftmaxV13);
PARITY_REF_OP("", "LogSoftmax", 1, 12, LogSoftmaxV1);
PARITY_REF_OP("", "LogSoftmax", 13, kOpsetMax, LogSoftmaxV13);

// Hardmax: 1 at the first maximum along the axis, 0 elsewhere. A NaN counts as the maximum
// (the first one wins), as in NumPy's argmax, which ONNX's reference implementation uses.
template <bool kCoerce2d>
class Hardmax : public Kernel {
 public:
  explicit Hardmax(const OpContext& ctx) : axis_(ctx.attr_int("axis", kCoerce2d ? 1 : -1)) {}

  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "input");
    const AxisLayout l = axis_layout(x.shape(), axis_, kCoerce2d);
    return {dispatch<FloatTypes>(
        x.dtype(), [&]<typename T>() { return hardmax<T>(x, l); }, "input")};
  }

 private:
  template <typename T>
  static Tensor hardmax(const Tensor& x, const AxisLayout& l) {
    Tensor y(x.dtype(), x.shape());  // zero-filled
    const T* src = x.data<T>();
    T* dst = y.data<T>();
    const T one = narrow<T>(1.0);
    parallel_for(l.outer * l.inner, grain_for(l.n), [&](int64_t b, int64_t e) {
      for (int64_t item = b; item < e; ++item) {
        const int64_t base = (item / l.inner) * l.n * l.inner + item % l.inner;
        int64_t best = 0;
        double best_v = l.n > 0 ? to_double(src[base]) : 0;
        for (int64_t k = 1; k < l.n && !std::isnan(best_v); ++k) {
          const double v = to_double(src[base + k * l.inner]);
          if (v > best_v || std::isnan(v)) best = k, best_v = v;
        }
        if (l.n > 0) dst[base + best * l.inner] = one;
      }
    });
    return y;
  }

  int64_t axis_;
};
// Versions 1, 11 (coerced to 2-D), 13 (one axis).
PARITY_REF_OP("", "Hardmax", 1, 12, Hardmax<true>);
PARITY_REF_OP("", "Hardmax", 13, kOpsetMax, Hardmax<false>);

}  // namespace
}  // namespace parity::ref
