// Determinism (issue 15): repeated runs and runs on 1, 2 and 4 threads give bit-identical
// outputs, on a model with one node of each kernel family (convolution, pooling, matrix
// products, normalisation, softmax, reductions, elementwise math with broadcasting, data
// movement, indexing, sorting, scans, recurrent cells, resizing), with inputs large enough that
// parallel_for splits every kernel's work into several chunks.
#include <gtest/gtest.h>

#include "core/thread_pool.h"
#include "ref_test_util.h"

namespace parity::testing {
namespace {

const char* kEveryFamily = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2, 8, 32, 32] x, float[16, 8, 3, 3] w, float[256, 192] a, float[192, 160] b,
     float[8, 64, 48] s, int64[40] idx, float[4, 24, 16] seq, float[1, 64, 16] wx,
     float[1, 64, 16] wh)
    => (float[?, ?, ?, ?] conv, float[?, ?, ?, ?] maxpool, float[?, ?, ?, ?] avgpool,
        float[?, ?] matmul, float[?, ?] gemm, float[?, ?, ?] layernorm, float[?, ?, ?] softmax,
        float[?, ?] reduce, float[?, ?, ?, ?] elementwise, float[?, ?, ?, ?] transpose,
        float[?, ?] gather, float[?, ?, ?] topk, float[?, ?, ?] cumsum, float[?, ?, ?, ?] lstm,
        float[?, ?, ?, ?] resize, float[?, ?, ?, ?] norm) {
    conv = Conv<pads = [1, 1, 1, 1]>(x, w)
    maxpool = MaxPool<kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]>(conv)
    avgpool = AveragePool<kernel_shape = [2, 2], strides = [2, 2]>(conv)
    matmul = MatMul(a, b)
    gemm = Gemm<alpha = 0.5, transB = 1>(b, b)
    ln_scale = Constant<value = float[48] {1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5}>()
    layernorm = LayerNormalization<axis = -1>(s, ln_scale)
    softmax = Softmax<axis = 1>(s)
    reduce = ReduceMean<axes = [1], keepdims = 0>(s)
    tanh = Tanh(x)
    scaled = Mul(tanh, x)
    sig = Sigmoid(x)
    elementwise = Add(scaled, sig)
    transpose = Transpose<perm = [0, 2, 3, 1]>(x)
    gather = Gather<axis = 0>(a, idx)
    k = Constant<value = int64[1] {5}>()
    topk, topk_i = TopK<axis = -1>(s, k)
    axis = Constant<value = int64 {1}>()
    cumsum = CumSum(s, axis)
    lstm, lstm_h, lstm_c = LSTM<hidden_size = 16>(seq, wx, wh)
    scales = Constant<value = float[4] {1, 1, 1.5, 1.5}>()
    resize = Resize<mode = "linear">(x, , scales)
    in_scale = Constant<value = float[8] {1, 2, 3, 4, 5, 6, 7, 8}>()
    in_bias = Constant<value = float[8] {0, 0, 0, 0, 1, 1, 1, 1}>()
    norm = InstanceNormalization(x, in_scale, in_bias)
  }
)";

TEST(Determinism, OutputsAreBitIdenticalAcrossRunsAndThreadCounts) {
  auto np = numpy_arrays(R"(
save('x', rng.standard_normal((2, 8, 32, 32)).astype(np.float32))
save('w', rng.standard_normal((16, 8, 3, 3)).astype(np.float32))
save('a', rng.standard_normal((256, 192)).astype(np.float32))
save('b', rng.standard_normal((192, 160)).astype(np.float32))
save('s', rng.standard_normal((8, 64, 48)).astype(np.float32))
save('idx', rng.randint(-256, 256, 40).astype(np.int64))
save('seq', rng.standard_normal((4, 24, 16)).astype(np.float32))
save('wx', (0.3 * rng.standard_normal((1, 64, 16))).astype(np.float32))
save('wh', (0.3 * rng.standard_normal((1, 64, 16))).astype(np.float32))
)");
  const TensorMap feed = feed_of(np, {"x", "w", "a", "b", "s", "idx", "seq", "wx", "wh"});
  auto model = model_from_text(kEveryFamily);
  const int saved_threads = num_threads();
  std::vector<std::pair<std::string, TensorMap>> runs;
  for (int threads : {1, 1, 2, 4, 4}) {
    set_num_threads(threads);
    ref::Executor e(model);
    runs.emplace_back(fmt::format("{} thread(s), run {}", threads, runs.size()), e.run(feed));
  }
  set_num_threads(saved_threads);
  const TensorMap& first = runs.front().second;
  ASSERT_EQ(first.size(), 16u);
  for (const auto& [label, outputs] : runs)
    for (const auto& [name, t] : first) {
      ASSERT_TRUE(outputs.contains(name)) << label << ": " << name;
      EXPECT_TRUE(outputs.at(name).equals(t))
          << label << ": output '" << name << "' differs from the first run's bits";
    }
}

}  // namespace
}  // namespace parity::testing
