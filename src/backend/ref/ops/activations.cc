// Activations: Relu, LeakyRelu, PRelu, Elu, Selu, Celu, HardSigmoid, HardSwish, Sigmoid, Tanh,
// Softplus, Softsign, ThresholdedRelu, Shrink, Mish, Gelu, Swish, and Clip. Each formula is the
// spec's, evaluated in double with the attributes' float values and rounded once. Sigmoid,
// Tanh, Softplus, Mish and Gelu of float, float16 and bfloat16 tensors evaluate the same formula
// with SLEEF's vector functions, guarded (vector_math.h) so that the bits stay glibc's.
#include <cmath>
#include <numbers>

#include "backend/ref/ops/elementwise_util.h"
#include "backend/ref/ops/vector_math.h"

namespace parity::ref {
namespace {

class Relu : public Kernel {
 public:
  explicit Relu(const OpContext&) {}
  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "X");
    // `v < 0 ? 0 : v` keeps NaN and -0.0 as NumPy's maximum(x, 0) does.
    return {dispatch<SignedNumericTypes>(
        x.dtype(),
        [&]<typename T>() {
          return unary_elementwise<T, T>(x, [](auto v) { return v < 0 ? decltype(v)(0) : v; });
        },
        "input X")};
  }
};
// Versions 1, 6, 13, 14 (signed integer types).
PARITY_REF_OP("", "Relu", 1, kOpsetMax, Relu);

// A unary activation: Fn is constructed from the node (reading its attributes once) and maps
// a double to a double; integer types (Shrink) truncate the result back.
template <typename Fn, typename Types = FloatTypes>
class Activation : public Kernel {
 public:
  explicit Activation(const OpContext& ctx) : fn_(ctx) {}
  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const Fn& fn = fn_;
    return {dispatch<Types>(
        x.dtype(),
        [&]<typename T>() {
          return unary_elementwise<T, T>(x, [&fn](auto v) { return fn(static_cast<double>(v)); });
        },
        "input X")};
  }

 private:
  Fn fn_;
};

// An Activation whose Fn also has the vector form `fast(v, r, n)` of its formula, the bound
// kTol (vmath::LinearTol) bounding how far that form's result r can be from the glibc formula's,
// and kNonNegative (every value >= 0).
template <typename Fn>
class VectorActivation : public Kernel {
 public:
  explicit VectorActivation(const OpContext& ctx) : fn_(ctx) {}
  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const Fn& fn = fn_;
    return {dispatch<FloatTypes>(
        x.dtype(),
        [&]<typename T>() {
          return vmath::guarded_unary<T>(
              x, [&fn](const double* v, double* r, int64_t n) { fn.fast(v, r, n); }, fn, Fn::kTol,
              Fn::kNonNegative);
        },
        "input X")};
  }

 private:
  Fn fn_;
};

using vmath::kRelTol;

double softplus(double v) {
  // log(1 + e^v) without overflow for large v.
  return v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v));
}

struct LeakyReluFn {
  explicit LeakyReluFn(const OpContext& ctx) : alpha(ctx.attr_float("alpha", 0.01f)) {}
  double operator()(double v) const { return v < 0 ? alpha * v : v; }
  double alpha;
};
struct EluFn {
  explicit EluFn(const OpContext& ctx) : alpha(ctx.attr_float("alpha", 1.0f)) {}
  double operator()(double v) const { return v < 0 ? alpha * std::expm1(v) : v; }
  double alpha;
};
struct SeluFn {
  explicit SeluFn(const OpContext& ctx)
      : alpha(ctx.attr_float("alpha", 1.67326319217681884765625f)),
        gamma(ctx.attr_float("gamma", 1.05070102214813232421875f)) {}
  double operator()(double v) const { return v > 0 ? gamma * v : gamma * alpha * std::expm1(v); }
  double alpha, gamma;
};
struct CeluFn {
  explicit CeluFn(const OpContext& ctx) : alpha(ctx.attr_float("alpha", 1.0f)) {
    if (alpha == 0) ctx.fail("attribute 'alpha' is 0; it must be non-zero");
  }
  double operator()(double v) const {
    return std::max(0.0, v) + std::min(0.0, alpha * std::expm1(v / alpha));
  }
  double alpha;
};
struct HardSigmoidFn {
  explicit HardSigmoidFn(const OpContext& ctx)
      : alpha(ctx.attr_float("alpha", 0.2f)), beta(ctx.attr_float("beta", 0.5f)) {}
  double operator()(double v) const { return std::max(0.0, std::min(1.0, alpha * v + beta)); }
  double alpha, beta;
};
struct HardSwishFn {
  explicit HardSwishFn(const OpContext&) {}
  double operator()(double v) const { return v * std::max(0.0, std::min(1.0, v / 6.0 + 0.5)); }
};
// exp's difference (kRelTol relative) passes through 1 + e and the reciprocal unamplified.
struct SigmoidFn {
  explicit SigmoidFn(const OpContext&) {}
  double operator()(double v) const { return 1.0 / (1.0 + std::exp(-v)); }
  void fast(const double* v, double* r, int64_t n) const { vmath::sigmoid(v, r, n); }
  static constexpr vmath::LinearTol kTol{0, 2 * kRelTol, 0};
  static constexpr bool kNonNegative = true;
};
// Swish (opset 24): x * sigmoid(alpha * x).
struct SwishFn {
  explicit SwishFn(const OpContext& ctx) : alpha(ctx.attr_float("alpha", 1.0f)) {}
  double operator()(double v) const { return v / (1.0 + std::exp(-alpha * v)); }
  double alpha;
};
struct TanhFn {
  explicit TanhFn(const OpContext&) {}
  double operator()(double v) const { return std::tanh(v); }
  void fast(const double* v, double* r, int64_t n) const {
    vmath::apply(vmath::Fn::kTanh, v, r, n);
  }
  static constexpr vmath::LinearTol kTol = vmath::kSingleCallTol;
  static constexpr bool kNonNegative = false;
};
// softplus(v) in blocks: log1p(exp(-|v|)), plus v where v > 0 (softplus's two branches).
void softplus_fast(const double* v, double* r, int64_t n) {
  for (int64_t i = 0; i < n; ++i) r[i] = v[i] > 0 ? -v[i] : v[i];
  vmath::apply(vmath::Fn::kExp, r, r, n);
  vmath::apply(vmath::Fn::kLog1p, r, r, n);
  for (int64_t i = 0; i < n; ++i)
    if (v[i] > 0) r[i] = v[i] + r[i];
}
// log1p's condition number is below 1 and the sum adds positive terms: the differences of
// exp and log1p add up.
struct SoftplusFn {
  explicit SoftplusFn(const OpContext&) {}
  double operator()(double v) const { return softplus(v); }
  void fast(const double* v, double* r, int64_t n) const { softplus_fast(v, r, n); }
  static constexpr vmath::LinearTol kTol{0, 4 * kRelTol, 0};
  static constexpr bool kNonNegative = true;
};
struct SoftsignFn {
  explicit SoftsignFn(const OpContext&) {}
  double operator()(double v) const { return v / (1.0 + std::fabs(v)); }
};
struct ThresholdedReluFn {
  explicit ThresholdedReluFn(const OpContext& ctx) : alpha(ctx.attr_float("alpha", 1.0f)) {}
  double operator()(double v) const { return v > alpha ? v : 0.0; }
  double alpha;
};
struct ShrinkFn {
  explicit ShrinkFn(const OpContext& ctx)
      : lambd(ctx.attr_float("lambd", 0.5f)), bias(ctx.attr_float("bias", 0.0f)) {}
  double operator()(double v) const { return v < -lambd ? v + bias : (v > lambd ? v - bias : 0.0); }
  double lambd, bias;
};
// tanh's condition number 2x / sinh(2x) is below 1: softplus's bound plus tanh's own.
struct MishFn {
  explicit MishFn(const OpContext&) {}
  double operator()(double v) const { return v * std::tanh(softplus(v)); }
  void fast(const double* v, double* r, int64_t n) const {
    softplus_fast(v, r, n);
    vmath::apply(vmath::Fn::kTanh, r, r, n);
    for (int64_t i = 0; i < n; ++i) r[i] = v[i] * r[i];
  }
  static constexpr vmath::LinearTol kTol{0, 8 * kRelTol, 0};
  static constexpr bool kNonNegative = false;
};
struct GeluFn {
  explicit GeluFn(const OpContext& ctx) {
    std::string mode = ctx.attr_string("approximate", "none");
    if (mode == "tanh")
      tanh = true;
    else if (mode != "none")
      ctx.fail("attribute 'approximate' is '{}'; it must be one of none, tanh", mode);
  }
  double operator()(double v) const {
    if (tanh) {
      const double k = std::sqrt(2.0 / std::numbers::pi);
      return 0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v)));
    }
    return 0.5 * v * (1.0 + std::erf(v / std::numbers::sqrt2));
  }
  // The same formula in vector lanes.
  void fast(const double* v, double* r, int64_t n) const { vmath::gelu(v, r, n, tanh); }
  // erf/tanh (|e| <= 1) differ by at most kRelTol; 1 + e cancels for negative v, so the bound
  // is absolute in that term: 0.5|v| kRelTol, plus the roundings of the product.
  static constexpr vmath::LinearTol kTol{0, kRelTol, kRelTol};
  static constexpr bool kNonNegative = false;
  bool tanh = false;
};

// Versions 1, 6 (consumed_inputs dropped), 16 (bfloat16).
PARITY_REF_OP("", "LeakyRelu", 1, kOpsetMax, Activation<LeakyReluFn>);
// Versions 1, 6.
PARITY_REF_OP("", "Elu", 1, kOpsetMax, Activation<EluFn>);
PARITY_REF_OP("", "Selu", 1, kOpsetMax, Activation<SeluFn>);
PARITY_REF_OP("", "HardSigmoid", 1, kOpsetMax, Activation<HardSigmoidFn>);
// Versions 1, 6, 13.
PARITY_REF_OP("", "Sigmoid", 1, kOpsetMax, VectorActivation<SigmoidFn>);
PARITY_REF_OP("", "Tanh", 1, kOpsetMax, VectorActivation<TanhFn>);
// Version 1.
PARITY_REF_OP("", "Softplus", 1, kOpsetMax, VectorActivation<SoftplusFn>);
PARITY_REF_OP("", "Softsign", 1, kOpsetMax, Activation<SoftsignFn>);
// One version each since: ThresholdedRelu 10, Celu 12, HardSwish 14, Shrink 9 (numeric types),
// Mish 18, Gelu 20, Swish 24.
PARITY_REF_OP("", "ThresholdedRelu", 10, kOpsetMax, Activation<ThresholdedReluFn>);
PARITY_REF_OP("", "Celu", 12, kOpsetMax, Activation<CeluFn>);
PARITY_REF_OP("", "HardSwish", 14, kOpsetMax, Activation<HardSwishFn>);
using Shrink = Activation<ShrinkFn, NumericTypes>;
PARITY_REF_OP("", "Shrink", 9, kOpsetMax, Shrink);
PARITY_REF_OP("", "Mish", 18, kOpsetMax, VectorActivation<MishFn>);
PARITY_REF_OP("", "Gelu", 20, kOpsetMax, VectorActivation<GeluFn>);
PARITY_REF_OP("", "Swish", 24, kOpsetMax, Activation<SwishFn>);

// PRelu: y = x < 0 ? slope * x : x, with slope broadcast to x's shape.
using PReluTypes = Concat<FloatTypes, TypeList<int32_t, int64_t, uint32_t, uint64_t>>;

class PRelu : public Kernel {
 public:
  explicit PRelu(const OpContext& ctx) : legacy_(ctx.opset() < 7) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    Tensor slope = input_tensor(in, 1, "slope");
    check_same_dtype(x, slope, ctx, "X", "slope");
    // Before opset 7 a slope of C values applied per channel (dim 1) of X.
    if (legacy_ && x.rank() >= 2 && slope.rank() == 1 && slope.numel() == x.shape()[1] &&
        slope.numel() != 1) {
      Shape aligned(static_cast<size_t>(x.rank() - 1), 1);
      aligned[0] = slope.numel();
      slope = slope.reshaped(aligned);
    }
    if (broadcast_shapes({x.shape(), slope.shape()}) != x.shape())
      ctx.fail(
          "slope of shape {} does not broadcast to X's shape {}; it must be "
          "unidirectionally broadcastable to X",
          shape_str(slope.shape()), shape_str(x.shape()));
    return {dispatch<PReluTypes>(
        x.dtype(),
        [&]<typename T>() {
          return binary_elementwise<T, T>(x, slope, [](auto v, auto s) {
            if constexpr (std::is_same_v<decltype(v), uint64_t>)
              return v;  // unsigned values are never negative
            else
              return v < 0 ? s * v : v;
          });
        },
        "input X")};
  }

 private:
  bool legacy_;
};
// Versions 1, 6, 7 (unidirectional broadcasting), 9 (integer types), 16 (bfloat16).
PARITY_REF_OP("", "PRelu", 1, kOpsetMax, PRelu);

// Clip: min(max(x, lo), hi), so lo > hi gives hi everywhere (the spec's rule); NaN stays NaN.
class Clip : public Kernel {
 public:
  explicit Clip(const OpContext& ctx) : from_inputs_(ctx.opset() >= 11) {
    if (from_inputs_) return;
    // Clip-1 clips only on the sides whose attribute is present; Clip-6 defaults to the
    // float range.
    const bool v1 = ctx.opset() < 6;
    if (ctx.has_attr("min") || !v1)
      lo_ = ctx.attr_float("min", std::numeric_limits<float>::lowest());
    if (ctx.has_attr("max") || !v1) hi_ = ctx.attr_float("max", std::numeric_limits<float>::max());
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "input");
    const Tensor* lo = from_inputs_ ? optional_input(in, 1, "min") : nullptr;
    const Tensor* hi = from_inputs_ ? optional_input(in, 2, "max") : nullptr;
    for (const Tensor* t : {lo, hi}) {
      if (!t) continue;
      check_same_dtype(x, *t, ctx, "input", t == lo ? "min" : "max");
      if (t->numel() != 1)
        ctx.fail("input '{}' has shape {}; it must be a scalar", t == lo ? "min" : "max",
                 shape_str(t->shape()));
    }
    return {dispatch<NumericTypes>(
        x.dtype(),
        [&]<typename T>() {
          using C = compute_t<T>;
          auto bound = [&](const Tensor* t, const std::optional<double>& attr) {
            std::optional<C> b;
            if (t)
              b = widen(t->data<T>()[0]);
            else if (attr)
              b = widen(narrow<T>(*attr));
            return b;
          };
          const std::optional<C> l = bound(lo, lo_), h = bound(hi, hi_);
          const bool has_l = l.has_value(), has_h = h.has_value();
          const C lv = has_l ? *l : C(0), hv = has_h ? *h : C(0);
          return unary_elementwise<T, T>(x, [=](C v) {
            if (has_l && v < lv) v = lv;
            if (has_h && v > hv) v = hv;
            return v;
          });
        },
        "input")};
  }

 private:
  bool from_inputs_;
  std::optional<double> lo_, hi_;  // the attributes before opset 11
};
// Versions 1, 6 (attributes), 11 (min and max as inputs), 12 (integer types), 13 (bfloat16).
PARITY_REF_OP("", "Clip", 1, kOpsetMax, Clip);

}  // namespace
}  // namespace parity::ref
