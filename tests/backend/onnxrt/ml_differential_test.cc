// The ai.onnx.ml cases of tests/backend/ref/ml_cases.h on the real ONNX Runtime: each output
// is checked against the same NumPy restatement the reference backend is checked against, so
// the two backends agree through it. Where ONNX Runtime computes in float32 the tolerance is
// float32's (rtol 1e-5); an output where ONNX Runtime departs from the specification is named
// with the reason and compared against NumPy on the reference backend only.
#include <gtest/gtest.h>

#include <set>

#include "backend/onnxrt/values.h"
#include "backend/ref/ml_cases.h"
#include "backend/ref/runner.h"
#include "ort_test_util.h"

namespace parity {
namespace {

void expect_ort_matches_numpy(const std::string& script,
                              const std::map<std::string, std::string>& departures = {}) {
  testing::MlCase c = testing::ml_case(script);
  auto runner = testing::bytes_runner(c.model_bytes);
  TensorMap out = runner->infer(c.feed());
  for (const std::string& name : c.output_names()) {
    auto departure = departures.find(name);
    if (departure != departures.end()) {
      std::cout << "[ NOTE     ] output '" << name
                << "' is not compared on ONNX Runtime: " << departure->second << "\n";
      continue;
    }
    EXPECT_TRUE(testing::ml_close(out.at(name), c.tensor("expect_" + name), 1e-5, 1e-6)) << name;
  }
}

TEST(OrtMlDifferential, Preprocessing) { expect_ort_matches_numpy(testing::kMlPreprocessCase); }
// A case ONNX Runtime cannot run: the reference backend is checked against NumPy only
// (MlOps.IntegerBinarizerMatchesNumPy); this says so, and compares once ONNX Runtime can.
TEST(OrtMlDifferential, IntegerBinarizerIsComparedWhereOnnxRuntimeRunsIt) {
  testing::MlCase c = testing::ml_case(testing::kMlBinarizerIntCase);
  std::unique_ptr<OnnxrtRunner> runner;
  std::string error = testing::error_of([&] { runner = testing::bytes_runner(c.model_bytes); });
  if (error.find("Could not find an implementation for Binarizer") != std::string::npos) {
    std::cout << "[ NOTE     ] int64 Binarizer is compared against NumPy only: ONNX Runtime "
                 "implements Binarizer for float\n";
    return;
  }
  ASSERT_EQ(error, "");
  EXPECT_TRUE(testing::ml_close(runner->infer(c.feed()).at("bin_i"), c.tensor("expect_bin_i")));
}
TEST(OrtMlDifferential, Encoders) { expect_ort_matches_numpy(testing::kMlEncodersCase); }
TEST(OrtMlDifferential, LabelEncoderOpset4) {
  expect_ort_matches_numpy(testing::kMlLabelEncoder4Case,
                           {{"coded",
                             "ONNX Runtime keeps the first value of a repeated key; ml "
                             "opset 4 says the last one takes precedence"}});
}
TEST(OrtMlDifferential, LinearModels) { expect_ort_matches_numpy(testing::kMlLinearCase); }
TEST(OrtMlDifferential, PostTransforms) {
  expect_ort_matches_numpy(testing::kMlPostTransformCase,
                           {{"probit",
                             "ONNX Runtime's PROBIT uses a single-precision erfinv "
                             "approximation (up to 6e-3 off for p in [0.001, 0.999])"}});
}
TEST(OrtMlDifferential, TreeEnsembleRegressor) {
  expect_ort_matches_numpy(std::string(testing::kMlTreeWalk) + testing::kMlTreeRegressorCase);
}
TEST(OrtMlDifferential, TreeEnsembleClassifier) {
  expect_ort_matches_numpy(std::string(testing::kMlTreeWalk) + testing::kMlTreeClassifierCase,
                           {{"score_bin",
                             "with weights for class 1 only and no base_values ONNX Runtime writes "
                             "[0, s]; ONNX's reference implementation writes [1 - s, s]"}});
}
TEST(OrtMlDifferential, TreeEnsembleOpset5) {
  // ONNX Runtime before ml opset 5 support (1.17 among the versions Parity supports) refuses
  // the model; then the case is compared against NumPy only, and this says so.
  testing::MlCase c = testing::ml_case(testing::kMlTreeEnsemble5Case);
  std::string error = testing::error_of([&] { testing::bytes_runner(c.model_bytes); });
  if (error.find("support for domain ai.onnx.ml is till opset 4") != std::string::npos) {
    std::cout << "[ NOTE     ] TreeEnsemble (ml opset 5) is compared against NumPy only: ONNX "
                 "Runtime "
              << testing::ort_runtime().library().version() << " supports ml opsets up to 4\n";
    return;
  }
  expect_ort_matches_numpy(
      testing::kMlTreeEnsemble5Case,
      {{"y_avg",
        "ONNX Runtime reads post_transform 2 as SOFTMAX (its own enum order); ml opset "
        "5 defines 1 as SOFTMAX and 2 as LOGISTIC"}});
}
TEST(OrtMlDifferential, SvmModels) { expect_ort_matches_numpy(testing::kMlSvmCase); }
TEST(OrtMlDifferential, Opset1Forms) { expect_ort_matches_numpy(testing::kMlOpset1Case); }
TEST(OrtMlDifferential, TensorAttributes) {
  expect_ort_matches_numpy(testing::kMlTensorAttributesCase);
}

}  // namespace
}  // namespace parity

namespace parity {
namespace {

// ZipMap's sequence of maps comes back from ONNX Runtime's runner spelled as tensors
// (backend/value_tensors.h), equal to the reference backend's.
TEST(OrtMlDifferential, ZipMapSequenceOfMapsMatchesTheReference) {
  testing::MlCase c = testing::ml_case(R"(
x = rng.rand(3, 3).astype(np.float32); save('x', x)
seq = oh.make_sequence_type_proto(map_type(TP.STRING, TP.FLOAT))
ml_model([ml('ZipMap', ['x'], ['z'], classlabels_strings=['b', 'c', 'a'])], [vi('x', TP.FLOAT, [3, 3])],
         [oh.make_value_info('z', seq)], ml_opset=1)
)");
  auto runner = testing::bytes_runner(c.model_bytes);
  TensorMap from_ort = runner->infer(c.feed());
  PluginRefRunner ref(Loader<ModelPtr>(ModelPtr(c.model)));
  RunnerActivation active(ref);
  TensorMap from_ref = ref.infer(c.feed());
  ASSERT_EQ(from_ort.names(), from_ref.names());
  EXPECT_EQ(from_ort.names(),
            (std::vector<std::string>{"z[0].keys", "z[0].values", "z[1].keys", "z[1].values",
                                      "z[2].keys", "z[2].values"}));
  for (const auto& [name, tensor] : from_ort) EXPECT_TRUE(tensor.equals(from_ref.at(name))) << name;
}

// DictVectorizer and CastMap take a map: it is handed to ONNX Runtime through CreateValue
// (backend/onnxrt/values.h) and the outputs compared with the reference backend's.
Value run_on_ort_with_map(const std::string& model_bytes, const Value& input) {
  OrtSessionPtr session = SessionFromOnnxBytes(model_bytes)();
  const OrtRuntime& runtime = session->runtime();
  const ort::Api& api = runtime.api();
  OrtValuePtr in = value_to_ort(runtime, input, "m");
  const char* input_name = "m";
  const ort::Value* inputs[] = {in.get()};
  ort::Value* out = nullptr;
  ort::check(api,
             api.Run(session->get(), nullptr, &input_name, inputs, 1,
                     session->output_name_pointers(), 1, &out),
             "run the model");
  return value_from_ort(runtime, OrtValuePtr(out, OrtValueRelease{api.ReleaseValue}), "y");
}

TEST(OrtMlDifferential, MapInputsMatchTheReference) {
  testing::ort_runtime();
  struct Case {
    std::string node;
    int key_type, value_type, out_type;
    Value input;
  };
  auto make = [](auto keys, auto values) {
    using K = typename decltype(keys)::value_type;
    using V = typename decltype(values)::value_type;
    return Value::make_map(
        sorted_map_from_entries(Tensor::from_vector<K>({int64_t(keys.size())}, keys),
                                Tensor::from_vector<V>({int64_t(values.size())}, values)));
  };
  const Case cases[] = {
      {"ml('DictVectorizer', ['m'], ['y'], string_vocabulary=['x', 'a', 'q', 'b'])", 8, 1, 1,
       make(std::vector<std::string>{"b", "a", "zz"}, std::vector<float>{2.5f, -1, 9})},
      {"ml('DictVectorizer', ['m'], ['y'], int64_vocabulary=[5, 1, 3])", 7, 11, 11,
       make(std::vector<int64_t>{3, 5, 8}, std::vector<double>{0.5, -2.25, 7})},
      {"ml('CastMap', ['m'], ['y'], cast_to='TO_INT64')", 7, 1, 7,
       make(std::vector<int64_t>{4, 0, 2}, std::vector<float>{1.75f, -2.5f, 3.0f})},
      {"ml('CastMap', ['m'], ['y'], map_form='SPARSE', max_map=5)", 7, 1, 1,
       make(std::vector<int64_t>{4, 0, 2}, std::vector<float>{1.75f, -2.5f, 3.0f})},
      {"ml('CastMap', ['m'], ['y'], cast_to='TO_STRING', map_form='SPARSE', max_map=3)", 7, 1, 8,
       make(std::vector<int64_t>{0, 2}, std::vector<float>{1.75f, -2.5f})},
      {"ml('CastMap', ['m'], ['y'], cast_to='TO_FLOAT')", 7, 8, 1,
       make(std::vector<int64_t>{1, 0}, std::vector<std::string>{"2.5", "-1e3"})},
  };
  for (const Case& k : cases) {
    testing::MlCase c = testing::ml_case(fmt::format(R"(
mt = map_type({}, {})
ml_model([{}], [oh.make_value_info('m', mt)], [vi('y', {}, None)], ml_opset=1)
)",
                                                     k.key_type, k.value_type, k.node, k.out_type));
    Value from_ort = run_on_ort_with_map(c.model_bytes, k.input);
    ref::Executor executor(c.model);
    Value from_ref = executor.run({{"m", k.input}}).at(0).value;
    ASSERT_TRUE(from_ort.is_tensor() && from_ref.is_tensor()) << k.node;
    EXPECT_TRUE(from_ort.tensor.equals(from_ref.tensor))
        << k.node << "\nONNX Runtime " << shape_str(from_ort.tensor.shape()) << ", reference "
        << shape_str(from_ref.tensor.shape());
  }
}

}  // namespace
}  // namespace parity
