// Normalisation per channel and across channels: BatchNormalization, LRN, LpNormalization.
// Statistics and norms accumulate in double and each output rounds once.
#include <cmath>

#include "backend/ref/ops/kernel_util.h"
#include "backend/ref/ops/normalize_row.h"

namespace parity::ref {
namespace {

// X seen as [N, F, S]: F features, each with its own statistics and parameters, S positions
// per feature and sample. With spatial=1 (the only form from opset 9) F is the channel count
// and S the spatial size; with spatial=0 every (channel, position) is a feature (F = C * S,
// S = 1), as opsets 1 to 8 allow.
struct FeatureLayout {
  int64_t n, f, s;
};

// BatchNormalization, all versions.
//   inference: Y = (X - mean) / sqrt(var + epsilon) * scale + B with the given mean and var;
//   training:  the statistics of this batch (mean and population variance over N and S) are
//              used instead, and the running statistics are updated:
//              running = given * momentum + batch * (1 - momentum).
// Opset 14+ says which through training_mode and outputs (Y, running_mean, running_var).
// Before 14 a node that asks for more outputs than Y is in training (opsets 1 and 6 also say
// so with is_test=0): it outputs (Y, running mean, running var, batch mean, batch variance);
// the batch variance is given as a variance (the specification calls it only "saved
// variance"), as ONNX's reference implementation does.
class BatchNormalization : public Kernel {
 public:
  explicit BatchNormalization(const OpContext& ctx)
      : epsilon_(static_cast<double>(ctx.attr_float("epsilon", 1e-5f))),
        momentum_(static_cast<double>(ctx.attr_float("momentum", 0.9f))),
        spatial_(ctx.opset() >= 9 || ctx.attr_int("spatial", 1) != 0),
        outputs_(ctx.num_outputs()) {
    bool wants_stats = false;
    for (size_t k = 1; k < outputs_; ++k) wants_stats |= !ctx.node().outputs[k].empty();
    if (ctx.opset() >= 14) {
      training_ = ctx.attr_int("training_mode", 0) != 0;
      if (!training_ && wants_stats)
        ctx.fail(
            "it asks for running_mean and running_var, which are outputs only when "
            "training_mode=1");
    } else {
      training_ = wants_stats && !(ctx.opset() < 7 && ctx.attr_int("is_test", 0) != 0);
    }
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const Tensor* params[4] = {&input_tensor(in, 1, "scale"), &input_tensor(in, 2, "B"),
                               &input_tensor(in, 3, "input_mean"),
                               &input_tensor(in, 4, "input_var")};
    check_rank(x, 2, 64, "input X");
    const int64_t spatial = dims_product(x.shape(), 2, x.rank());
    FeatureLayout l = spatial_ ? FeatureLayout{x.shape()[0], x.shape()[1], spatial}
                               : FeatureLayout{x.shape()[0], x.shape()[1] * spatial, 1};
    const char* names[4] = {"scale", "B", "input_mean", "input_var"};
    std::vector<double> p[4];
    for (int k = 0; k < 4; ++k) {
      if (params[k]->numel() != l.f)
        ctx.fail("{} has shape {}; it must hold {} values (one per {})", names[k],
                 shape_str(params[k]->shape()), l.f, spatial_ ? "channel" : "channel and position");
      p[k] = dispatch<FloatTypes>(
          params[k]->dtype(),
          [&]<typename T>() {
            std::vector<double> v(l.f);
            for (int64_t i = 0; i < l.f; ++i) v[i] = to_double(params[k]->data<T>()[i]);
            return v;
          },
          names[k]);
    }
    return dispatch<FloatTypes>(
        x.dtype(), [&]<typename T>() { return normalize<T>(x, l, p, params[2]->dtype()); },
        "input X");
  }

 private:
  template <typename T>
  Outputs normalize(const Tensor& x, const FeatureLayout& l, const std::vector<double>* p,
                    DataType stat_dtype) const {
    const T* src = x.data<T>();
    std::vector<double> mean = p[2], var = p[3];
    if (training_) batch_moments(src, l, mean, var);
    std::vector<double> a(l.f);
    const std::vector<double>& c = p[1];
    for (int64_t f = 0; f < l.f; ++f) a[f] = p[0][f] / std::sqrt(var[f] + epsilon_);
    Tensor y = uninitialized_tensor(x.dtype(), x.shape());
    T* dst = y.data<T>();
    parallel_for(l.n * l.f, grain_for(l.s), [&](int64_t b, int64_t e) {
      for (int64_t blk = b; blk < e; ++blk) {
        const int64_t f = blk % l.f;
        const T* xs = src + blk * l.s;
        T* ys = dst + blk * l.s;
        if constexpr (std::is_same_v<T, float>)
          normalize_float(xs, ys, l.s, mean[f], a[f], c[f]);
        else
          for (int64_t i = 0; i < l.s; ++i)
            ys[i] = narrow<T>((to_double(xs[i]) - mean[f]) * a[f] + c[f]);
      }
    });
    Outputs out = {std::move(y)};
    if (outputs_ == 1) return out;
    // Running statistics, then (before opset 14) the batch's own.
    std::vector<std::vector<double>> stats(2);
    for (int64_t f = 0; f < l.f; ++f) {
      stats[0].push_back(p[2][f] * momentum_ + mean[f] * (1.0 - momentum_));
      stats[1].push_back(p[3][f] * momentum_ + var[f] * (1.0 - momentum_));
    }
    if (outputs_ > 3) stats.push_back(mean), stats.push_back(var);
    for (size_t k = 1; k < outputs_; ++k) {
      if (k - 1 >= stats.size()) {
        out.push_back(Value::none());
        continue;
      }
      out.push_back(dispatch<FloatTypes>(stat_dtype, [&]<typename U>() {
        Tensor t = uninitialized_tensor(stat_dtype, {l.f});
        for (int64_t f = 0; f < l.f; ++f) t.data<U>()[f] = narrow<U>(stats[k - 1][f]);
        return t;
      }));
    }
    return out;
  }

  // Mean and population variance of each feature over N and S, from sums shifted by the
  // feature's first value (see normalization.cc), in a fixed order per feature.
  template <typename T>
  static void batch_moments(const T* x, const FeatureLayout& l, std::vector<double>& mean,
                            std::vector<double>& var) {
    const double count = static_cast<double>(l.n * l.s);
    parallel_for(l.f, grain_for(l.n * l.s), [&](int64_t b, int64_t e) {
      for (int64_t f = b; f < e; ++f) {
        if (l.n * l.s == 0) {
          mean[f] = var[f] = std::nan("");
          continue;
        }
        const double k = to_double(x[f * l.s]);
        double s1 = 0, s2 = 0;
        for (int64_t n = 0; n < l.n; ++n) {
          const T* xs = x + (n * l.f + f) * l.s;
          for (int64_t i = 0; i < l.s; ++i) {
            const double d = to_double(xs[i]) - k;
            s1 += d;
            s2 += d * d;
          }
        }
        const double m = s1 / count;
        mean[f] = k + m;
        var[f] = std::max(0.0, s2 / count - m * m);
      }
    });
  }

  double epsilon_, momentum_;
  bool spatial_;
  size_t outputs_;
  bool training_ = false;
};
// Versions 1 (consumed_inputs, is_test, spatial), 6, 7 (no is_test), 9 (no spatial),
// 14 (training_mode), 15 (parameters and statistics may have other floating types).
PARITY_REF_OP("", "BatchNormalization", 1, kOpsetMax, BatchNormalization);

// LRN: Y = X / (bias + alpha / size * square_sum)^beta, square_sum over the channels
// [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to the input.
class LRN : public Kernel {
 public:
  explicit LRN(const OpContext& ctx)
      : alpha_(static_cast<double>(ctx.attr_float("alpha", 1e-4f))),
        beta_(static_cast<double>(ctx.attr_float("beta", 0.75f))),
        bias_(static_cast<double>(ctx.attr_float("bias", 1.0f))),
        size_(ctx.attr_int("size")) {
    if (size_ <= 0)
      ctx.fail(
          "failed to read attribute 'size' with value {}: it must be positive; valid: an "
          "odd window length such as 3 or 5",
          size_);
  }

  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "X");
    check_rank(x, 3, 64, "input X");
    return {dispatch<FloatTypes>(
        x.dtype(), [&]<typename T>() { return lrn<T>(x); }, "input X")};
  }

 private:
  template <typename T>
  Tensor lrn(const Tensor& x) const {
    const int64_t channels = x.shape()[1];
    const int64_t plane = dims_product(x.shape(), 2, x.rank());
    const int64_t before = (size_ - 1) / 2, after = size_ - 1 - before;
    const T* src = x.data<T>();
    Tensor y = uninitialized_tensor(x.dtype(), x.shape());
    T* dst = y.data<T>();
    const double scale = alpha_ / static_cast<double>(size_);
    parallel_for(x.shape()[0] * channels, grain_for(plane * size_), [&](int64_t b, int64_t e) {
      std::vector<double> sum(plane);
      for (int64_t nc = b; nc < e; ++nc) {
        const int64_t n = nc / channels, c = nc % channels;
        std::fill(sum.begin(), sum.end(), 0.0);
        for (int64_t k = std::max<int64_t>(0, c - before); k <= std::min(channels - 1, c + after);
             ++k) {
          const T* xs = src + (n * channels + k) * plane;
          for (int64_t i = 0; i < plane; ++i) {
            const double v = to_double(xs[i]);
            sum[i] += v * v;
          }
        }
        const T* xs = src + nc * plane;
        T* ys = dst + nc * plane;
        for (int64_t i = 0; i < plane; ++i)
          ys[i] = narrow<T>(to_double(xs[i]) / std::pow(bias_ + scale * sum[i], beta_));
      }
    });
    return y;
  }

  double alpha_, beta_, bias_;
  int64_t size_;
};
// Versions 1, 13 (bfloat16).
PARITY_REF_OP("", "LRN", 1, kOpsetMax, LRN);

// LpNormalization: X divided by its L1 or L2 norm along `axis`. A zero norm gives 0/0 = NaN,
// as the specification's plain division (and ONNX's reference implementation) does.
class LpNormalization : public Kernel {
 public:
  explicit LpNormalization(const OpContext& ctx)
      : axis_(ctx.attr_int("axis", -1)), p_(ctx.attr_int("p", 2)) {
    if (p_ != 1 && p_ != 2)
      ctx.fail("failed to read attribute 'p' with value {}: only 1 and 2 are defined; valid: 1, 2",
               p_);
  }

  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "input");
    check_rank(x, 1, 64, "input");
    const int64_t axis = normalize_axis(axis_, x.rank());
    const int64_t outer = dims_product(x.shape(), 0, axis), n = x.shape()[axis];
    const int64_t inner = dims_product(x.shape(), axis + 1, x.rank());
    return {dispatch<FloatTypes>(
        x.dtype(), [&]<typename T>() { return normalize<T>(x, outer, n, inner); }, "input")};
  }

 private:
  template <typename T>
  Tensor normalize(const Tensor& x, int64_t outer, int64_t n, int64_t inner) const {
    const T* src = x.data<T>();
    Tensor y = uninitialized_tensor(x.dtype(), x.shape());
    T* dst = y.data<T>();
    parallel_for(outer * inner, grain_for(2 * n), [&](int64_t b, int64_t e) {
      for (int64_t item = b; item < e; ++item) {
        const int64_t base = (item / inner) * n * inner + item % inner;
        double norm = 0;
        for (int64_t k = 0; k < n; ++k) {
          const double v = to_double(src[base + k * inner]);
          norm += p_ == 1 ? std::abs(v) : v * v;
        }
        if (p_ == 2) norm = std::sqrt(norm);
        for (int64_t k = 0; k < n; ++k)
          dst[base + k * inner] = narrow<T>(to_double(src[base + k * inner]) / norm);
      }
    });
    return y;
  }

  int64_t axis_, p_;
};
// Version 1 (and 22: bfloat16).
PARITY_REF_OP("", "LpNormalization", 1, kOpsetMax, LpNormalization);

}  // namespace
}  // namespace parity::ref
