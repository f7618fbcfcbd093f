// The shared GEMM micro-kernel (ops/gemm_kernel.h) through MatMul, Gemm and Conv: results are
// the sequential double sum (k in increasing order, every product and addition rounded) rounded
// once to the output type, bit for bit, on 1, 2 and 4 threads, on every vector path this CPU
// has and on the portable C++ path, with B / W given as inputs or as initializers (packed when
// the node is prepared). NumPy computes the same sequential sum with float64 array operations.
#include "backend/ref/ops/gemm_kernel.h"
#include "backend/ref/ref_test_util.h"
#include "core/thread_pool.h"

namespace parity::testing {
namespace {

// Runs `run` on 1, 2 and 4 threads and on every code path this CPU has (portable C++, AVX2 +
// FMA, AVX-512F); every result must have the bits of the first, and that one the bits of
// `expected`.
template <typename Run>
void expect_exact_everywhere(Run run, const std::map<std::string, Tensor>& expected) {
  set_num_threads(1);
  const TensorMap first = run();
  for (const auto& [name, want] : expected)
    EXPECT_TRUE(tensors_identical(first.at(name), want)) << name << " against NumPy";
  for (int threads : {2, 4}) {
    set_num_threads(threads);
    const TensorMap again = run();
    for (const auto& [name, want] : expected)
      EXPECT_TRUE(tensors_identical(again.at(name), first.at(name)))
          << name << " on " << threads << " threads";
  }
  for (ref::GemmPath path : ref::supported_gemm_paths()) {
    ref::force_gemm_path(path);
    const TensorMap again = run();
    for (const auto& [name, want] : expected)
      EXPECT_TRUE(tensors_identical(again.at(name), first.at(name)))
          << name << " on code path " << static_cast<int>(path);
  }
  ref::reset_gemm_path();
  set_num_threads(0);
}

// Moves the named feed values into the model as initializers (no longer graph inputs).
std::shared_ptr<ir::Model> with_initializers(const std::string& text, TensorMap& feed,
                                             const std::vector<std::string>& names) {
  auto model = model_from_text(text);
  for (const auto& name : names) {
    model->graph.initializers[name] = feed.at(name);
    std::erase_if(model->graph.inputs, [&](const ir::ValueInfo& v) { return v.name == name; });
  }
  for (const auto& name : names) feed.erase(name);
  return model;
}

constexpr const char* kSequentialSums = R"(
def seq_matmul(a, b):
    a, b = a.astype(np.float64), b.astype(np.float64)
    acc = np.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1]))
    for p in range(a.shape[-1]):
        acc = acc + a[..., :, p:p + 1] * b[..., p:p + 1, :]
    return acc

def seq_conv(x, w, b, pads, strides, dilations):
    nd = x.ndim - 2
    x, w, b = x.astype(np.float64), w.astype(np.float64), b.astype(np.float64)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[i + nd]) for i in range(nd)])
    out = [(xp.shape[2 + i] - dilations[i] * (w.shape[2 + i] - 1) - 1) // strides[i] + 1
           for i in range(nd)]
    acc = np.zeros((x.shape[0], w.shape[0]) + tuple(out))
    for ci in range(x.shape[1]):
        for tap in np.ndindex(*w.shape[2:]):
            window = tuple(slice(tap[i] * dilations[i],
                                 tap[i] * dilations[i] + strides[i] * (out[i] - 1) + 1, strides[i])
                           for i in range(nd))
            weight = w[(None, slice(None), ci) + tap + (None,) * nd]
            acc = acc + weight * xp[(slice(None), ci) + window][:, None]
    return acc + b.reshape((1, -1) + (1,) * nd)
)";

TEST(GemmKernel, MatMulOnOddShapesIsTheSequentialSumOnAnyThreadCountAndPath) {
  for (const char* dtype : {"float32", "float16", "float64"}) {
    SCOPED_TRACE(dtype);
    auto np = numpy_arrays(std::string(kSequentialSums) + "t = np." + dtype + R"(
a = (rng.randn(3, 67, 131) * 4).astype(t); b = (rng.randn(3, 131, 97) * 4).astype(t)
w = (rng.randn(131, 97) * 4).astype(t); v = (rng.randn(97, 131) * 4).astype(t)
c = rng.randn(97).astype(t)
save('a', a); save('b', b); save('w', w); save('v', v); save('c', c); save('a0', a[1])
save('ab', seq_matmul(a, b).astype(t))
save('aw', seq_matmul(a, w).astype(t))
save('gemm', (0.5 * seq_matmul(a[1], v.T) + 2.0 * c.astype(np.float64)).astype(t))
)");
    const std::string type = std::string(dtype) == "float32"   ? "float"
                             : std::string(dtype) == "float64" ? "double"
                                                               : "float16";
    const std::string text = fmt::format(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g ({0}[3,67,131] a, {0}[3,131,97] b, {0}[131,97] w, {0}[97,131] v, {0}[97] c,
         {0}[67,131] a0) => ({0} ab, {0} aw, {0} gemm) {{
        ab = MatMul(a, b)
        aw = MatMul(a, w)
        gemm = Gemm<transB = 1, alpha = 0.5, beta = 2.0>(a0, v, c)
      }}
    )",
                                         type);
    const std::map<std::string, Tensor> expected = {
        {"ab", np.at("ab")}, {"aw", np.at("aw")}, {"gemm", np.at("gemm")}};
    const std::vector<std::string> inputs = {"a", "b", "w", "v", "c", "a0"};
    expect_exact_everywhere([&] { return run_text_model(text, feed_of(np, inputs)); }, expected);
    // The same with the weights as initializers, packed once when the nodes are prepared.
    expect_exact_everywhere(
        [&] {
          TensorMap feed = feed_of(np, inputs);
          ref::Executor executor(with_initializers(text, feed, {"w", "v"}));
          return executor.run(feed);
        },
        expected);
  }
}

TEST(GemmKernel, ConvIsTheSequentialSumOnAnyThreadCountAndPath) {
  // 17 channels x 3 x 3 = 153 values of k, 13 maps (two row panels), output planes that end in
  // partial panels; padding, strides and dilations differ per dim (z in 3-D).
  for (const char* dtype : {"float32", "float16", "float64"}) {
    SCOPED_TRACE(dtype);
    auto np = numpy_arrays(std::string(kSequentialSums) + "t = np." + dtype + R"(
x = (rng.randn(2, 17, 39, 14) * 4).astype(t); w = (rng.randn(13, 17, 3, 3) * 4).astype(t)
b = rng.randn(13).astype(t)
save('x', x); save('w', w); save('b', b)
save('y', seq_conv(x, w, b, (1, 0, 1, 2), (2, 1), (1, 1)).astype(t))
save('u', seq_conv(x, w, b, (2, 1, 0, 3), (1, 1), (2, 1)).astype(t))
v = (rng.randn(1, 3, 7, 9, 11) * 4).astype(t); k = (rng.randn(5, 3, 2, 3, 2) * 4).astype(t)
save('v', v); save('k', k); save('c', b[:5])
save('z', seq_conv(v, k, b[:5], (1, 0, 2, 0, 1, 1), (2, 1, 3), (2, 1, 3)).astype(t))
)");
    const std::string type = std::string(dtype) == "float32"   ? "float"
                             : std::string(dtype) == "float64" ? "double"
                                                               : "float16";
    const std::string text = fmt::format(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g ({0}[2,17,39,14] x, {0}[13,17,3,3] w, {0}[13] b, {0}[1,3,7,9,11] v, {0}[5,3,2,3,2] k,
         {0}[5] c) => ({0} y, {0} u, {0} z) {{
        y = Conv<pads = [1, 0, 1, 2], strides = [2, 1]>(x, w, b)
        u = Conv<pads = [2, 1, 0, 3], dilations = [2, 1]>(x, w, b)
        z = Conv<pads = [1, 0, 2, 0, 1, 1], strides = [2, 1, 3], dilations = [2, 1, 3]>(v, k, c)
      }}
    )",
                                         type);
    const std::map<std::string, Tensor> expected = {
        {"y", np.at("y")}, {"u", np.at("u")}, {"z", np.at("z")}};
    const std::vector<std::string> inputs = {"x", "w", "b", "v", "k", "c"};
    expect_exact_everywhere([&] { return run_text_model(text, feed_of(np, inputs)); }, expected);
    expect_exact_everywhere(
        [&] {
          TensorMap feed = feed_of(np, inputs);
          ref::Executor executor(with_initializers(text, feed, {"w", "k"}));
          return executor.run(feed);
        },
        expected);
  }
}

TEST(GemmKernel, DoubleProductsAreRoundedBeforeTheyAreAdded) {
  // (1 + 2^-30)^2 = 1 + 2^-29 + 2^-60 needs 61 bits: the separate product rounds the 2^-60
  // away and -1 + that product is 2^-29; a fused multiply-add would give 2^-29 + 2^-60.
  auto np = numpy_arrays(R"(
e = 1.0 + 2.0 ** -30
a = np.array([[1.0, e]]); b = np.array([[-1.0], [e]])
acc = 0.0 + a[0, 0] * b[0, 0]
acc = acc + a[0, 1] * b[1, 0]
save('a', a); save('b', b); save('ab', np.full((1, 1), acc))
)");
  ASSERT_EQ(np.at("ab").data<double>()[0], std::ldexp(1.0, -29));
  expect_exact_everywhere(
      [&] {
        return run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (double[1,2] a, double[2,1] b) => (double ab) { ab = MatMul(a, b) }
    )",
                              feed_of(np, {"a", "b"}));
      },
      {{"ab", np.at("ab")}});
}

}  // namespace
}  // namespace parity::testing
