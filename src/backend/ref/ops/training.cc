// Optimisers of the ai.onnx.preview.training domain (version 1): Adagrad, Adam, Momentum.
// Each takes the learning rate R and update count T (scalars), then n tensors X, their
// gradients G and their optimiser states, and returns the updated X and states. Every formula
// is the spec's, evaluated in double and rounded once per output element.
//
// Gradient, the domain's fourth op, differentiates part of the graph: see gradient.cc.
#include <array>
#include <cmath>

#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {
namespace {

constexpr const char* kTrainingDomain = "ai.onnx.preview.training";
using TrainingTypes = TypeList<float, double>;

struct OptimizerInputs {
  double r = 0;
  int64_t t = 0;
  size_t n = 0;  // number of optimised tensors
};

// Reads R and T and checks that the node has 2 + groups * n inputs and (groups - 1) * n
// outputs, and that every group's i-th tensor has the shape and type of X_i.
OptimizerInputs read_optimizer_inputs(const Inputs& in, size_t groups, RunContext& ctx) {
  OptimizerInputs o;
  const size_t outputs = ctx.node().outputs.size();
  if (in.size() < 3 || (in.size() - 2) % groups != 0 ||
      outputs != (in.size() - 2) / groups * (groups - 1))
    ctx.fail(
        "it has {} inputs and {} outputs; it needs R, T, then {} groups of n tensors and "
        "{} groups of n outputs",
        in.size(), outputs, groups, groups - 1);
  const Tensor& r = input_tensor(in, 0, "R");
  const Tensor& t = input_tensor(in, 1, "T");
  dispatch<TrainingTypes>(
      r.dtype(), []<typename T>() {}, "input R");
  if (t.dtype() != DataType::kInt64 || t.numel() != 1 || r.numel() != 1)
    ctx.fail("inputs R ({} {}) and T ({} {}) must be scalars, T of type int64",
             dtype_name(r.dtype()), shape_str(r.shape()), dtype_name(t.dtype()),
             shape_str(t.shape()));
  o.r = read_scalar(r, "input R");
  o.t = t.data<int64_t>()[0];
  o.n = (in.size() - 2) / groups;
  for (size_t i = 0; i < o.n; ++i) {
    const Tensor& x = input_tensor(in, 2 + i, "X");
    dispatch<TrainingTypes>(
        x.dtype(), []<typename T>() {}, "input X");
    for (size_t g = 1; g < groups; ++g) {
      const Tensor& other = input_tensor(in, 2 + g * o.n + i, "optimizer input");
      if (other.dtype() != x.dtype() || other.shape() != x.shape())
        ctx.fail("input {} is {} {}; it must have the type and shape of X_{} ({} {})",
                 2 + g * o.n + i, dtype_name(other.dtype()), shape_str(other.shape()), i,
                 dtype_name(x.dtype()), shape_str(x.shape()));
    }
  }
  return o;
}

// Runs `update(x, g, states..., outs...)` on every element of every optimised tensor, where
// `groups` counts X, G and the states; returns X_new for all, then each state for all.
template <size_t kGroups, typename Update>
Outputs apply_update(const Inputs& in, const OptimizerInputs& o, Update update) {
  constexpr size_t kStates = kGroups - 2;
  Outputs out(o.n * (kStates + 1));
  for (size_t i = 0; i < o.n; ++i) {
    const Tensor& x = in[2 + i].tensor;
    dispatch<TrainingTypes>(
        x.dtype(),
        [&]<typename T>() {
          std::array<const T*, kGroups> src;
          for (size_t g = 0; g < kGroups; ++g)
            src[g] = in[2 + g * o.n + i].tensor.template data<T>();
          std::array<Tensor, kStates + 1> results;
          std::array<T*, kStates + 1> dst;
          for (size_t k = 0; k <= kStates; ++k) {
            results[k] = uninitialized_tensor(x.dtype(), x.shape());
            dst[k] = results[k].template data<T>();
          }
          std::array<double, kGroups> v;
          std::array<double, kStates + 1> r;
          for (int64_t e = 0; e < x.numel(); ++e) {
            for (size_t g = 0; g < kGroups; ++g) v[g] = to_double(src[g][e]);
            update(v, r);
            for (size_t k = 0; k <= kStates; ++k) dst[k][e] = narrow<T>(r[k]);
          }
          for (size_t k = 0; k <= kStates; ++k) out[k * o.n + i] = std::move(results[k]);
        },
        "input X");
  }
  return out;
}

// Adagrad: r = R / (1 + T decay_factor); g' = norm_coefficient X + G; H' = H + g'^2;
// X' = X - r g' / (sqrt(H') + epsilon). Inputs R, T, X..., G..., H...; outputs X'..., H'...
class Adagrad : public Kernel {
 public:
  explicit Adagrad(const OpContext& ctx)
      : decay_(ctx.attr_float("decay_factor", 0.0f)),
        epsilon_(ctx.attr_float("epsilon", 1e-6f)),
        norm_(ctx.attr_float("norm_coefficient", 0.0f)) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const OptimizerInputs o = read_optimizer_inputs(in, 3, ctx);
    const double rate = o.r / (1.0 + static_cast<double>(o.t) * decay_);
    return apply_update<3>(in, o, [&](const auto& v, auto& r) {
      const double g = norm_ * v[0] + v[1];
      const double h = v[2] + g * g;
      r[0] = v[0] - rate * g / (std::sqrt(h) + epsilon_);
      r[1] = h;
    });
  }

 private:
  double decay_, epsilon_, norm_;
};
PARITY_REF_OP(kTrainingDomain, "Adagrad", 1, kOpsetMax, Adagrad);

// Adam: g' = norm_coefficient X + G; V' = alpha V + (1 - alpha) g'; H' = beta H + (1 - beta) g'^2;
// R' = R sqrt(1 - beta^T) / (1 - alpha^T) when T > 0, else R;
// X' = (1 - norm_coefficient_post) (X - R' V' / (sqrt(H') + epsilon)).
// Inputs R, T, X..., G..., V..., H...; outputs X'..., V'..., H'...
class Adam : public Kernel {
 public:
  explicit Adam(const OpContext& ctx)
      : alpha_(ctx.attr_float("alpha", 0.9f)),
        beta_(ctx.attr_float("beta", 0.999f)),
        epsilon_(ctx.attr_float("epsilon", 1e-6f)),
        norm_(ctx.attr_float("norm_coefficient", 0.0f)),
        norm_post_(ctx.attr_float("norm_coefficient_post", 0.0f)) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const OptimizerInputs o = read_optimizer_inputs(in, 4, ctx);
    const double t = static_cast<double>(o.t);
    const double rate =
        o.t > 0 ? o.r * std::sqrt(1.0 - std::pow(beta_, t)) / (1.0 - std::pow(alpha_, t)) : o.r;
    return apply_update<4>(in, o, [&](const auto& v, auto& r) {
      const double g = norm_ * v[0] + v[1];
      const double m = alpha_ * v[2] + (1.0 - alpha_) * g;
      const double h = beta_ * v[3] + (1.0 - beta_) * g * g;
      r[0] = (1.0 - norm_post_) * (v[0] - rate * m / (std::sqrt(h) + epsilon_));
      r[1] = m;
      r[2] = h;
    });
  }

 private:
  double alpha_, beta_, epsilon_, norm_, norm_post_;
};
PARITY_REF_OP(kTrainingDomain, "Adam", 1, kOpsetMax, Adam);

// Momentum: g' = norm_coefficient X + G; beta' = beta when T > 0, else 1;
// V' = alpha V + beta' g'; standard: X' = X - R V'; nesterov: X' = X - R (g' + alpha V').
// Inputs R, T, X..., G..., V...; outputs X'..., V'...
class Momentum : public Kernel {
 public:
  explicit Momentum(const OpContext& ctx)
      : alpha_(ctx.attr_float("alpha")),
        beta_(ctx.attr_float("beta")),
        norm_(ctx.attr_float("norm_coefficient")) {
    const std::string mode = ctx.attr_string("mode");
    if (mode != "standard" && mode != "nesterov")
      ctx.fail("attribute 'mode' is '{}'; valid choices: standard, nesterov", mode);
    nesterov_ = mode == "nesterov";
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const OptimizerInputs o = read_optimizer_inputs(in, 3, ctx);
    const double beta = o.t > 0 ? beta_ : 1.0;
    return apply_update<3>(in, o, [&](const auto& v, auto& r) {
      const double g = norm_ * v[0] + v[1];
      const double m = alpha_ * v[2] + beta * g;
      r[0] = nesterov_ ? v[0] - o.r * (g + alpha_ * m) : v[0] - o.r * m;
      r[1] = m;
    });
  }

 private:
  double alpha_, beta_, norm_;
  bool nesterov_ = false;
};
PARITY_REF_OP(kTrainingDomain, "Momentum", 1, kOpsetMax, Momentum);

}  // namespace
}  // namespace parity::ref
