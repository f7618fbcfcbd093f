// Maps and sequences as model inputs: both runners describe them in their input metadata
// (kind, element / key / value types), the data loader generates them from that metadata,
// and both runners take them as their derived tensors (backend/value_tensors.h). A
// DictVectorizer model is fed a generated map and a SequenceAt/ConcatFromSequence model a
// generated sequence; ONNX Runtime and the reference backend must agree, and the sequence
// model's outputs equal NumPy on the fed items.
#include <gtest/gtest.h>

#include "backend/ref/ml_cases.h"
#include "backend/ref/runner.h"
#include "backend/value_tensors.h"
#include "comparator/data_loader.h"
#include "comparator/feed_coercion.h"
#include "ort_test_util.h"

namespace parity {
namespace {

TensorMap generated_feed(const TensorMetadata& meta, int64_t seed) {
  DataLoaderOptions options;
  options.seed = seed;
  DataLoader loader(options);
  loader.set_input_metadata(meta);
  return *loader.get(0);
}

TensorMap run(Runner& runner, const TensorMap& feed) {
  RunnerActivation active(runner);
  return runner.infer(fit_value_inputs(feed, runner.input_metadata()));
}

void expect_same(const TensorMap& a, const TensorMap& b) {
  ASSERT_EQ(a.names(), b.names());
  for (const auto& [name, t] : a) EXPECT_TRUE(t.equals(b.at(name))) << name;
}

TEST(OrtValueInputs, DictVectorizerFedAGeneratedMap) {
  testing::MlCase c = testing::ml_case(R"(
ml_model([ml('DictVectorizer', ['m'], ['y'], int64_vocabulary=[2, 0, 7, 1])],
         [oh.make_value_info('m', map_type(TP.INT64, TP.DOUBLE))], [vi('y', TP.DOUBLE, None)],
         ml_opset=1)
)");
  testing::ort_runtime();
  OnnxrtRunner ort(SessionFromOnnxBytes(c.model_bytes));
  PluginRefRunner ref(Loader<ModelPtr>(ModelPtr(c.model)));
  for (Runner* r : {static_cast<Runner*>(&ort), static_cast<Runner*>(&ref)}) {
    RunnerActivation active(*r);
    const TensorMetadata meta = r->input_metadata();
    ASSERT_EQ(meta.size(), 1u) << r->name();
    EXPECT_EQ(meta[0].kind, Value::Kind::kMap) << r->name();
    EXPECT_EQ(meta[0].key_type, DataType::kInt64) << r->name();
    EXPECT_EQ(meta[0].dtype, DataType::kFloat64) << r->name();
  }
  TensorMap feed = [&] {
    RunnerActivation active(ort);
    return generated_feed(ort.input_metadata(), 1);
  }();
  EXPECT_EQ(feed.names(), (std::vector<std::string>{"m.keys", "m.values"}));
  EXPECT_EQ(feed.at("m.values").dtype(), DataType::kFloat64);
  TensorMap from_ort = run(ort, feed), from_ref = run(ref, feed);
  expect_same(from_ort, from_ref);
  // Keys 0, 1, 2 with the vocabulary [2, 0, 7, 1]: y = [v(2), v(0), 0, v(1)].
  const double* v = feed.at("m.values").data<double>();
  const double* y = from_ref.at("y").data<double>();
  EXPECT_EQ(y[0], v[2]);
  EXPECT_EQ(y[1], v[0]);
  EXPECT_EQ(y[2], 0.0);
  EXPECT_EQ(y[3], v[1]);
}

TEST(OrtValueInputs, SequenceModelFedAGeneratedSequence) {
  testing::MlCase c = testing::ml_case(R"(
seq = oh.make_sequence_type_proto(oh.make_tensor_type_proto(TP.FLOAT, [2, 3]))
one = oh.make_node('Constant', [], ['one'], value=oh.make_tensor('one', TP.INT64, [], [1]))
ml_model([one, oh.make_node('SequenceAt', ['s', 'one'], ['at']),
          oh.make_node('ConcatFromSequence', ['s'], ['cat'], axis=0),
          oh.make_node('SequenceLength', ['s'], ['n'])],
         [oh.make_value_info('s', seq)],
         [vi('at', TP.FLOAT, [2, 3]), vi('cat', TP.FLOAT, [None, 3]), vi('n', TP.INT64, [])])
)");
  testing::ort_runtime();
  OnnxrtRunner ort(SessionFromOnnxBytes(c.model_bytes));
  PluginRefRunner ref(Loader<ModelPtr>(ModelPtr(c.model)));
  TensorMap feed = [&] {
    RunnerActivation active(ref);
    const TensorMetadata meta = ref.input_metadata();
    EXPECT_EQ(meta[0].kind, Value::Kind::kSequence);
    EXPECT_EQ(meta[0].dtype, DataType::kFloat32);
    return generated_feed(meta, 3);
  }();
  EXPECT_EQ(feed.names(), (std::vector<std::string>{"s[0]", "s[1]"}));
  TensorMap from_ort = run(ort, feed), from_ref = run(ref, feed);
  expect_same(from_ort, from_ref);
  EXPECT_TRUE(from_ref.at("at").equals(feed.at("s[1]")));
  EXPECT_EQ(from_ref.at("n").data<int64_t>()[0], 2);
  const float* cat = from_ref.at("cat").data<float>();
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(cat[i], feed.at("s[0]").data<float>()[i]);
    EXPECT_EQ(cat[6 + i], feed.at("s[1]").data<float>()[i]);
  }
}

TEST(OrtValueInputs, MissingMapTensorsAreReportedByName) {
  testing::MlCase c = testing::ml_case(R"(
ml_model([ml('DictVectorizer', ['m'], ['y'], int64_vocabulary=[2, 0])],
         [oh.make_value_info('m', map_type(TP.INT64, TP.FLOAT))], [vi('y', TP.FLOAT, None)],
         ml_opset=1)
)");
  PluginRefRunner ref(Loader<ModelPtr>(ModelPtr(c.model)));
  RunnerActivation active(ref);
  TensorMap feed;
  feed.set("m.keys", Tensor::from_vector<int64_t>({1}, {0}));
  try {
    ref.infer(feed);
    ADD_FAILURE() << "a map without its values ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("it needs the tensors 'm.keys' and 'm.values'"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace parity
