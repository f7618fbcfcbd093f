// Image-geometry ops the ONNX 1.12 node tests do not reach: AffineGrid and Col2Im (opsets 20
// and 18), RoiAlign's max mode and version 10's output_half_pixel, and MaxUnpool undoing
// MaxPool into a larger output_shape; NumPy oracles written from the spec.
#include <gtest/gtest.h>

#include "ref_test_util.h"

namespace parity::testing {
namespace {

TEST(AffineGridKernel, TransformsTheNormalisedBaseGridIn2DAnd3D) {
  auto np = numpy_arrays(R"(
def base(L, ac):
    if ac: return np.array([-1.0]) if L == 1 else np.linspace(-1, 1, L)
    return (2 * np.arange(L) + 1) / L - 1
def affine_grid(theta, size, ac):
    spatial = size[2:]; r = len(spatial)
    axes = [base(L, ac) for L in spatial]
    mesh = np.meshgrid(*axes, indexing='ij')           # (depth,) height, width
    pts = np.stack([m for m in mesh[::-1]] + [np.ones(mesh[0].shape)], -1)  # x, y, (z,) 1
    return np.einsum('...j,nkj->n...k', pts, theta)
t2 = rng.randn(2, 2, 3).astype(np.float32); t3 = rng.randn(1, 3, 4).astype(np.float32)
save('t2', t2); save('t3', t3)
save('s2', np.array([2, 5, 4, 6], np.int64)); save('s3', np.array([1, 1, 3, 1, 5], np.int64))
save('g2', affine_grid(t2.astype(np.float64), [2, 5, 4, 6], False).astype(np.float32))
save('g2a', affine_grid(t2.astype(np.float64), [2, 5, 4, 6], True).astype(np.float32))
save('g3', affine_grid(t3.astype(np.float64), [1, 1, 3, 1, 5], False).astype(np.float32))
save('g3a', affine_grid(t3.astype(np.float64), [1, 1, 3, 1, 5], True).astype(np.float32))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 9, opset_import: ["" : 20]>
    g (float[2,2,3] t2, int64[4] s2, float[1,3,4] t3, int64[5] s3)
      => (float g2, float g2a, float g3, float g3a) {
      g2 = AffineGrid(t2, s2)
      g2a = AffineGrid<align_corners = 1>(t2, s2)
      g3 = AffineGrid(t3, s3)
      g3a = AffineGrid<align_corners = 1>(t3, s3)
    }
  )",
                                 feed_of(np, {"t2", "s2", "t3", "s3"}));
  for (const char* n : {"g2", "g2a", "g3", "g3a"})
    EXPECT_TRUE(tensors_close(out.at(n), np.at(n), 1e-6, 1e-6)) << n;
}

TEST(Col2ImKernel, SumsOverlappingBlocksBackIn2DAnd3D) {
  auto np = numpy_arrays(R"(
def col2im(x, image, block, s, d, p):
    r = len(image); N = x.shape[0]; K = int(np.prod(block)); C = x.shape[1] // K
    pos = [(image[i] + p[i] + p[i + r] - d[i] * (block[i] - 1) - 1) // s[i] + 1 for i in range(r)]
    y = np.zeros((N, C) + tuple(image))
    cols = x.reshape((N, C) + tuple(block) + tuple(pos))
    for k in np.ndindex(*block):
        for l in np.ndindex(*pos):
            q = [l[i] * s[i] + k[i] * d[i] - p[i] for i in range(r)]
            if all(0 <= q[i] < image[i] for i in range(r)):
                y[(slice(None), slice(None)) + tuple(q)] += cols[(slice(None), slice(None)) + k + l]
    return y
# 2-D: image 5 x 6, block 2 x 3, strides [1, 2], dilations [2, 1], pads [1, 0, 0, 1] -> 4 x 3 positions
x2 = rng.randn(2, 3 * 6, 12).astype(np.float32); save('x2', x2)
save('y2', col2im(x2.astype(np.float64), [5, 6], [2, 3], [1, 2], [2, 1], [1, 0, 0, 1]).astype(np.float32))
# 3-D: image 3 x 4 x 4, block 2 x 2 x 2, stride 1 -> 2 x 3 x 3 positions
x3 = rng.randn(1, 2 * 8, 18).astype(np.float32); save('x3', x3)
save('y3', col2im(x3.astype(np.float64), [3, 4, 4], [2, 2, 2], [1, 1, 1], [1, 1, 1], [0] * 6).astype(np.float32))
save('i2', np.array([5, 6], np.int64)); save('b2', np.array([2, 3], np.int64))
save('i3', np.array([3, 4, 4], np.int64)); save('b3', np.array([2, 2, 2], np.int64))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[2,18,12] x2, int64[2] i2, int64[2] b2, float[1,16,18] x3, int64[3] i3, int64[3] b3)
      => (float y2, float y3) {
      y2 = Col2Im<strides = [1, 2], dilations = [2, 1], pads = [1, 0, 0, 1]>(x2, i2, b2)
      y3 = Col2Im(x3, i3, b3)
    }
  )",
                                 feed_of(np, {"x2", "i2", "b2", "x3", "i3", "b3"}));
  EXPECT_TRUE(tensors_close(out.at("y2"), np.at("y2"), 1e-6, 1e-7));
  EXPECT_TRUE(tensors_close(out.at("y3"), np.at("y3"), 1e-6, 1e-7));
}

// RoiAlign as the spec's reference computes it: sample points bilinearly interpolated from the
// four pixels around them (clamped at the edges, zero more than a pixel outside); avg averages
// the samples, max keeps the largest weighted corner of any sample. (It raises on an image
// without pixels and on a point at a NaN coordinate.)
constexpr const char* kRoiAlignNumpy = R"(
import math
def roi_align(x, rois, bi, oh, ow, sr, scale, half, mode):
    H, W = x.shape[2:]; off = 0.5 if half else 0.0
    scale = float(np.float32(scale))  # the attribute is a float
    y = np.zeros((len(rois), x.shape[1], oh, ow))
    for r, (x1, y1, x2, y2) in enumerate(rois.astype(np.float64)):
        sx, sy = x1 * scale - off, y1 * scale - off
        rw, rh = x2 * scale - off - sx, y2 * scale - off - sy
        if not half: rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / oh, rw / ow
        gh = sr if sr > 0 else math.ceil(bh); gw = sr if sr > 0 else math.ceil(bw)
        for ph in range(oh):
            for pw in range(ow):
                vals = []
                for iy in range(gh):
                    for ix in range(gw):
                        yy = sy + ph * bh + (iy + 0.5) * bh / gh; xx = sx + pw * bw + (ix + 0.5) * bw / gw
                        if yy < -1 or yy > H or xx < -1 or xx > W:
                            vals.append(np.zeros((4, x.shape[1]))); continue
                        yy, xx = max(yy, 0.0), max(xx, 0.0)
                        yl, xl = int(yy), int(xx)
                        if yl >= H - 1: yl = yh = H - 1; yy = float(yl)
                        else: yh = yl + 1
                        if xl >= W - 1: xl = xh = W - 1; xx = float(xl)
                        else: xh = xl + 1
                        ly, lx = yy - yl, xx - xl
                        img = x[bi[r]].astype(np.float64)
                        vals.append(np.stack([(1 - ly) * (1 - lx) * img[:, yl, xl], (1 - ly) * lx * img[:, yl, xh],
                                              ly * (1 - lx) * img[:, yh, xl], ly * lx * img[:, yh, xh]]))
                v = np.stack(vals)  # samples, 4, C
                y[r, :, ph, pw] = v.sum((0, 1)) / max(gh * gw, 1) if mode == 'avg' else v.max(1).max(0)
    return y
)";

TEST(RoiAlignKernel, MaxModeAndOutputHalfPixel) {
  auto np = numpy_arrays(std::string(kRoiAlignNumpy) + R"(
x = rng.randn(2, 3, 7, 9).astype(np.float32)
rois = np.array([[0.5, 1.0, 6.2, 5.1], [2.0, 0.0, 3.0, 1.5], [-1.0, -2.0, 12.0, 9.0]], np.float32)
bi = np.array([1, 0, 1], np.int64)
save('x', x); save('rois', rois); save('bi', bi)
save('mx', roi_align(x, rois, bi, 2, 3, 2, 0.8, True, 'max').astype(np.float32))
save('avg10', roi_align(x, rois, bi, 3, 2, 0, 0.8, False, 'avg').astype(np.float32))
)");
  TensorMap feed = feed_of(np, {"x", "rois", "bi"});
  TensorMap mx = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (float[2,3,7,9] x, float[3,4] rois, int64[3] bi) => (float mx) {
      mx = RoiAlign<mode = "max", output_height = 2, output_width = 3, sampling_ratio = 2,
                    spatial_scale = 0.8>(x, rois, bi)
    }
  )",
                                feed);
  EXPECT_TRUE(tensors_close(mx.at("mx"), np.at("mx"), 1e-6, 1e-7));
  TensorMap avg = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 10]>
    g (float[2,3,7,9] x, float[3,4] rois, int64[3] bi) => (float avg10) {
      avg10 = RoiAlign<output_height = 3, output_width = 2, spatial_scale = 0.8>(x, rois, bi)
    }
  )",
                                 feed);
  EXPECT_TRUE(tensors_close(avg.at("avg10"), np.at("avg10"), 1e-6, 1e-7));
}

// fuzz_prepare (AddressSanitizer): an image of height 0 was read at pixel -1. Without pixels
// every point reads 0; a point at a NaN coordinate makes its bin NaN and leaves the other
// ROIs as the reference computes them, in both modes.
TEST(RoiAlignKernel, AnImageWithoutPixelsReadsZeroAndANaNRoiGivesNaNBins) {
  auto np = numpy_arrays(std::string(kRoiAlignNumpy) + R"(
x = rng.randn(1, 2, 4, 5).astype(np.float32)
rois = np.array([[np.nan, 0.0, 3.0, 3.0], [0.5, 0.5, 3.5, 2.5], [np.inf, 0.0, np.inf, 2.0]], np.float32)
bi = np.zeros(3, np.int64)
save('x', x); save('rois', rois); save('bi', bi)
for mode in ('avg', 'max'):
    y = np.full((3, 2, 2, 3), np.nan)
    y[1:2] = roi_align(x, rois[1:2], bi[1:2], 2, 3, 2, 1.0, True, mode)
    save(mode, y.astype(np.float32))
)");
  TensorMap feed = feed_of(np, {"x", "rois", "bi"});
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (float[1,2,4,5] x, float[3,4] rois, int64[3] bi) => (float avg, float max) {
      avg = RoiAlign<output_height = 2, output_width = 3, sampling_ratio = 2>(x, rois, bi)
      max = RoiAlign<mode = "max", output_height = 2, output_width = 3, sampling_ratio = 2>(
          x, rois, bi)
    }
  )",
                                 feed);
  EXPECT_TRUE(tensors_close(out.at("avg"), np.at("avg"), 1e-6, 1e-7));
  EXPECT_TRUE(tensors_close(out.at("max"), np.at("max"), 1e-6, 1e-7));

  feed.set("x", Tensor(DataType::kFloat32, {1, 2, 0, 5}));
  Tensor rois(DataType::kFloat32, {3, 4});
  float* r = rois.data<float>();
  for (int i = 0; i < 3; ++i) {
    // From (0, 0) to (4, 2 + i): some points lie within a pixel of the empty image, where
    // the old code read pixel -1.
    r[i * 4 + 2] = 4.0f;
    r[i * 4 + 3] = 2.0f + float(i);
  }
  feed.set("rois", rois);
  out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (float[1,2,0,5] x, float[3,4] rois, int64[3] bi) => (float avg, float max) {
      avg = RoiAlign<output_height = 2, output_width = 3, sampling_ratio = 2>(x, rois, bi)
      max = RoiAlign<mode = "max", output_height = 2, output_width = 3>(x, rois, bi)
    }
  )",
                       feed);
  const Tensor zeros(DataType::kFloat32, {3, 2, 2, 3});
  EXPECT_TRUE(tensors_identical(out.at("avg"), zeros));
  EXPECT_TRUE(tensors_identical(out.at("max"), zeros));
}

TEST(MaxUnpoolKernel, UndoesMaxPoolIntoALargerOutputShape) {
  auto np = numpy_arrays(R"(
x = rng.randn(2, 3, 6, 8).astype(np.float32); save('x', x)
save('shape', np.array([2, 3, 7, 9], np.int64))
# MaxPool 2x2 stride 2 keeps each window's maximum at its place; the rest is zero.
y = np.zeros((2, 3, 7, 9), np.float32)
for i in range(3):
    for j in range(4):
        win = x[:, :, 2 * i:2 * i + 2, 2 * j:2 * j + 2].reshape(2, 3, 4)
        a = win.argmax(-1)
        for n in range(2):
            for c in range(3):
                y[n, c, 2 * i + a[n, c] // 2, 2 * j + a[n, c] % 2] = win[n, c, a[n, c]]
save('y', y)
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3,6,8] x, int64[4] shape) => (float y) {
      p, i = MaxPool<kernel_shape = [2, 2], strides = [2, 2]>(x)
      y = MaxUnpool<kernel_shape = [2, 2], strides = [2, 2]>(p, i, shape)
    }
  )",
                                 feed_of(np, {"x", "shape"}));
  EXPECT_TRUE(tensors_identical(out.at("y"), np.at("y")));
}

}  // namespace
}  // namespace parity::testing
