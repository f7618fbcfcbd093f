// The ops of opsets 23 and 24 on ONNX Runtime and on the reference backend, with the same
// random inputs: they agree within 1e-5 (absolute or relative). A case ONNX Runtime 1.30 is
// known not to run says so and asserts the refusal (the reference backend is then checked
// against NumPy only, in tests/backend/ref/opset23_test.cc); any other refusal fails. These ops
// are newer than ONNX Runtime 1.17, so the rerun of this binary against 1.17 leaves this file
// out (library_test.cc).
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <random>

#include "backend/ref/ref_test_util.h"
#include "ort_test_util.h"

namespace parity::testing {
namespace {

Tensor random_tensor(DataType dtype, const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  Tensor t(dtype, shape);
  if (dtype == DataType::kBool) {
    for (int64_t i = 0; i < t.numel(); ++i) t.data<bool>()[i] = (i % 4 == 0) || uniform(rng) > 0;
  } else {
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = uniform(rng);
  }
  return t;
}

std::string first_line_of(const std::string& s) { return s.substr(0, s.find('\n')); }

struct Case {
  std::string name, text;
  TensorMap feed;
  // ONNX Runtime refuses the case with a message containing this ("" when it runs it).
  std::string ort_refusal = "";
};

void compare(const Case& c) {
  SCOPED_TRACE(c.name);
  ort_runtime();
  std::unique_ptr<OnnxrtRunner> ort;
  try {
    ort = bytes_runner(model_bytes_from_text(c.text));
  } catch (const Error& e) {
    ASSERT_FALSE(c.ort_refusal.empty()) << "ONNX Runtime " << ort_runtime().library().version()
                                        << " cannot run " << c.name << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(c.ort_refusal), std::string::npos) << e.what();
    std::cout << "[ NOTE     ] ONNX Runtime " << ort_runtime().library().version() << " refuses "
              << c.name << " (" << first_line_of(e.what())
              << "); the reference backend is checked against NumPy in opset23_test.cc\n";
    return;
  }
  TensorMap from_ort = ort->infer(c.feed);
  TensorMap from_ref = run_text_model(c.text, c.feed);
  ASSERT_EQ(from_ort.names(), from_ref.names());
  for (const auto& [name, tensor] : from_ort) {
    const Tensor& r = from_ref.at(name);
    ASSERT_EQ(tensor.dtype(), r.dtype()) << name;
    ASSERT_EQ(tensor.shape(), r.shape()) << name;
    if (tensor.dtype() != DataType::kFloat32) {
      EXPECT_TRUE(tensor.equals(r)) << name;
      continue;
    }
    int64_t bad = 0;
    double worst = 0;
    for (int64_t i = 0; i < tensor.numel(); ++i) {
      const double a = tensor.data<float>()[i], b = r.data<float>()[i];
      const double diff = std::abs(a - b);
      if (!(diff <= 1e-5 || diff <= 1e-5 * std::abs(b) || (std::isnan(a) && std::isnan(b)))) ++bad;
      if (!std::isnan(diff)) worst = std::max(worst, diff);
    }
    EXPECT_EQ(bad, 0) << c.name << " output " << name << ": max abs difference " << worst;
  }
}

TEST(OrtOpset23Differential, Attention4dWithFloatMaskSoftcapAndEveryQkOutputMode) {
  for (int mode = 0; mode < 4; ++mode)
    compare({fmt::format("attention 4-D, float mask, softcap, qk_matmul_output_mode {}", mode),
             fmt::format(R"(
    <ir_version: 10, opset_import: ["" : 23]>
    g (float[2,3,4,8] q, float[2,3,6,8] k, float[2,3,6,5] v, float[4,6] m)
      => (float[2,3,4,5] y, float[2,3,4,6] qk) {{
      y, , , qk = Attention<softcap = 0.5, qk_matmul_output_mode = {}>(q, k, v, m)
    }})",
                         mode),
             [] {
               TensorMap f;
               f.set("q", random_tensor(DataType::kFloat32, {2, 3, 4, 8}, 1));
               f.set("k", random_tensor(DataType::kFloat32, {2, 3, 6, 8}, 2));
               f.set("v", random_tensor(DataType::kFloat32, {2, 3, 6, 5}, 3));
               f.set("m", random_tensor(DataType::kFloat32, {4, 6}, 4));
               return f;
             }()});
}

TEST(OrtOpset23Differential, Attention3dGroupedQueryCausalWithPastKeyValue) {
  compare({"attention 3-D, GQA, causal, past/present", R"(
    <ir_version: 10, opset_import: ["" : 23]>
    g (float[2,3,24] q, float[2,3,12] k, float[2,3,10] v, float[2,2,4,6] pk, float[2,2,4,5] pv)
      => (float[2,3,20] y, float[2,2,7,6] prk, float[2,2,7,5] prv) {
      y, prk, prv = Attention<is_causal = 1, q_num_heads = 4, kv_num_heads = 2, scale = 0.25>(q, k, v, , pk, pv)
    })",
           [] {
             TensorMap f;
             f.set("q", random_tensor(DataType::kFloat32, {2, 3, 24}, 5));
             f.set("k", random_tensor(DataType::kFloat32, {2, 3, 12}, 6));
             f.set("v", random_tensor(DataType::kFloat32, {2, 3, 10}, 7));
             f.set("pk", random_tensor(DataType::kFloat32, {2, 2, 4, 6}, 8));
             f.set("pv", random_tensor(DataType::kFloat32, {2, 2, 4, 5}, 9));
             return f;
           }()});
}

TEST(OrtOpset23Differential, AttentionCausalBoolMaskAndSoftcap) {
  compare({"attention causal, bool mask, softcap", R"(
    <ir_version: 10, opset_import: ["" : 23]>
    g (float[1,2,5,4] q, float[1,2,5,4] k, float[1,2,5,4] v, bool[5,5] m) => (float[1,2,5,4] y) {
      y = Attention<is_causal = 1, softcap = 3.0>(q, k, v, m)
    })",
           [] {
             TensorMap f;
             f.set("q", random_tensor(DataType::kFloat32, {1, 2, 5, 4}, 10));
             f.set("k", random_tensor(DataType::kFloat32, {1, 2, 5, 4}, 11));
             f.set("v", random_tensor(DataType::kFloat32, {1, 2, 5, 4}, 12));
             f.set("m", random_tensor(DataType::kBool, {5, 5}, 13));
             return f;
           }()});
}

TEST(OrtOpset23Differential, AttentionNonpadKvSeqlenCausalAtOpset24) {
  Tensor n(DataType::kInt64, {2});
  n.data<int64_t>()[0] = 4;
  n.data<int64_t>()[1] = 6;
  compare({"attention nonpad_kv_seqlen, causal", R"(
    <ir_version: 10, opset_import: ["" : 24]>
    g (float[2,2,3,4] q, float[2,2,6,4] k, float[2,2,6,4] v, int64[2] n)
      => (float[2,2,3,4] y, float[2,2,3,4] yc) {
      y = Attention(q, k, v, , , , n)
      yc = Attention<is_causal = 1>(q, k, v, , , , n)
    })",
           [&] {
             TensorMap f;
             f.set("q", random_tensor(DataType::kFloat32, {2, 2, 3, 4}, 23));
             f.set("k", random_tensor(DataType::kFloat32, {2, 2, 6, 4}, 24));
             f.set("v", random_tensor(DataType::kFloat32, {2, 2, 6, 4}, 25));
             f.set("n", n);
             return f;
           }()});
}

TEST(OrtOpset23Differential, RMSNormalization) {
  compare({"RMSNormalization", R"(
    <ir_version: 10, opset_import: ["" : 23]>
    g (float[3,4,5] x, float[5] s) => (float[3,4,5] y) { y = RMSNormalization(x, s) })",
           [] {
             TensorMap f;
             f.set("x", random_tensor(DataType::kFloat32, {3, 4, 5}, 14));
             f.set("s", random_tensor(DataType::kFloat32, {5}, 15));
             return f;
           }()});
}

TEST(OrtOpset23Differential, RotaryEmbeddingInterleavedWithPositionIds) {
  Tensor pos(DataType::kInt64, {2, 3});
  for (int64_t i = 0; i < 6; ++i) pos.data<int64_t>()[i] = (i * 5) % 8;
  compare({"RotaryEmbedding", R"(
    <ir_version: 10, opset_import: ["" : 23]>
    g (float[2,2,3,8] x, float[8,4] c, float[8,4] s, int64[2,3] pos) => (float[2,2,3,8] y, float[2,2,3,8] z) {
      y = RotaryEmbedding<interleaved = 1>(x, c, s, pos)
      z = RotaryEmbedding(x, c, s, pos)
    })",
           [&] {
             TensorMap f;
             f.set("x", random_tensor(DataType::kFloat32, {2, 2, 3, 8}, 16));
             f.set("c", random_tensor(DataType::kFloat32, {8, 4}, 17));
             f.set("s", random_tensor(DataType::kFloat32, {8, 4}, 18));
             f.set("pos", pos);
             return f;
           }()});
}

TEST(OrtOpset23Differential, TensorScatterCircularAndSwish) {
  Tensor idx(DataType::kInt64, {2});
  idx.data<int64_t>()[0] = 1;
  idx.data<int64_t>()[1] = 5;
  compare({"TensorScatter", R"(
    <ir_version: 10, opset_import: ["" : 24]>
    g (float[2,3,6,4] c, float[2,3,3,4] u, int64[2] i) => (float[2,3,6,4] y) {
      y = TensorScatter<mode = "circular">(c, u, i)
    })",
           [&] {
             TensorMap f;
             f.set("c", random_tensor(DataType::kFloat32, {2, 3, 6, 4}, 19));
             f.set("u", random_tensor(DataType::kFloat32, {2, 3, 3, 4}, 20));
             f.set("i", idx);
             return f;
           }()});
  compare({"Swish", R"(
    <ir_version: 10, opset_import: ["" : 24]>
    g (float[4,5] x) => (float[4,5] y) { y = Swish<alpha = 1.5>(x) })",
           [] {
             TensorMap f;
             f.set("x", random_tensor(DataType::kFloat32, {4, 5}, 21));
             return f;
           }()});
}

TEST(OrtOpset23Differential, TopKOnBfloat16) {
  compare({"TopK bfloat16", R"(
    <ir_version: 10, opset_import: ["" : 24]>
    g (float[3,16] x) => (float[3,4] v, int64[3,4] i) {
      b = Cast<to = 16>(x)
      k = Constant<value = int64[1] {4}>()
      vb, i = TopK<axis = 1>(b, k)
      v = Cast<to = 1>(vb)
    })",
           [] {
             TensorMap f;
             f.set("x", random_tensor(DataType::kFloat32, {3, 16}, 22));
             return f;
           }(),
           "TopK"});
}

}  // namespace
}  // namespace parity::testing
