// ai.onnx.preview.training optimisers against the spec's formulas in NumPy (float64): two
// tensors per node, T = 0 and T > 0, every attribute, float and double; and the errors for
// mismatched inputs.
#include <gtest/gtest.h>

#include "ref_test_util.h"

namespace parity::testing {
namespace {

constexpr double kRtol = 1e-6, kAtol = 1e-7;

constexpr const char* kData = R"(
X1 = rng.randn(3, 4); G1 = rng.randn(3, 4); S1 = rng.rand(3, 4); Q1 = rng.rand(3, 4)
X2 = rng.randn(5); G2 = rng.randn(5); S2 = rng.rand(5); Q2 = rng.rand(5)
for n in ('X1', 'G1', 'S1', 'Q1', 'X2', 'G2', 'S2', 'Q2'):
    save(n, globals()[n].astype(np.float32)); save(n + 'd', globals()[n])
f = lambda a: a.astype(np.float32).astype(np.float64)   # the float inputs as the kernel sees them
)";

TensorMap feed_of(const std::map<std::string, Tensor>& np, const std::string& suffix, double r,
                  int64_t t) {
  TensorMap feed;
  for (const char* n : {"X1", "G1", "S1", "Q1", "X2", "G2", "S2", "Q2"})
    feed.set(n, np.at(std::string(n) + suffix));
  if (suffix.empty())
    feed.set("R", Tensor::scalar<float>(static_cast<float>(r)));
  else
    feed.set("R", Tensor::scalar<double>(r));
  feed.set("T", Tensor::scalar<int64_t>(t));
  return feed;
}

TEST(TrainingKernels, AdagradMatchesTheSpecForTwoTensors) {
  auto np = numpy_arrays(std::string(kData) + R"(
def adagrad(R, T, X, G, H, decay, eps, norm):
    r = R / (1 + T * decay); g = norm * X + G; h = H + g * g
    return X - r * g / (np.sqrt(h) + eps), h
for i in ('1', '2'):
    x, h = adagrad(np.float64(np.float32(0.1)), 3, f(globals()['X' + i]), f(globals()['G' + i]),
                   f(globals()['S' + i]), np.float64(np.float32(0.2)), np.float64(np.float32(1e-5)),
                   np.float64(np.float32(0.01)))
    save('x' + i, x.astype(np.float32)); save('h' + i, h.astype(np.float32))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17, "ai.onnx.preview.training" : 1]>
    g (float R, int64 T, float[3,4] X1, float[5] X2, float[3,4] G1, float[5] G2, float[3,4] S1,
       float[5] S2) => (float x1, float x2, float h1, float h2) {
      x1, x2, h1, h2 = ai.onnx.preview.training.Adagrad<decay_factor = 0.2, epsilon = 1e-5,
                         norm_coefficient = 0.01>(R, T, X1, X2, G1, G2, S1, S2)
    }
  )",
                                 feed_of(np, "", 0.1, 3));
  for (const char* n : {"x1", "x2", "h1", "h2"})
    EXPECT_TRUE(tensors_close(out.at(n), np.at(n), kRtol, kAtol)) << n;
}

TEST(TrainingKernels, AdamMatchesTheSpecWithAndWithoutBiasCorrection) {
  auto np = numpy_arrays(std::string(kData) + R"(
def adam(R, T, X, G, V, H, alpha, beta, eps, norm, post):
    g = norm * X + G; v = alpha * V + (1 - alpha) * g; h = beta * H + (1 - beta) * g * g
    r = R * np.sqrt(1 - beta ** T) / (1 - alpha ** T) if T > 0 else R
    return (1 - post) * (X - r * v / (np.sqrt(h) + eps)), v, h
a, b, e, n, p = (np.float64(np.float32(v)) for v in (0.8, 0.95, 1e-4, 0.02, 0.1))
for T in (0, 4):
    x, v, h = adam(0.05, T, X1, G1, S1, Q1, a, b, e, n, p)
    save('x%d' % T, x); save('v%d' % T, v); save('h%d' % T, h)
)");
  const char* text = R"(
    <ir_version: 8, opset_import: ["" : 17, "ai.onnx.preview.training" : 1]>
    g (double R, int64 T, double[3,4] X1, double[3,4] G1, double[3,4] S1, double[3,4] Q1)
      => (double x, double v, double h) {
      x, v, h = ai.onnx.preview.training.Adam<alpha = 0.8, beta = 0.95, epsilon = 1e-4,
                  norm_coefficient = 0.02, norm_coefficient_post = 0.1>(R, T, X1, G1, S1, Q1)
    }
  )";
  for (int64_t t : {0, 4}) {
    TensorMap out = run_text_model(text, feed_of(np, "d", 0.05, t));
    for (const char* n : {"x", "v", "h"})
      EXPECT_TRUE(tensors_close(out.at(n), np.at(n + std::to_string(t)), 1e-12, 1e-14)) << n << t;
  }
}

TEST(TrainingKernels, MomentumStandardAndNesterov) {
  auto np = numpy_arrays(std::string(kData) + R"(
def momentum(R, T, X, G, V, alpha, beta, norm, nesterov):
    g = norm * X + G; b = beta if T > 0 else 1.0; v = alpha * V + b * g
    return (X - R * (g + alpha * v) if nesterov else X - R * v), v
a, b, n, R = (np.float64(np.float32(v)) for v in (0.9, 0.7, 0.001, 0.3))
for mode in (0, 1):
    for i in ('1', '2'):
        X, G, S = (f(globals()[k + i]) for k in ('X', 'G', 'S'))
        x, v = momentum(R, 2, X, G, S, a, b, n, mode)
        save('x%s_%d' % (i, mode), x.astype(np.float32))
        save('v%s_%d' % (i, mode), v.astype(np.float32))
)");
  for (int nesterov : {0, 1}) {
    TensorMap out = run_text_model(fmt::format(R"(
      <ir_version: 8, opset_import: ["" : 17, "ai.onnx.preview.training" : 1]>
      g (float R, int64 T, float[3,4] X1, float[5] X2, float[3,4] G1, float[5] G2, float[3,4] S1,
         float[5] S2) => (float x1, float x2, float v1, float v2) {{
        x1, x2, v1, v2 = ai.onnx.preview.training.Momentum<alpha = 0.9, beta = 0.7,
                           norm_coefficient = 0.001, mode = "{}">(R, T, X1, X2, G1, G2, S1, S2)
      }}
    )",
                                               nesterov ? "nesterov" : "standard"),
                                   feed_of(np, "", 0.3, 2));
    for (const char* n : {"x1", "x2", "v1", "v2"})
      EXPECT_TRUE(tensors_close(out.at(n), np.at(fmt::format("{}_{}", n, nesterov)), kRtol, kAtol))
          << n << nesterov;
  }
}

TEST(TrainingKernels, MismatchedShapesAreErrorsNamingTheNode) {
  TensorMap feed;
  feed.set("R", Tensor::scalar<float>(0.1f));
  feed.set("T", Tensor::scalar<int64_t>(1));
  feed.set("X", Tensor(DataType::kFloat32, {3}));
  feed.set("G", Tensor(DataType::kFloat32, {4}));
  feed.set("H", Tensor(DataType::kFloat32, {3}));
  std::string message = error_of([&] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17, "ai.onnx.preview.training" : 1]>
      g (float R, int64 T, float[3] X, float[4] G, float[3] H) => (float x, float h) {
        x, h = ai.onnx.preview.training.Adagrad(R, T, X, G, H)
      }
    )",
                   feed);
  });
  EXPECT_NE(message.find("failed to run node 'Adagrad_0' (Adagrad): input 3 is float32 (4,); it "
                         "must have the type and shape of X_0 (float32 (3,))"),
            std::string::npos)
      << message;
  message = error_of([] {
    ref::Executor e(model_from_text(R"(
      <ir_version: 8, opset_import: ["" : 17, "ai.onnx.preview.training" : 1]>
      g (float R, int64 T, float[3] X, float[3] G, float[3] V) => (float x, float v) {
        x, v = ai.onnx.preview.training.Momentum<alpha = 0.9, beta = 0.1, norm_coefficient = 0.0,
                                                mode = "heavy">(R, T, X, G, V)
      }
    )"));
  });
  EXPECT_NE(message.find("attribute 'mode' is 'heavy'; valid choices: standard, nesterov"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace parity::testing
