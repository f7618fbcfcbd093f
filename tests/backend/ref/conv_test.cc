// The convolution family beyond the ONNX 1.12 node tests: ConvTranspose with groups,
// dilations, output_padding, output_shape and SAME_LOWER; DeformConv (opset 19); per-channel
// QLinearConv; float16 inputs; and identical bits on 1 and 4 threads for large Conv and
// ConvTranspose. Expected values come from NumPy written from the spec's formulas.
#include <gtest/gtest.h>

#include "core/thread_pool.h"
#include "ref_test_util.h"

namespace parity::testing {
namespace {

// ConvTranspose by its definition: every input element scatters x * w[k] to
// i * stride + k * dilation, then the full result is cropped by the pads (a negative pad
// adds zeros on its side).
constexpr const char* kNumpyConvTranspose = R"(
def conv_transpose(x, w, b, strides, dil, group, pads_begin, pads_end, out_pad):
    N, C = x.shape[:2]; n = x.ndim - 2
    mg = w.shape[1]; M = mg * group; cg = C // group
    k = w.shape[2:]
    full = [strides[i] * (x.shape[2 + i] - 1) + out_pad[i] + dil[i] * (k[i] - 1) + 1 for i in range(n)]
    lead = [max(0, -pads_begin[i]) for i in range(n)]
    big = [lead[i] + full[i] + max(0, -pads_end[i]) for i in range(n)]
    y = np.zeros((N, M) + tuple(big))
    for nn in range(N):
        for c in range(C):
            g = c // cg
            for idx in np.ndindex(*x.shape[2:]):
                for kk in np.ndindex(*k):
                    pos = tuple(lead[i] + idx[i] * strides[i] + kk[i] * dil[i] for i in range(n))
                    y[(nn, slice(g * mg, (g + 1) * mg)) + pos] += x[(nn, c) + idx] * w[(c, slice(None)) + kk]
    sl = tuple(slice(max(0, pads_begin[i]), big[i] - max(0, pads_end[i])) for i in range(n))
    y = y[(slice(None), slice(None)) + sl]
    if b is not None: y += b.reshape((1, -1) + (1,) * n)
    return y
)";

TEST(ConvTransposeKernel, MatchesTheDefinitionWithGroupsDilationsAndOutputShapes) {
  auto np = numpy_arrays(std::string(kNumpyConvTranspose) + R"(
x = rng.randn(2, 4, 3, 5).astype(np.float32); w = rng.randn(4, 3, 2, 3).astype(np.float32)
b = rng.randn(6).astype(np.float32)
x1 = rng.randn(1, 2, 6).astype(np.float32); w1 = rng.randn(2, 1, 4).astype(np.float32)
save('x', x); save('w', w); save('b', b); save('x1', x1); save('w1', w1)
X, W, B = x.astype(np.float64), w.astype(np.float64), b.astype(np.float64)
save('y', conv_transpose(X, W, B, [2, 3], [2, 1], 2, [1, 0], [0, 2], [1, 2]).astype(np.float32))
# output_shape [9, 20]: full is [6, 15], total padding -3 and -5, split as the spec's
# pads_end = total // 2 (floor), pads_begin = total - pads_end.
save('shaped', conv_transpose(X, W, None, [2, 3], [1, 1], 2, [-1, -2], [-2, -3], [0, 0]).astype(np.float32))
# SAME_LOWER, stride 3: output 6 * 3 = 18 of the full 3 * 5 + 4 = 19; the extra pad goes first.
save('lower', conv_transpose(x1.astype(np.float64), w1.astype(np.float64), None, [3], [1], 2, [1], [0], [0]).astype(np.float32))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,4,3,5] x, float[4,3,2,3] w, float[6] b, float[1,2,6] x1, float[2,1,4] w1)
      => (float y, float shaped, float lower) {
      y = ConvTranspose<strides = [2, 3], dilations = [2, 1], group = 2, pads = [1, 0, 0, 2],
                        output_padding = [1, 2]>(x, w, b)
      shaped = ConvTranspose<strides = [2, 3], group = 2, output_shape = [9, 20]>(x, w)
      lower = ConvTranspose<strides = [3], group = 2, auto_pad = "SAME_LOWER">(x1, w1)
    }
  )",
                                 feed_of(np, {"x", "w", "b", "x1", "w1"}));
  for (const char* n : {"y", "shaped", "lower"})
    EXPECT_TRUE(tensors_close(out.at(n), np.at(n), 1e-6, 1e-6)) << n;
}

TEST(ConvKernels, Float16InputsAccumulateInDoubleAndRoundOnce) {
  auto np = numpy_arrays(std::string(kNumpyConvTranspose) + R"(
x = rng.randn(1, 3, 7, 6).astype(np.float16); w = rng.randn(4, 3, 3, 3).astype(np.float16)
b = rng.randn(4).astype(np.float16)
save('x', x); save('w', w); save('b', b)
X, W = x.astype(np.float64), w.astype(np.float64)
Xp = np.pad(X, [(0, 0), (0, 0), (1, 1), (1, 1)])
y = np.zeros((1, 4, 7, 6))
for m in range(4):
    for i in range(7):
        for j in range(6):
            y[0, m, i, j] = np.sum(Xp[0, :, i:i + 3, j:j + 3] * W[m]) + float(b[m])
save('y', y.astype(np.float16))
wt = rng.randn(3, 2, 2, 2).astype(np.float16); save('wt', wt)
save('t', conv_transpose(X, wt.astype(np.float64), None, [2, 2], [1, 1], 1, [0, 0], [0, 0], [0, 0]).astype(np.float16))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float16[1,3,7,6] x, float16[4,3,3,3] w, float16[4] b, float16[3,2,2,2] wt)
      => (float16 y, float16 t) {
      y = Conv<pads = [1, 1, 1, 1]>(x, w, b)
      t = ConvTranspose<strides = [2, 2]>(x, wt)
    }
  )",
                                 feed_of(np, {"x", "w", "b", "wt"}));
  EXPECT_TRUE(tensors_identical(out.at("y"), np.at("y")));
  EXPECT_TRUE(tensors_identical(out.at("t"), np.at("t")));
}

// DeformConv per the spec: tap (a, b) of output (i, j) samples X bilinearly at
// (-pad + i * stride + a * dilation + dh, -pad + j * stride + b * dilation + dw), pixels
// outside reading 0, times the mask.
TEST(DeformConvKernel, SamplesOffsetTapsWithMaskGroupsAndOffsetGroups) {
  auto np = numpy_arrays(R"(
import math
def bilinear(img, y, x):
    H, W = img.shape; y0, x0 = math.floor(y), math.floor(x); v = 0.0
    for dy in (0, 1):
        for dx in (0, 1):
            yy, xx = y0 + dy, x0 + dx
            wy = (y - y0) if dy else 1 - (y - y0); wx = (x - x0) if dx else 1 - (x - x0)
            if 0 <= yy < H and 0 <= xx < W: v += wy * wx * img[yy, xx]
    return v
def deform_conv(x, w, off, b, mask, s, p, d, group, og):
    N, C, H, W = x.shape; M, cg, kh, kw = w.shape
    oh = (H + p[0] + p[2] - d[0] * (kh - 1) - 1) // s[0] + 1
    ow = (W + p[1] + p[3] - d[1] * (kw - 1) - 1) // s[1] + 1
    off = off.reshape(N, og, kh, kw, 2, oh, ow); mask = mask.reshape(N, og, kh, kw, oh, ow)
    y = np.zeros((N, M, oh, ow))
    for n in range(N):
        for m in range(M):
            g = m // (M // group)
            for i in range(oh):
                for j in range(ow):
                    acc = b[m]
                    for ci in range(cg):
                        c = g * cg + ci; o = c // (C // og)
                        for a in range(kh):
                            for bb in range(kw):
                                yy = -p[0] + i * s[0] + a * d[0] + off[n, o, a, bb, 0, i, j]
                                xx = -p[1] + j * s[1] + bb * d[1] + off[n, o, a, bb, 1, i, j]
                                acc += w[m, ci, a, bb] * mask[n, o, a, bb, i, j] * bilinear(x[n, c], yy, xx)
                    y[n, m, i, j] = acc
    return y
x = rng.randn(2, 4, 6, 7).astype(np.float32); w = rng.randn(6, 2, 3, 2).astype(np.float32)
b = rng.randn(6).astype(np.float32)
# pads [1, 0, 1, 1], strides [2, 1], dilations [1, 2]: output 3 x 6; offset_group 2.
off = (rng.randn(2, 2 * 3 * 2 * 2, 3, 6) * 1.5).astype(np.float32)
off[0, 0, 0, 0] = 9.0  # far outside: reads zeros
mask = rng.rand(2, 2 * 3 * 2, 3, 6).astype(np.float32)
save('x', x); save('w', w); save('b', b); save('off', off); save('mask', mask)
f = lambda a: a.astype(np.float64)
save('y', deform_conv(f(x), f(w), f(off), f(b), f(mask), [2, 1], [1, 0, 1, 1], [1, 2], 2, 2).astype(np.float32))
save('plain', deform_conv(f(x), f(w), f(off), np.zeros(6), np.ones((2, 12, 3, 6)), [2, 1], [1, 0, 1, 1], [1, 2], 2, 2).astype(np.float32))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 9, opset_import: ["" : 19]>
    g (float[2,4,6,7] x, float[6,2,3,2] w, float[6] b, float[2,24,3,6] off, float[2,12,3,6] mask)
      => (float y, float plain) {
      y = DeformConv<strides = [2, 1], pads = [1, 0, 1, 1], dilations = [1, 2], group = 2,
                     offset_group = 2>(x, w, off, b, mask)
      plain = DeformConv<strides = [2, 1], pads = [1, 0, 1, 1], dilations = [1, 2], group = 2,
                         offset_group = 2>(x, w, off)
    }
  )",
                                 feed_of(np, {"x", "w", "b", "off", "mask"}));
  EXPECT_TRUE(tensors_close(out.at("y"), np.at("y"), 1e-5, 1e-5));
  EXPECT_TRUE(tensors_close(out.at("plain"), np.at("plain"), 1e-5, 1e-5));
}

// An offset of NaN, an infinity or 1e30 puts the tap far outside, where it reads 0, as an
// offset of 1e6 does. (Casting such a coordinate to a pixel index was undefined: the
// sanitized suite, scripts/sanitize.sh, catches it there.)
TEST(DeformConvKernel, NonFiniteAndHugeOffsetsReadZeroAsFarOffsetsDo) {
  const char* model = R"(
    <ir_version: 9, opset_import: ["" : 19]>
    g (float[1,1,3,3] x, float[1,1,1,1] w, float[1,2,3,3] off) => (float y) {
      y = DeformConv(x, w, off)
    }
  )";
  TensorMap feed;
  feed.set("x", Tensor::from_vector<float>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}));
  feed.set("w", Tensor::from_vector<float>({1, 1, 1, 1}, {2}));
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> odd = {std::nanf(""), inf, -inf, 1e30f, -1e30f, 3e38f};
  std::vector<float> offsets(18, 0.25f), far = offsets;
  for (size_t i = 0; i < odd.size(); ++i) {
    offsets[i * 3] = odd[i];
    far[i * 3] = odd[i] < 0 ? -1e6f : 1e6f;
  }
  feed.set("off", Tensor::from_vector<float>({1, 2, 3, 3}, offsets));
  const Tensor y = run_text_model(model, feed).at("y");
  feed.set("off", Tensor::from_vector<float>({1, 2, 3, 3}, far));
  EXPECT_TRUE(tensors_identical(y, run_text_model(model, feed).at("y")));
}

TEST(QLinearConvKernel, RequantisesPerOutputChannelWithRoundHalfToEven) {
  auto np = numpy_arrays(R"(
x = rng.randint(0, 256, size=(1, 3, 5, 5)).astype(np.uint8)
w = rng.randint(-128, 128, size=(4, 3, 2, 2)).astype(np.int8)
b = rng.randint(-500, 500, size=(4,)).astype(np.int32)
xs, ys = np.float32(0.02), np.float32(0.5)
ws = np.array([0.01, 0.03, 0.005, 0.02], np.float32); wz = np.array([0, 3, -2, 1], np.int8)
xz, yz = np.uint8(120), np.int8(-3)
acc = np.zeros((1, 4, 4, 4), np.int64)
X = x.astype(np.int64) - int(xz)
for m in range(4):
    Wm = w[m].astype(np.int64) - int(wz[m])
    for i in range(4):
        for j in range(4):
            acc[0, m, i, j] = np.sum(X[0, :, i:i + 2, j:j + 2] * Wm) + b[m]
scale = float(xs) * ws.astype(np.float64) / float(ys)
y = np.clip(np.round(acc * scale.reshape(1, 4, 1, 1)) + int(yz), -128, 127).astype(np.int8)
ci = np.zeros((1, 4, 4, 4), np.int64)
for m in range(4):
    for i in range(4):
        for j in range(4):
            ci[0, m, i, j] = np.sum(X[0, :, i:i + 2, j:j + 2] * (w[m].astype(np.int64) - int(wz[m])))
for k, v in dict(x=x, w=w, b=b, xs=np.array(xs), ys=np.array(ys), ws=ws, wz=wz,
                 xz=np.array(xz), yz=np.array(yz), y=y, ci=ci.astype(np.int32)).items():
    save(k, v)
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (uint8[1,3,5,5] x, float xs, uint8 xz, int8[4,3,2,2] w, float[4] ws, int8[4] wz, float ys,
       int8 yz, int32[4] b) => (int8[1,4,4,4] y, int32[1,4,4,4] ci) {
      y = QLinearConv(x, xs, xz, w, ws, wz, ys, yz, b)
      ci = ConvInteger(x, w, xz, wz)
    }
  )",
                                 feed_of(np, {"x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"}));
  EXPECT_TRUE(tensors_identical(out.at("y"), np.at("y")));
  EXPECT_TRUE(tensors_identical(out.at("ci"), np.at("ci")));
}

template <typename F>
void expect_thread_independent(F run) {
  set_num_threads(1);
  TensorMap one = run();
  set_num_threads(4);
  TensorMap four = run();
  set_num_threads(0);
  for (const auto& [name, t] : one) EXPECT_TRUE(tensors_identical(four.at(name), t)) << name;
}

// Conv in the reference's order: each output from 0, adding w * x over k = (channel, tap) in
// increasing order, every product rounded before its add (NumPy has no fused multiply-add),
// then the bias. Bit-exact for double inputs on every path.
constexpr const char* kNumpyOrderedConv = R"(
def conv_ordered(x, w, b, group, strides, dil, pads):
    N, C, H, W = x.shape; M, cg, KH, KW = w.shape; mg = M // group
    xp = np.pad(x, [(0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])])
    OH = (H + pads[0] + pads[2] - dil[0] * (KH - 1) - 1) // strides[0] + 1
    OW = (W + pads[1] + pads[3] - dil[1] * (KW - 1) - 1) // strides[1] + 1
    y = np.zeros((N, M, OH, OW))
    for m in range(M):
        g = m // mg
        acc = np.zeros((N, OH, OW))
        for c in range(cg):
            for i in range(KH):
                for j in range(KW):
                    h0, w0 = i * dil[0], j * dil[1]
                    patch = xp[:, g * cg + c, h0:h0 + strides[0] * (OH - 1) + 1:strides[0],
                               w0:w0 + strides[1] * (OW - 1) + 1:strides[1]]
                    acc = acc + w[m, c, i, j] * patch
        y[:, m] = acc + b[m]
    return y
)";

// Depthwise (one map per group) and two maps per group take the direct path, not the GEMM;
// widths of 70 and 35 outputs cover its blocks of 32 and the positions after them.
TEST(ConvKernels, FewMapsPerGroupGiveTheGemmOrderBitsInDoubleAndFloat) {
  auto np = numpy_arrays(std::string(kNumpyOrderedConv) + R"(
x = rng.randn(2, 6, 9, 70); w1 = rng.randn(6, 1, 3, 3); w2 = rng.randn(6, 2, 3, 3)
b = rng.randn(6)
for name, v in [('x', x), ('w1', w1), ('w2', w2), ('b', b)]:
    save(name, v); save(name + 'f', v.astype(np.float32))
save('d1', conv_ordered(x, w1, b, 6, [1, 2], [2, 1], [1, 1, 2, 0]))
save('d2', conv_ordered(x, w2, b, 3, [2, 1], [1, 2], [0, 2, 1, 1]))
f = lambda v: v.astype(np.float32).astype(np.float64)
save('f1', conv_ordered(f(x), f(w1), f(b), 6, [1, 2], [2, 1], [1, 1, 2, 0]).astype(np.float32))
save('f2', conv_ordered(f(x), f(w2), f(b), 3, [2, 1], [1, 2], [0, 2, 1, 1]).astype(np.float32))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (double[2,6,9,70] x, double[6,1,3,3] w1, double[6,2,3,3] w2, double[6] b,
       float[2,6,9,70] xf, float[6,1,3,3] w1f, float[6,2,3,3] w2f, float[6] bf)
      => (double d1, double d2, float f1, float f2) {
      d1 = Conv<group = 6, strides = [1, 2], dilations = [2, 1], pads = [1, 1, 2, 0]>(x, w1, b)
      d2 = Conv<group = 3, strides = [2, 1], dilations = [1, 2], pads = [0, 2, 1, 1]>(x, w2, b)
      f1 = Conv<group = 6, strides = [1, 2], dilations = [2, 1], pads = [1, 1, 2, 0]>(xf, w1f, bf)
      f2 = Conv<group = 3, strides = [2, 1], dilations = [1, 2], pads = [0, 2, 1, 1]>(xf, w2f, bf)
    }
  )",
                                 feed_of(np, {"x", "w1", "w2", "b", "xf", "w1f", "w2f", "bf"}));
  for (const char* n : {"d1", "d2", "f1", "f2"})
    EXPECT_TRUE(tensors_identical(out.at(n), np.at(n))) << n;
}

TEST(ConvKernels, LargeConvAndConvTransposeGiveTheSameBitsOnOneAndFourThreads) {
  auto np = numpy_arrays(R"(
save('x', rng.randn(2, 32, 40, 40).astype(np.float32))
save('w', rng.randn(48, 16, 3, 3).astype(np.float32))
save('b', rng.randn(48).astype(np.float32))
save('wt', rng.randn(32, 12, 4, 4).astype(np.float32))
)");
  expect_thread_independent([&] {
    return run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[2,32,40,40] x, float[48,16,3,3] w, float[48] b, float[32,12,4,4] wt)
        => (float y, float t) {
        y = Conv<pads = [1, 1, 1, 1], group = 2, strides = [1, 2]>(x, w, b)
        t = ConvTranspose<strides = [2, 2], pads = [1, 1, 1, 1], group = 2>(x, wt)
      }
    )",
                          feed_of(np, {"x", "w", "b", "wt"}));
  });
}

TEST(ConvKernels, MismatchedShapesAreErrorsNamingTheNode) {
  TensorMap feed;
  feed.set("x", Tensor(DataType::kFloat32, {1, 3, 4, 4}));
  feed.set("w", Tensor(DataType::kFloat32, {2, 2, 3, 3}));
  std::string conv = error_of([&] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[1,3,4,4] x, float[2,2,3,3] w) => (float y) { y = Conv(x, w) }
    )",
                   feed);
  });
  EXPECT_NE(conv.find("X has 3 channels and W shape (2, 2, 3, 3) with group=1"), std::string::npos)
      << conv;
  std::string transpose = error_of([&] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[1,3,4,4] x, float[2,2,3,3] w) => (float y) { y = ConvTranspose(x, w) }
    )",
                   feed);
  });
  EXPECT_NE(transpose.find("W's dim 0 must equal the channels"), std::string::npos) << transpose;
}

}  // namespace
}  // namespace parity::testing
