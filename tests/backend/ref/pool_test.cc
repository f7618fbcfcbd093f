// Pooling features the ONNX 1.12 node tests do not reach: AveragePool's dilations (opset 19)
// with ceil_mode and count_include_pad, LpPool (p, opset 18 ceil_mode and dilations),
// GlobalLpPool, MaxRoiPool and float16 pooling, against NumPy written from the spec.
#include <gtest/gtest.h>

#include "ref_test_util.h"

namespace parity::testing {
namespace {

// Windows per the spec: output size floor or ceil of (in + pads - dilated extent) / stride + 1,
// a ceil-mode window that would start in the end padding dropped; taps outside the input are
// skipped (averages divide by the taps inside the input, or inside the padded input with
// count_include_pad).
constexpr const char* kNumpyWindows = R"(
import math, itertools
def windows(shape, k, s, p, d, ceil):
    n = len(k); outs = []
    for i in range(n):
        span = shape[i] + p[i] + p[i + n] - (d[i] * (k[i] - 1) + 1)
        o = (math.ceil(span / s[i]) if ceil else span // s[i]) + 1
        if ceil and (o - 1) * s[i] >= shape[i] + p[i]: o -= 1
        outs.append(o)
    return outs
def pool(x, k, s, p, d, ceil, reduce):
    n = len(k); outs = windows(x.shape[2:], k, s, p, d, ceil)
    y = np.zeros(x.shape[:2] + tuple(outs))
    for o in np.ndindex(*outs):
        inside, padded = [], 0
        for t in np.ndindex(*k):
            pos = [o[i] * s[i] + t[i] * d[i] - p[i] for i in range(n)]
            if all(0 <= pos[i] < x.shape[2 + i] for i in range(n)): inside.append(tuple(pos))
            if all(-p[i] <= pos[i] < x.shape[2 + i] + p[i + n] for i in range(n)): padded += 1
        vals = np.stack([x[(slice(None), slice(None)) + q] for q in inside], -1)
        y[(slice(None), slice(None)) + o] = reduce(vals, len(inside), padded)
    return y
)";

TEST(PoolKernels, AveragePoolDilationsWithCeilModeAndCountIncludePad) {
  auto np = numpy_arrays(std::string(kNumpyWindows) + R"(
x = rng.randn(2, 3, 11, 9).astype(np.float32); save('x', x)
X = x.astype(np.float64)
k, s, p, d = [3, 2], [2, 3], [1, 2, 2, 1], [2, 3]
save('avg', pool(X, k, s, p, d, True, lambda v, n, m: v.sum(-1) / n).astype(np.float32))
save('avg_pad', pool(X, k, s, p, d, True, lambda v, n, m: v.sum(-1) / m).astype(np.float32))
x16 = rng.randn(1, 2, 7, 8).astype(np.float16); save('x16', x16)
save('avg16', pool(x16.astype(np.float64), [2, 3], [1, 2], [0, 1, 1, 0], [3, 1], False, lambda v, n, m: v.sum(-1) / n).astype(np.float16))
save('max16', pool(x16.astype(np.float64), [2, 3], [1, 2], [0, 1, 1, 0], [3, 1], False, lambda v, n, m: v.max(-1)).astype(np.float16))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 9, opset_import: ["" : 19]>
    g (float[2,3,11,9] x, float16[1,2,7,8] x16) => (float avg, float avg_pad, float16 avg16, float16 max16) {
      avg = AveragePool<kernel_shape = [3, 2], strides = [2, 3], pads = [1, 2, 2, 1],
                        dilations = [2, 3], ceil_mode = 1>(x)
      avg_pad = AveragePool<kernel_shape = [3, 2], strides = [2, 3], pads = [1, 2, 2, 1],
                            dilations = [2, 3], ceil_mode = 1, count_include_pad = 1>(x)
      avg16 = AveragePool<kernel_shape = [2, 3], strides = [1, 2], pads = [0, 1, 1, 0],
                          dilations = [3, 1]>(x16)
      max16 = MaxPool<kernel_shape = [2, 3], strides = [1, 2], pads = [0, 1, 1, 0],
                      dilations = [3, 1]>(x16)
    }
  )",
                                 feed_of(np, {"x", "x16"}));
  EXPECT_TRUE(tensors_close(out.at("avg"), np.at("avg"), 1e-6, 1e-7));
  EXPECT_TRUE(tensors_close(out.at("avg_pad"), np.at("avg_pad"), 1e-6, 1e-7));
  EXPECT_TRUE(tensors_identical(out.at("avg16"), np.at("avg16")));
  EXPECT_TRUE(tensors_identical(out.at("max16"), np.at("max16")));
}

// MaxPool's scan rule on inputs full of ties, signed zeros and NaN: each window read in
// increasing (depth, row, column), the first maximum wins, a NaN once met stays. Without
// Indices the kernel folds row by row (pool.cc's pool_by_rows); with Indices it scans each
// window; both must give these bits, in 1, 2 and 3 spatial dims, float and int8.
TEST(PoolKernels, MaxPoolKeepsTheScansFirstMaximumSignedZerosAndNaN) {
  auto np = numpy_arrays(std::string(kNumpyWindows) + R"(
def scan_max(v, n, m):
    best = v[..., 0].copy()
    for i in range(1, v.shape[-1]):
        c = v[..., i]
        best = np.where((c > best) | (np.isnan(c) & ~np.isnan(best)), c, best)
    return best
choices = np.array([0.0, -0.0, 1.0, -1.0, np.nan, 0.5], np.float32)
x2 = rng.choice(choices, size=(2, 3, 13, 17)).astype(np.float32); save('x2', x2)
x1 = rng.choice(choices, size=(1, 2, 29)).astype(np.float32); save('x1', x1)
x3 = rng.choice(choices, size=(1, 2, 5, 6, 7)).astype(np.float32); save('x3', x3)
xi = rng.randint(-3, 3, size=(1, 2, 9, 10)).astype(np.int8); save('xi', xi)
save('m2', pool(x2.astype(np.float64), [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], True, scan_max).astype(np.float32))
save('d2', pool(x2.astype(np.float64), [2, 3], [3, 1], [1, 2, 0, 1], [2, 2], False, scan_max).astype(np.float32))
save('m1', pool(x1.astype(np.float64), [4], [3], [2, 1], [2], True, scan_max).astype(np.float32))
save('m3', pool(x3.astype(np.float64), [2, 3, 2], [1, 2, 2], [0, 1, 1, 1, 0, 1], [2, 1, 3], False, scan_max).astype(np.float32))
save('mi', pool(xi.astype(np.float64), [3, 2], [2, 1], [1, 0, 0, 1], [1, 1], False, scan_max).astype(np.int8))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 9, opset_import: ["" : 19]>
    g (float[2,3,13,17] x2, float[1,2,29] x1, float[1,2,5,6,7] x3, int8[1,2,9,10] xi)
      => (float m2, float m2_scan, int64 i2, float d2, float m1, float m3, float m3_scan,
          int64 i3, int8 mi) {
      m2 = MaxPool<kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], ceil_mode = 1>(x2)
      m2_scan, i2 = MaxPool<kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1],
                            ceil_mode = 1>(x2)
      d2 = MaxPool<kernel_shape = [2, 3], strides = [3, 1], pads = [1, 2, 0, 1],
                   dilations = [2, 2]>(x2)
      m1 = MaxPool<kernel_shape = [4], strides = [3], pads = [2, 1], dilations = [2],
                   ceil_mode = 1>(x1)
      m3 = MaxPool<kernel_shape = [2, 3, 2], strides = [1, 2, 2], pads = [0, 1, 1, 1, 0, 1],
                   dilations = [2, 1, 3]>(x3)
      m3_scan, i3 = MaxPool<kernel_shape = [2, 3, 2], strides = [1, 2, 2],
                            pads = [0, 1, 1, 1, 0, 1], dilations = [2, 1, 3]>(x3)
      mi = MaxPool<kernel_shape = [3, 2], strides = [2, 1], pads = [1, 0, 0, 1]>(xi)
    }
  )",
                                 feed_of(np, {"x2", "x1", "x3", "xi"}));
  EXPECT_TRUE(tensors_identical(out.at("m2"), np.at("m2")));
  EXPECT_TRUE(tensors_identical(out.at("m2_scan"), np.at("m2")));
  EXPECT_TRUE(tensors_identical(out.at("d2"), np.at("d2")));
  EXPECT_TRUE(tensors_identical(out.at("m1"), np.at("m1")));
  EXPECT_TRUE(tensors_identical(out.at("m3"), np.at("m3")));
  EXPECT_TRUE(tensors_identical(out.at("m3_scan"), np.at("m3")));
  EXPECT_TRUE(tensors_identical(out.at("mi"), np.at("mi")));
}

// AveragePool's sums in the reference's order: each window from 0, its taps in increasing
// (depth, row, column). Double inputs spread over 16 decades make the sums inexact, so any
// other order shows in the result's bits. pool.cc sums the inner columns of a row tap by tap
// across the row (sums_by_rows); it must keep each window's order.
TEST(PoolKernels, AveragePoolSumsEachWindowInTheScansOrder) {
  auto np = numpy_arrays(std::string(kNumpyWindows) + R"(
def ordered_mean(v, n, m, by_padded=False):
    s = np.zeros(v.shape[:-1])
    for i in range(v.shape[-1]): s = s + v[..., i]
    return s / (m if by_padded else n)
spread = lambda shape: rng.randn(*shape) * 10.0 ** rng.randint(-8, 8, size=shape)
X2 = spread((2, 3, 15, 19)); save('x2', X2)
X3 = spread((1, 2, 6, 7, 9)); save('x3', X3)
save('a2', pool(X2, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], True, ordered_mean))
save('p2', pool(X2, [3, 4], [2, 3], [1, 2, 2, 1], [2, 1], True,
                lambda v, n, m: ordered_mean(v, n, m, True)))
save('a3', pool(X3, [2, 3, 3], [1, 2, 2], [1, 1, 0, 0, 1, 1], [2, 1, 2], False, ordered_mean))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 9, opset_import: ["" : 19]>
    g (double[2,3,15,19] x2, double[1,2,6,7,9] x3) => (double a2, double p2, double a3) {
      a2 = AveragePool<kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1],
                       ceil_mode = 1>(x2)
      p2 = AveragePool<kernel_shape = [3, 4], strides = [2, 3], pads = [1, 2, 2, 1],
                       dilations = [2, 1], ceil_mode = 1, count_include_pad = 1>(x2)
      a3 = AveragePool<kernel_shape = [2, 3, 3], strides = [1, 2, 2], pads = [1, 1, 0, 0, 1, 1],
                       dilations = [2, 1, 2]>(x3)
    }
  )",
                                 feed_of(np, {"x2", "x3"}));
  for (const char* n : {"a2", "p2", "a3"}) EXPECT_TRUE(tensors_identical(out.at(n), np.at(n))) << n;
}

TEST(PoolKernels, LpPoolAndGlobalLpPoolTakeThePNormOfEachWindow) {
  auto np = numpy_arrays(std::string(kNumpyWindows) + R"(
x = rng.randn(2, 2, 9, 10).astype(np.float32); save('x', x)
X = x.astype(np.float64)
lp = lambda q: (lambda v, n, m: (np.abs(v) ** q).sum(-1) ** (1.0 / q))
save('lp2', pool(X, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], False, lp(2)).astype(np.float32))
save('lp3', pool(X, [2, 3], [3, 2], [0, 1, 2, 0], [2, 2], True, lp(3)).astype(np.float32))
save('glp1', np.abs(X).sum((2, 3), keepdims=True).astype(np.float32))
save('glp2', np.sqrt((X ** 2).sum((2, 3), keepdims=True)).astype(np.float32))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 9, opset_import: ["" : 18]>
    g (float[2,2,9,10] x) => (float lp2, float lp3, float glp1, float glp2) {
      lp2 = LpPool<kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]>(x)
      lp3 = LpPool<kernel_shape = [2, 3], strides = [3, 2], pads = [0, 1, 2, 0], dilations = [2, 2],
                   ceil_mode = 1, p = 3>(x)
      glp1 = GlobalLpPool<p = 1>(x)
      glp2 = GlobalLpPool(x)
    }
  )",
                                 feed_of(np, {"x"}));
  for (const char* n : {"lp2", "lp3", "glp1", "glp2"})
    EXPECT_TRUE(tensors_close(out.at(n), np.at(n), 1e-6, 1e-7)) << n;
}

// MaxRoiPool per its definition (Caffe's ROIPooling): ROI corners scaled and rounded half away
// from zero, size max(end - start + 1, 1), bin [floor(i * size / pooled), ceil((i + 1) * size /
// pooled)) shifted by the start and clipped to the image; an empty bin gives 0. A ROI with a
// NaN corner is NaN; corners of 1e30 and 3e38 pixels (held at 2^52 by the kernel, whose int64
// sums overflowed before) bin as Python's exact integers do.
TEST(PoolKernels, MaxRoiPoolTakesTheMaximumOfEachRoundedBin) {
  auto np = numpy_arrays(R"(
import math
x = rng.randn(2, 3, 8, 10).astype(np.float32)
rois = np.array([[0, 1.2, 0.4, 6.6, 5.5], [1, -2, -3, 3.0, 2.4], [1, 7.5, 6.4, 30, 20],
                 [0, 4.5, 4.5, 4.5, 4.5], [0, np.nan, 0, 3, 3], [1, -1e30, -1e30, 1e30, 1e30],
                 [0, 0, 0, 3e38, 2]], np.float32)
save('x', x); save('rois', rois)
rnd = lambda v: int(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)
scale = 0.5
y = np.zeros((7, 3, 2, 3), np.float32)
for r in range(7):
    if np.isnan(rois[r]).any(): y[r] = np.nan; continue
    n = int(rois[r, 0]); x1, y1, x2, y2 = [rnd(float(v) * scale) for v in rois[r, 1:]]
    bh = max(y2 - y1 + 1, 1) / 2; bw = max(x2 - x1 + 1, 1) / 3
    for ph in range(2):
        for pw in range(3):
            hs = min(max(math.floor(ph * bh) + y1, 0), 8); he = min(max(math.ceil((ph + 1) * bh) + y1, 0), 8)
            ws = min(max(math.floor(pw * bw) + x1, 0), 10); we = min(max(math.ceil((pw + 1) * bw) + x1, 0), 10)
            if he > hs and we > ws: y[r, :, ph, pw] = x[n, :, hs:he, ws:we].max((1, 2))
save('y', y)
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3,8,10] x, float[7,5] rois) => (float y) {
      y = MaxRoiPool<pooled_shape = [2, 3], spatial_scale = 0.5>(x, rois)
    }
  )",
                                 feed_of(np, {"x", "rois"}));
  EXPECT_TRUE(tensors_identical(out.at("y"), np.at("y")));
}

}  // namespace
}  // namespace parity::testing
