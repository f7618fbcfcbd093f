// Losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
//
// Both pick, for each sample n and position d of inputs [N, C, D1, ..., Dk], the
// log-probability of the target class t = target[n, d]: loss[n, d] = -logp[n, t, d] * w[t],
// with w the optional class weights (1 without them). A target equal to ignore_index gives
// loss 0 and weight 0. Reductions: "none" keeps [N, D1, ..., Dk]; "sum" adds the losses;
// "mean" divides that sum by the sum of the weights used (by the count of targets not ignored
// when there are no weights), as ONNX's reference implementation does. Everything is in
// double, summed in row-major order, and rounded once.
#include <cmath>
#include <limits>

#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {
namespace {

enum class LossReduction { kNone, kSum, kMean };

LossReduction read_reduction(const OpContext& ctx) {
  const std::string r = ctx.attr_string("reduction", "mean");
  if (r == "none") return LossReduction::kNone;
  if (r == "sum") return LossReduction::kSum;
  if (r == "mean") return LossReduction::kMean;
  ctx.fail(
      "failed to read attribute 'reduction' with value '{}': it is not a reduction; valid: "
      "none, sum, mean",
      r);
}

// The dims of the scores/log-probabilities [N, C, D...] and the checks on target and weights.
struct LossLayout {
  int64_t n, c, d;
  Shape target_shape;
};

LossLayout check_loss_inputs(const Tensor& x, const Tensor& target, const Tensor* weight,
                             RunContext& ctx) {
  if (x.rank() < 2)
    ctx.fail("the scores/log-probabilities have shape {}; they must be [N, C, D1, ..., Dk]",
             shape_str(x.shape()));
  Shape expected = {x.shape()[0]};
  expected.insert(expected.end(), x.shape().begin() + 2, x.shape().end());
  if (target.shape() != expected)
    ctx.fail("the target has shape {}; for inputs of shape {} it must have shape {}",
             shape_str(target.shape()), shape_str(x.shape()), shape_str(expected));
  if (weight &&
      (weight->rank() != 1 || weight->shape()[0] != x.shape()[1] || weight->dtype() != x.dtype()))
    ctx.fail("the weights are {} {}; they must be a {} tensor of shape ({},)",
             dtype_name(weight->dtype()), shape_str(weight->shape()), dtype_name(x.dtype()),
             x.shape()[1]);
  return {x.shape()[0], x.shape()[1], dims_product(x.shape(), 2, x.rank()), expected};
}

// Computes the loss from logp(n, class, d) (a double) for element type T.
template <typename T, typename LogProb>
Tensor loss_from_log_probs(const LossLayout& l, const Tensor& target, const Tensor* weight,
                           std::optional<int64_t> ignore_index, LossReduction reduction,
                           LogProb logp, RunContext& ctx) {
  const std::vector<int64_t> t = read_int64s(target, "input 'target'");
  std::vector<double> w;
  if (weight)
    for (int64_t k = 0; k < l.c; ++k) w.push_back(to_double(weight->data<T>()[k]));
  const int64_t count = l.n * l.d;
  std::vector<double> loss(static_cast<size_t>(count)), used(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const int64_t cls = t[i];
    if (ignore_index && cls == *ignore_index) continue;  // loss and weight stay 0
    if (cls < 0 || cls >= l.c)
      ctx.fail(
          "failed to read target value {} at index {}: it must be a class in [0, {}); "
          "valid: 0 to {}{}",
          cls, i, l.c, l.c - 1,
          ignore_index ? fmt::format(" or ignore_index {}", *ignore_index) : "");
    used[i] = weight ? w[cls] : 1.0;
    loss[i] = -logp(i / l.d, cls, i % l.d) * used[i];
  }
  if (reduction == LossReduction::kNone) {
    Tensor y = uninitialized_tensor(dtype_of<T>, l.target_shape);
    for (int64_t i = 0; i < count; ++i) y.data<T>()[i] = narrow<T>(loss[i]);
    return y;
  }
  double sum = 0, weights = 0;
  for (int64_t i = 0; i < count; ++i) sum += loss[i], weights += used[i];
  return Tensor::scalar<T>(narrow<T>(reduction == LossReduction::kSum ? sum : sum / weights));
}

std::optional<int64_t> read_ignore_index(const OpContext& ctx) {
  if (!ctx.has_attr("ignore_index")) return std::nullopt;
  return ctx.attr_int("ignore_index");
}

class NegativeLogLikelihoodLoss : public Kernel {
 public:
  explicit NegativeLogLikelihoodLoss(const OpContext& ctx)
      : reduction_(read_reduction(ctx)), ignore_index_(read_ignore_index(ctx)) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "input");
    const Tensor& target = input_tensor(in, 1, "target");
    const Tensor* weight = optional_input(in, 2, "weight");
    const LossLayout l = check_loss_inputs(x, target, weight, ctx);
    return {dispatch<FloatTypes>(
        x.dtype(),
        [&]<typename T>() {
          const T* p = x.data<T>();
          auto logp = [&](int64_t n, int64_t c, int64_t d) {
            return to_double(p[(n * l.c + c) * l.d + d]);
          };
          return loss_from_log_probs<T>(l, target, weight, ignore_index_, reduction_, logp, ctx);
        },
        "input")};
  }

 private:
  LossReduction reduction_;
  std::optional<int64_t> ignore_index_;
};
// Versions 12, 13 (ignore_index may be negative; bfloat16 not added), 22 (types).
PARITY_REF_OP("", "NegativeLogLikelihoodLoss", 12, kOpsetMax, NegativeLogLikelihoodLoss);

// SoftmaxCrossEntropyLoss: the log-softmax of the scores along C, then the loss above. The
// optional second output is that log-softmax.
class SoftmaxCrossEntropyLoss : public Kernel {
 public:
  explicit SoftmaxCrossEntropyLoss(const OpContext& ctx)
      : reduction_(read_reduction(ctx)),
        ignore_index_(read_ignore_index(ctx)),
        want_log_prob_(ctx.num_outputs() > 1 && !ctx.node().outputs[1].empty()) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "scores");
    const Tensor& labels = input_tensor(in, 1, "labels");
    const Tensor* weight = optional_input(in, 2, "weights");
    const LossLayout l = check_loss_inputs(x, labels, weight, ctx);
    return dispatch<FloatTypes>(
        x.dtype(), [&]<typename T>() { return loss<T>(x, labels, weight, l, ctx); }, "scores");
  }

 private:
  template <typename T>
  Outputs loss(const Tensor& x, const Tensor& labels, const Tensor* weight, const LossLayout& l,
               RunContext& ctx) const {
    // log_softmax in double, kept unrounded for the loss.
    std::vector<double> logp(static_cast<size_t>(x.numel()));
    const T* p = x.data<T>();
    parallel_for(l.n * l.d, grain_for(3 * l.c), [&](int64_t b, int64_t e) {
      for (int64_t item = b; item < e; ++item) {
        const int64_t base = (item / l.d) * l.c * l.d + item % l.d;
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t c = 0; c < l.c; ++c) m = std::max(m, to_double(p[base + c * l.d]));
        double s = 0;
        for (int64_t c = 0; c < l.c; ++c) s += std::exp(to_double(p[base + c * l.d]) - m);
        const double lse = std::log(s);
        for (int64_t c = 0; c < l.c; ++c)
          logp[base + c * l.d] = (to_double(p[base + c * l.d]) - m) - lse;
      }
    });
    auto at = [&](int64_t n, int64_t c, int64_t d) { return logp[(n * l.c + c) * l.d + d]; };
    Outputs out = {loss_from_log_probs<T>(l, labels, weight, ignore_index_, reduction_, at, ctx)};
    if (ctx.node().outputs.size() > 1) {
      if (!want_log_prob_) {
        out.push_back(Value::none());
      } else {
        Tensor lp = uninitialized_tensor(x.dtype(), x.shape());
        for (size_t i = 0; i < logp.size(); ++i) lp.data<T>()[i] = narrow<T>(logp[i]);
        out.push_back(std::move(lp));
      }
    }
    return out;
  }

  LossReduction reduction_;
  std::optional<int64_t> ignore_index_;
  bool want_log_prob_;
};
// Versions 12, 13 (ignore_index may be negative), 22 (types).
PARITY_REF_OP("", "SoftmaxCrossEntropyLoss", 12, kOpsetMax, SoftmaxCrossEntropyLoss);

}  // namespace
}  // namespace parity::ref
