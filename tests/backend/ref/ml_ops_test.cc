// The ai.onnx.ml operators on the reference backend, on cases built with onnx.helper and
// checked against NumPy restatements of the specification computed in the same script
// (ml_cases.h), plus the maps (ZipMap, DictVectorizer, CastMap) and the errors for
// attribute values outside the specification.
#include <gtest/gtest.h>

#include "ml_cases.h"
#include "python_model.h"

namespace parity::testing {
namespace {

// Runs the case's model on its inputs and checks every output against expect_<name>.
void expect_case_matches_numpy(const std::string& script) {
  MlCase c = ml_case(script);
  ref::Executor executor(c.model);
  TensorMap out = executor.run(c.feed());
  for (const std::string& name : c.output_names())
    EXPECT_TRUE(ml_close(out.at(name), c.tensor("expect_" + name))) << name;
}

TEST(MlOps, PreprocessingMatchesNumPy) { expect_case_matches_numpy(kMlPreprocessCase); }
TEST(MlOps, IntegerBinarizerMatchesNumPy) { expect_case_matches_numpy(kMlBinarizerIntCase); }
TEST(MlOps, EncodersMatchNumPy) { expect_case_matches_numpy(kMlEncodersCase); }
TEST(MlOps, LabelEncoderOpset4TensorsMatchNumPy) {
  expect_case_matches_numpy(kMlLabelEncoder4Case);
}
TEST(MlOps, LinearModelsMatchNumPy) { expect_case_matches_numpy(kMlLinearCase); }
TEST(MlOps, PostTransformsMatchNumPy) { expect_case_matches_numpy(kMlPostTransformCase); }
TEST(MlOps, TreeEnsembleRegressorMatchesNumPy) {
  expect_case_matches_numpy(std::string(kMlTreeWalk) + kMlTreeRegressorCase);
}
TEST(MlOps, TreeEnsembleClassifierMatchesNumPy) {
  expect_case_matches_numpy(std::string(kMlTreeWalk) + kMlTreeClassifierCase);
}
TEST(MlOps, TreeEnsembleOpset5MatchesNumPy) { expect_case_matches_numpy(kMlTreeEnsemble5Case); }
TEST(MlOps, SvmModelsMatchNumPy) { expect_case_matches_numpy(kMlSvmCase); }
TEST(MlOps, Opset1FormsMatchNumPy) { expect_case_matches_numpy(kMlOpset1Case); }
TEST(MlOps, TensorAttributesMatchNumPy) { expect_case_matches_numpy(kMlTensorAttributesCase); }

// The message of preparing a one-node ML model whose node is written by `node` (Python).
std::string prepare_error(const std::string& node, int ml_opset = 3) {
  MlCase c = ml_case(fmt::format(R"(
nodes = [{}]
ml_model(nodes, [vi('x', TP.FLOAT, [2, 3])], [vi('y', TP.FLOAT, None)], ml_opset={})
)",
                                 node, ml_opset));
  return error_of([&] { ref::Executor executor(c.model); });
}

TEST(MlOps, AttributesOutsideTheSpecificationAreRefused) {
  EXPECT_NE(prepare_error("ml('Normalizer', ['x'], ['y'], norm='L3')")
                .find("attribute 'norm' is 'L3'; it must be one of MAX, L1, L2"),
            std::string::npos);
  EXPECT_NE(prepare_error("ml('LinearRegressor', ['x'], ['y'], coefficients=[1.0], "
                          "post_transform='SIGMOID')")
                .find("attribute 'post_transform' is 'SIGMOID'; it must be one of NONE, "
                      "LOGISTIC, SOFTMAX, SOFTMAX_ZERO, PROBIT"),
            std::string::npos);
  EXPECT_NE(
      prepare_error(
          "ml('TreeEnsembleRegressor', ['x'], ['y'], nodes_treeids=[0, 0], "
          "nodes_nodeids=[0, 1], nodes_featureids=[0, 0], nodes_modes=['BRANCH_LEQ', 'LEAF'], "
          "nodes_values=[0.0, 0.0], nodes_truenodeids=[1, 0], nodes_falsenodeids=[5, 0])")
          .find("node 0 of tree 0 has false branch 5, which is not a node of that tree"),
      std::string::npos);
  EXPECT_NE(prepare_error("ml('OneHotEncoder', ['x'], ['y'])")
                .find("exactly one of attributes 'cats_int64s' and 'cats_strings' must be set; "
                      "neither are"),
            std::string::npos);
  EXPECT_NE(
      prepare_error("ml('TreeEnsemble', ['x'], ['y'], n_targets=1, aggregate_function=7, "
                    "nodes_featureids=[0], nodes_truenodeids=[0], nodes_trueleafs=[1], "
                    "nodes_falsenodeids=[0], nodes_falseleafs=[1], tree_roots=[0], "
                    "leaf_targetids=[0], leaf_weights=nh.from_array(np.array([1], np.float32)), "
                    "nodes_modes=nh.from_array(np.array([0], np.uint8)), "
                    "nodes_splits=nh.from_array(np.array([0], np.float32)))",
                    5)
          .find("attribute 'aggregate_function' is 7; it must be 0 (AVERAGE), 1 (SUM), 2 "
                "(MIN) or 3 (MAX)"),
      std::string::npos);
}

TEST(MlOps, ArrayFeatureExtractorRefusesAnIndexOutsideTheLastAxis) {
  MlCase c = ml_case(R"(
ml_model([ml('ArrayFeatureExtractor', ['x', 'i'], ['y'])], [vi('x', TP.FLOAT, [2, 3]), vi('i', TP.INT64, [1])],
         [vi('y', TP.FLOAT, None)], ml_opset=1)
)");
  ref::Executor executor(c.model);
  TensorMap feed;
  feed.set("x", Tensor(DataType::kFloat32, {2, 3}));
  feed.set("i", Tensor::from_vector<int64_t>({1}, {3}));
  std::string message = error_of([&] { executor.run(feed); });
  EXPECT_NE(message.find("index 3 (element 0 of input Y) is out of range; it must be in [0, 2] "
                         "for a last axis of size 3"),
            std::string::npos)
      << message;
}

// A map built from parallel keys and values.
template <typename K, typename V>
Value map_value(const std::vector<K>& keys, const std::vector<V>& values) {
  return Value::make_map(
      sorted_map_from_entries(Tensor::from_vector<K>({int64_t(keys.size())}, keys),
                              Tensor::from_vector<V>({int64_t(values.size())}, values)));
}

TEST(MlMaps, ZipMapMakesOneMapPerRow) {
  MlCase m = ml_case(R"(
x = rng.rand(3, 4).astype(np.float32); save('x', x)
labels = ['d', 'b', 'a', 'c']
ml_model([ml('ZipMap', ['x'], ['z'], classlabels_strings=labels)], [vi('x', TP.FLOAT, [3, 4])],
         [oh.make_value_info('z', oh.make_sequence_type_proto(map_type(TP.STRING, TP.FLOAT)))], ml_opset=1)
# The maps in key order: the columns of the sorted labels.
order = np.argsort(labels)
save('values', x[:, order])
)");
  ref::Executor executor(m.model);
  auto out = executor.run({{"x", m.tensor("x")}});
  const Value& z = out.at(0).value;
  ASSERT_TRUE(z.is_map_sequence()) << z.kind_name();
  ASSERT_EQ(z.maps.size(), 3u);
  EXPECT_EQ(z.type_str(), "seq(map(string, float32))");
  const Tensor& values = m.tensor("values");
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(z.maps[i].keys.equals(Tensor::from_vector<std::string>({4}, {"a", "b", "c", "d"})));
    EXPECT_TRUE(tensors_identical(
        z.maps[i].values,
        Tensor::from_vector<float>({4}, std::vector<float>(values.data<float>() + i * 4,
                                                           values.data<float>() + i * 4 + 4))));
  }
}

// A one-node model over a map input; map inputs have no TensorProto type in ONNX 1.12's
// text form, so the graph is built in Python.
struct MapModel {
  MlCase c;
  std::vector<ref::NamedValue> run(const std::vector<ref::NamedValue>& feed) const {
    ref::Executor executor(c.model);
    return executor.run(feed);
  }
};
MapModel map_model(const std::string& node, int key_type, int value_type, int out_type) {
  return {ml_case(fmt::format(R"(
ml_model([{}], [oh.make_value_info('m', map_type({}, {}))], [vi('y', {}, None)], ml_opset=1)
)",
                              node, key_type, value_type, out_type))};
}

TEST(MlMaps, DictVectorizerPlacesTheValuesOfTheVocabulary) {
  MapModel m = map_model(
      "ml('DictVectorizer', ['m'], ['y'], "
      "string_vocabulary=['x', 'a', 'q', 'b'])",
      8, 1, 1);
  auto out = m.run({{"m", map_value<std::string, float>({"b", "a", "zz"}, {2.5f, -1, 9})}});
  EXPECT_TRUE(tensors_identical(out.at(0).value.tensor,
                                Tensor::from_vector<float>({1, 4}, {0, -1, 0, 2.5f})));
  std::string message = error_of([&] { m.run({{"m", map_value<int64_t, float>({1}, {1.0f})}}); });
  EXPECT_NE(message.find("input X has int64 keys but the vocabulary is string"), std::string::npos)
      << message;
  message = error_of([&] { m.run({{"m", Tensor::scalar<float>(1)}}); });
  EXPECT_NE(message.find("input 'X' is a tensor; it must be a map"), std::string::npos) << message;
}

TEST(MlMaps, CastMapDenseAndSparse) {
  Value in = map_value<int64_t, float>({4, 0, 2}, {1.75f, -2.5f, 3.0f});
  MapModel dense = map_model("ml('CastMap', ['m'], ['y'], cast_to='TO_INT64')", 7, 1, 7);
  EXPECT_TRUE(tensors_identical(dense.run({{"m", in}}).at(0).value.tensor,
                                Tensor::from_vector<int64_t>({1, 3}, {-2, 3, 1})));
  MapModel sparse = map_model("ml('CastMap', ['m'], ['y'], map_form='SPARSE', max_map=4)", 7, 1, 1);
  EXPECT_TRUE(tensors_identical(sparse.run({{"m", in}}).at(0).value.tensor,
                                Tensor::from_vector<float>({1, 4}, {-2.5f, 0, 3.0f, 0})));
  MapModel strings = map_model("ml('CastMap', ['m'], ['y'], cast_to='TO_FLOAT')", 7, 8, 1);
  EXPECT_TRUE(tensors_identical(
      strings.run({{"m", map_value<int64_t, std::string>({1, 0}, {"2.5", "-1e3"})}})
          .at(0)
          .value.tensor,
      Tensor::from_vector<float>({1, 2}, {-1000.0f, 2.5f})));
  std::string message = error_of([&] {
    strings.run({{"m", map_value<int64_t, std::string>({1}, {"2.5kg"})}});
  });
  EXPECT_NE(message.find("the value '2.5kg' of input X is not a float number"), std::string::npos)
      << message;
}

TEST(MlMaps, SortedMapKeepsTheLastValueOfARepeatedKey) {
  MapValue m = sorted_map_from_entries(Tensor::from_vector<int64_t>({4}, {5, 1, 5, 3}),
                                       Tensor::from_vector<double>({4}, {1, 2, 3, 4}));
  EXPECT_TRUE(m.keys.equals(Tensor::from_vector<int64_t>({3}, {1, 3, 5})));
  EXPECT_TRUE(m.values.equals(Tensor::from_vector<double>({3}, {2, 4, 3})));
}

}  // namespace
}  // namespace parity::testing
