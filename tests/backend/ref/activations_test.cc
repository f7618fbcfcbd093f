// Activations beyond what the ONNX node tests cover: Mish (opset 18), Gelu (opset 20, exact
// and tanh), float16 inputs, PRelu slope broadcasting and integer types, Clip's min > max and
// integer bounds. Expected values are the spec's formulas evaluated by Python at test time
// with the C library's functions (math.*), in float64 and rounded once.
#include <gtest/gtest.h>

#include "ref_test_util.h"

namespace parity::testing {
namespace {

constexpr const char* kFormulas = R"(
import math
def apply(f, x):
    return np.vectorize(f, otypes=[np.float64])(x.astype(np.float64))
def softplus(v):
    return v + math.log1p(math.exp(-v)) if v > 0 else math.log1p(math.exp(v))
mish = lambda v: v * math.tanh(softplus(v))
gelu = lambda v: 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0)))
k = math.sqrt(2.0 / math.pi)
gelu_tanh = lambda v: 0.5 * v * (1.0 + math.tanh(k * (v + 0.044715 * v * v * v)))
)";

TEST(Activations, MishAndGeluFollowTheSpecFormulas) {
  auto np = numpy_arrays(std::string(kFormulas) + R"(
x = (rng.randn(3, 50) * 4).astype(np.float32); x[0, :4] = [0, -0.0, 30, -30]
h = (rng.randn(50) * 3).astype(np.float16)
save('x', x); save('h', h)
save('mish', apply(mish, x).astype(np.float32)); save('gelu', apply(gelu, x).astype(np.float32))
save('gelu_tanh', apply(gelu_tanh, x).astype(np.float32))
save('hmish', apply(mish, h).astype(np.float16)); save('hgelu', apply(gelu, h).astype(np.float16))
)");
  TensorMap feed;
  feed.set("x", np.at("x"));
  feed.set("h", np.at("h"));
  TensorMap out = run_text_model(R"(
    <ir_version: 9, opset_import: ["" : 20]>
    g (float[3,50] x, float16[50] h)
      => (float[3,50] mish, float[3,50] gelu, float[3,50] gelu_tanh, float16[50] hmish,
          float16[50] hgelu) {
      mish = Mish(x)
      gelu = Gelu(x)
      gelu_tanh = Gelu<approximate = "tanh">(x)
      hmish = Mish(h)
      hgelu = Gelu<approximate = "none">(h)
    }
  )",
                                 feed);
  for (const char* n : {"mish", "gelu", "gelu_tanh", "hmish", "hgelu"})
    EXPECT_TRUE(tensors_identical(out.at(n), np.at(n))) << n;
}

TEST(Activations, GeluRejectsAnUnknownApproximation) {
  std::string message = error_of([] {
    TensorMap feed;
    feed.set("x", Tensor(DataType::kFloat32, {2}));
    run_text_model(R"(
      <ir_version: 9, opset_import: ["" : 20]>
      g (float[2] x) => (float[2] y) { y = Gelu<approximate = "fast">(x) }
    )",
                   feed);
  });
  EXPECT_NE(message.find("failed to prepare node 'Gelu_0' (Gelu): attribute 'approximate' is "
                         "'fast'; it must be one of none, tanh"),
            std::string::npos)
      << message;
}

TEST(Activations, PReluBroadcastsTheSlopeAndTakesIntegers) {
  auto np = numpy_arrays(R"(
x = rng.randn(2, 3, 4, 5).astype(np.float32); s = rng.rand(3, 1, 1).astype(np.float32)
i = rng.randint(-100, 100, size=(4, 6)).astype(np.int32)
t = rng.randint(-5, 5, size=(6,)).astype(np.int32)
for n, v in [('x', x), ('s', s), ('i', i), ('t', t)]: save(n, v)
save('y', np.where(x < 0, (x.astype(np.float64) * s).astype(np.float32), x))
save('yi', np.where(i < 0, i * t, i))
)");
  TensorMap feed;
  for (const char* n : {"x", "s", "i", "t"}) feed.set(n, np.at(n));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (float[2,3,4,5] x, float[3,1,1] s, int32[4,6] i, int32[6] t)
      => (float[2,3,4,5] y, int32[4,6] yi) {
      y = PRelu(x, s)
      yi = PRelu(i, t)
    }
  )",
                                 feed);
  EXPECT_TRUE(tensors_identical(out.at("y"), np.at("y")));
  EXPECT_TRUE(tensors_identical(out.at("yi"), np.at("yi")));

  // The slope broadcasts to X, never X to the slope.
  std::string message = error_of([&] {
    TensorMap bad;
    bad.set("x", Tensor(DataType::kFloat32, {3, 1}));
    bad.set("s", Tensor(DataType::kFloat32, {3, 4}));
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 16]>
      g (float[3,1] x, float[3,4] s) => (float[3,1] y) { y = PRelu(x, s) }
    )",
                   bad);
  });
  EXPECT_NE(message.find("failed to run node 'PRelu_0' (PRelu): slope of shape (3, 4) does not "
                         "broadcast to X's shape (3, 1)"),
            std::string::npos)
      << message;
}

TEST(Activations, ClipWithMinAboveMaxGivesMaxAndClipsIntegers) {
  auto np = numpy_arrays(R"(
x = rng.randn(20).astype(np.float32); x[3] = np.nan; save('x', x)
lo = np.array(0.5, np.float32); hi = np.array(-0.5, np.float32); save('lo', lo); save('hi', hi)
save('y', np.minimum(np.maximum(x, lo), hi))
u = rng.randint(0, 256, size=(20,)).astype(np.uint8); save('u', u)
ulo = np.array(10, np.uint8); save('ulo', ulo); save('yu', np.maximum(u, ulo))
)");
  TensorMap feed;
  for (const char* n : {"x", "lo", "hi", "u", "ulo"}) feed.set(n, np.at(n));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[20] x, float lo, float hi, uint8[20] u, uint8 ulo) => (float[20] y, uint8[20] yu) {
      y = Clip(x, lo, hi)
      yu = Clip(u, ulo)
    }
  )",
                                 feed);
  EXPECT_TRUE(tensors_identical(out.at("y"), np.at("y")));
  EXPECT_TRUE(tensors_identical(out.at("yu"), np.at("yu")));
}

}  // namespace
}  // namespace parity::testing
