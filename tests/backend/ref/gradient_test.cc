// Gradient (ai.onnx.preview.training): reverse-mode derivatives of a graph that uses every
// differentiated op (with broadcasting, a 2-D MatMul, a constant, and a zs input that is held
// fixed), checked against central finite differences of a NumPy restatement of the same
// graph in float64; an input y does not depend on gets zeros; an op outside the documented
// set is refused when the model is prepared.
#include <gtest/gtest.h>

#include "ref_test_util.h"

namespace parity::testing {
namespace {

constexpr const char* kGraph = R"(
  <ir_version: 8, opset_import: ["" : 17, "ai.onnx.preview.training" : 1]>
  g (double[3,4] a, double[4,2] b, double[2] c, double[3,1] z, double[2] unused)
    => (double y, double da, double db, double dc, double du) <double[1] half = {0.5}> {
    m = MatMul(a, b)
    s = Sigmoid(m)
    t = Tanh(c)
    p = Mul(s, t)
    q = Div(p, z)
    e = Exp(q)
    l = Log(e)
    r = Relu(l)
    n = Neg(r)
    w = Sub(n, c)
    sq = Mul(a, a)
    h = Add(sq, half)
    rt = Sqrt(h)
    i = Identity(rt)
    red = MatMul(i, b)
    y = Add(w, red)
    da, db, dc, du = ai.onnx.preview.training.Gradient<xs = ["a", "b", "c", "unused"],
                                                       zs = ["z"], y = "y">(a, b, c, unused, z)
  }
)";

TEST(GradientKernel, MatchesCentralDifferencesOfTheGraph) {
  auto np = numpy_arrays(R"(
a = rng.randn(3, 4); b = rng.randn(4, 2); c = rng.randn(2); z = rng.rand(3, 1) + 0.5
u = rng.randn(2)
for x, n in ((a, 'a'), (b, 'b'), (c, 'c'), (z, 'z'), (u, 'unused')): save(n, x)
def f(a, b, c):
    s = 1 / (1 + np.exp(-(a @ b)))
    q = s * np.tanh(c) / z
    r = np.maximum(np.log(np.exp(q)), 0)
    return (-r - c + np.sqrt(a * a + 0.5) @ b).sum()
def numeric(k):
    args = [a, b, c]
    g = np.zeros_like(args[k])
    for idx in np.ndindex(g.shape):
        hi = [x.copy() for x in args]; lo = [x.copy() for x in args]
        hi[k][idx] += 1e-6; lo[k][idx] -= 1e-6
        g[idx] = (f(*hi) - f(*lo)) / 2e-6
    return g
save('da', numeric(0)); save('db', numeric(1)); save('dc', numeric(2))
)");
  TensorMap out = run_text_model(kGraph, feed_of(np, {"a", "b", "c", "z", "unused"}));
  for (const char* n : {"da", "db", "dc"})
    EXPECT_TRUE(tensors_close(out.at(n), np.at(n), 1e-6, 1e-7)) << n;
  const Tensor& du = out.at("du");
  ASSERT_EQ(du.shape(), (Shape{2}));
  EXPECT_EQ(du.data<double>()[0], 0.0);
  EXPECT_EQ(du.data<double>()[1], 0.0);
}

TEST(GradientKernel, RefusesOpsOutsideTheDifferentiatedSet) {
  std::string e = error_of([] {
    ref::Executor executor(model_from_text(R"(
      <ir_version: 8, opset_import: ["" : 17, "ai.onnx.preview.training" : 1]>
      g (float[3] a) => (float y, float da) {
        y = Softplus(a)
        da = ai.onnx.preview.training.Gradient<xs = ["a"], y = "y">(a)
      }
    )"));
  });
  EXPECT_NE(e.find("(Softplus) between xs and y cannot be differentiated"), std::string::npos) << e;
  EXPECT_NE(e.find("differentiable ops: [Add, Sub"), std::string::npos) << e;
}

}  // namespace
}  // namespace parity::testing
