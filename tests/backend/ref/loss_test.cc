// Loss kernels beyond the ONNX node tests: float16 and double inputs rounding once, the mean
// over weights when every target is ignored (0/0), and targets outside the classes refused.
// NumPy computes the expected values at test time, following ONNX's reference formulas.
#include <gtest/gtest.h>

#include "ref_test_util.h"

namespace parity::testing {
namespace {

// ONNX's definition, in float64: loss[n, d] = -logp[n, t, d] * w[t], ignored targets give 0
// and weigh 0; "mean" divides by the weights used.
constexpr const char* kNumpyLoss = R"(
def nll(logp, t, w=None, ii=None, reduction='mean'):
    n, c = logp.shape[:2]
    lp = logp.reshape(n, c, -1); tt = t.reshape(n, -1)
    safe = np.where(tt == ii, 0, tt) if ii is not None else tt
    picked = np.take_along_axis(lp, safe[:, None, :], axis=1)[:, 0, :]
    wt = (w[safe] if w is not None else np.ones_like(picked))
    if ii is not None: wt = np.where(tt == ii, 0.0, wt)
    loss = -picked * wt
    if reduction == 'none': return loss.reshape(t.shape)
    if reduction == 'sum': return np.array(loss.sum())
    with np.errstate(all='ignore'): return np.array(loss.sum() / wt.sum())
def log_softmax(x):
    m = x.max(axis=1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))
)";

TEST(LossKernels, HalfAndDoublePrecisionRoundOnce) {
  auto np = numpy_arrays(std::string(kNumpyLoss) + R"(
x = rng.randn(3, 5, 4).astype(np.float16); t = rng.randint(0, 5, size=(3, 4)).astype(np.int64)
t[0, 1] = -1
w = rng.rand(5).astype(np.float16)
save('x', x); save('t', t); save('w', w)
lp = log_softmax(x.astype(np.float64))
save('sce', nll(lp, t, w.astype(np.float64), -1, 'mean').astype(np.float16).reshape(1))
save('logp', lp.astype(np.float16))
d = rng.randn(3, 5, 4)
save('d', d); save('nll', nll(d, t, None, -1, 'none'))
save('nsum', nll(d, t, None, -1, 'sum').reshape(1))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float16[3,5,4] x, int64[3,4] t, float16[5] w, double[3,5,4] d)
      => (float16 sce, float16 logp, double nll, double nsum) {
      sce, logp = SoftmaxCrossEntropyLoss<ignore_index = -1>(x, t, w)
      nll = NegativeLogLikelihoodLoss<reduction = "none", ignore_index = -1>(d, t)
      nsum = NegativeLogLikelihoodLoss<reduction = "sum", ignore_index = -1>(d, t)
    }
  )",
                                 feed_of(np, {"x", "t", "w", "d"}));
  EXPECT_EQ(out.at("sce").shape(), Shape{});
  EXPECT_TRUE(tensors_identical(out.at("sce").reshaped({1}), np.at("sce")));
  EXPECT_TRUE(tensors_identical(out.at("logp"), np.at("logp")));
  EXPECT_TRUE(tensors_close(out.at("nll"), np.at("nll"), 1e-15, 0));
  EXPECT_TRUE(tensors_close(out.at("nsum").reshaped({1}), np.at("nsum"), 1e-14, 0));
}

TEST(LossKernels, MeanOfOnlyIgnoredTargetsIsNaN) {
  auto np = numpy_arrays(std::string(kNumpyLoss) + R"(
x = rng.randn(2, 3).astype(np.float32); t = np.array([1, 1], np.int32)
save('x', x); save('t', t)
save('y', nll(log_softmax(x.astype(np.float64)), t, None, 1, 'mean').astype(np.float32).reshape(1))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3] x, int32[2] t) => (float y) {
      y = SoftmaxCrossEntropyLoss<ignore_index = 1>(x, t)
    }
  )",
                                 feed_of(np, {"x", "t"}));
  EXPECT_TRUE(tensors_identical(out.at("y").reshaped({1}), np.at("y")));
}

TEST(LossKernels, RefuseTargetsOutsideTheClasses) {
  auto np = numpy_arrays(R"(
save('x', rng.randn(2, 3).astype(np.float32)); save('t', np.array([0, 3], np.int64))
save('w', np.ones(4, np.float32))
)");
  std::string e = error_of([&] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[2,3] x, int64[2] t) => (float y) {
        y = NegativeLogLikelihoodLoss(x, t)
      }
    )",
                   feed_of(np, {"x", "t"}));
  });
  EXPECT_NE(e.find("NegativeLogLikelihoodLoss"), std::string::npos) << e;
  EXPECT_NE(e.find("target value 3"), std::string::npos) << e;
  e = error_of([&] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[2,3] x, int64[2] t, float[4] w) => (float y) {
        y = SoftmaxCrossEntropyLoss(x, t, w)
      }
    )",
                   feed_of(np, {"x", "t", "w"}));
  });
  EXPECT_NE(e.find("weights"), std::string::npos) << e;
}

}  // namespace
}  // namespace parity::testing
