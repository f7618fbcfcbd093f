// Differential test: the example models of the repository and small generated graphs run on
// ONNX Runtime and on the reference backend with the same random inputs, and agree within
// Polygraphy's default tolerances (an element passes when |a - b| <= 1e-5 or the relative
// difference <= 1e-5).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backend/ref/runner.h"
#include "ort_test_util.h"
#include "support/test_util.h"

namespace parity {
namespace {

constexpr double kAtol = 1e-5, kRtol = 1e-5;

// Uniform [-1, 1) floats for every input; symbolic dims become 2.
TensorMap random_feed(const TensorMetadata& meta, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  TensorMap feed;
  for (const TensorMeta& m : meta) {
    EXPECT_EQ(m.dtype, DataType::kFloat32) << m.name;
    Shape shape;
    for (const Dim& d : *m.shape) shape.push_back(d.is_fixed() ? d.value : 2);
    Tensor t(DataType::kFloat32, shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = uniform(rng);
    feed.set(m.name, t);
  }
  return feed;
}

void expect_close(const Tensor& ort, const Tensor& ref, const std::string& what) {
  ASSERT_EQ(ort.dtype(), ref.dtype()) << what;
  ASSERT_EQ(ort.shape(), ref.shape()) << what;
  ASSERT_EQ(ort.dtype(), DataType::kFloat32) << what;
  const float* a = ort.data<float>();
  const float* b = ref.data<float>();
  int64_t failures = 0;
  double worst = 0;
  for (int64_t i = 0; i < ort.numel(); ++i) {
    double diff = std::abs(double(a[i]) - double(b[i]));
    double rel = diff / std::abs(double(b[i]));
    if (!(diff <= kAtol || rel <= kRtol)) ++failures;
    worst = std::max(worst, diff);
  }
  EXPECT_EQ(failures, 0) << what << ": max abs difference " << worst;
}

void compare_backends(Loader<ModelPtr> model, const std::string& what) {
  testing::ort_runtime();
  OnnxrtRunner ort(SessionFromOnnx(model));
  PluginRefRunner ref(model);
  RunnerActivation ort_active(ort), ref_active(ref);
  for (uint32_t seed : {1u, 2u}) {
    TensorMap feed = random_feed(ort.input_metadata(), seed);
    TensorMap from_ort = ort.infer(feed), from_ref = ref.infer(feed);
    ASSERT_EQ(from_ort.names(), from_ref.names()) << what;
    for (const auto& [name, tensor] : from_ort)
      expect_close(tensor, from_ref.at(name), what + " output " + name);
  }
}

TEST(OrtDifferential, ExampleModels) {
  for (const char* file : {"examples/identity.onnx", "examples/tiny_cnn.onnx"})
    compare_backends(OnnxFromPath(testing::source_path(file)), file);
}

TEST(OrtDifferential, ExampleModelWithEveryTensorMarked) {
  compare_backends(
      ModifyOutputs(OnnxFromPath(testing::source_path("examples/tiny_cnn.onnx")), {}, true),
      "tiny_cnn, mark all");
}

// `count` weights in [-0.5, 0.5], as ONNX text: "{0.42, -0.11, ...}".
std::string weights(int count, int salt) {
  std::vector<std::string> values;
  for (int i = 0; i < count; ++i)
    values.push_back(fmt::format("{:.4f}", 0.5 * std::sin(i * 1.7 + salt)));
  return fmt::format("{{{}}}", fmt::join(values, ", "));
}

TEST(OrtDifferential, GeneratedGraphs) {
  const std::string graphs[] = {
      fmt::format(R"(<ir_version: 8, opset_import: ["" : 17]>
         conv (float[N,3,9,9] x) => (float[N,4,5,5] y)
         <float[4,3,3,3] w = {}, float[4] b = {}> {{
           c = Conv<pads = [1, 1, 1, 1], strides = [2, 2]>(x, w, b)
           y = Relu(c)
         }})",
                  weights(108, 1), weights(4, 2)),
      fmt::format(R"(<ir_version: 8, opset_import: ["" : 17]>
         mlp (float[N,8] x) => (float[N,3] y) <float[8,3] w = {}, float[3] b = {}> {{
           g = Gemm(x, w, b)
           y = Softmax<axis = 1>(g)
         }})",
                  weights(24, 3), weights(3, 4)),
      R"(<ir_version: 8, opset_import: ["" : 17]>
         shapes (float[2,3,4] a, float[2,3,4] b) => (float[4,3,4] y, float[6,3] f) {
           c = Concat<axis = 0>(a, b)
           t = Transpose<perm = [2, 1, 0]>(c)
           m = Mul(t, t)
           y = Sub(m, t)
           bt = Transpose<perm = [0, 2, 1]>(b)
           p = MatMul(a, bt)
           f = Flatten<axis = 2>(p)
         })",
      R"(<ir_version: 8, opset_import: ["" : 17]>
         pools (float[1,2,6,6] x) => (float[1,2,3,3] mx, float[1,2,3,3] av, float[1,2,1,1] g) {
           mx = MaxPool<kernel_shape = [2, 2], strides = [2, 2]>(x)
           av = AveragePool<kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]>(x)
           g = GlobalAveragePool(x)
         })",
      fmt::format(R"(<ir_version: 8, opset_import: ["" : 17]>
         norm (float[1,3,4,4] x) => (float[1,3,4,4] y) <float[3] s = {}, float[3] b = {}> {{
           y = InstanceNormalization<epsilon = 0.00001>(x, s, b)
         }})",
                  weights(3, 5), weights(3, 6)),
  };
  for (const std::string& text : graphs) compare_backends(testing::model_from_text(text), text);
}

}  // namespace
}  // namespace parity
