// Normalisation over groups of elements: InstanceNormalization, MeanVarianceNormalization,
// LayerNormalization and GroupNormalization.
//
// All need a mean and a variance per group of elements. They come from one pass that sums
// x - K and (x - K)^2 in double, with K the group's first element: shifting by a value close
// to the mean keeps E[x^2] - E[x]^2 from cancelling catastrophically, and in exact arithmetic
// the result is the same. Eight accumulators per sum, combined in a fixed order, keep the
// loop fast and the bits independent of the thread count.
#include <cmath>

#include "backend/ref/ops/kernel_util.h"
#include "backend/ref/ops/normalize_row.h"

namespace parity::ref {
namespace {

struct Moments {
  double mean = 0, var = 0;
};

// Mean and (population) variance of n contiguous values.
template <typename T>
Moments moments_contiguous(const T* x, int64_t n) {
  if (n == 0) return {};
  const double k = to_double(x[0]);
  double s1[8] = {}, s2[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) {
      double d = to_double(x[i + j]) - k;
      s1[j] += d;
      s2[j] += d * d;
    }
  for (int j = 0; i < n; ++i, ++j) {
    double d = to_double(x[i]) - k;
    s1[j] += d;
    s2[j] += d * d;
  }
  double sum = ((s1[0] + s1[1]) + (s1[2] + s1[3])) + ((s1[4] + s1[5]) + (s1[6] + s1[7]));
  double sq = ((s2[0] + s2[1]) + (s2[2] + s2[3])) + ((s2[4] + s2[5]) + (s2[6] + s2[7]));
  double m = sum / static_cast<double>(n);
  // Exactly, the variance is never negative; rounding can make a constant group's slightly so.
  return {k + m, std::max(0.0, sq / static_cast<double>(n) - m * m)};
}

// float32, the common case, gets AVX2 versions chosen at run time (as well as the baseline
// SSE2 ones). Neither uses fused multiply-adds, so both give the same bits.
__attribute__((target_clones("avx2", "default"))) Moments moments_float(const float* x, int64_t n) {
  return moments_contiguous(x, n);
}

// The moments of n contiguous values, through the run-time-dispatched version for float32.
template <typename T>
Moments moments(const T* x, int64_t n) {
  if constexpr (std::is_same_v<T, float>)
    return moments_float(x, n);
  else
    return moments_contiguous(x, n);
}

class InstanceNormalization : public Kernel {
 public:
  explicit InstanceNormalization(const OpContext& ctx)
      : epsilon_(static_cast<double>(ctx.attr_float("epsilon", 1e-5f))) {
    if (ctx.num_inputs() != 3) ctx.fail("it has {} inputs; it must have 3", ctx.num_inputs());
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "input");
    const Tensor& scale = input_tensor(in, 1, "scale");
    const Tensor& bias = input_tensor(in, 2, "B");
    check_rank(x, 2, 64, "input");
    const int64_t channels = x.shape()[1];
    for (const Tensor* t : {&scale, &bias})
      if (t->numel() != channels || t->dtype() != x.dtype())
        ctx.fail(
            "scale and B must be {} tensors of {} values (one per channel); got {} {} and "
            "{} {}",
            dtype_name(x.dtype()), channels, dtype_name(scale.dtype()), shape_str(scale.shape()),
            dtype_name(bias.dtype()), shape_str(bias.shape()));
    return {dispatch<FloatTypes>(
        x.dtype(), [&]<typename T>() { return normalize<T>(x, scale, bias); }, "input")};
  }

 private:
  template <typename T>
  Tensor normalize(const Tensor& x, const Tensor& scale, const Tensor& bias) const {
    const int64_t channels = x.shape()[1];
    const int64_t planes = x.shape()[0] * channels;
    const int64_t size = dims_product(x.shape(), 2, x.rank());
    Tensor y = uninitialized_tensor(x.dtype(), x.shape());
    const T* src = x.data<T>();
    const T* gamma = scale.data<T>();
    const T* beta = bias.data<T>();
    T* dst = y.data<T>();
    parallel_for(planes, grain_for(2 * size), [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        const T* xp = src + p * size;
        T* yp = dst + p * size;
        const Moments m = moments(xp, size);
        const double a = to_double(gamma[p % channels]) / std::sqrt(m.var + epsilon_);
        const double c = to_double(beta[p % channels]);
        if constexpr (std::is_same_v<T, float>)
          normalize_float(xp, yp, size, m.mean, a, c);
        else
          for (int64_t i = 0; i < size; ++i) yp[i] = narrow<T>((to_double(xp[i]) - m.mean) * a + c);
      }
    });
    return y;
  }

  double epsilon_;
};
// Versions 1 (legacy consumed_inputs), 6, 22 (bfloat16).
PARITY_REF_OP("", "InstanceNormalization", 1, kOpsetMax, InstanceNormalization);

// MeanVarianceNormalization: Y = (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9) over `axes`.
// This is both ONNX's definition (the function body of versions 9 and 13 adds epsilon after
// the square root, with epsilon a float32 Constant 1e-9) and Polygraphy's reference kernel;
// note it differs from the usual (X - mean) / sqrt(var + eps). The variance is computed in
// double from shifted sums (see above), which is the same quantity, exactly.
class MeanVarianceNormalization : public Kernel {
 public:
  explicit MeanVarianceNormalization(const OpContext& ctx)
      : axes_(ctx.attr_ints("axes", {0, 2, 3})) {}

  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "X");
    std::vector<int64_t> axes = normalize_axes(axes_, x.rank(), "axes");
    return {dispatch<FloatTypes>(
        x.dtype(), [&]<typename T>() { return normalize<T>(x, axes); }, "input X")};
  }

 private:
  static constexpr double kEpsilon = static_cast<double>(1e-9f);

  template <typename T>
  static Tensor normalize(const Tensor& x, const std::vector<int64_t>& axes) {
    Reduction r(x.shape(), axes, /*keepdims=*/true);
    const T* src = x.data<T>();
    std::vector<double> mean(r.num_outputs()), denom(r.num_outputs());
    parallel_for(r.num_outputs(), grain_for(r.count()), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        double k = 0, s1 = 0, s2 = 0;
        bool first = true;
        r.for_each_input(o, [&](int64_t off) {
          double v = to_double(src[off]);
          if (first) k = v, first = false;
          s1 += v - k;
          s2 += (v - k) * (v - k);
        });
        double n = static_cast<double>(r.count()), m = s1 / n;
        mean[o] = k + m;
        denom[o] = std::sqrt(std::max(0.0, s2 / n - m * m)) + kEpsilon;
      }
    });
    Tensor y = uninitialized_tensor(x.dtype(), x.shape());
    T* dst = y.data<T>();
    Broadcast bc(x.shape(), {x.shape(), r.out_shape()});
    const int64_t step = bc.step(1);
    parallel_for(bc.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
      bc.for_each_run(b, e, [&](int64_t o, const int64_t* offs, int64_t len) {
        for (int64_t i = 0; i < len; ++i) {
          int64_t s = offs[1] + i * step;
          dst[o + i] = narrow<T>((to_double(src[offs[0] + i]) - mean[s]) / denom[s]);
        }
      });
    });
    return y;
  }

  std::vector<int64_t> axes_;
};
// Versions 9, 13 (bfloat16; same function body).
PARITY_REF_OP("", "MeanVarianceNormalization", 9, kOpsetMax, MeanVarianceNormalization);

// The values of `t` (a floating tensor) broadcast one way to `target`, as doubles: the scale
// and bias of LayerNormalization, which may have fewer dims than the normalised shape.
std::vector<double> broadcast_to_doubles(const Tensor& t, const Shape& target,
                                         std::string_view what, RunContext& ctx) {
  // Right-aligned, each of t's dims is 1 or the target's.
  bool ok = t.rank() <= static_cast<int64_t>(target.size());
  for (int64_t d = 1; ok && d <= t.rank(); ++d) {
    const int64_t have = t.shape()[t.rank() - d], want = target[target.size() - d];
    ok = have == want || have == 1;
  }
  std::vector<double> out(static_cast<size_t>(shape_numel(target)));
  dispatch<FloatTypes>(
      t.dtype(),
      [&]<typename T>() {
        const T* src = t.data<T>();
        Broadcast bc(target, {t.shape()});
        bc.for_each_run(0, bc.numel(), [&](int64_t o, const int64_t* offs, int64_t len) {
          for (int64_t i = 0; i < len; ++i) out[o + i] = to_double(src[offs[0] + i * bc.step(0)]);
        });
      },
      what);
  return out;
}

// The element type a `stash_type` attribute names; LayerNormalization's Mean and InvStdDev
// have it (ONNX's type inference gives them the stash type).
DataType stash_dtype(const OpContext& ctx) {
  const int64_t v = ctx.attr_int("stash_type", 1);
  for (DataType t :
       {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16, DataType::kBFloat16})
    if (static_cast<int64_t>(t) == v) return t;
  ctx.fail(
      "failed to read attribute 'stash_type' with value {}: it must name a floating type; "
      "valid: 1 (float), 10 (float16), 11 (double), 16 (bfloat16)",
      v);
}

// Clones and contraction as for normalize_float (below).
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"),
               optimize("fp-contract=off"))) void
affine_normalize_float(const float* x, float* y, int64_t n, double mean, double inv,
                       const double* scale, const double* bias) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = static_cast<float>((static_cast<double>(x[i]) - mean) * inv * scale[i] + bias[i]);
}

// LayerNormalization (opset 17): each block X[i0..i(axis-1), ...] is normalised over the dims
// from `axis` on: Y = (X - mean) / sqrt(var + epsilon) * Scale + B. The optional outputs Mean
// and InvStdDev (shape of X with the normalised dims set to 1) are in the stash type. All is
// computed in double and rounded once, whatever the stash type asks for (it sets the precision
// of the computation, and double is at least that precise).
class LayerNormalization : public Kernel {
 public:
  explicit LayerNormalization(const OpContext& ctx)
      : axis_(ctx.attr_int("axis", -1)),
        epsilon_(static_cast<double>(ctx.attr_float("epsilon", 1e-5f))),
        stash_(stash_dtype(ctx)) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const Tensor& scale = input_tensor(in, 1, "Scale");
    const Tensor* bias = optional_input(in, 2, "B");
    check_rank(x, 1, 64, "input X");
    const int64_t axis = normalize_axis(axis_, x.rank());
    const Shape norm_shape(x.shape().begin() + axis, x.shape().end());
    std::vector<double> gamma = broadcast_to_doubles(scale, norm_shape, "Scale", ctx);
    std::vector<double> beta = bias ? broadcast_to_doubles(*bias, norm_shape, "B", ctx)
                                    : std::vector<double>(gamma.size(), 0.0);
    Shape stat_shape = x.shape();
    for (int64_t d = axis; d < x.rank(); ++d) stat_shape[d] = 1;
    return dispatch<FloatTypes>(
        x.dtype(), [&]<typename T>() { return normalize<T>(x, gamma, beta, stat_shape, ctx); },
        "input X");
  }

 private:
  template <typename T>
  Outputs normalize(const Tensor& x, const std::vector<double>& gamma,
                    const std::vector<double>& beta, const Shape& stat_shape,
                    RunContext& ctx) const {
    const int64_t size = static_cast<int64_t>(gamma.size());
    const int64_t rows = size == 0 ? 0 : x.numel() / size;
    Tensor y = uninitialized_tensor(x.dtype(), x.shape());
    const T* src = x.data<T>();
    T* dst = y.data<T>();
    std::vector<double> mean(rows), inv(rows);
    parallel_for(rows, grain_for(3 * size), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const T* xr = src + r * size;
        T* yr = dst + r * size;
        const Moments m = moments(xr, size);
        mean[r] = m.mean;
        inv[r] = 1.0 / std::sqrt(m.var + epsilon_);
        if constexpr (std::is_same_v<T, float>)
          affine_normalize_float(xr, yr, size, m.mean, inv[r], gamma.data(), beta.data());
        else
          for (int64_t i = 0; i < size; ++i)
            yr[i] = narrow<T>((to_double(xr[i]) - m.mean) * inv[r] * gamma[i] + beta[i]);
      }
    });
    Outputs out = {std::move(y)};
    const size_t extra = ctx.node().outputs.size();
    for (size_t k = 1; k < extra && k < 3; ++k) {
      if (ctx.node().outputs[k].empty()) {
        out.push_back(Value::none());
        continue;
      }
      const std::vector<double>& v = k == 1 ? mean : inv;
      out.push_back(dispatch<FloatTypes>(stash_, [&]<typename U>() {
        Tensor t = uninitialized_tensor(stash_, stat_shape);
        U* p = t.data<U>();
        for (int64_t r = 0; r < rows; ++r) p[r] = narrow<U>(v[r]);
        return t;
      }));
    }
    return out;
  }

  int64_t axis_;
  double epsilon_;
  DataType stash_;
};
// Version 17 (and 22: types).
PARITY_REF_OP("", "LayerNormalization", 17, kOpsetMax, LayerNormalization);

// GroupNormalization: the C channels of X [N, C, ...] form num_groups groups of C/num_groups
// channels; each (n, group) block is normalised over its channels and spatial positions.
// Opset 18 has one scale and bias per group; opset 21 one per channel (and a stash_type,
// which sets a precision that double computation already meets).
template <bool kPerChannel>
class GroupNormalization : public Kernel {
 public:
  explicit GroupNormalization(const OpContext& ctx)
      : epsilon_(static_cast<double>(ctx.attr_float("epsilon", 1e-5f))),
        groups_(ctx.attr_int("num_groups")) {
    if (groups_ <= 0)
      ctx.fail(
          "failed to read attribute 'num_groups' with value {}: it must be positive; "
          "valid: a divisor of the channel count",
          groups_);
    if (kPerChannel) stash_dtype(ctx);  // checks the attribute
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const Tensor& scale = input_tensor(in, 1, "scale");
    const Tensor& bias = input_tensor(in, 2, "bias");
    check_rank(x, 2, 64, "input X");
    const int64_t channels = x.shape()[1];
    if (channels % groups_ != 0)
      ctx.fail("X has {} channels; num_groups ({}) must divide them", channels, groups_);
    const int64_t params = kPerChannel ? channels : groups_;
    for (const Tensor* t : {&scale, &bias})
      if (t->numel() != params || t->rank() != 1 || t->dtype() != x.dtype())
        ctx.fail(
            "scale and bias must be 1-D {} tensors of {} values (one per {}); got {} {} "
            "and {} {}",
            dtype_name(x.dtype()), params, kPerChannel ? "channel" : "group",
            dtype_name(scale.dtype()), shape_str(scale.shape()), dtype_name(bias.dtype()),
            shape_str(bias.shape()));
    return {dispatch<FloatTypes>(
        x.dtype(), [&]<typename T>() { return normalize<T>(x, scale, bias); }, "input X")};
  }

 private:
  template <typename T>
  Tensor normalize(const Tensor& x, const Tensor& scale, const Tensor& bias) const {
    const int64_t channels = x.shape()[1], per_group = channels / groups_;
    const int64_t spatial = dims_product(x.shape(), 2, x.rank());
    const int64_t size = per_group * spatial, blocks = x.shape()[0] * groups_;
    Tensor y = uninitialized_tensor(x.dtype(), x.shape());
    const T* src = x.data<T>();
    const T* gamma = scale.data<T>();
    const T* beta = bias.data<T>();
    T* dst = y.data<T>();
    parallel_for(blocks, grain_for(2 * size), [&](int64_t b, int64_t e) {
      for (int64_t blk = b; blk < e; ++blk) {
        const int64_t g = blk % groups_;
        const T* xb = src + blk * size;
        T* yb = dst + blk * size;
        const Moments m = moments(xb, size);
        const double inv = 1.0 / std::sqrt(m.var + epsilon_);
        for (int64_t c = 0; c < per_group; ++c) {
          const int64_t p = kPerChannel ? g * per_group + c : g;
          const double a = inv * to_double(gamma[p]), sh = to_double(beta[p]);
          const T* xc = xb + c * spatial;
          T* yc = yb + c * spatial;
          if constexpr (std::is_same_v<T, float>)
            normalize_float(xc, yc, spatial, m.mean, a, sh);
          else
            for (int64_t i = 0; i < spatial; ++i)
              yc[i] = narrow<T>((to_double(xc[i]) - m.mean) * a + sh);
        }
      }
    });
    return y;
  }

  double epsilon_;
  int64_t groups_;
};
// Version 18 (scale and bias per group), 21 (per channel, stash_type).
PARITY_REF_OP("", "GroupNormalization", 18, 20, GroupNormalization<false>);
PARITY_REF_OP("", "GroupNormalization", 21, kOpsetMax, GroupNormalization<true>);

}  // namespace

// AVX-512 (x86-64-v4) and AVX2 clones beside the SSE2 baseline; contraction off, since v4 has
// fused multiply-adds, which would round (x - mean) * a + c once instead of twice.
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"),
               optimize("fp-contract=off"))) void
normalize_float(const float* __restrict x, float* __restrict y, int64_t n, double mean, double a,
                double c) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = static_cast<float>((static_cast<double>(x[i]) - mean) * a + c);
}

}  // namespace parity::ref
