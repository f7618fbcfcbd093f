// Maps and sequences as model inputs: both runners take them as their derived tensors
// (backend/value_tensors.h: m.keys / m.values, s[0], s[1], ...) and build the value before the
// run (the reference as a Value, ONNX Runtime through CreateValue). A DictVectorizer model is
// fed a map and a SequenceAt/ConcatFromSequence model a sequence; ONNX Runtime and the
// reference backend must agree, and the outputs equal the ops' meaning on the fed items.
#include <gtest/gtest.h>

#include "backend/ref/ml_cases.h"
#include "backend/ref/runner.h"
#include "backend/value_tensors.h"
#include "ort_test_util.h"

namespace parity {
namespace {

TensorMap run(Runner& runner, const TensorMap& feed) {
  RunnerActivation active(runner);
  return runner.infer(feed);
}

void expect_same(const TensorMap& a, const TensorMap& b) {
  ASSERT_EQ(a.names(), b.names());
  for (const auto& [name, t] : a) EXPECT_TRUE(t.equals(b.at(name))) << name;
}

TEST(OrtValueInputs, DictVectorizerFedAMap) {
  testing::MlCase c = testing::ml_case(R"(
ml_model([ml('DictVectorizer', ['m'], ['y'], int64_vocabulary=[2, 0, 7, 1])],
         [oh.make_value_info('m', map_type(TP.INT64, TP.DOUBLE))], [vi('y', TP.DOUBLE, None)],
         ml_opset=1)
)");
  testing::ort_runtime();
  OnnxrtRunner ort(SessionFromOnnxBytes(c.model_bytes));
  PluginRefRunner ref(Loader<ModelPtr>(ModelPtr(c.model)));
  TensorMap feed;
  add_value_tensors(feed, "m",
                    Value::make_map(sorted_map_from_entries(
                        Tensor::from_vector<int64_t>({3}, {1, 0, 5}),
                        Tensor::from_vector<double>({3}, {0.25, -1.5, 8.0}))));
  EXPECT_EQ(feed.names(), (std::vector<std::string>{"m.keys", "m.values"}));
  TensorMap from_ort = run(ort, feed), from_ref = run(ref, feed);
  expect_same(from_ort, from_ref);
  // Keys {0: -1.5, 1: 0.25, 5: 8} over the vocabulary [2, 0, 7, 1]: [0, -1.5, 0, 0.25].
  EXPECT_TRUE(from_ref.at("y").reshaped({4}).equals(
      Tensor::from_vector<double>({4}, {0.0, -1.5, 0.0, 0.25})));
}

TEST(OrtValueInputs, SequenceModelFedASequence) {
  testing::MlCase c = testing::ml_case(R"(
seq = oh.make_sequence_type_proto(oh.make_tensor_type_proto(TP.FLOAT, [2, 3]))
one = oh.make_node('Constant', [], ['one'], value=oh.make_tensor('one', TP.INT64, [], [1]))
ml_model([one, oh.make_node('SequenceAt', ['s', 'one'], ['at']),
          oh.make_node('ConcatFromSequence', ['s'], ['cat'], axis=0),
          oh.make_node('SequenceLength', ['s'], ['n'])],
         [oh.make_value_info('s', seq)],
         [vi('at', TP.FLOAT, [2, 3]), vi('cat', TP.FLOAT, [None, 3]), vi('n', TP.INT64, [])])
x = rng.rand(3, 2, 3).astype(np.float32)
for i in range(3): save('s%d' % i, x[i])
save('cat', np.concatenate(list(x), axis=0))
)");
  testing::ort_runtime();
  OnnxrtRunner ort(SessionFromOnnxBytes(c.model_bytes));
  PluginRefRunner ref(Loader<ModelPtr>(ModelPtr(c.model)));
  TensorMap feed;
  add_value_tensors(
      feed, "s",
      Value::make_sequence({c.tensor("s0"), c.tensor("s1"), c.tensor("s2")}, DataType::kFloat32));
  EXPECT_EQ(feed.names(), (std::vector<std::string>{"s[0]", "s[1]", "s[2]"}));
  TensorMap from_ort = run(ort, feed), from_ref = run(ref, feed);
  expect_same(from_ort, from_ref);
  EXPECT_TRUE(from_ref.at("at").equals(c.tensor("s1")));
  EXPECT_TRUE(from_ref.at("cat").equals(c.tensor("cat")));
  EXPECT_EQ(from_ref.at("n").data<int64_t>()[0], 3);
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
