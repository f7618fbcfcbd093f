// Resize 18/19 features the ONNX 1.12 node tests do not reach (antialias, axes,
// keep_aspect_ratio_policy, half_pixel_symmetric, float16) and GridSample 20 on 3-D volumes,
// against NumPy oracles written from the operator specifications and run at test time.
#include <gtest/gtest.h>

#include "core/thread_pool.h"
#include "ref_test_util.h"

namespace parity::testing {
namespace {

// Resize per the spec: each resized axis is a weight matrix [out, in] built from the
// coordinate transform and the interpolation kernel (edge-padded taps, antialias stretching
// the kernel by 1/scale when shrinking), applied axis by axis in float64.
constexpr const char* kNumpyResize = R"(
import math
def cubic_k(x, A):
    x = abs(x)
    if x <= 1: return (A + 2) * x**3 - (A + 3) * x**2 + 1
    if x < 2: return A * x**3 - 5 * A * x**2 + 8 * A * x - 4 * A
    return 0.0
def axis_matrix(n_in, n_out, scale, mode, coord, antialias, A, exclude, out_width):
    M = np.zeros((n_out, n_in))
    for x in range(n_out):
        if coord == 'half_pixel': s = (x + 0.5) / scale - 0.5
        elif coord == 'asymmetric': s = x / scale
        elif coord == 'align_corners': s = 0.0 if out_width == 1 else x * (n_in - 1) / (out_width - 1)
        elif coord == 'half_pixel_symmetric':
            adj = n_out / out_width
            s = n_in / 2 * (1 - adj) + (x + 0.5) / scale - 0.5
        base = math.floor(s); ratio = s - base
        if ratio == 0: base -= 1; ratio = 1.0
        sc = min(scale, 1.0) if antialias else 1.0
        if mode == 'nearest':
            taps = [(base + 1 if ratio > 0.5 else base, 1.0)]
        else:
            support = 1 if mode == 'linear' else 2
            start = math.floor(-support / sc) + 1
            taps = []
            for i in range(start, 2 - start):
                d = (i - ratio) * sc
                w = max(0.0, 1 - abs(d)) if mode == 'linear' else cubic_k(d, A)
                taps.append((base + i, w))
            if exclude: taps = [(j, w if 0 <= j < n_in else 0.0) for j, w in taps]
            if antialias or exclude:
                total = sum(w for _, w in taps); taps = [(j, w / total) for j, w in taps]
        for j, w in taps: M[x, min(max(j, 0), n_in - 1)] += w
    return M
def resize(x, mode, axes, scales=None, sizes=None, policy='stretch', coord='half_pixel',
           antialias=False, A=-0.75, exclude=False):
    y = x.astype(np.float64)
    r = x.ndim
    outs, scs, widths = {}, {}, {}
    if sizes is not None:
        ratios = [sizes[i] / x.shape[a] for i, a in enumerate(axes)]
        if policy == 'stretch':
            for i, a in enumerate(axes): outs[a] = sizes[i]; scs[a] = ratios[i]; widths[a] = sizes[i]
        else:
            s = min(ratios) if policy == 'not_larger' else max(ratios)
            for a in axes: outs[a] = int(s * x.shape[a] + 0.5); scs[a] = s; widths[a] = s * x.shape[a]
    else:
        for i, a in enumerate(axes):
            s = float(np.float32(scales[i])); scs[a] = s; widths[a] = s * x.shape[a]
            outs[a] = int(math.floor(widths[a]))
    for a in sorted(axes, reverse=True):
        M = axis_matrix(x.shape[a], outs[a], scs[a], mode, coord, antialias, A, exclude, widths[a])
        y = np.moveaxis(np.tensordot(M, np.moveaxis(y, a, 0), axes=(1, 0)), 0, a)
    return y
)";

TEST(ResizeKernel, Opset18AntialiasAxesAndAspectPoliciesMatchTheSpec) {
  auto np = numpy_arrays(std::string(kNumpyResize) + R"(
x = rng.rand(2, 3, 9, 13).astype(np.float32)
save('x', x)
save('s_down', np.array([0.45, 0.6], np.float32))
save('s_up', np.array([1.0, 1.0, 1.7, 2.0], np.float32))
save('sz', np.array([5, 4], np.int64))
save('lin_aa', resize(x, 'linear', [2, 3], scales=[0.45, 0.6], antialias=True).astype(np.float32))
save('cub_aa', resize(x, 'cubic', [2, 3], scales=[0.45, 0.6], antialias=True, A=-0.5).astype(np.float32))
save('cub_up', resize(x, 'cubic', [0, 1, 2, 3], scales=[1, 1, 1.7, 2.0], exclude=True).astype(np.float32))
save('not_larger', resize(x, 'linear', [2, 3], sizes=[5, 4], policy='not_larger').astype(np.float32))
save('not_smaller', resize(x, 'nearest', [2, 3], sizes=[5, 4], policy='not_smaller', coord='asymmetric').astype(np.float32))
save('axes_rev', resize(x, 'linear', [2, 3], sizes=[5, 4], coord='align_corners').astype(np.float32))
)");
  TensorMap feed;
  for (const char* n : {"x", "s_down", "s_up", "sz"}) feed.set(n, np.at(n));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[2,3,9,13] x, float[2] s_down, float[4] s_up, int64[2] sz)
      => (float lin_aa, float cub_aa, float cub_up, float not_larger, float not_smaller,
          float axes_rev) {
      lin_aa = Resize<mode = "linear", antialias = 1, axes = [2, 3]>(x, , s_down)
      cub_aa = Resize<mode = "cubic", antialias = 1, cubic_coeff_a = -0.5, axes = [-2, -1]>(x, , s_down)
      cub_up = Resize<mode = "cubic", exclude_outside = 1>(x, , s_up)
      not_larger = Resize<mode = "linear", axes = [2, 3], keep_aspect_ratio_policy = "not_larger">(x, , , sz)
      not_smaller = Resize<mode = "nearest", axes = [2, 3], keep_aspect_ratio_policy = "not_smaller",
                           coordinate_transformation_mode = "asymmetric">(x, , , sz)
      axes_rev = Resize<mode = "linear", axes = [3, 2], coordinate_transformation_mode = "align_corners">(x, , , sz)
    }
  )",
                                 feed);
  for (const char* n : {"lin_aa", "cub_aa", "cub_up", "not_larger", "not_smaller"})
    EXPECT_TRUE(tensors_close(out.at(n), np.at(n), 1e-6, 1e-6)) << n;
  // axes [3, 2] pairs sizes [5, 4] with W and H: the transpose of the [2, 3] case's sizes.
  auto swapped = numpy_arrays(std::string(kNumpyResize) + R"(
x = rng.rand(2, 3, 9, 13).astype(np.float32)
save('y', resize(x, 'linear', [2, 3], sizes=[4, 5], coord='align_corners').astype(np.float32))
)");
  EXPECT_TRUE(tensors_close(out.at("axes_rev"), swapped.at("y"), 1e-6, 1e-6));
}

TEST(ResizeKernel, Opset19HalfPixelSymmetricAndFloat16) {
  auto np = numpy_arrays(std::string(kNumpyResize) + R"(
x = rng.rand(1, 2, 7, 10).astype(np.float16)
save('x', x)
save('s', np.array([1, 1, 0.7, 1.35], np.float32))
save('sym', resize(x, 'linear', [0, 1, 2, 3], scales=[1, 1, 0.7, 1.35], coord='half_pixel_symmetric').astype(np.float16))
save('cub', resize(x, 'cubic', [0, 1, 2, 3], scales=[1, 1, 0.7, 1.35]).astype(np.float16))
)");
  TensorMap feed;
  feed.set("x", np.at("x"));
  feed.set("s", np.at("s"));
  TensorMap out = run_text_model(R"(
    <ir_version: 9, opset_import: ["" : 19]>
    g (float16[1,2,7,10] x, float[4] s) => (float16 sym, float16 cub) {
      sym = Resize<mode = "linear", coordinate_transformation_mode = "half_pixel_symmetric">(x, , s)
      cub = Resize<mode = "cubic">(x, , s)
    }
  )",
                                 feed);
  // Computed in double and rounded once, so equal to NumPy's float64 result rounded.
  EXPECT_TRUE(tensors_close(out.at("sym"), np.at("sym"), 1e-3, 1e-4));
  EXPECT_TRUE(tensors_close(out.at("cub"), np.at("cub"), 1e-3, 1e-4));
}

// The reference's exact sums, written out: per resized axis (innermost first) the taps of
// each output (clamped index, weight; zero weights dropped), summed from 0.0 in tap order in
// float64, one axis after the other; an axis that maps every index to itself with weight 1 is
// skipped. Elementwise NumPy float64 arithmetic rounds each product and sum once, as the
// kernel does, so the result must match bit for bit.
constexpr const char* kNumpySequentialResize = R"(
import math
def cubic_k(x, A):
    x = abs(x)
    if x <= 1: return ((A + 2) * x - (A + 3)) * x * x + 1
    if x < 2: return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    return 0.0
def axis_taps(n_in, n_out, scale, mode, coord, A, exclude, out_width, antialias):
    taps = []
    for x in range(n_out):
        if coord == 'half_pixel': s = (x + 0.5) / scale - 0.5
        elif coord == 'asymmetric': s = x / scale
        elif coord == 'align_corners': s = 0.0 if out_width == 1 else x * (n_in - 1) / (out_width - 1)
        base = math.floor(s); ratio = s - base
        if ratio == 0: base -= 1; ratio = 1.0
        sc = min(scale, 1.0) if antialias else 1.0
        start = math.floor((-1 if mode == 'linear' else -2) / sc) + 1
        ws = []
        for i in range(start, 2 - start):
            d = (i - ratio) * sc
            w = min(max(1 - abs(d), 0.0), 1.0) if mode == 'linear' else cubic_k(d, A)
            if exclude and not 0 <= base + i < n_in: w = 0.0
            ws.append((base + i, w))
        total = 0.0
        for _, w in ws: total += w
        taps.append([(min(max(j, 0), n_in - 1), w / total if exclude or antialias else w) for j, w in ws if w != 0])
    return taps
def resize_seq(x, mode, scales, coord='half_pixel', A=-0.75, exclude=False, antialias=False):
    y = x.astype(np.float64)
    for a in reversed(range(x.ndim)):
        s = float(np.float32(scales[a])); width = s * x.shape[a]; n_out = int(math.floor(width))
        taps = axis_taps(x.shape[a], n_out, s, mode, coord, A, exclude, width, antialias)
        if n_out == x.shape[a] and all(t == [(o, 1.0)] for o, t in enumerate(taps)): continue
        src = np.moveaxis(y, a, -1)
        out = np.zeros(src.shape[:-1] + (n_out,))
        for o, t in enumerate(taps):
            acc = np.zeros(src.shape[:-1])
            for j, w in t: acc = acc + w * src[..., j]
            out[..., o] = acc
        y = np.moveaxis(out, -1, a)
    return y.astype(x.dtype)
def with_edges(x):
    f = x.reshape(-1)
    f[:6] = [np.nan, np.inf, -np.inf, -0.0, 1e-45, 3e38]
    return x
)";

TEST(ResizeKernel, InterpolationKeepsTheSequentialDoubleSumsOnAnyThreadCount) {
  auto np = numpy_arrays(std::string(kNumpySequentialResize) + R"(
a = with_edges((rng.rand(2, 8, 37, 67) * 8 - 4).astype(np.float32))
save('a', a); save('lin2x', resize_seq(a, 'linear', [1, 1, 2, 2]))
b = with_edges((rng.rand(2, 3, 9, 13) * 8 - 4).astype(np.float32))
save('b', b)
save('cub', resize_seq(b, 'cubic', [1, 1, 0.7, 1.35]))
save('cub_ex', resize_seq(b, 'cubic', [1, 1, 1.7, 0.55], exclude=True, A=-0.5))
c = with_edges((rng.rand(3, 4, 5, 6) * 8 - 4).astype(np.float32))
save('c', c)
save('lin_all', resize_seq(c, 'linear', [2, 1, 1.5, 0.6], coord='align_corners'))
save('lin_same', resize_seq(c, 'linear', [1, 1, 1, 1]))
save('lin_asym', resize_seq(c, 'linear', [1, 3, 1, 1], coord='asymmetric'))
save('lin_w', resize_seq(c, 'linear', [1, 2, 1, 2.5]))
d = with_edges((rng.rand(1, 2, 40, 50) * 8 - 4).astype(np.float32))
save('d', d)
save('aa', resize_seq(d, 'linear', [1, 1, 0.15, 0.3], antialias=True))
)");
  const std::string model = R"(
    <ir_version: 9, opset_import: ["" : 13]>
    g (float[2,8,37,67] a, float[2,3,9,13] b, float[3,4,5,6] c)
        => (float lin2x, float cub, float cub_ex, float lin_all, float lin_same, float lin_asym,
            float lin_w) {
      s2 = Constant<value = float[4] {1, 1, 2, 2}>()
      s_cub = Constant<value = float[4] {1, 1, 0.7, 1.35}>()
      s_ex = Constant<value = float[4] {1, 1, 1.7, 0.55}>()
      s_all = Constant<value = float[4] {2, 1, 1.5, 0.6}>()
      s_same = Constant<value = float[4] {1, 1, 1, 1}>()
      s_asym = Constant<value = float[4] {1, 3, 1, 1}>()
      s_w = Constant<value = float[4] {1, 2, 1, 2.5}>()
      lin2x = Resize<mode = "linear">(a, , s2)
      cub = Resize<mode = "cubic">(b, , s_cub)
      cub_ex = Resize<mode = "cubic", exclude_outside = 1, cubic_coeff_a = -0.5>(b, , s_ex)
      lin_all = Resize<mode = "linear", coordinate_transformation_mode = "align_corners">(c, , s_all)
      lin_same = Resize<mode = "linear">(c, , s_same)
      lin_asym = Resize<mode = "linear", coordinate_transformation_mode = "asymmetric">(c, , s_asym)
      lin_w = Resize<mode = "linear">(c, , s_w)
    }
  )";
  // Antialiased shrinking: more taps per output (14 rows) than the fused pass caches.
  const std::string antialias = R"(
    <ir_version: 9, opset_import: ["" : 18]>
    g (float[1,2,40,50] d) => (float aa) {
      s = Constant<value = float[4] {1, 1, 0.15, 0.3}>()
      aa = Resize<mode = "linear", antialias = 1>(d, , s)
    }
  )";
  const TensorMap feed = feed_of(np, {"a", "b", "c"});
  for (int threads : {1, 2, 4}) {
    set_num_threads(threads);
    TensorMap out = run_text_model(model, feed);
    for (const char* n : {"lin2x", "cub", "cub_ex", "lin_all", "lin_same", "lin_asym", "lin_w"})
      EXPECT_TRUE(tensors_identical(out.at(n), np.at(n))) << n << " on " << threads << " threads";
    EXPECT_TRUE(
        tensors_identical(run_text_model(antialias, feed_of(np, {"d"})).at("aa"), np.at("aa")))
        << "antialias on " << threads << " threads";
  }
  set_num_threads(0);
}

TEST(ResizeKernel, RefusesBadScalesAndModes) {
  std::string bad_mode = error_of([] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[1,1,2,2] x, float[4] s) => (float y) { y = Resize<mode = "area">(x, , s) }
    )",
                   {});
  });
  EXPECT_NE(bad_mode.find("attribute 'mode' is 'area'"), std::string::npos) << bad_mode;
  TensorMap feed;
  feed.set("x", Tensor(DataType::kFloat32, {1, 1, 2, 2}));
  feed.set("s", Tensor::from_vector<float>({3}, {1, 1, 2}));
  std::string bad_count = error_of([&] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[1,1,2,2] x, float[3] s) => (float y) { y = Resize(x, , s) }
    )",
                   feed);
  });
  EXPECT_NE(bad_count.find("scales has 3 values"), std::string::npos) << bad_count;
}

// A float scale reaches 3.4e38, and inf passes "positive": the output length is refused
// before it is cast (undefined past int64). A non-finite roi corner has no crop.
TEST(ResizeKernel, RefusesScalesPastInt64AndNonFiniteCropCorners) {
  const char* model = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,1,2,2] x, float[4] s) => (float y) { y = Resize(x, , s) }
  )";
  for (float scale : {3e38f, std::numeric_limits<float>::infinity()}) {
    TensorMap feed;
    feed.set("x", Tensor(DataType::kFloat32, {1, 1, 2, 2}));
    feed.set("s", Tensor::from_vector<float>({4}, {1, 1, scale, 1}));
    std::string m = error_of([&] { run_text_model(model, feed); });
    EXPECT_NE(m.find("axis 2 of length 2 would be resized to "), std::string::npos) << m;
    EXPECT_NE(m.find("the scale must make it finite and below 2^62"), std::string::npos) << m;
  }
  TensorMap feed;
  feed.set("x", Tensor(DataType::kFloat32, {1, 1, 2, 2}));
  feed.set("roi", Tensor::from_vector<float>({8}, {0, 0, 0, std::nanf(""), 1, 1, 1, 1}));
  feed.set("sz", Tensor::from_vector<int64_t>({4}, {1, 1, 3, 3}));
  std::string m = error_of([&] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[1,1,2,2] x, float[8] roi, int64[4] sz) => (float y) {
        y = Resize<coordinate_transformation_mode = "tf_crop_and_resize">(x, roi, , sz)
      }
    )",
                   feed);
  });
  EXPECT_NE(m.find("roi [0, 0, 0, nan, 1, 1, 1, 1] holds a value that is not finite"),
            std::string::npos)
      << m;
}

// GridSample per the spec: grid coordinates (last axis first) mapped to pixel coordinates,
// out-of-range coordinates clamped or reflected, taps outside the volume reading 0, the edge
// or their reflection; nearest rounds half away from zero in 3-D.
constexpr const char* kNumpyGridSample = R"(
import itertools, math
def reflect(x, lo, hi):
    rng_ = hi - lo
    if x < lo:
        dx = lo - x; n = int(dx / rng_); r = dx - n * rng_
        return lo + r if n % 2 == 0 else hi - r
    if x > hi:
        dx = x - hi; n = int(dx / rng_); r = dx - n * rng_
        return hi - r if n % 2 == 0 else lo + r
    return x
def cubic(t, A=-0.75):
    near = lambda x: ((A + 2) * x - (A + 3)) * x * x + 1
    far = lambda x: ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]
def grid_sample(X, grid, mode, pad, ac):
    N, C = X.shape[:2]; dims = X.shape[2:]; r = len(dims)
    Y = np.zeros((N, C) + grid.shape[1:-1])
    for n in range(N):
        for o in np.ndindex(*grid.shape[1:-1]):
            coords = grid[(n,) + o][::-1].astype(np.float64)
            taps = []
            for d in range(r):
                L = dims[d]
                x = (coords[d] + 1) / 2 * (L - 1) if ac else ((coords[d] + 1) * L - 1) / 2
                lo, hi = (0.0, L - 1.0) if ac else (-0.5, L - 0.5)
                if mode == 'nearest': x = math.copysign(math.floor(abs(x) + 0.5), x)
                if x < lo or x > hi:
                    if pad == 'border': x = min(max(x, 0), L - 1)
                    elif pad == 'reflection': x = reflect(x, lo, hi)
                f = math.floor(x); t = x - f
                if mode == 'nearest': taps.append([(int(x), 1.0)])
                elif mode == 'linear': taps.append([(f, 1 - t), (f + 1, t)])
                else: taps.append(list(zip(range(f - 1, f + 3), cubic(t))))
            for c in range(C):
                v = 0.0
                for combo in itertools.product(*taps):
                    idx = []; w = 1.0
                    for d, (i, wi) in enumerate(combo):
                        L = dims[d]; w *= wi
                        lo, hi = (0.0, L - 1.0) if ac else (-0.5, L - 0.5)
                        if not 0 <= i < L:
                            if pad == 'zeros': idx = None; break
                            i = min(max(i, 0), L - 1) if pad == 'border' else min(max(int(reflect(i, lo, hi)), 0), L - 1)
                        idx.append(i)
                    if idx is not None: v += w * X[(n, c) + tuple(idx)]
                Y[(n, c) + o] = v
    return Y
)";

TEST(GridSampleKernel, Opset20SamplesVolumesInEveryModeAndPadding) {
  auto np = numpy_arrays(std::string(kNumpyGridSample) + R"(
x = rng.randn(2, 2, 3, 4, 5).astype(np.float32)
g = (rng.rand(2, 2, 3, 4, 3) * 2.6 - 1.3).astype(np.float32)
g[0, 0, 0, 0] = [0.25, -1.0, 1.0]  # exact half-way points for nearest
save('x', x); save('g', g)
for mode in ['nearest', 'linear', 'cubic']:
    for pad in ['zeros', 'border', 'reflection']:
        for ac in [0, 1]:
            save(f'{mode}_{pad}_{ac}', grid_sample(x, g, mode, pad, ac).astype(np.float32))
)");
  std::string nodes, outputs;
  for (const char* mode : {"nearest", "linear", "cubic"})
    for (const char* pad : {"zeros", "border", "reflection"})
      for (int ac : {0, 1}) {
        std::string name = fmt::format("{}_{}_{}", mode, pad, ac);
        outputs += (outputs.empty() ? "float " : ", float ") + name;
        nodes += fmt::format(
            "{} = GridSample<mode = \"{}\", padding_mode = \"{}\", align_corners = {}>(x, g)\n",
            name, mode, pad, ac);
      }
  TensorMap feed;
  feed.set("x", np.at("x"));
  feed.set("g", np.at("g"));
  TensorMap out = run_text_model(
      "<ir_version: 9, opset_import: [\"\" : 20]>\n"
      "g (float[2,2,3,4,5] x, float[2,2,3,4,3] g) => (" +
          outputs + ") {\n" + nodes + "}\n",
      feed);
  for (const auto& [name, t] : out) EXPECT_TRUE(tensors_close(t, np.at(name), 1e-5, 1e-5)) << name;
}

// A NaN grid coordinate (or an infinite one under reflection, which has no reflection) makes
// the point NaN; inf and 1e30 sample as a far coordinate (1e6) does under zeros and border;
// an image without pixels reads 0 under every padding, having no edge to repeat. (The image
// of height 0 was read at pixel -1, and the huge coordinates cast to int64 undefined.)
TEST(GridSampleKernel, NaNHugeCoordinatesAndImagesWithoutPixels) {
  auto np = numpy_arrays(std::string(kNumpyGridSample) + R"(
x = rng.randn(1, 2, 3, 4).astype(np.float32)
odd = np.array([[np.nan, 0.1], [1e30, 0.2], [-np.inf, 0.3], [0.4, 3e38], [-1e30, -np.inf], [0.45, -0.35]], np.float32)
g = odd.reshape(1, 2, 3, 2)
far = np.where(np.isfinite(odd) & (np.abs(odd) < 10), odd, np.sign(odd) * 1e6).astype(np.float32)
save('x', x); save('g', g)
for mode in ['nearest', 'linear', 'cubic']:
    for pad in ['zeros', 'border']:
        y = grid_sample(x, np.nan_to_num(far, nan=0).reshape(1, 2, 3, 2), mode, pad, 0)
        y[:, :, 0, 0] = np.nan  # the NaN coordinate
        save(f'{mode}_{pad}', y.astype(np.float32))
)");
  for (const char* mode : {"nearest", "linear", "cubic"})
    for (const char* pad : {"zeros", "border", "reflection"}) {
      const std::string name = fmt::format("{}_{}", mode, pad);
      const std::string node =
          fmt::format("y = GridSample<mode = \"{}\", padding_mode = \"{}\">(x, g)\n", mode, pad);
      TensorMap feed;
      feed.set("x", np.at("x"));
      feed.set("g", np.at("g"));
      const Tensor y = run_text_model(
                           "<ir_version: 9, opset_import: [\"\" : 20]>\n"
                           "g (float[1,2,3,4] x, float[1,2,3,2] g) => (float y) {\n" +
                               node + "}\n",
                           feed)
                           .at("y");
      if (std::string(pad) != "reflection") {
        EXPECT_TRUE(tensors_close(y, np.at(name), 1e-5, 1e-5)) << name;
      } else {
        // Reflected, 1e30 lands anywhere (its ulp is 1e14 pixels); only the points with an
        // infinite or NaN coordinate are fixed: NaN.
        const float* v = y.data<float>();
        for (int c = 0; c < 2; ++c)
          for (int p : {0, 2, 4}) EXPECT_TRUE(std::isnan(v[c * 6 + p])) << name << " " << p;
        EXPECT_TRUE(std::isfinite(v[5]) && std::isfinite(v[11])) << name;
      }

      feed.set("x", Tensor(DataType::kFloat32, {1, 2, 0, 4}));
      Tensor grid(DataType::kFloat32, {1, 2, 3, 2});
      for (int i = 0; i < 12; ++i) grid.data<float>()[i] = float(i % 5) * 0.4f - 0.9f;
      feed.set("g", grid);
      const Tensor empty = run_text_model(
                               "<ir_version: 9, opset_import: [\"\" : 20]>\n"
                               "g (float[1,2,0,4] x, float[1,2,3,2] g) => (float y) {\n" +
                                   node + "}\n",
                               feed)
                               .at("y");
      EXPECT_TRUE(tensors_identical(empty, Tensor(DataType::kFloat32, {1, 2, 2, 3}))) << name;
    }
}

}  // namespace
}  // namespace parity::testing
