// ConvTranspose's GEMM path against the direct kernel it replaced, bit for bit, on thousands of
// random geometries (1-D to 4-D; strides, dilations, groups, pads both signs, output padding),
// on every GEMM code path of this CPU and on 1 and 4 threads; the order the direct kernel sums
// in, shown to matter (a col2im order gives other bits); non-finite weights; and the op on
// 4-D spatial inputs against NumPy's restatement of the definition.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backend/ref/ops/conv_transpose.h"
#include "backend/ref/ops/gemm_kernel.h"
#include "core/thread_pool.h"
#include "ref_test_util.h"

namespace parity::testing {
namespace {

using ref::ConvTransposeShape;

// Values over a wide range of magnitudes, or (`cancelling`) signed powers of two 2^0, 2^k,
// 2^2k, whose products cancel exactly in one order of the sum and lose the small terms in
// another: both make sums in another order round differently.
template <typename T>
Tensor random_values(DataType dtype, const Shape& shape, bool cancelling, std::mt19937& rng) {
  // float16 holds 2^-24 to 65504; the others far more.
  const int range = dtype == DataType::kFloat16 ? 6 : dtype == DataType::kFloat64 ? 200 : 40;
  const int step = dtype == DataType::kFloat16 ? 7 : dtype == DataType::kFloat64 ? 28 : 15;
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> scale(-range, range), power(0, 2), sign(0, 1);
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = cancelling ? (sign(rng) ? -1.0 : 1.0) * std::ldexp(1.0, step * power(rng))
                                : normal(rng) * std::ldexp(1.0, scale(rng));
    t.data<T>()[i] = ref::narrow<T>(v);
  }
  return t;
}

struct RandomCase {
  Tensor x, w, b;
  ConvTransposeShape shape;
};

// A random geometry with `dims` spatial dims; output sizes follow the spec's
// stride * (in - 1) + output_padding + dilation * (kernel - 1) + 1 - pads.
template <typename T>
RandomCase random_case(DataType dtype, size_t dims, bool cancelling, std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  RandomCase c;
  c.shape.group = pick(1, 3);
  const int64_t cg = pick(1, 3), mg = pick(1, 4) == 1 ? pick(9, 20) : pick(1, 9);
  const int64_t batch = pick(1, 2);
  ref::WindowGeometry& g = c.shape.g;
  const bool small = dims > 2;
  for (size_t d = 0; d < dims; ++d) {
    g.in.push_back(pick(1, small ? 4 : 7));
    g.kernel.push_back(pick(1, small ? 3 : 4));
    g.strides.push_back(pick(1, small ? 2 : 4));
    g.dilations.push_back(pick(1, small ? 2 : 3));
    const int64_t out_pad = pick(0, static_cast<int>(std::max(g.strides[d], g.dilations[d]) - 1));
    const int64_t full =
        g.strides[d] * (g.in[d] - 1) + out_pad + g.dilations[d] * (g.kernel[d] - 1) + 1;
    int64_t begin = pick(-2, 3), end = pick(-2, 3);
    while (full - begin - end < 1) begin > end ? --begin : --end;
    g.pad_begin.push_back(begin);
    g.pad_end.push_back(end);
    g.out.push_back(full - begin - end);
  }
  Shape xs = {batch, c.shape.group * cg}, ws = {c.shape.group * cg, mg};
  xs.insert(xs.end(), g.in.begin(), g.in.end());
  ws.insert(ws.end(), g.kernel.begin(), g.kernel.end());
  c.x = random_values<T>(dtype, xs, cancelling, rng);
  c.w = random_values<T>(dtype, ws, cancelling, rng);
  c.b = random_values<T>(dtype, {c.shape.group * mg}, cancelling, rng);
  return c;
}

// The GEMM path's result (failing the test where it declines the case).
Tensor gemm_result(const RandomCase& c, bool with_bias) {
  std::optional<Tensor> y =
      ref::conv_transpose_gemm(c.x, c.w, with_bias ? &c.b : nullptr, c.shape, nullptr);
  if (!y)
    ADD_FAILURE() << "the GEMM path declined a case with finite weights: in "
                  << shape_str(c.shape.g.in) << " out " << shape_str(c.shape.g.out) << " kernel "
                  << shape_str(c.shape.g.kernel) << " strides " << shape_str(c.shape.g.strides)
                  << " dilations " << shape_str(c.shape.g.dilations) << " pads "
                  << shape_str(c.shape.g.pad_begin) << shape_str(c.shape.g.pad_end);
  return y ? std::move(*y) : Tensor();
}

template <typename T>
void check_random_cases(DataType dtype, size_t dims, int count, uint32_t seed) {
  std::mt19937 rng(seed);
  for (int i = 0; i < count; ++i) {
    const RandomCase c = random_case<T>(dtype, dims, i % 2 == 1, rng);
    const bool with_bias = i % 3 != 0;
    const Tensor direct = ref::conv_transpose_direct(c.x, c.w, with_bias ? &c.b : nullptr, c.shape);
    for (ref::GemmPath path : ref::supported_gemm_paths()) {
      ref::force_gemm_path(path);
      const Tensor y = gemm_result(c, with_bias);
      ref::reset_gemm_path();
      ASSERT_TRUE(tensors_identical(y, direct))
          << dtype_name(dtype) << " case " << i << " of seed " << seed << " on path "
          << static_cast<int>(path) << ": x " << shape_str(c.x.shape()) << " w "
          << shape_str(c.w.shape()) << " group " << c.shape.group << " strides "
          << shape_str(c.shape.g.strides) << " dilations " << shape_str(c.shape.g.dilations)
          << " pads " << shape_str(c.shape.g.pad_begin) << shape_str(c.shape.g.pad_end);
    }
  }
}

TEST(ConvTransposeGemm, SameBitsAsTheDirectKernelOnRandomFloat32Geometries) {
  check_random_cases<float>(DataType::kFloat32, 1, 600, 1);
  check_random_cases<float>(DataType::kFloat32, 2, 1200, 2);
  check_random_cases<float>(DataType::kFloat32, 3, 300, 3);
  check_random_cases<float>(DataType::kFloat32, 4, 60, 4);
}

TEST(ConvTransposeGemm, SameBitsAsTheDirectKernelForDoubleFloat16AndBFloat16) {
  // Double products are rounded: the GEMM path multiplies and adds separately, as the direct
  // kernel does.
  check_random_cases<double>(DataType::kFloat64, 2, 400, 5);
  check_random_cases<double>(DataType::kFloat64, 3, 100, 6);
  check_random_cases<float16>(DataType::kFloat16, 2, 300, 7);
  check_random_cases<bfloat16>(DataType::kBFloat16, 2, 300, 8);
}

TEST(ConvTransposeGemm, LargeCasesGiveTheSameBitsOnOneAndFourThreadsAsTheDirectKernel) {
  std::mt19937 rng(9);
  RandomCase c;
  c.shape.group = 2;
  c.shape.g = {{20, 23}, {0, 0}, {3, 4}, {2, 3}, {1, 2}, {1, 0}, {0, 2}};
  for (size_t d = 0; d < 2; ++d)
    c.shape.g.out[d] = c.shape.g.strides[d] * (c.shape.g.in[d] - 1) +
                       c.shape.g.dilations[d] * (c.shape.g.kernel[d] - 1) + 1 -
                       c.shape.g.pad_begin[d] - c.shape.g.pad_end[d];
  c.x = random_values<float>(DataType::kFloat32, {2, 48, 20, 23}, false, rng);
  c.w = random_values<float>(DataType::kFloat32, {48, 40, 3, 4}, true, rng);
  c.b = random_values<float>(DataType::kFloat32, {80}, false, rng);
  const Tensor direct = ref::conv_transpose_direct(c.x, c.w, &c.b, c.shape);
  set_num_threads(1);
  const Tensor one = gemm_result(c, true);
  set_num_threads(4);
  const Tensor four = gemm_result(c, true);
  set_num_threads(0);
  EXPECT_TRUE(tensors_identical(one, direct));
  EXPECT_TRUE(tensors_identical(four, direct));
}

// The same terms summed per tap over the input channels first, then over the taps (the order
// of a col2im over W^T X), in double and rounded once.
Tensor col2im_order(const RandomCase& c) {
  const ref::WindowGeometry& g = c.shape.g;  // 2-D, group 1, no bias
  const int64_t channels = c.x.shape()[1], maps = c.w.shape()[1];
  const int64_t kh = g.kernel[0], kw = g.kernel[1];
  Tensor y(DataType::kFloat32, {c.x.shape()[0], maps, g.out[0], g.out[1]});
  for (int64_t n = 0; n < c.x.shape()[0]; ++n)
    for (int64_t m = 0; m < maps; ++m)
      for (int64_t oh = 0; oh < g.out[0]; ++oh)
        for (int64_t ow = 0; ow < g.out[1]; ++ow) {
          double sum = 0;
          for (int64_t th = 0; th < kh; ++th)
            for (int64_t tw = 0; tw < kw; ++tw) {
              const int64_t ph = oh + g.pad_begin[0] - th * g.dilations[0];
              const int64_t pw = ow + g.pad_begin[1] - tw * g.dilations[1];
              if (ph % g.strides[0] || pw % g.strides[1]) continue;
              const int64_t ih = ph / g.strides[0], iw = pw / g.strides[1];
              if (ph < 0 || pw < 0 || ih >= g.in[0] || iw >= g.in[1]) continue;
              double col = 0;
              for (int64_t ci = 0; ci < channels; ++ci)
                col +=
                    double(c.x.data<float>()[((n * channels + ci) * g.in[0] + ih) * g.in[1] + iw]) *
                    double(c.w.data<float>()[((ci * maps + m) * kh + th) * kw + tw]);
              sum += col;
            }
          y.data<float>()[((n * maps + m) * g.out[0] + oh) * g.out[1] + ow] =
              static_cast<float>(sum);
        }
  return y;
}

TEST(ConvTransposeGemm, TheOrderOfTheSumDecidesBitsSoTheDirectKernelsOrderIsKept) {
  // A col2im formulation sums each tap over the channels first; on these inputs that changes
  // float32 outputs, so the GEMM path keeps the direct kernel's order (channel, then tap) and
  // the tests above can tell the two apart.
  std::mt19937 rng(10);
  int64_t differing = 0, total = 0;
  for (int i = 0; i < 200; ++i) {
    RandomCase c = random_case<float>(DataType::kFloat32, 2, true, rng);
    if (c.shape.group != 1) continue;
    const Tensor direct = ref::conv_transpose_direct(c.x, c.w, nullptr, c.shape);
    const Tensor other = col2im_order(c);
    for (int64_t e = 0; e < direct.numel(); ++e)
      differing += direct.data<float>()[e] != other.data<float>()[e];
    total += direct.numel();
  }
  std::cout << "[ NOTE     ] a col2im order changes " << differing << " of " << total
            << " float32 outputs\n";
  EXPECT_GT(differing, 0);
}

TEST(ConvTransposeGemm, NonFiniteWeightsRunTheDirectKernel) {
  // 0 * inf in the padding would turn edge outputs into NaN; the direct kernel never forms it.
  std::mt19937 rng(11);
  RandomCase c = random_case<float>(DataType::kFloat32, 2, false, rng);
  c.w.data<float>()[0] = INFINITY;
  EXPECT_FALSE(ref::conv_transpose_gemm(c.x, c.w, &c.b, c.shape, nullptr).has_value());
  const std::string text = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,1,3] x, float[1,1,2] w) => (float y) { y = ConvTranspose(x, w) }
  )";
  Tensor x(DataType::kFloat32, {1, 1, 3}), w(DataType::kFloat32, {1, 1, 2});
  x.data<float>()[0] = 1, x.data<float>()[1] = 2, x.data<float>()[2] = 3;
  w.data<float>()[0] = INFINITY, w.data<float>()[1] = 1;
  TensorMap feed;
  feed.set("x", x);
  feed.set("w", w);
  // y[o] = x[o] * w[0] + x[o - 1] * w[1]: the last output reads only x[2] * w[1] (the GEMM path
  // would add the padding's 0 * inf = NaN to it).
  Tensor y = run_text_model(text, feed).at("y");
  ASSERT_EQ(y.shape(), (Shape{1, 1, 4}));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(y.data<float>()[i], INFINITY) << i;
  EXPECT_EQ(y.data<float>()[3], 3.0f);
}

TEST(ConvTransposeKernel, FourSpatialDimsMatchNumPy) {
  auto np = numpy_arrays(R"(
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
x = rng.randn(1, 4, 3, 2, 4, 3).astype(np.float32); w = rng.randn(4, 3, 2, 2, 3, 2).astype(np.float32)
b = rng.randn(6).astype(np.float32)
save('x', x); save('w', w); save('b', b)
X, W, B = x.astype(np.float64), w.astype(np.float64), b.astype(np.float64)
save('y', conv_transpose(X, W, B, [2, 1, 2, 3], [1, 2, 1, 1], 2, [1, 0, 0, 1], [0, 1, 2, 0], [1, 0, 1, 0]).astype(np.float32))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4,3,2,4,3] x, float[4,3,2,2,3,2] w, float[6] b) => (float y) {
      y = ConvTranspose<strides = [2, 1, 2, 3], dilations = [1, 2, 1, 1], group = 2,
                        pads = [1, 0, 0, 1, 0, 1, 2, 0], output_padding = [1, 0, 1, 0]>(x, w, b)
    }
  )",
                                 feed_of(np, {"x", "w", "b"}));
  EXPECT_TRUE(tensors_close(out.at("y"), np.at("y"), 1e-6, 1e-6));
}

}  // namespace
}  // namespace parity::testing
