// ONNX Runtime's com.microsoft fused ops on the reference backend, each case of
// ms_ops_cases.h against its NumPy restatement of the documentation (float64, rounded to the
// output type at the end), plus errors for attribute values outside the documented ones and
// the same bits on any number of threads.
#include <gtest/gtest.h>

#include "core/thread_pool.h"
#include "ms_ops_cases.h"
#include "ref_test_util.h"

namespace parity::testing {
namespace {

// The reference computes in double and rounds once, as NumPy does here; only the order of
// the sums differs.
constexpr double kRtol = 2e-6, kAtol = 1e-6;

class MsOps : public ::testing::TestWithParam<MsOpCase> {};

TEST_P(MsOps, AgreesWithNumpy) {
  const MsOpCase& c = GetParam();
  auto np = numpy_arrays(std::string(kMsNumpyHelpers) + c.numpy);
  TensorMap out = run_text_model(c.model, feed_of(np, c.inputs));
  for (const std::string& name : c.outputs)
    EXPECT_TRUE(tensors_close(out.at(name), np.at(name), kRtol, kAtol)) << c.name << " " << name;
}

TEST_P(MsOps, SameBitsOnOneAndFourThreads) {
  const MsOpCase& c = GetParam();
  auto np = numpy_arrays(std::string(kMsNumpyHelpers) + c.numpy);
  const TensorMap feed = feed_of(np, c.inputs);
  set_num_threads(1);
  TensorMap one = run_text_model(c.model, feed);
  set_num_threads(4);
  TensorMap four = run_text_model(c.model, feed);
  set_num_threads(0);
  for (const std::string& name : c.outputs)
    EXPECT_TRUE(tensors_identical(four.at(name), one.at(name))) << c.name << " " << name;
}

INSTANTIATE_TEST_SUITE_P(Contrib, MsOps, ::testing::ValuesIn(ms_op_cases()),
                         [](const ::testing::TestParamInfo<MsOpCase>& info) {
                           return info.param.name;
                         });

// Problems large enough that the work is split into many chunks: the bits must not depend on
// how many threads take them.
TEST(MsOpsThreads, LargeProblemsGiveTheSameBitsOnOneAndFourThreads) {
  auto np = numpy_arrays(R"(
save('q', rng.randn(2, 128, 64).astype(np.float32))
save('k', rng.randn(2, 128, 32).astype(np.float32)); save('v', rng.randn(2, 128, 32).astype(np.float32))
save('lens', np.array([127, 127], dtype=np.int32)); save('total', np.array(128, dtype=np.int32))
save('a', rng.randn(256, 64).astype(np.float32)); save('bq', rng.randint(0, 256, (96, 2, 16)).astype(np.uint8))
save('s', (rng.rand(96 * 2) * 0.1).astype(np.float32))
save('x', rng.randn(2, 8, 24, 24).astype(np.float32)); save('w', rng.randn(16, 8, 3, 3).astype(np.float32))
save('h', rng.randn(64, 32, 256).astype(np.float32)); save('g', rng.randn(256).astype(np.float32))
save('ax', rng.randn(2, 64, 32).astype(np.float32)); save('aw', (rng.randn(32, 96) * 0.2).astype(np.float32))
)");
  const std::string model = R"(<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[2,128,64] q, float[2,128,32] k, float[2,128,32] v, int32[2] lens, int32 total,
       float[256,64] a, uint8[96,2,16] bq, float[192] s, float[2,8,24,24] x, float[16,8,3,3] w,
       float[64,32,256] h, float[256] g, float[2,64,32] ax, float[32,96] aw)
      => (float ya, float yn, float yc, float yl, float ym, float yt, float yh) {
      ya, , = com.microsoft.GroupQueryAttention<num_heads = 4, kv_num_heads = 2>(q, k, v, , , lens, total)
      yn = com.microsoft.MatMulNBits<K = 64, N = 96, block_size = 32>(a, bq, s)
      yc = com.microsoft.FusedConv<activation = "Tanh", pads = [1, 1, 1, 1]>(x, w)
      yl = com.microsoft.SkipSimplifiedLayerNormalization(h, h, g)
      ym = com.microsoft.FusedMatMul<transB = 1, alpha = 0.25>(a, a)
      yt = com.microsoft.Attention<num_heads = 4, unidirectional = 1>(ax, aw)
      yh = com.microsoft.MultiHeadAttention<num_heads = 4>(ax, ax, ax)
    })";
  const TensorMap feed =
      feed_of(np, {"q", "k", "v", "lens", "total", "a", "bq", "s", "x", "w", "h", "g", "ax", "aw"});
  set_num_threads(1);
  TensorMap one = run_text_model(model, feed);
  set_num_threads(4);
  TensorMap four = run_text_model(model, feed);
  set_num_threads(0);
  for (const char* name : {"ya", "yn", "yc", "yl", "ym", "yt", "yh"})
    EXPECT_TRUE(tensors_identical(four.at(name), one.at(name))) << name;
}

// Runs a one-node model and returns the error message ("" when it runs).
std::string error_running(const std::string& body, const std::string& inputs,
                          const TensorMap& feed) {
  return error_of([&] {
    run_text_model(std::string(R"(<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
      g ()") + inputs + ") => (float y) { " +
                       body + " }",
                   feed);
  });
}

TEST(MsOpsErrors, AttributeValuesOutsideTheDocumentedOnesAreRefused) {
  TensorMap x4;
  x4.set("x", Tensor::from_vector<float>({1, 4}, {1, 2, 3, 4}));
  x4.set("w", Tensor::from_vector<float>({1, 1, 1, 1}, {1}));
  struct Expect {
    std::string body, inputs, message;
  };
  const Expect cases[] = {
      {"y = com.microsoft.FusedMatMul<transA = 2>(x, x)", "float[1,4] x", "'transA' is 2"},
      {"y = com.microsoft.FusedConv<activation = \"Gelu\">(x4, w)",
       "float[1,1,1,4] x4, float[1,1,1,1] w", "it must be one of Relu, Tanh"},
      {"y = com.microsoft.FusedConv<activation = \"LeakyRelu\">(x4, w)",
       "float[1,1,1,4] x4, float[1,1,1,1] w", "activation LeakyRelu takes 1"},
      {"y = com.microsoft.MatMulNBits<K = 4, N = 1, bits = 3, block_size = 16>(x, x, x)",
       "float[1,4] x", "'bits' is 3; it must be one of 2, 4, 8"},
      {"y = com.microsoft.MatMulNBits<K = 4, N = 1, block_size = 24>(x, x, x)", "float[1,4] x",
       "'block_size' is 24"},
      {"y = com.microsoft.EmbedLayerNormalization<mask_index_type = 2>(x, x, x, x, x, x, x)",
       "float[1,4] x", "'mask_index_type' is 2"},
      {"y = SimplifiedLayerNormalization<stash_type = 10>(x, x)", "float[1,4] x",
       "'stash_type' is 10"},
      {"y = com.microsoft.Attention<num_heads = 0>(x, x)", "float[1,4] x", "'num_heads' is 0"},
      {"y = com.microsoft.Attention<num_heads = 1, do_rotary = 1>(x, x)", "float[1,4] x",
       "'do_rotary' is 1; Parity supports only 0"},
      {"y = com.microsoft.GroupQueryAttention<num_heads = 3, kv_num_heads = 2>(x, x, x)",
       "float[1,4] x", "num_heads a multiple of kv_num_heads"},
      {"y = com.microsoft.RotaryEmbedding<is_packed_batching = 1>(x, x, x, x)", "float[1,4] x",
       "'is_packed_batching' is 1"},
      {"y = com.microsoft.MultiHeadAttention<num_heads = 1, unidirectional = 2>(x, x, x)",
       "float[1,4] x", "'unidirectional' is 2; it must be 0 or 1"},
      {"y = com.microsoft.GroupQueryAttention<num_heads = 2, kv_num_heads = 1, "
       "local_window_size = 0>(x, x, x)",
       "float[1,4] x", "'local_window_size' is 0"},
      {"y = com.microsoft.MatMulNBits<K = 4, N = 1, block_size = 16, accuracy_level = 5>(x, x, x)",
       "float[1,4] x", "'accuracy_level' is 5"},
  };
  TensorMap feed;
  feed.set("x", Tensor::from_vector<float>({1, 4}, {1, 2, 3, 4}));
  feed.set("x4", Tensor::from_vector<float>({1, 1, 1, 4}, {1, 2, 3, 4}));
  feed.set("w", Tensor::from_vector<float>({1, 1, 1, 1}, {1}));
  for (const Expect& e : cases) {
    TensorMap f;
    for (const auto& [name, t] : feed)
      if (e.inputs.find(" " + name) != std::string::npos) f.set(name, t);
    const std::string msg = error_running(e.body, e.inputs, f);
    EXPECT_NE(msg.find(e.message), std::string::npos) << e.body << "\n" << msg;
  }
}

TEST(MsOpsErrors, BadShapesAndIdsNameTheValue) {
  TensorMap feed;
  feed.set("a", Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
  feed.set("b", Tensor::from_vector<float>({2}, {1, 2}));
  const std::string bias_error =
      error_running("y = com.microsoft.BiasGelu(a, b)", "float[2,3] a, float[2] b", feed);
  EXPECT_NE(bias_error.find("it must be 1-D with X's last dim (3) values"), std::string::npos)
      << bias_error;
  TensorMap ids;
  ids.set("ids", Tensor::from_vector<int32_t>({1, 2}, {0, 7}));
  ids.set("t", Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4}));
  ids.set("g", Tensor::from_vector<float>({2}, {1, 1}));
  EXPECT_NE(error_running("y = com.microsoft.EmbedLayerNormalization(ids, , t, t, , g, g)",
                          "int32[1,2] ids, float[2,2] t, float[2] g", ids)
                .find("input id 7 is outside the table's 2 rows"),
            std::string::npos);
}

}  // namespace
}  // namespace parity::testing
