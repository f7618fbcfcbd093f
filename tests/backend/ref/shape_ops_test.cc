// Tensor-manipulation kernels on what the ONNX node tests leave out: Split's num_outputs (18),
// Pad's axes (18) and wrap mode (19), CenterCropPad (18), and the attribute forms of the older
// opsets. Expected values are computed by NumPy at test time from the ONNX specification.
#include <gtest/gtest.h>

#include "core/thread_pool.h"
#include "ref_test_util.h"

namespace parity::testing {
namespace {

TensorMap feed_from(const std::map<std::string, Tensor>& np,
                    std::initializer_list<const char*> names) {
  TensorMap feed;
  for (const char* n : names) feed.set(n, np.at(n));
  return feed;
}

void expect_identical(const TensorMap& out, const std::map<std::string, Tensor>& np,
                      std::initializer_list<const char*> names) {
  for (const char* n : names) EXPECT_TRUE(tensors_identical(out.at(n), np.at(n))) << n;
}

TEST(SplitKernel, NumOutputsGivesPartsOfCeilSizeWithASmallerLast) {
  // Split-18: with num_outputs n every part has ceil(dim / n) rows but the last, which has
  // what is left.
  auto np = numpy_arrays(R"(
x = rng.randn(7, 3).astype(np.float32); save('x', x)
c = -(-7 // 3)
for i in range(3): save('p%d' % i, x[i * c:(i + 1) * c])
y = rng.randn(2, 8).astype(np.float32); save('y', y)
for i in range(4): save('q%d' % i, y[:, 2 * i:2 * i + 2])
save('s0', y[:, :5]); save('s1', y[:, 5:])
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[7,3] x, float[2,8] y) => (float p0, float p1, float p2, float q0, float q1, float q2,
                                       float q3, float s0, float s1)
      <int64[2] sizes = {5, 3}> {
      p0, p1, p2 = Split<axis = 0, num_outputs = 3>(x)
      q0, q1, q2, q3 = Split<axis = -1, num_outputs = 4>(y)
      s0, s1 = Split<axis = 1>(y, sizes)
    }
  )",
                                 feed_from(np, {"x", "y"}));
  expect_identical(out, np, {"p0", "p1", "p2", "q0", "q1", "q2", "q3", "s0", "s1"});
}

TEST(SplitKernel, RejectsNumOutputsThatDisagreeWithTheNodeAndUnevenDefaultSplits) {
  TensorMap feed;
  feed.set("x", Tensor(DataType::kFloat32, {7}));
  std::string message = error_of([&] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 18]>
      g (float[7] x) => (float a, float b) { a, b = Split<num_outputs = 3>(x) }
    )",
                   feed);
  });
  EXPECT_NE(message.find("attribute 'num_outputs' is 3 but the node has 2 outputs"),
            std::string::npos)
      << message;
  message = error_of([&] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[7] x) => (float a, float b) { a, b = Split(x) }
    )",
                   feed);
  });
  EXPECT_NE(message.find("axis of size 7 cannot be split into 2 equal parts"), std::string::npos)
      << message;
}

// NumPy padding per ONNX's Pad: pads are all begins then all ends for `axes`; a negative pad
// crops. np.pad cannot crop, so positive pads are applied first and negative ones sliced off;
// wrap indexes the input as a torus.
constexpr const char* kNumpyPad = R"(
def onnx_pad(x, pads, mode, value=0, axes=None):
    axes = list(range(x.ndim)) if axes is None else [a % x.ndim for a in axes]
    n = len(axes)
    begin = [0] * x.ndim; end = [0] * x.ndim
    for i, a in enumerate(axes):
        begin[a] = pads[i]; end[a] = pads[i + n]
    if mode == 'wrap':  # a torus: numpy 1.24's np.pad is not periodic for pads past the axis
        for a in range(x.ndim):
            x = np.take(x, (np.arange(x.shape[a] + begin[a] + end[a]) - begin[a]) % x.shape[a], a)
        return x
    width = [(max(b, 0), max(e, 0)) for b, e in zip(begin, end)]
    kw = {'constant_values': value} if mode == 'constant' else {}
    y = np.pad(x, width, mode=mode, **kw)
    crop = [slice(max(-b, 0), y.shape[d] - max(-e, 0))
            for d, (b, e) in enumerate(zip(begin, end))]
    return y[tuple(crop)]
)";

TEST(PadKernel, AxesInputAndEveryModeIncludingWrapMatchNumPy) {
  auto np = numpy_arrays(std::string(kNumpyPad) + R"(
x = rng.randn(3, 4, 5).astype(np.float32); save('x', x)
pads = [2, 1, 7, -1]  # axis -1: begin 2, end 7 (more than the axis); axis 0: begin 1, crop 1
for mode in ['constant', 'reflect', 'edge', 'wrap']:
    save(mode, onnx_pad(x, pads, mode, np.float32(2.5), axes=[-1, 0]))
save('all_axes', onnx_pad(x, [0, 1, 1, 1, 0, 2], 'wrap'))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 19]>
    g (float[3,4,5] x) => (float constant, float reflect, float edge, float wrap, float all_axes)
      <int64[4] pads = {2, 1, 7, -1}, int64[2] axes = {-1, 0}, float value = {2.5},
       int64[6] all_pads = {0, 1, 1, 1, 0, 2}> {
      constant = Pad<mode = "constant">(x, pads, value, axes)
      reflect = Pad<mode = "reflect">(x, pads, value, axes)
      edge = Pad<mode = "edge">(x, pads, value, axes)
      wrap = Pad<mode = "wrap">(x, pads, value, axes)
      all_axes = Pad<mode = "wrap">(x, all_pads)
    }
  )",
                                 feed_from(np, {"x"}));
  expect_identical(out, np, {"constant", "reflect", "edge", "wrap", "all_axes"});
}

TEST(PadKernel, WrapNeedsOpset19AndPadsMustFitTheAxes) {
  TensorMap feed;
  feed.set("x", Tensor(DataType::kFloat32, {2, 3}));
  std::string message = error_of([&] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 18]>
      g (float[2,3] x) => (float y) <int64[4] pads = {0, 1, 0, 1}> {
        y = Pad<mode = "wrap">(x, pads)
      }
    )",
                   feed);
  });
  EXPECT_NE(message.find("attribute 'mode' is 'wrap'; valid modes: constant, reflect, edge"),
            std::string::npos)
      << message;
  message = error_of([&] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 19]>
      g (float[2,3] x) => (float y) <int64[2] pads = {0, 1}> { y = Pad(x, pads) }
    )",
                   feed);
  });
  EXPECT_NE(message.find("pads [0, 1] has 2 values; the 2 padded axes need 4"), std::string::npos)
      << message;
  message = error_of([&] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 19]>
      g (float[2,3] x) => (float y) <int64[4] pads = {0, -2, 0, -2}> { y = Pad(x, pads) }
    )",
                   feed);
  });
  EXPECT_NE(message.find("remove more than the axis holds"), std::string::npos) << message;
}

TEST(CenterCropPadKernel, CropsAndPadsAroundTheCentreLikeTheSpec) {
  // The specification's rule: the output holds the input centred; an odd difference puts the
  // extra row at the end side, both when cropping and when padding (with zeros).
  auto np = numpy_arrays(R"(
def center_crop_pad(x, shape, axes):
    axes = [a % x.ndim for a in axes]
    out_shape = list(x.shape); src = [slice(None)] * x.ndim; dst = [slice(None)] * x.ndim
    for a, s in zip(axes, shape):
        d = x.shape[a]
        out_shape[a] = s
        if s < d:
            src[a] = slice((d - s) // 2, (d - s) // 2 + s)
        elif s > d:
            dst[a] = slice((s - d) // 2, (s - d) // 2 + d)
    y = np.zeros(out_shape, dtype=x.dtype)
    y[tuple(dst)] = x[tuple(src)]
    return y
x = rng.randint(-100, 100, size=(5, 6, 3)).astype(np.int32); save('x', x)
save('both', center_crop_pad(x, [2, 9], [0, 1]))
save('odd', center_crop_pad(x, [4, 3, 6], [0, 1, 2]))
save('last', center_crop_pad(x, [8], [-1]))
h = rng.randn(4, 7).astype(np.float16); save('h', h)
save('half', center_crop_pad(h, [3, 10], [0, 1]))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (int32[5,6,3] x, float16[4,7] h) => (int32 both, int32 odd, int32 last, float16 half)
      <int64[2] s2 = {2, 9}, int64[3] s3 = {4, 3, 6}, int64[1] s1 = {8}, int64[2] sh = {3, 10}> {
      both = CenterCropPad<axes = [0, 1]>(x, s2)
      odd = CenterCropPad(x, s3)
      last = CenterCropPad<axes = [-1]>(x, s1)
      half = CenterCropPad(h, sh)
    }
  )",
                                 feed_from(np, {"x", "h"}));
  expect_identical(out, np, {"both", "odd", "last", "half"});
}

// Few large rows (axis 0: one row) split each block's copy over the threads: the bytes are
// NumPy's on 1, 2 and 4 threads, with an empty part and a part of one row among them.
TEST(ConcatKernel, FewLargeRowsSplitOverThreadsMatchNumPy) {
  auto np = numpy_arrays(R"(
a = rng.rand(300, 257).astype(np.float32); a.reshape(-1)[:3] = [np.nan, -0.0, np.inf]
b = rng.rand(5, 257).astype(np.float32); e = np.zeros((0, 257), np.float32)
c = rng.randint(-9, 9, (3, 40000)).astype(np.int64); d = rng.randint(-9, 9, (3, 1)).astype(np.int64)
save('a', a); save('f', a[:1]); save('b', b); save('e', e); save('c', c); save('d', d)
save('rows', np.concatenate([a, e, b, a[:1]], axis=0))
save('cols', np.concatenate([c, d, c], axis=1))
)");
  const std::string model = R"(
    <ir_version: 9, opset_import: ["" : 13]>
    g (float[300,257] a, float[1,257] f, float[5,257] b, float[0,257] e, int64[3,40000] c, int64[3,1] d)
        => (float rows, int64 cols) {
      rows = Concat<axis = 0>(a, e, b, f)
      cols = Concat<axis = 1>(c, d, c)
    }
  )";
  const TensorMap feed = feed_of(np, {"a", "f", "b", "e", "c", "d"});
  for (int threads : {1, 2, 4}) {
    set_num_threads(threads);
    TensorMap out = run_text_model(model, feed);
    EXPECT_TRUE(tensors_identical(out.at("rows"), np.at("rows"))) << threads << " threads";
    EXPECT_TRUE(tensors_identical(out.at("cols"), np.at("cols"))) << threads << " threads";
  }
  set_num_threads(0);
}

TEST(ShapeKernels, OlderOpsetsTakeAttributesWhereLaterOnesTakeInputs) {
  // Squeeze/Unsqueeze axes (attribute before 13), Split sizes (attribute 2..12), Slice
  // starts/ends/axes (attribute before 10), Pad pads/value (attribute before 11), Tile's
  // tiles/axis inputs (before 6), TopK's k (attribute before 10).
  auto np = numpy_arrays(R"(
x = rng.randn(3, 1, 4).astype(np.float32); save('x', x)
save('sq', x[:, 0, :]); save('us', x[None, :, :, :, None])
save('sp0', x[:, :, :1]); save('sp1', x[:, :, 1:])
save('sl', x[1:-1, :, -3:100])
save('pd', np.pad(x, [(1, 0), (0, 0), (0, 2)], constant_values=np.float32(-1.5)))
save('tl', np.tile(x, (1, 1, 3)))
idx = np.argsort(-x, axis=-1, kind='stable')[..., :2]
save('tv', np.take_along_axis(x, idx, -1)); save('ti', idx.astype(np.int64))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 9]>
    g (float[3,1,4] x) => (float sq, float us, float sp0, float sp1, float sl, float pd, float tv,
                           int64 ti) {
      sq = Squeeze<axes = [1]>(x)
      us = Unsqueeze<axes = [0, 4]>(x)
      sp0, sp1 = Split<axis = 2, split = [1, 3]>(x)
      sl = Slice<starts = [1, -3], ends = [-1, 100], axes = [0, 2]>(x)
      pd = Pad<pads = [1, 0, 0, 0, 0, 2], value = -1.5>(x)
      tv, ti = TopK<k = 2>(x)
    }
  )",
                                 feed_from(np, {"x"}));
  expect_identical(out, np, {"sq", "us", "sp0", "sp1", "sl", "pd", "tv", "ti"});
  // Tile version 1 (replaced at opset 6) copies along one axis given as an input.
  TensorMap old = run_text_model(R"(
    <ir_version: 3, opset_import: ["" : 5]>
    g (float[3,1,4] x) => (float tl) <int64 tiles = {3}, int64 axis = {2}> {
      tl = Tile(x, tiles, axis)
    }
  )",
                                 feed_from(np, {"x"}));
  EXPECT_TRUE(tensors_identical(old.at("tl"), np.at("tl")));
}

}  // namespace
}  // namespace parity::testing
