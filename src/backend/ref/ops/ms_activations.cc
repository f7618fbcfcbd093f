// ONNX Runtime's fused activations, domain com.microsoft (docs/ContribOperators.md of the
// onnxruntime repository): Gelu, BiasGelu, FastGelu, QuickGelu and BiasAdd. ONNX Runtime's
// optimizer writes them in place of the Add / Erf / Mul / Tanh / Sigmoid chains it recognises.
// Each is computed in double from the inputs' values (bias and skip additions included) and
// rounded once to the output type.
#include <cmath>
#include <numbers>

#include "backend/ref/ops/elementwise_util.h"

namespace parity::ref {
namespace {

double gelu_erf(double v) { return 0.5 * v * (1.0 + std::erf(v / std::numbers::sqrt2)); }

// The tanh approximation of Gelu, with the constants the documentation gives.
double gelu_tanh(double v) {
  const double k = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v)));
}

// y = fn(x + bias [+ skip]) for X of shape [..., C], a bias of C values (absent: 0) repeated
// along X's last dim and an optional skip of X's shape: the sums are in double.
template <typename Fn>
Tensor biased_elementwise(const Tensor& x, const Tensor* bias, const Tensor* skip, RunContext& ctx,
                          Fn fn) {
  for (const Tensor* t : {bias, skip})
    if (t) check_same_dtype(x, *t, ctx, "X", t == bias ? "bias" : "skip");
  const int64_t c = x.rank() == 0 ? 1 : x.shape().back();
  if (bias && (bias->rank() != 1 || bias->numel() != c))
    ctx.fail("bias has shape {}; it must be 1-D with X's last dim ({}) values, X being {}",
             shape_str(bias->shape()), c, shape_str(x.shape()));
  if (skip && skip->shape() != x.shape())
    ctx.fail("skip has shape {}; it must equal X's shape {}", shape_str(skip->shape()),
             shape_str(x.shape()));
  return dispatch<FloatTypes>(
      x.dtype(),
      [&]<typename T>() {
        Tensor y = uninitialized_tensor(x.dtype(), x.shape());
        const T* px = x.data<T>();
        const T* pb = bias ? bias->data<T>() : nullptr;
        const T* ps = skip ? skip->data<T>() : nullptr;
        T* py = y.data<T>();
        parallel_for(x.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) {
            double v = to_double(px[i]);
            if (pb) v += to_double(pb[i % c]);
            if (ps) v += to_double(ps[i]);
            py[i] = narrow<T>(fn(v));
          }
        });
        return y;
      },
      "input X");
}

// Gelu(X) = 0.5 X (1 + erf(X / sqrt(2))). No attributes, no optional inputs.
class MsGelu : public Kernel {
 public:
  explicit MsGelu(const OpContext&) {}
  Outputs run(const Inputs& in, RunContext& ctx) override {
    return {biased_elementwise(input_tensor(in, 0, "X"), nullptr, nullptr, ctx, gelu_erf)};
  }
};
PARITY_REF_OP("com.microsoft", "Gelu", 1, kOpsetMax, MsGelu);

// BiasGelu(A, B) = Gelu(A + B), B a 1-D bias along A's last dim. No attributes.
class BiasGelu : public Kernel {
 public:
  explicit BiasGelu(const OpContext&) {}
  Outputs run(const Inputs& in, RunContext& ctx) override {
    return {biased_elementwise(input_tensor(in, 0, "A"), &input_tensor(in, 1, "B"), nullptr, ctx,
                               gelu_erf)};
  }
};
PARITY_REF_OP("com.microsoft", "BiasGelu", 1, kOpsetMax, BiasGelu);

// FastGelu(X, bias?) = the tanh approximation of Gelu of X + bias:
// 0.5 y (1 + tanh(sqrt(2 / pi) (y + 0.044715 y^3))), y = X + bias. The bias (input 1) is
// optional. No attributes.
class FastGelu : public Kernel {
 public:
  explicit FastGelu(const OpContext&) {}
  Outputs run(const Inputs& in, RunContext& ctx) override {
    return {biased_elementwise(input_tensor(in, 0, "X"), optional_input(in, 1, "bias"), nullptr,
                               ctx, gelu_tanh)};
  }
};
PARITY_REF_OP("com.microsoft", "FastGelu", 1, kOpsetMax, FastGelu);

// QuickGelu(X) = X * Sigmoid(alpha X); attribute alpha, default 1.702.
class QuickGelu : public Kernel {
 public:
  explicit QuickGelu(const OpContext& ctx)
      : alpha_(static_cast<double>(ctx.attr_float("alpha", 1.702f))) {}
  Outputs run(const Inputs& in, RunContext& ctx) override {
    const double alpha = alpha_;
    return {biased_elementwise(input_tensor(in, 0, "X"), nullptr, nullptr, ctx,
                               [alpha](double v) { return v / (1.0 + std::exp(-alpha * v)); })};
  }

 private:
  double alpha_;
};
PARITY_REF_OP("com.microsoft", "QuickGelu", 1, kOpsetMax, QuickGelu);

// BiasAdd(X, bias, skip) = X + bias + skip: X and skip [N, S, C], bias [C]. All three inputs
// required, no attributes.
class BiasAdd : public Kernel {
 public:
  explicit BiasAdd(const OpContext&) {}
  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    if (x.rank() != 3) ctx.fail("X has shape {}; it must be 3-D [N, S, C]", shape_str(x.shape()));
    return {biased_elementwise(x, &input_tensor(in, 1, "bias"), &input_tensor(in, 2, "skip"), ctx,
                               [](double v) { return v; })};
  }
};
PARITY_REF_OP("com.microsoft", "BiasAdd", 1, kOpsetMax, BiasAdd);

}  // namespace
}  // namespace parity::ref
