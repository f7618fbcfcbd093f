// MatMul, Gemm, Conv, pooling and normalisation kernels against NumPy formulas evaluated at
// test time in float64. Sums may be ordered differently from NumPy's, so results are compared
// within a few float32 ulps; thread-count independence is checked bit for bit.
#include <gtest/gtest.h>

#include "core/thread_pool.h"
#include "ref_test_util.h"

namespace parity::testing {
namespace {

constexpr double kRtol = 1e-6, kAtol = 1e-6;

TEST(MatrixKernels, MatMulBroadcastsBatchesAndPromotesVectors) {
  auto np = numpy_arrays(R"(
a = rng.randn(2, 1, 3, 40).astype(np.float32); b = rng.randn(3, 40, 5).astype(np.float32)
v = rng.randn(40).astype(np.float32)
save('a', a); save('b', b); save('v', v)
A, B, V = a.astype(np.float64), b.astype(np.float64), v.astype(np.float64)
save('ab', np.matmul(A, B).astype(np.float32))
save('vb', np.matmul(V, B).astype(np.float32))
save('av', np.matmul(A, V).astype(np.float32))
i = rng.randint(-1000, 1000, size=(4, 6)).astype(np.int32)
j = rng.randint(-1000, 1000, size=(6, 3)).astype(np.int32)
save('i', i); save('j', j); save('ij', np.matmul(i.astype(np.int64), j).astype(np.int32))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,1,3,40] a, float[3,40,5] b, float[40] v, int32[4,6] i, int32[6,3] j)
      => (float[2,3,3,5] ab, float[3,5] vb, float[2,1,3] av, int32[4,3] ij) {
      ab = MatMul(a, b)
      vb = MatMul(v, b)
      av = MatMul(a, v)
      ij = MatMul(i, j)
    }
  )",
                                 feed_of(np, {"a", "b", "v", "i", "j"}));
  for (const char* n : {"ab", "vb", "av"})
    EXPECT_TRUE(tensors_close(out.at(n), np.at(n), kRtol, kAtol)) << n;
  EXPECT_TRUE(tensors_identical(out.at("ij"), np.at("ij")));
}

TEST(MatrixKernels, GemmTransposesScalesAndBroadcastsC) {
  auto np = numpy_arrays(R"(
a = rng.randn(7, 5).astype(np.float32); b = rng.randn(9, 7).astype(np.float32)
c = rng.randn(9).astype(np.float32); d = rng.randn(5, 1).astype(np.float32)
save('a', a); save('b', b); save('c', c); save('d', d)
A, B = a.astype(np.float64), b.astype(np.float64)
save('y', (0.5 * A.T @ B.T + 2.0 * c.astype(np.float64)).astype(np.float32))
save('z', (A.T @ B.T - 1.5 * d.astype(np.float64)).astype(np.float32))
save('w', (A.T @ B.T).astype(np.float32))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[7,5] a, float[9,7] b, float[9] c, float[5,1] d)
      => (float[5,9] y, float[5,9] z, float[5,9] w) {
      y = Gemm<transA = 1, transB = 1, alpha = 0.5, beta = 2.0>(a, b, c)
      z = Gemm<transA = 1, transB = 1, beta = -1.5>(a, b, d)
      w = Gemm<transA = 1, transB = 1>(a, b)
    }
  )",
                                 feed_of(np, {"a", "b", "c", "d"}));
  for (const char* n : {"y", "z", "w"})
    EXPECT_TRUE(tensors_close(out.at(n), np.at(n), kRtol, kAtol)) << n;
}

// A direct NumPy convolution: explicit zero padding, then one tensordot per output position.
constexpr const char* kNumpyConv = R"(
def conv(x, w, b, strides, pads, dil, group):
    n = x.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[i + n]) for i in range(n)])
    k = w.shape[2:]
    out = [(x.shape[2 + i] - dil[i] * (k[i] - 1) - 1) // strides[i] + 1 for i in range(n)]
    N, C, M = x.shape[0], x.shape[1], w.shape[0]
    cg, mg = C // group, M // group
    y = np.zeros((N, M) + tuple(out))
    for idx in np.ndindex(*out):
        sl = tuple(slice(idx[i] * strides[i], idx[i] * strides[i] + dil[i] * (k[i] - 1) + 1, dil[i]) for i in range(n))
        patch = x[(slice(None), slice(None)) + sl]
        for g in range(group):
            y[(slice(None), slice(g * mg, (g + 1) * mg)) + idx] = np.tensordot(
                patch[:, g * cg:(g + 1) * cg], w[g * mg:(g + 1) * mg],
                axes=(list(range(1, n + 2)), list(range(1, n + 2))))
    if b is not None:
        y += b.reshape((1, M) + (1,) * n)
    return y
)";

TEST(ConvKernel, MatchesNumPyIn1D2DAnd3D) {
  auto np = numpy_arrays(std::string(kNumpyConv) + R"(
f64 = lambda a: a.astype(np.float64)
x2 = rng.randn(2, 4, 9, 8).astype(np.float32); w2 = rng.randn(6, 2, 3, 3).astype(np.float32)
b2 = rng.randn(6).astype(np.float32)
save('x2', x2); save('w2', w2); save('b2', b2)
save('y2', conv(f64(x2), f64(w2), f64(b2), [2, 1], [1, 2, 0, 1], [1, 2], 2).astype(np.float32))
x1 = rng.randn(1, 3, 11).astype(np.float32); w1 = rng.randn(2, 3, 4).astype(np.float32)
save('x1', x1); save('w1', w1)
save('y1', conv(f64(x1), f64(w1), None, [3], [2, 1], [1], 1).astype(np.float32))
x3 = rng.randn(1, 2, 5, 4, 6).astype(np.float32); w3 = rng.randn(3, 2, 2, 3, 2).astype(np.float32)
save('x3', x3); save('w3', w3)
save('y3', conv(f64(x3), f64(w3), None, [1, 1, 2], [0, 1, 1, 1, 1, 0], [2, 1, 1], 1).astype(np.float32))
# SAME_UPPER / SAME_LOWER on 7 wide with stride 2 and a 4-wide kernel: 3 pad columns in all.
xs = rng.randn(1, 1, 7, 7).astype(np.float32); ws = rng.randn(1, 1, 4, 4).astype(np.float32)
save('xs', xs); save('ws', ws)
save('upper', conv(f64(xs), f64(ws), None, [2, 2], [1, 1, 2, 2], [1, 1], 1).astype(np.float32))
save('lower', conv(f64(xs), f64(ws), None, [2, 2], [2, 2, 1, 1], [1, 1], 1).astype(np.float32))
)");
  TensorMap out =
      run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 11]>
    g (float[2,4,9,8] x2, float[6,2,3,3] w2, float[6] b2, float[1,3,11] x1, float[2,3,4] w1,
       float[1,2,5,4,6] x3, float[3,2,2,3,2] w3, float[1,1,7,7] xs, float[1,1,4,4] ws)
      => (float y2, float y1, float y3, float upper, float lower) {
      y2 = Conv<strides = [2, 1], pads = [1, 2, 0, 1], dilations = [1, 2], group = 2>(x2, w2, b2)
      y1 = Conv<strides = [3], pads = [2, 1]>(x1, w1)
      y3 = Conv<strides = [1, 1, 2], pads = [0, 1, 1, 1, 1, 0], dilations = [2, 1, 1]>(x3, w3)
      upper = Conv<strides = [2, 2], auto_pad = "SAME_UPPER">(xs, ws)
      lower = Conv<strides = [2, 2], auto_pad = "SAME_LOWER">(xs, ws)
    }
  )",
                     feed_of(np, {"x2", "w2", "b2", "x1", "w1", "x3", "w3", "xs", "ws"}));
  for (const char* n : {"y2", "y1", "y3", "upper", "lower"})
    EXPECT_TRUE(tensors_close(out.at(n), np.at(n), kRtol, kAtol)) << n;
}

// Same bits on 1 and 4 threads, for a kernel heavy enough to be split into many chunks.
template <typename F>
void expect_thread_independent(F run) {
  set_num_threads(1);
  Tensor one = run();
  set_num_threads(4);
  Tensor four = run();
  set_num_threads(0);
  EXPECT_TRUE(tensors_identical(four, one));
}

TEST(ConvKernel, GivesTheSameBitsOnAnyThreadCount) {
  auto np = numpy_arrays(R"(
save('x', rng.randn(2, 16, 32, 32).astype(np.float32))
save('w', rng.randn(24, 16, 3, 3).astype(np.float32))
save('b', rng.randn(24).astype(np.float32))
)");
  expect_thread_independent([&] {
    return run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[2,16,32,32] x, float[24,16,3,3] w, float[24] b) => (float y) {
        y = Conv<pads = [1, 1, 1, 1]>(x, w, b)
      }
    )",
                          feed_of(np, {"x", "w", "b"}))
        .at("y");
  });
}

// NumPy pooling per ONNX's definition: windows over the padded input, the last one dropped
// when it would start in the end padding (ceil_mode), averages over the taps inside the input
// (or inside the padded input with count_include_pad).
constexpr const char* kNumpyPool = R"(
def pool(x, k, s, pads, dil, ceil, kind, include_pad=False):
    n = x.ndim - 2
    ins = x.shape[2:]
    outs = []
    for i in range(n):
        span = ins[i] + pads[i] + pads[i + n] - dil[i] * (k[i] - 1) - 1
        o = (-(-span // s[i]) if ceil else span // s[i]) + 1
        if ceil and (o - 1) * s[i] >= ins[i] + pads[i]:
            o -= 1
        outs.append(o)
    y = np.zeros(x.shape[:2] + tuple(outs)); idx_out = np.zeros(y.shape, dtype=np.int64)
    for nc in np.ndindex(*x.shape[:2]):
        plane = x[nc]
        for o in np.ndindex(*outs):
            taps = [[o[i] * s[i] - pads[i] + t * dil[i] for t in range(k[i])] for i in range(n)]
            inside = [[p for p in taps[i] if 0 <= p < ins[i]] for i in range(n)]
            padded = [[p for p in taps[i] if -pads[i] <= p < ins[i] + pads[i + n]] for i in range(n)]
            vals = plane[np.ix_(*inside)]
            if kind == 'max':
                flat = np.argmax(vals)
                pos = np.unravel_index(flat, vals.shape)
                at = np.ravel_multi_index(tuple(inside[i][pos[i]] for i in range(n)), ins)
                y[nc + o] = vals.max(); idx_out[nc + o] = at + np.ravel_multi_index(nc, x.shape[:2]) * int(np.prod(ins))
            else:
                count = np.prod([len(p) for p in padded]) if include_pad else vals.size
                y[nc + o] = vals.sum() / count
    return y, idx_out
)";

TEST(PoolKernels, MatchNumPyWithPadsStridesDilationsAndCeilMode) {
  auto np = numpy_arrays(std::string(kNumpyPool) + R"(
x = rng.randn(2, 3, 9, 10).astype(np.float32); save('x', x)
X = x.astype(np.float64)
m, mi = pool(X, [3, 2], [2, 3], [1, 0, 1, 1], [1, 2], True, 'max')
save('max', m.astype(np.float32)); save('max_idx', mi)
a, _ = pool(X, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], True, 'avg', False)
save('avg', a.astype(np.float32))
ai, _ = pool(X, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], True, 'avg', True)
save('avg_pad', ai.astype(np.float32))
x1 = rng.randn(1, 2, 13).astype(np.float32); save('x1', x1)
m1, _ = pool(x1.astype(np.float64), [4], [3], [0, 0], [1], False, 'max'); save('max1', m1.astype(np.float32))
save('gavg', X.mean(axis=(2, 3), keepdims=True).astype(np.float32))
save('gmax', X.max(axis=(2, 3), keepdims=True).astype(np.float32))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 12]>
    g (float[2,3,9,10] x, float[1,2,13] x1)
      => (float max, int64 max_idx, float avg, float avg_pad, float max1, float gavg, float gmax) {
      max, max_idx = MaxPool<kernel_shape = [3, 2], strides = [2, 3], pads = [1, 0, 1, 1],
                             dilations = [1, 2], ceil_mode = 1>(x)
      avg = AveragePool<kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1],
                        ceil_mode = 1>(x)
      avg_pad = AveragePool<kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1],
                            ceil_mode = 1, count_include_pad = 1>(x)
      max1 = MaxPool<kernel_shape = [4], strides = [3]>(x1)
      gavg = GlobalAveragePool(x)
      gmax = GlobalMaxPool(x)
    }
  )",
                                 feed_of(np, {"x", "x1"}));
  EXPECT_TRUE(tensors_identical(out.at("max"), np.at("max")));
  EXPECT_TRUE(tensors_identical(out.at("max_idx"), np.at("max_idx")));
  EXPECT_TRUE(tensors_identical(out.at("max1"), np.at("max1")));
  EXPECT_TRUE(tensors_identical(out.at("gmax"), np.at("gmax")));
  for (const char* n : {"avg", "avg_pad", "gavg"})
    EXPECT_TRUE(tensors_close(out.at(n), np.at(n), kRtol, kAtol)) << n;
}

TEST(NormalizationKernels, MatchNumPy) {
  auto np = numpy_arrays(R"(
x = (rng.randn(2, 3, 5, 7) * 4 + 100).astype(np.float32); save('x', x)
s = rng.randn(3).astype(np.float32); b = rng.randn(3).astype(np.float32); save('s', s); save('b', b)
X = x.astype(np.float64)
mean = X.mean(axis=(2, 3), keepdims=True); var = X.var(axis=(2, 3), keepdims=True)
inorm = (X - mean) / np.sqrt(var + float(np.float32(1e-3))) * s.reshape(1, 3, 1, 1) + b.reshape(1, 3, 1, 1)
save('inorm', inorm.astype(np.float32))
eps = float(np.float32(1e-9))
def mvn(axes):
    m = X.mean(axis=axes, keepdims=True)
    return ((X - m) / (np.sqrt((X ** 2).mean(axis=axes, keepdims=True) - m ** 2) + eps)).astype(np.float32)
save('mvn', mvn((0, 2, 3))); save('mvn1', mvn((1,)))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3,5,7] x, float[3] s, float[3] b) => (float inorm, float mvn, float mvn1) {
      inorm = InstanceNormalization<epsilon = 0.001>(x, s, b)
      mvn = MeanVarianceNormalization(x)
      mvn1 = MeanVarianceNormalization<axes = [1]>(x)
    }
  )",
                                 feed_of(np, {"x", "s", "b"}));
  // NumPy's E[x^2] - E[x]^2 loses digits for data far from zero; 1e-5 covers it.
  for (const char* n : {"inorm", "mvn", "mvn1"})
    EXPECT_TRUE(tensors_close(out.at(n), np.at(n), 1e-5, 1e-5)) << n;
}

TEST(NormalizationKernels, InstanceNormalizationGivesTheSameBitsOnAnyThreadCount) {
  auto np = numpy_arrays(R"(
save('x', rng.randn(2, 8, 64, 64).astype(np.float32))
save('s', rng.randn(8).astype(np.float32)); save('b', rng.randn(8).astype(np.float32))
)");
  expect_thread_independent([&] {
    return run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[2,8,64,64] x, float[8] s, float[8] b) => (float y) {
        y = InstanceNormalization(x, s, b)
      }
    )",
                          feed_of(np, {"x", "s", "b"}))
        .at("y");
  });
}

}  // namespace
}  // namespace parity::testing
