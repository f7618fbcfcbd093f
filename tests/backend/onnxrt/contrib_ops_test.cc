// ONNX Runtime's com.microsoft fused ops: every case of tests/backend/ref/ms_ops_cases.h run
// on the real ONNX Runtime (CPU) and on the reference backend with the same inputs, each
// compared with the other and with the NumPy restatement. Then ONNX Runtime optimizes a small
// transformer-like block and saves it (optimized_model_filepath): the saved model must hold
// fused com.microsoft nodes, and the reference backend must run it and agree with the unfused
// original.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <set>

#include "backend/ref/ms_ops_cases.h"
#include "backend/ref/ref_test_util.h"
#include "backend/ref/runner.h"
#include "ort_test_util.h"

namespace parity::testing {
namespace {

// ONNX Runtime computes in float32 (and MLAS approximates erf, tanh and exp), the reference in
// double: an element passes when |a - b| <= atol + rtol |b|.
constexpr double kRtol = 1e-4, kAtol = 2e-5;

// The largest |a - b| over two tensors of the same type and shape (as double).
double max_difference(const Tensor& a, const Tensor& b) {
  auto values = [](const Tensor& t) {
    return ref::dispatch<ref::AllTypes>(t.dtype(), [&]<typename T>() {
      std::vector<double> v(static_cast<size_t>(t.numel()));
      for (size_t i = 0; i < v.size(); ++i) v[i] = ref::to_double(t.data<T>()[i]);
      return v;
    });
  };
  const std::vector<double> va = values(a), vb = values(b);
  double worst = 0;
  for (size_t i = 0; i < va.size() && i < vb.size(); ++i)
    worst = std::max(worst, std::abs(va[i] - vb[i]));
  return worst;
}

class OrtContribOps : public ::testing::TestWithParam<MsOpCase> {};

TEST_P(OrtContribOps, OnnxRuntimeAgreesWithReferenceAndNumpy) {
  const MsOpCase& c = GetParam();
  auto np = numpy_arrays(std::string(kMsNumpyHelpers) + c.numpy);
  const TensorMap feed = feed_of(np, c.inputs);
  if (!c.ort_unsafe.empty()) {
    const TensorMap from_ref = run_text_model(c.model, feed);
    for (const std::string& name : c.outputs)
      EXPECT_TRUE(tensors_close(from_ref.at(name), np.at(name), kRtol, kAtol)) << c.name;
    std::printf("[ contrib ] %s: not given to ONNX Runtime (%s); compared with NumPy only\n",
                c.name.c_str(), c.ort_unsafe.c_str());
    return;
  }
  if (ort_minor_version() < c.ort_min_minor) {
    const TensorMap from_ref = run_text_model(c.model, feed);
    for (const std::string& name : c.outputs)
      EXPECT_TRUE(tensors_close(from_ref.at(name), np.at(name), kRtol, kAtol)) << c.name;
    std::printf(
        "[ contrib ] %s: checked on ONNX Runtime 1.%d and later; ONNX Runtime %s is "
        "older, compared with NumPy only\n",
        c.name.c_str(), c.ort_min_minor, ort_runtime().library().version().c_str());
    return;
  }
  if (!c.ort_cpu_error.empty()) {
    // Not silently skipped: ONNX Runtime must still refuse it (this fails once it runs it, so
    // that the case joins the comparison); the reference is checked against NumPy alone.
    // Refused when the session is made (no kernel) or when it runs (a form the kernel lacks).
    const std::string error = error_of([&] {
      auto runner = bytes_runner(model_bytes_from_text(c.model));
      runner->infer(feed);
    });
    EXPECT_NE(error.find(c.ort_cpu_error), std::string::npos) << error;
    const TensorMap from_ref = run_text_model(c.model, feed);
    for (const std::string& name : c.outputs)
      EXPECT_TRUE(tensors_close(from_ref.at(name), np.at(name), kRtol, kAtol)) << c.name;
    std::printf(
        "[ contrib ] %s: ONNX Runtime's CPU provider refuses it; compared with NumPy only\n",
        c.name.c_str());
    return;
  }
  auto ort = bytes_runner(model_bytes_from_text(c.model));
  const TensorMap from_ort = ort->infer(feed);
  const TensorMap from_ref = run_text_model(c.model, feed);
  for (const std::string& name : c.outputs) {
    const Tensor& o = from_ort.at(name);
    const Tensor& r = from_ref.at(name);
    const double rtol = c.ort_rtol > 0 ? c.ort_rtol : kRtol,
                 atol = c.ort_atol > 0 ? c.ort_atol : kAtol;
    EXPECT_TRUE(tensors_close(r, o, rtol, atol))
        << c.name << " " << name << ": reference vs ONNX Runtime";
    EXPECT_TRUE(tensors_close(o, np.at(name), rtol, atol))
        << c.name << " " << name << ": ONNX Runtime vs NumPy";
    std::printf("[ contrib ] %s %s: max |ORT - ref| = %.3g\n", c.name.c_str(), name.c_str(),
                max_difference(o, r));
  }
  ort->deactivate();
}

INSTANTIATE_TEST_SUITE_P(Contrib, OrtContribOps, ::testing::ValuesIn(ms_op_cases()),
                         [](const ::testing::TestParamInfo<MsOpCase>& info) {
                           return info.param.name;
                         });

// `count` weights as ONNX text, "{0.42, -0.11, ...}", from a fixed pseudo-random sequence.
std::string weights(int count, uint32_t seed, double spread) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, spread);
  std::vector<std::string> values;
  for (int i = 0; i < count; ++i) values.push_back(fmt::format("{:.5f}", normal(rng)));
  return fmt::format("{{{}}}", fmt::join(values, ", "));
}

// A residual block of a transformer layer written op by op, the way exporters write it:
// residual Add, LayerNormalization spelled out (ReduceMean, Sub, Pow, Sqrt, Div...), an MLP
// whose Gelu is spelled with Erf, and a MatMul scaled by a constant; then an RMS norm spelled
// out. ONNX Runtime's transformer fusions turn these into SkipLayerNormalization, BiasGelu,
// FusedMatMul and SimplifiedLayerNormalization.
std::string transformer_block() {
  return fmt::format(R"(<ir_version: 8, opset_import: ["" : 17]>
    block (float[2,4,16] x, float[2,4,16] r) => (float[2,4,16] y)
    <float[16] gamma = {}, float[16] beta = {}, float[16,32] w1 = {}, float[32] b1 = {},
     float[32,16] w2 = {}, float[16] g2 = {}, float eps = {{0.00001}}, float two = {{2.0}},
     float sqrt2 = {{1.4142135}}, float one = {{1.0}}, float half = {{0.5}}, float scale = {{0.125}}> {{
      h = Add(x, r)
      m = ReduceMean<axes = [-1]>(h)
      d = Sub(h, m)
      p = Pow(d, two)
      v = ReduceMean<axes = [-1]>(p)
      ve = Add(v, eps)
      sd = Sqrt(ve)
      n = Div(d, sd)
      ng = Mul(n, gamma)
      ln = Add(ng, beta)
      m1 = MatMul(ln, w1)
      a1 = Add(m1, b1)
      q1 = Div(a1, sqrt2)
      e = Erf(q1)
      e1 = Add(e, one)
      q2 = Mul(a1, e1)
      q3 = Mul(q2, half)
      m2 = MatMul(q3, w2)
      s2 = Mul(m2, scale)
      o = Add(s2, ln)
      o2 = Pow(o, two)
      ms = ReduceMean<axes = [-1]>(o2)
      mse = Add(ms, eps)
      rms = Sqrt(mse)
      on = Div(o, rms)
      y = Mul(on, g2)
    }})",
                     weights(16, 1, 0.5), weights(16, 2, 0.5), weights(512, 3, 0.3),
                     weights(32, 4, 0.1), weights(512, 5, 0.3), weights(16, 6, 0.5));
}

TEST(OrtContribOps, OptimizedAndSavedModelHasFusedNodesTheReferenceRunsAlike) {
  TempDir dir;
  const std::string text = transformer_block();
  const std::string saved = dir.file("optimized.onnx");
  OrtOptions options;
  options.graph_optimization_level = 2;  // extended: the transformer fusions, no layout changes
  options.optimized_model_path = saved;
  auto ort = bytes_runner(model_bytes_from_text(text), options);

  // The saved model's fused nodes.
  ::onnx::ModelProto proto;
  {
    std::ifstream in(saved, std::ios::binary);
    ASSERT_TRUE(in.good()) << "ONNX Runtime did not save " << saved;
    ASSERT_TRUE(proto.ParseFromIstream(&in));
  }
  std::set<std::string> ops;
  for (const auto& node : proto.graph().node()) ops.insert(node.domain() + ":" + node.op_type());
  std::string listing;
  for (const std::string& op : ops) listing += op + " ";
  std::printf("[ contrib ] optimized model ops: %s\n", listing.c_str());
  for (const char* fused : {"com.microsoft:SkipLayerNormalization", "com.microsoft:FusedMatMul",
                            ":SimplifiedLayerNormalization"})
    EXPECT_TRUE(ops.count(fused)) << fused << " missing; the saved model has: " << listing;
  // ONNX Runtime 1.17 writes BiasGelu; 1.30 folds the MatMul + Add into Gemm first, so the Gelu
  // stays a Gelu.
  EXPECT_TRUE(ops.count("com.microsoft:Gelu") || ops.count("com.microsoft:BiasGelu"))
      << "no fused Gelu; the saved model has: " << listing;
  for (const char* unfused : {":Erf", ":ReduceMean", ":Sqrt"})
    EXPECT_FALSE(ops.count(unfused)) << unfused << " left unfused: " << listing;

  // Reference on the optimized model vs reference on the original vs ONNX Runtime.
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  TensorMap feed;
  for (const char* name : {"x", "r"}) {
    Tensor t(DataType::kFloat32, {2, 4, 16});
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = normal(rng);
    feed.set(name, t);
  }
  PluginRefRunner fused_ref(OnnxFromPath(saved));
  RunnerActivation active(fused_ref);
  const Tensor from_fused = fused_ref.infer(feed).at("y");
  const Tensor from_original = run_text_model(text, feed).at("y");
  const Tensor from_ort = ort->infer(feed).at("y");
  EXPECT_TRUE(tensors_close(from_fused, from_original, 1e-5, 1e-5));
  EXPECT_TRUE(tensors_close(from_ort, from_original, kRtol, kAtol));
  std::printf("[ contrib ] max |fused ref - original ref| = %.3g, |ORT - original ref| = %.3g\n",
              max_difference(from_fused, from_original), max_difference(from_ort, from_original));
  ort->deactivate();
}

}  // namespace
}  // namespace parity::testing
