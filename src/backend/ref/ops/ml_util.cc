#include "backend/ref/ops/ml_util.h"

#include <cmath>
#include <numbers>

namespace parity::ref::ml {

Rows read_rows(const Tensor& x, std::string_view what) {
  if (x.rank() < 1 || x.rank() > 2)
    fail("input '{}' has shape {}; it must have rank 1 ([C]) or 2 ([N, C])", what,
         shape_str(x.shape()));
  Rows r;
  r.n = x.rank() == 1 ? 1 : x.shape()[0];
  r.c = x.shape().back();
  r.values.resize(static_cast<size_t>(x.numel()));
  dispatch<MlNumericTypes>(
      x.dtype(),
      [&]<typename T>() {
        const T* src = x.data<T>();
        for (size_t i = 0; i < r.values.size(); ++i) r.values[i] = to_double(src[i]);
      },
      fmt::format("input '{}'", what));
  return r;
}

PostTransform read_post_transform(const OpContext& ctx) {
  const std::string name = ctx.attr_string("post_transform", "NONE");
  if (name == "NONE") return PostTransform::kNone;
  if (name == "LOGISTIC") return PostTransform::kLogistic;
  if (name == "SOFTMAX") return PostTransform::kSoftmax;
  if (name == "SOFTMAX_ZERO") return PostTransform::kSoftmaxZero;
  if (name == "PROBIT") return PostTransform::kProbit;
  ctx.fail(
      "attribute 'post_transform' is '{}'; it must be one of NONE, LOGISTIC, SOFTMAX, "
      "SOFTMAX_ZERO, PROBIT",
      name);
}

double logistic(double v) { return 1.0 / (1.0 + std::exp(-v)); }

double probit(double p) {
  // erfinv(y) by Newton's method on erf, from Giles' single-precision approximation; three
  // steps reach double precision for |y| < 1.
  const double y = 2 * p - 1;
  if (!(y > -1 && y < 1)) return y == 1 ? INFINITY : (y == -1 ? -INFINITY : NAN);
  double w = -std::log((1 - y) * (1 + y)), x;
  if (w < 5) {
    w -= 2.5;
    x = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                     -0.00417768164, 0.246640727, 1.50140941})
      x = c + x * w;
  } else {
    w = std::sqrt(w) - 3;
    x = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                     0.00943887047, 1.00167406, 2.83297682})
      x = c + x * w;
  }
  x *= y;
  const double two_over_sqrt_pi = 2 / std::sqrt(std::numbers::pi);
  for (int i = 0; i < 3; ++i) x -= (std::erf(x) - y) / (two_over_sqrt_pi * std::exp(-x * x));
  return std::numbers::sqrt2 * x;
}

void apply_post_transform(PostTransform transform, double* s, int64_t count) {
  switch (transform) {
    case PostTransform::kNone:
      return;
    case PostTransform::kLogistic:
      for (int64_t i = 0; i < count; ++i) s[i] = logistic(s[i]);
      return;
    case PostTransform::kProbit:
      for (int64_t i = 0; i < count; ++i) s[i] = probit(s[i]);
      return;
    case PostTransform::kSoftmax: {
      double max = -INFINITY, sum = 0;
      for (int64_t i = 0; i < count; ++i) max = std::max(max, s[i]);
      for (int64_t i = 0; i < count; ++i) sum += (s[i] = std::exp(s[i] - max));
      for (int64_t i = 0; i < count; ++i) s[i] /= sum;
      return;
    }
    case PostTransform::kSoftmaxZero: {
      // Softmax over the non-zero scores; a zero score stays (nearly) zero: ONNX's reference
      // and ONNX Runtime treat |v| <= 1e-7 as absent and scale it by exp(-max).
      double max = -INFINITY, sum = 0;
      for (int64_t i = 0; i < count; ++i) max = std::max(max, s[i]);
      for (int64_t i = 0; i < count; ++i) {
        s[i] = std::abs(s[i]) > 1e-7 ? std::exp(s[i] - max) : s[i] * std::exp(-max);
        sum += s[i];
      }
      for (int64_t i = 0; i < count; ++i) s[i] = sum == 0 ? 0.5 : s[i] / sum;
      return;
    }
  }
}

std::vector<double> attr_doubles(const OpContext& ctx, const std::string& name) {
  const std::string tensor_name = name + "_as_tensor";
  if (ctx.has_attr(tensor_name)) {
    if (ctx.has_attr(name))
      ctx.fail("attributes '{}' and '{}' are both set; at most one may be", name, tensor_name);
    Tensor t = ctx.attr_tensor(tensor_name);
    std::vector<double> v(static_cast<size_t>(t.numel()));
    dispatch<TypeList<double, float>>(
        t.dtype(),
        [&]<typename T>() {
          for (size_t i = 0; i < v.size(); ++i) v[i] = t.data<T>()[i];
        },
        fmt::format("attribute '{}'", tensor_name));
    return v;
  }
  std::vector<float> f = ctx.attr_floats(name, {});
  return std::vector<double>(f.begin(), f.end());
}

void check_length(const OpContext& ctx, std::string_view name, size_t actual, size_t expected,
                  std::string_view rule) {
  if (actual != expected)
    ctx.fail("attribute '{}' has {} values; it must have {} ({})", name, actual, expected, rule);
}

}  // namespace parity::ref::ml
