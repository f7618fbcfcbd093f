// Determinism (issue 15): repeated runs and runs on 1, 2 and 4 threads give bit-identical
// outputs, on a model with one node of each kernel family (convolution, pooling, matrix
// products, normalisation, softmax, reductions, elementwise math with broadcasting, data
// movement, indexing, sorting, scans, recurrent cells, resizing), with inputs large enough that
// parallel_for splits every kernel's work into several chunks.
#include <set>

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

// The ai.onnx.ml tree ensembles split their rows over the threads (ml_tree_model.cc): each row's
// sum over the trees keeps one order, so every thread count gives the same bits. A few thousand
// rows make several chunks.
const char* kTreeEnsemble = R"(
  <ir_version: 8, opset_import: ["" : 17, "ai.onnx.ml" : 3]>
  g (float[4096, 3] x) => (float[?, ?] y) {
    y = ai.onnx.ml.TreeEnsembleRegressor<
        n_targets = 2, aggregate_function = "SUM", base_values = [0.1, -0.3],
        nodes_treeids = [0, 0, 0, 1, 1, 1, 1, 1], nodes_nodeids = [0, 1, 2, 0, 1, 2, 3, 4],
        nodes_featureids = [0, 0, 0, 1, 0, 2, 0, 0],
        nodes_modes = ["BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_LT", "LEAF", "BRANCH_GTE", "LEAF",
                       "LEAF"],
        nodes_values = [0.25, 0.0, 0.0, -0.5, 0.0, 0.75, 0.0, 0.0],
        nodes_truenodeids = [1, 0, 0, 1, 0, 3, 0, 0], nodes_falsenodeids = [2, 0, 0, 2, 0, 4, 0, 0],
        target_treeids = [0, 0, 0, 1, 1, 1, 1], target_nodeids = [1, 2, 2, 1, 3, 4, 4],
        target_ids = [0, 0, 1, 1, 0, 0, 1],
        target_weights = [0.3, -1.7, 0.11, 2.9, 0.013, -0.77, 1e-7]>(x)
  }
)";

TEST(Determinism, TreeEnsemblesGiveTheSameBitsOnAnyThreadCount) {
  auto np = numpy_arrays(R"(
save('x', rng.standard_normal((4096, 3)).astype(np.float32))
)");
  const TensorMap feed = feed_of(np, {"x"});
  auto model = model_from_text(kTreeEnsemble);
  const int saved_threads = num_threads();
  std::vector<std::pair<int, Tensor>> runs;
  for (int threads : {1, 2, 4}) {
    set_num_threads(threads);
    ref::Executor e(model);
    runs.emplace_back(threads, e.run(feed).at("y"));
  }
  set_num_threads(saved_threads);
  ASSERT_EQ(runs.front().second.shape(), (Shape{4096, 2}));
  // Every leaf pair is reached: 2 leaves of tree 0 times 3 of tree 1 give 6 distinct rows.
  const float* y0 = runs.front().second.data<float>();
  std::set<std::pair<float, float>> rows;
  for (int64_t i = 0; i < 4096; ++i) rows.insert({y0[2 * i], y0[2 * i + 1]});
  EXPECT_EQ(rows.size(), 6u);
  for (const auto& [threads, y] : runs)
    EXPECT_TRUE(y.equals(runs.front().second)) << threads << " thread(s) differ from 1 thread";
}

}  // namespace
}  // namespace parity::testing
