// Normalisation kernels beyond the ONNX node tests: GroupNormalization at opsets 18 (scale and
// bias per group) and 21 (per channel), LayerNormalization's Mean/InvStdDev outputs, stash
// type and float16, BatchNormalization's training outputs and the spatial=0 form of old
// opsets, LpNormalization, and the same bits on any thread count. NumPy computes the expected
// values at test time, in float64.
#include <gtest/gtest.h>

#include "core/thread_pool.h"
#include "ref_test_util.h"

namespace parity::testing {
namespace {

constexpr double kRtol = 1e-6, kAtol = 1e-6;

constexpr const char* kNumpyGroupNorm = R"(
def group_norm(x, scale, bias, groups, eps, per_channel):
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1)
    mean = g.mean(axis=2, keepdims=True)
    var = g.var(axis=2, keepdims=True)
    y = ((g - mean) / np.sqrt(var + eps)).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    if not per_channel:  # one value per group, repeated over its channels
        scale = np.repeat(scale, c // groups); bias = np.repeat(bias, c // groups)
    return y * scale.reshape(shape) + bias.reshape(shape)
)";

TEST(NormalizationKernels, GroupNormalizationScalesPerGroupAt18AndPerChannelAt21) {
  auto np = numpy_arrays(std::string(kNumpyGroupNorm) + R"(
x = (rng.randn(2, 6, 5, 4) * 3 + 1).astype(np.float32)
sg = rng.randn(3).astype(np.float32); bg = rng.randn(3).astype(np.float32)
sc = rng.randn(6).astype(np.float32); bc = rng.randn(6).astype(np.float32)
save('x', x); save('sg', sg); save('bg', bg); save('sc', sc); save('bc', bc)
X = x.astype(np.float64)
save('y18', group_norm(X, sg.astype(np.float64), bg.astype(np.float64), 3, 1e-5, False).astype(np.float32))
save('y21', group_norm(X, sc.astype(np.float64), bc.astype(np.float64), 3, float(np.float32(1e-3)), True).astype(np.float32))
)");
  TensorMap out18 = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[2,6,5,4] x, float[3] sg, float[3] bg) => (float y18) {
      y18 = GroupNormalization<num_groups = 3>(x, sg, bg)
    }
  )",
                                   feed_of(np, {"x", "sg", "bg"}));
  EXPECT_TRUE(tensors_close(out18.at("y18"), np.at("y18"), kRtol, kAtol));
  TensorMap out21 = run_text_model(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[2,6,5,4] x, float[6] sc, float[6] bc) => (float y21) {
      y21 = GroupNormalization<num_groups = 3, epsilon = 0.001, stash_type = 1>(x, sc, bc)
    }
  )",
                                   feed_of(np, {"x", "sc", "bc"}));
  EXPECT_TRUE(tensors_close(out21.at("y21"), np.at("y21"), kRtol, kAtol));

  // Opset 21 with per-group parameters is refused, naming the rule.
  std::string e = error_of([&] {
    run_text_model(R"(
      <ir_version: 10, opset_import: ["" : 21]>
      g (float[2,6,5,4] x, float[3] sg, float[3] bg) => (float y) {
        y = GroupNormalization<num_groups = 3>(x, sg, bg)
      }
    )",
                   feed_of(np, {"x", "sg", "bg"}));
  });
  EXPECT_NE(e.find("one per channel"), std::string::npos) << e;
}

TEST(NormalizationKernels, LayerNormalizationGivesMeanAndInvStdDevInTheStashType) {
  auto np = numpy_arrays(R"(
x = (rng.randn(3, 4, 5) * 2 + 3).astype(np.float16)
s = rng.randn(5).astype(np.float16); b = rng.randn(4, 5).astype(np.float16)
save('x', x); save('s', s); save('b', b)
X = x.astype(np.float64)
mean = X.mean(axis=(1, 2), keepdims=True)
inv = 1 / np.sqrt(X.var(axis=(1, 2), keepdims=True) + float(np.float32(1e-4)))
save('y', ((X - mean) * inv * s.astype(np.float64) + b.astype(np.float64)).astype(np.float16))
save('mean', mean.astype(np.float32)); save('inv', inv.astype(np.float32))
save('mean64', mean); save('inv64', inv)
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float16[3,4,5] x, float16[5] s, float16[4,5] b)
      => (float16 y, float mean, float inv, double mean64, double inv64, float16 y2) {
      y, mean, inv = LayerNormalization<axis = 1, epsilon = 0.0001>(x, s, b)
      y2, mean64, inv64 = LayerNormalization<axis = -2, epsilon = 0.0001, stash_type = 11>(x, s, b)
    }
  )",
                                 feed_of(np, {"x", "s", "b"}));
  // Rounded once from double: float16 results equal NumPy's float64 result rounded.
  EXPECT_TRUE(tensors_identical(out.at("y"), np.at("y")));
  EXPECT_TRUE(tensors_identical(out.at("y2"), np.at("y")));
  for (const char* n : {"mean", "inv", "mean64", "inv64"})
    EXPECT_TRUE(tensors_close(out.at(n), np.at(n), 1e-12, 0)) << n;
}

TEST(NormalizationKernels, BatchNormalizationTrainingModeUpdatesRunningStatistics) {
  auto np = numpy_arrays(R"(
x = (rng.randn(4, 3, 5, 2) * 2 + 1).astype(np.float32)
s, b = rng.randn(3).astype(np.float32), rng.randn(3).astype(np.float32)
m, v = rng.randn(3).astype(np.float64), rng.rand(3).astype(np.float64) + 0.5
save('x', x); save('s', s); save('b', b); save('m', m); save('v', v)
X = x.astype(np.float64); ax = (0, 2, 3); sh = (1, 3, 1, 1)
bm, bv = X.mean(axis=ax), X.var(axis=ax)
mom = float(np.float32(0.8)); eps = float(np.float32(1e-5))
y = (X - bm.reshape(sh)) / np.sqrt(bv.reshape(sh) + eps) * s.astype(np.float64).reshape(sh) + b.astype(np.float64).reshape(sh)
save('y', y.astype(np.float32))
save('rm', m * mom + bm * (1 - mom)); save('rv', v * mom + bv * (1 - mom))
yi = (X - m.reshape(sh)) / np.sqrt(v.reshape(sh) + eps) * s.astype(np.float64).reshape(sh) + b.astype(np.float64).reshape(sh)
save('yi', yi.astype(np.float32))
)");
  // Opset 15 lets the statistics (double) differ in type from X (float).
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[4,3,5,2] x, float[3] s, float[3] b, double[3] m, double[3] v)
      => (float y, double rm, double rv, float yi) {
      y, rm, rv = BatchNormalization<training_mode = 1, momentum = 0.8>(x, s, b, m, v)
      yi = BatchNormalization(x, s, b, m, v)
    }
  )",
                                 feed_of(np, {"x", "s", "b", "m", "v"}));
  for (const char* n : {"y", "rm", "rv", "yi"})
    EXPECT_TRUE(tensors_close(out.at(n), np.at(n), kRtol, 1e-12)) << n;
}

// Inference runs each float32 row through normalize_float's vector clones (AVX-512, AVX2):
// every element must keep the scalar expression's bits, (x - mean) * a + c rounded after each
// operation (no fused multiply-add), a = scale / sqrt(var + epsilon) in double. Rows of 67
// values leave a ragged tail for every lane width; NaN, infinities, -0, denormals and huge
// values go through the lanes too. (A fused multiply-add moves the double result by an ulp,
// which rounding to float hides except within 2^-29 of a float boundary, so this test cannot
// see one; the clones' fp-contract=off is what rules it out.)
TEST(NormalizationKernels, BatchNormalizationInferenceKeepsTheScalarBitsInVectorLanes) {
  auto np = numpy_arrays(R"(
x = (rng.randn(2, 3, 67) * 3).astype(np.float32)
x[0, 0, :6] = [np.nan, np.inf, -np.inf, -0.0, 1e-45, 3e38]
s, b = rng.randn(3).astype(np.float32), rng.randn(3).astype(np.float32)
m, v = rng.randn(3).astype(np.float32), (rng.rand(3) + 0.5).astype(np.float32)
save('x', x); save('s', s); save('b', b); save('m', m); save('v', v)
f = lambda t: t.astype(np.float64).reshape(1, 3, 1)
a = f(s) / np.sqrt(f(v) + float(np.float32(1e-5)))
with np.errstate(all='ignore'):
    save('y', ((x.astype(np.float64) - f(m)) * a + f(b)).astype(np.float32))
)");
  for (int threads : {1, 2, 4}) {
    set_num_threads(threads);
    TensorMap out = run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 15]>
      g (float[2,3,67] x, float[3] s, float[3] b, float[3] m, float[3] v) => (float y) {
        y = BatchNormalization(x, s, b, m, v)
      }
    )",
                                   feed_of(np, {"x", "s", "b", "m", "v"}));
    EXPECT_TRUE(tensors_identical(out.at("y"), np.at("y"))) << threads << " threads";
  }
  set_num_threads(0);
}

TEST(NormalizationKernels, BatchNormalizationWithoutSpatialHasParametersPerPosition) {
  auto np = numpy_arrays(R"(
x = rng.randn(3, 2, 4).astype(np.float32)
s, b, m = [rng.randn(2, 4).astype(np.float32) for _ in range(3)]
v = (rng.rand(2, 4) + 0.5).astype(np.float32)
save('x', x); save('s', s); save('b', b); save('m', m); save('v', v)
f = lambda a: a.astype(np.float64)
save('y', ((f(x) - f(m)) / np.sqrt(f(v) + float(np.float32(1e-5))) * f(s) + f(b)).astype(np.float32))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 3, opset_import: ["" : 7]>
    g (float[3,2,4] x, float[2,4] s, float[2,4] b, float[2,4] m, float[2,4] v) => (float y) {
      y = BatchNormalization<spatial = 0>(x, s, b, m, v)
    }
  )",
                                 feed_of(np, {"x", "s", "b", "m", "v"}));
  EXPECT_TRUE(tensors_close(out.at("y"), np.at("y"), kRtol, kAtol));
}

TEST(NormalizationKernels, LpNormalizationDividesByTheNormAlongTheAxis) {
  auto np = numpy_arrays(R"(
x = rng.randn(3, 4, 5).astype(np.float32); save('x', x); X = x.astype(np.float64)
save('l1', (X / np.sum(np.abs(X), axis=1, keepdims=True)).astype(np.float32))
save('l2', (X / np.sqrt(np.sum(X * X, axis=-1, keepdims=True))).astype(np.float32))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[3,4,5] x) => (float l1, float l2) {
      l1 = LpNormalization<axis = 1, p = 1>(x)
      l2 = LpNormalization(x)
    }
  )",
                                 feed_of(np, {"x"}));
  for (const char* n : {"l1", "l2"})
    EXPECT_TRUE(tensors_close(out.at(n), np.at(n), kRtol, kAtol)) << n;
}

TEST(NormalizationKernels, LayerNormalizationGivesTheSameBitsOnAnyThreadCount) {
  auto np = numpy_arrays(R"(
save('x', rng.randn(512, 768).astype(np.float32))
save('s', rng.randn(768).astype(np.float32)); save('b', rng.randn(768).astype(np.float32))
)");
  auto run = [&] {
    return run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[512,768] x, float[768] s, float[768] b) => (float y) {
        y = LayerNormalization(x, s, b)
      }
    )",
                          feed_of(np, {"x", "s", "b"}))
        .at("y");
  };
  set_num_threads(1);
  Tensor one = run();
  set_num_threads(4);
  Tensor four = run();
  set_num_threads(0);
  EXPECT_TRUE(tensors_identical(four, one));
}

}  // namespace
}  // namespace parity::testing
