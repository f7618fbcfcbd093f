// Conv, MaxPool (with Indices, both storage orders), AveragePool (with and without the padding
// in the count) and LpPool over 4 spatial dims, against NumPy restatements of the spec's
// definitions evaluated in float64; and a 4-D convolution whose leading dim has size 1 gives
// the bits of the 3-D one.
#include <gtest/gtest.h>

#include "ref_test_util.h"

namespace parity::testing {
namespace {

constexpr const char* kNumpyWindows = R"(
def conv_nd(x, w, b, strides, dil, pb, pe, group):
    N, C = x.shape[:2]; M = w.shape[0]; n = x.ndim - 2; cg = C // group; mg = M // group
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pb[i], pe[i]) for i in range(n)])
    k = w.shape[2:]
    out = [(xp.shape[2 + i] - dil[i] * (k[i] - 1) - 1) // strides[i] + 1 for i in range(n)]
    y = np.zeros((N, M) + tuple(out))
    for kk in np.ndindex(*k):
        sl = tuple(slice(kk[i] * dil[i], kk[i] * dil[i] + strides[i] * (out[i] - 1) + 1, strides[i]) for i in range(n))
        patch = xp[(slice(None), slice(None)) + sl]
        for g in range(group):
            wk = w[(slice(g * mg, (g + 1) * mg), slice(None)) + kk]
            y[:, g * mg:(g + 1) * mg] += np.einsum('nc...,mc->nm...', patch[:, g * cg:(g + 1) * cg], wk)
    if b is not None: y += b.reshape((1, -1) + (1,) * n)
    return y

def pool_nd(x, k, strides, dil, pb, pe, kind, include_pad=0, p=2, column_major=0):
    N, C = x.shape[:2]; n = x.ndim - 2; sp = x.shape[2:]
    out = [(sp[i] + pb[i] + pe[i] - dil[i] * (k[i] - 1) - 1) // strides[i] + 1 for i in range(n)]
    y = np.zeros((N, C) + tuple(out)); idx = np.zeros((N, C) + tuple(out), np.int64)
    for nn in range(N):
        for c in range(C):
            for o in np.ndindex(*out):
                vals, where = [], []
                for kk in np.ndindex(*k):
                    pos = tuple(o[i] * strides[i] - pb[i] + kk[i] * dil[i] for i in range(n))
                    if all(0 <= pos[i] < sp[i] for i in range(n)):
                        vals.append(x[(nn, c) + pos])
                        flat = np.ravel_multi_index(pos, sp, order='F' if column_major else 'C')
                        where.append((nn * C + c) * int(np.prod(sp)) + flat)
                vals = np.array(vals, np.float64)
                if kind == 'max':
                    j = int(np.argmax(vals)); y[(nn, c) + o] = vals[j]; idx[(nn, c) + o] = where[j]
                elif kind == 'avg':
                    y[(nn, c) + o] = vals.sum() / (np.prod(k) if include_pad else len(vals))
                else:
                    y[(nn, c) + o] = (np.abs(vals) ** p).sum() ** (1.0 / p)
    return y, idx
)";

TEST(NdWindows, ConvOverFourSpatialDimsMatchesNumPy) {
  auto np = numpy_arrays(std::string(kNumpyWindows) + R"(
x = rng.randn(2, 4, 5, 4, 6, 5).astype(np.float32); w = rng.randn(6, 2, 2, 3, 2, 3).astype(np.float32)
b = rng.randn(6).astype(np.float32)
save('x', x); save('w', w); save('b', b)
y = conv_nd(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), [2, 1, 2, 1], [1, 1, 2, 1], [1, 0, 1, 2], [0, 1, 1, 0], 2)
save('y', y.astype(np.float32))
x5 = rng.randn(1, 3, 3, 2, 3, 2, 4).astype(np.float32); w5 = rng.randn(4, 3, 2, 1, 2, 2, 3).astype(np.float32)
save('x5', x5); save('w5', w5)
save('y5', conv_nd(x5.astype(np.float64), w5.astype(np.float64), None, [1, 1, 1, 1, 1], [1, 1, 1, 1, 1], [0, 0, 1, 0, 1], [1, 0, 0, 1, 1], 1).astype(np.float32))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,4,5,4,6,5] x, float[6,2,2,3,2,3] w, float[6] b, float[1,3,3,2,3,2,4] x5,
       float[4,3,2,1,2,2,3] w5) => (float y, float y5) {
      y = Conv<strides = [2, 1, 2, 1], dilations = [1, 1, 2, 1], pads = [1, 0, 1, 2, 0, 1, 1, 0],
               group = 2>(x, w, b)
      y5 = Conv<pads = [0, 0, 1, 0, 1, 1, 0, 0, 1, 1]>(x5, w5)
    }
  )",
                                 feed_of(np, {"x", "w", "b", "x5", "w5"}));
  EXPECT_TRUE(tensors_close(out.at("y"), np.at("y"), 1e-5, 1e-5));
  EXPECT_TRUE(tensors_close(out.at("y5"), np.at("y5"), 1e-5, 1e-5));
}

TEST(NdWindows, FourDimConvWithALeadingDimOfOneHasTheBitsOfTheThreeDimOne) {
  auto np = numpy_arrays(R"(
save('x', rng.randn(1, 5, 1, 6, 7, 8).astype(np.float32))
save('w', rng.randn(9, 5, 1, 3, 2, 3).astype(np.float32))
)");
  Tensor x3 = np.at("x").reshaped({1, 5, 6, 7, 8}), w3 = np.at("w").reshaped({9, 5, 3, 2, 3});
  TensorMap feed = feed_of(np, {"x", "w"});
  feed.set("x3", x3);
  feed.set("w3", w3);
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,5,1,6,7,8] x, float[9,5,1,3,2,3] w, float[1,5,6,7,8] x3, float[9,5,3,2,3] w3)
      => (float y, float y3) {
      y = Conv<strides = [1, 2, 1, 2], pads = [0, 1, 0, 1, 0, 1, 1, 0]>(x, w)
      y3 = Conv<strides = [2, 1, 2], pads = [1, 0, 1, 1, 1, 0]>(x3, w3)
    }
  )",
                                 feed);
  const Tensor& y3 = out.at("y3");
  EXPECT_TRUE(tensors_identical(out.at("y").reshaped(y3.shape()), y3));
}

TEST(NdWindows, PoolsOverFourSpatialDimsMatchNumPy) {
  auto np = numpy_arrays(std::string(kNumpyWindows) + R"(
x = rng.randn(2, 3, 4, 3, 5, 4).astype(np.float32)
save('x', x)
X = x.astype(np.float64)
geo = ([2, 2, 3, 2], [2, 1, 2, 1], [1, 1, 1, 2], [1, 0, 1, 0], [0, 1, 1, 1])
m, mi = pool_nd(X, *geo, 'max'); save('max', m.astype(np.float32)); save('max_i', mi)
_, mic = pool_nd(X, *geo, 'max', column_major=1); save('max_ic', mic)
save('avg', pool_nd(X, *geo, 'avg')[0].astype(np.float32))
save('avg_pad', pool_nd(X, *geo, 'avg', include_pad=1)[0].astype(np.float32))
save('lp', pool_nd(X, *geo, 'lp', p=3)[0].astype(np.float32))
)");
  const std::string attrs =
      "kernel_shape = [2, 2, 3, 2], strides = [2, 1, 2, 1], dilations = [1, 1, 1, 2], "
      "pads = [1, 0, 1, 0, 0, 1, 1, 1]";
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 19]>
    g (float[2,3,4,3,5,4] x) => (float max, int64 max_i, float c, int64 max_ic, float avg,
                                 float avg_pad, float lp) {
      max, max_i = MaxPool<)" + attrs +
                                     R"(>(x)
      c, max_ic = MaxPool<)" + attrs +
                                     R"(, storage_order = 1>(x)
      avg = AveragePool<)" + attrs + R"(>(x)
      avg_pad = AveragePool<)" + attrs +
                                     R"(, count_include_pad = 1>(x)
      lp = LpPool<)" + attrs + R"(, p = 3>(x)
    }
  )",
                                 feed_of(np, {"x"}));
  EXPECT_TRUE(tensors_identical(out.at("max"), np.at("max")));
  EXPECT_TRUE(tensors_identical(out.at("max_i"), np.at("max_i")));
  EXPECT_TRUE(tensors_identical(out.at("c"), np.at("max")));
  EXPECT_TRUE(tensors_identical(out.at("max_ic"), np.at("max_ic")));
  EXPECT_TRUE(tensors_close(out.at("avg"), np.at("avg"), 1e-6, 1e-7));
  EXPECT_TRUE(tensors_close(out.at("avg_pad"), np.at("avg_pad"), 1e-6, 1e-7));
  EXPECT_TRUE(tensors_close(out.at("lp"), np.at("lp"), 1e-6, 1e-7));
}

TEST(NdWindows, ConvIntegerOverFourSpatialDimsIsExact) {
  auto np = numpy_arrays(std::string(kNumpyWindows) + R"(
x = rng.randint(0, 256, (1, 2, 3, 4, 3, 5)).astype(np.uint8)
w = rng.randint(0, 256, (3, 2, 2, 2, 2, 3)).astype(np.uint8)
save('x', x); save('w', w)
y = conv_nd(x.astype(np.float64) - 7, w.astype(np.float64) - 100, None, [1, 2, 1, 1], [1, 1, 1, 2], [1, 0, 1, 1], [0, 1, 0, 1], 1)
save('y', y.astype(np.int32))
)");
  TensorMap feed = feed_of(np, {"x", "w"});
  Tensor xz(DataType::kUInt8, {}), wz(DataType::kUInt8, {});
  xz.data<uint8_t>()[0] = 7;
  wz.data<uint8_t>()[0] = 100;
  feed.set("xz", xz);
  feed.set("wz", wz);
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (uint8[1,2,3,4,3,5] x, uint8[3,2,2,2,2,3] w, uint8 xz, uint8 wz) => (int32 y) {
      y = ConvInteger<strides = [1, 2, 1, 1], dilations = [1, 1, 1, 2],
                      pads = [1, 0, 1, 1, 0, 1, 0, 1]>(x, w, xz, wz)
    }
  )",
                                 feed);
  EXPECT_TRUE(tensors_identical(out.at("y"), np.at("y")));
}

}  // namespace
}  // namespace parity::testing
