// MatMul and Gemm with a B too large to pack whole (its float64 packed form over
// kPackedBLimitBytes): a constant B is then packed per product in column slices instead of
// once at prepare time. The reference's contract must not notice: every element is the
// sequential double sum over k of exact products, rounded once, on any thread count. The
// expected values are that sum, computed here element by element.
#include <gtest/gtest.h>

#include "backend/ref/ops/matmul_util.h"
#include "core/thread_pool.h"
#include "ref_test_util.h"

namespace parity::testing {
namespace {

constexpr int64_t kM = 3, kK = 2048, kN = 4200;

// Deterministic float32 values with full 24-bit significands, in [-1, 1).
Tensor random_matrix(Shape shape, uint64_t seed) {
  Tensor t(DataType::kFloat32, shape);
  float* p = t.data<float>();
  uint64_t s = seed;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    p[i] = static_cast<float>(static_cast<double>(s >> 40) / double(1 << 23) - 1.0);
  }
  return t;
}

// y[r, j] = alpha * sum_p a[r, p] * b(p, j) + beta * c[j], the sum sequential in double.
template <typename GetB>
Tensor expected_product(const Tensor& a, GetB b, double alpha, const Tensor* c, double beta) {
  Tensor y(DataType::kFloat32, {kM, kN});
  const float* pa = a.data<float>();
  for (int64_t r = 0; r < kM; ++r)
    for (int64_t j = 0; j < kN; ++j) {
      double s = 0;
      for (int64_t p = 0; p < kK; ++p) s += double(pa[r * kK + p]) * double(b(p, j));
      double v = c ? alpha * s + beta * double(c->data<float>()[j]) : s;
      y.data<float>()[r * kN + j] = static_cast<float>(v);
    }
  return y;
}

TEST(LargeWeights, ConstantBBeyondThePackingLimitGivesTheExactProductOnAnyThreadCount) {
  // The case this test is about: B packed whole would exceed the limit.
  ASSERT_GT(ref::packed_b_bytes(1, kK, kN), double(ref::kPackedBLimitBytes));
  auto model = model_from_text(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[3,2048] a, float[2048,4200] b_input) => (float[3,4200] y, float[3,4200] z,
                                                      float[3,4200] g) <float[1] w = {0},
                                                      float[1] wt = {0}, float[1] c = {0}> {
      y = MatMul(a, w)
      z = MatMul(a, b_input)
      g = Gemm<transB = 1, alpha = 0.5, beta = 2.0>(a, wt, c)
    }
  )");
  const Tensor a = random_matrix({kM, kK}, 1), w = random_matrix({kK, kN}, 2);
  const Tensor wt = random_matrix({kN, kK}, 3), c = random_matrix({kN}, 4);
  model->graph.initializers["w"] = w;
  model->graph.initializers["wt"] = wt;
  model->graph.initializers["c"] = c;
  const float* pw = w.data<float>();
  const float* pwt = wt.data<float>();
  const Tensor y = expected_product(
      a, [&](int64_t p, int64_t j) { return pw[p * kN + j]; }, 1, nullptr, 0);
  const Tensor g = expected_product(
      a, [&](int64_t p, int64_t j) { return pwt[j * kK + p]; }, 0.5, &c, 2.0);

  ref::Executor executor(model);
  TensorMap feed;
  feed.set("a", a);
  feed.set("b_input", w);
  const int saved_threads = num_threads();
  for (int threads : {1, 4}) {
    set_num_threads(threads);
    TensorMap out = executor.run(feed);
    EXPECT_TRUE(tensors_identical(out.at("y"), y)) << threads << " thread(s)";
    EXPECT_TRUE(tensors_identical(out.at("z"), y)) << threads << " thread(s)";
    EXPECT_TRUE(tensors_identical(out.at("g"), g)) << threads << " thread(s)";
  }
  set_num_threads(saved_threads);
}

}  // namespace
}  // namespace parity::testing
