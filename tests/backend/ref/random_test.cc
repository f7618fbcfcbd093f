// Random ops: shapes and element types, statistical properties of the draws (means and
// variances within 6 standard errors of the distribution's own values), reproducible streams
// (with a seed, and per node without one), and Dropout's deterministic inference mode.
#include <gtest/gtest.h>

#include <cmath>

#include "ref_test_util.h"

namespace parity::testing {
namespace {

std::vector<double> values_of(const Tensor& t) {
  return ref::dispatch<ref::AllTypes>(t.dtype(), [&]<typename T>() {
    std::vector<double> v(static_cast<size_t>(t.numel()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = ref::to_double(t.data<T>()[i]);
    return v;
  });
}

struct Moments {
  double mean = 0, variance = 0, min = INFINITY, max = -INFINITY;
};
Moments moments_of(const Tensor& t) {
  std::vector<double> v = values_of(t);
  Moments m;
  for (double x : v) m.mean += x, m.min = std::min(m.min, x), m.max = std::max(m.max, x);
  m.mean /= static_cast<double>(v.size());
  for (double x : v) m.variance += (x - m.mean) * (x - m.mean);
  m.variance /= static_cast<double>(v.size() - 1);
  return m;
}

TEST(RandomKernels, UniformAndNormalHaveTheirShapeTypeAndMoments) {
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g () => (float u, double n) {
      u = RandomUniform<shape = [200, 500], low = -2.0, high = 3.0, seed = 4.0>()
      n = RandomNormal<shape = [100000], mean = 1.5, scale = 0.5, dtype = 11, seed = 7.0>()
    }
  )",
                                 {});
  const Tensor& u = out.at("u");
  EXPECT_EQ(u.dtype(), DataType::kFloat32);
  EXPECT_EQ(u.shape(), (Shape{200, 500}));
  const double n = 100000;
  Moments mu = moments_of(u);
  EXPECT_GE(mu.min, -2.0);
  EXPECT_LT(mu.max, 3.0);
  // Uniform(a, b): mean (a + b) / 2, variance (b - a)^2 / 12.
  EXPECT_NEAR(mu.mean, 0.5, 6 * std::sqrt(25.0 / 12 / n));
  EXPECT_NEAR(mu.variance, 25.0 / 12, 6 * 25.0 / 12 * std::sqrt(0.8 / n));
  const Tensor& g = out.at("n");
  EXPECT_EQ(g.dtype(), DataType::kFloat64);
  Moments mn = moments_of(g);
  EXPECT_NEAR(mn.mean, 1.5, 6 * 0.5 / std::sqrt(n));
  EXPECT_NEAR(mn.variance, 0.25, 6 * 0.25 * std::sqrt(2 / n));
}

TEST(RandomKernels, ASeedGivesTheSameValuesOnEveryRunAndAnotherSeedOthers) {
  const char* text = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g () => (float a, float b, float c) {
      a = RandomUniform<shape = [1000], seed = 3.0>()
      b = RandomNormal<shape = [1000], seed = 3.0>()
      c = RandomUniform<shape = [1000], seed = 3.5>()
    }
  )";
  ref::Executor executor(model_from_text(text));
  TensorMap first = executor.run(TensorMap{});
  TensorMap second = executor.run(TensorMap{});
  TensorMap other_executor = run_text_model(text, {});
  for (const char* n : {"a", "b", "c"}) {
    EXPECT_TRUE(tensors_identical(first.at(n), second.at(n))) << n;
    EXPECT_TRUE(tensors_identical(first.at(n), other_executor.at(n))) << n;
  }
  EXPECT_FALSE(first.at("a").equals(first.at("c")));
}

TEST(RandomKernels, WithoutASeedEachNodeHasItsOwnReproducibleStream) {
  ref::Executor executor(model_from_text(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g () => (float a, float b) {
      a = RandomUniform<shape = [1000]>()
      b = RandomUniform<shape = [1000]>()
    }
  )"));
  TensorMap first = executor.run(TensorMap{});
  EXPECT_FALSE(first.at("a").equals(first.at("b")));
  EXPECT_TRUE(tensors_identical(executor.run(TensorMap{}).at("a"), first.at("a")));
  Moments m = moments_of(first.at("b"));
  EXPECT_NEAR(m.mean, 0.5, 6 * std::sqrt(1.0 / 12 / 1000));
}

TEST(RandomKernels, LikeFormsTakeShapeAndTypeFromTheInput) {
  TensorMap feed;
  feed.set("h", Tensor(DataType::kFloat16, {30, 40}));
  feed.set("i", Tensor(DataType::kInt32, {7, 3}));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float16[30,40] h, int32[7,3] i) => (float16 a, double b) {
      a = RandomUniformLike<low = 10.0, high = 11.0, seed = 1.0>(h)
      b = RandomNormalLike<dtype = 11, seed = 2.0>(i)
    }
  )",
                                 feed);
  EXPECT_EQ(out.at("a").dtype(), DataType::kFloat16);
  EXPECT_EQ(out.at("a").shape(), (Shape{30, 40}));
  Moments ma = moments_of(out.at("a"));
  EXPECT_GE(ma.min, 10.0);
  EXPECT_LE(ma.max, 11.0);  // float16 rounding may reach the upper bound
  EXPECT_EQ(out.at("b").dtype(), DataType::kFloat64);
  EXPECT_EQ(out.at("b").shape(), (Shape{7, 3}));

  // An integer input without dtype has no valid output type.
  std::string message = error_of([&] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (int32[7,3] i) => (float b) { b = RandomNormalLike(i) }
    )",
                   feed);
  });
  EXPECT_NE(message.find("element type int32"), std::string::npos) << message;
}

TEST(RandomKernels, MultinomialDrawsClassesWithSoftmaxFrequencies) {
  auto np = numpy_arrays(R"(
logits = np.array([[0.0, 1.0, 2.0, -1.0], [3.0, 3.0, -5.0, 0.5]], np.float32)
save('logits', logits)
e = np.exp(logits.astype(np.float64) - logits.max(axis=1, keepdims=True))
save('p', e / e.sum(axis=1, keepdims=True))
)");
  TensorMap feed;
  feed.set("x", np.at("logits"));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,4] x) => (int64 y) { y = Multinomial<sample_size = 40000, dtype = 7, seed = 5.0>(x) }
  )",
                                 feed);
  const Tensor& y = out.at("y");
  ASSERT_EQ(y.dtype(), DataType::kInt64);
  ASSERT_EQ(y.shape(), (Shape{2, 40000}));
  const double* p = np.at("p").data<double>();
  for (int64_t b = 0; b < 2; ++b) {
    std::vector<double> freq(4, 0.0);
    for (int64_t s = 0; s < 40000; ++s) {
      const int64_t k = y.data<int64_t>()[b * 40000 + s];
      ASSERT_TRUE(k >= 0 && k < 4) << k;
      freq[k] += 1.0 / 40000;
    }
    for (int k = 0; k < 4; ++k) {
      const double pk = p[b * 4 + k];
      EXPECT_NEAR(freq[k], pk, 6 * std::sqrt(pk * (1 - pk) / 40000) + 1e-12) << b << "," << k;
    }
  }
}

TEST(RandomKernels, BernoulliDrawsOnesWithTheInputProbability) {
  TensorMap feed;
  Tensor probs(DataType::kFloat64, {3, 20000});
  for (int64_t i = 0; i < 20000; ++i) {
    probs.data<double>()[i] = 0.0;
    probs.data<double>()[20000 + i] = 0.3;
    probs.data<double>()[40000 + i] = 1.0;
  }
  feed.set("p", probs);
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (double[3,20000] p) => (int32 y, double z) {
      y = Bernoulli<dtype = 6, seed = 2.0>(p)
      z = Bernoulli<seed = 2.0>(p)
    }
  )",
                                 feed);
  ASSERT_EQ(out.at("y").dtype(), DataType::kInt32);
  ASSERT_EQ(out.at("z").dtype(), DataType::kFloat64);
  std::vector<double> y = values_of(out.at("y")), z = values_of(out.at("z"));
  double ones[3] = {0, 0, 0};
  for (int64_t i = 0; i < 60000; ++i) {
    ASSERT_TRUE(y[i] == 0 || y[i] == 1);
    ASSERT_EQ(y[i], z[i]);  // same seed, same draws
    ones[i / 20000] += y[i];
  }
  EXPECT_EQ(ones[0], 0);
  EXPECT_EQ(ones[2], 20000);
  EXPECT_NEAR(ones[1] / 20000, 0.3, 6 * std::sqrt(0.3 * 0.7 / 20000));
}

TEST(DropoutKernel, InferenceIsTheIdentityWithAMaskOfTrueAtEveryVersion) {
  auto np = numpy_arrays("save('x', rng.randn(3, 4).astype(np.float32))\n");
  TensorMap feed;
  feed.set("x", np.at("x"));
  feed.set("r", Tensor::scalar<float>(0.7f));
  feed.set("t", Tensor::scalar<bool>(false));
  for (int opset : {7, 10, 12, 13}) {
    std::string text = fmt::format(R"(
      <ir_version: 8, opset_import: ["" : {}]>
      g (float[3,4] x, float r, bool t) => (float y, {} m, float y2) {{
        y, m = Dropout{}
        y2 = Dropout(x)
      }}
    )",
                                   opset, opset >= 10 ? "bool" : "float",
                                   opset >= 12 ? "(x, r, t)" : "<ratio = 0.7>(x)");
    TensorMap out = run_text_model(text, feed);
    EXPECT_TRUE(tensors_identical(out.at("y"), np.at("x"))) << opset;
    EXPECT_TRUE(tensors_identical(out.at("y2"), np.at("x"))) << opset;
    const Tensor& m = out.at("m");
    EXPECT_EQ(m.shape(), (Shape{3, 4}));
    std::vector<double> mv = values_of(m);
    EXPECT_TRUE(std::all_of(mv.begin(), mv.end(), [](double v) { return v == 1; })) << opset;
  }
  // Before 7, is_test selects inference.
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 6]>
    g (float[3,4] x) => (float y) { y = Dropout<is_test = 1, ratio = 0.9>(x) }
  )",
                                 feed);
  EXPECT_TRUE(tensors_identical(out.at("y"), np.at("x")));
}

TEST(DropoutKernel, TrainingDropsWithTheRatioAndScalesTheRest) {
  TensorMap feed;
  Tensor x(DataType::kFloat32, {50000});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = 1.0f + static_cast<float>(i % 7);
  feed.set("x", x);
  feed.set("r", Tensor::scalar<float>(0.25f));
  feed.set("t", Tensor::scalar<bool>(true));
  const char* text = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[50000] x, float r, bool t) => (float y, bool m) { y, m = Dropout<seed = 9>(x, r, t) }
  )";
  TensorMap out = run_text_model(text, feed);
  const float* y = out.at("y").data<float>();
  const bool* m = out.at("m").data<bool>();
  double kept = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    // The spec's scale 1 / (1 - ratio), applied in double and rounded once.
    const float expected =
        m[i] ? static_cast<float>(static_cast<double>(x.data<float>()[i]) * (1.0 / (1.0 - 0.25)))
             : 0.0f;
    ASSERT_EQ(y[i], expected) << i;
    kept += m[i];
  }
  EXPECT_NEAR(kept / 50000, 0.75, 6 * std::sqrt(0.75 * 0.25 / 50000));
  EXPECT_TRUE(tensors_identical(run_text_model(text, feed).at("m"), out.at("m")));

  feed.set("r", Tensor::scalar<float>(1.0f));
  std::string message = error_of([&] { run_text_model(text, feed); });
  EXPECT_NE(message.find("failed to run node 'Dropout_0' (Dropout): ratio is 1; it must be in "
                         "[0, 1)"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace parity::testing
