// Subgraph extraction: exactly the nodes between the tensors, checked by running the subgraph
// against the original model's intermediate values; leaks, unknown names and missing types
// are errors that leave the model as it was.
#include "surgeon/extract.h"

#include <gtest/gtest.h>

#include "surgeon/graph.h"
#include "surgeon_test_util.h"

namespace parity::testing {
namespace {

// x -> Add(w) -> a -> Relu -> b -> Mul(b, x) -> c -> Abs -> y
const char* kChain = R"(
  <ir_version: 8, opset_import: ["" : 17], producer_name: "chain-maker", doc_string: "kept">
  g (float[N, 4] x) => (float[N, 4] y) <float[4] w = {1, -2, 3, -4}> {
    a = Add (x, w)
    b = Relu (a)
    c = Mul (b, x)
    y = Abs (c)
  }
)";

TensorMap feed_x() {
  TensorMap feed;
  feed.set("x", Tensor::from_vector<float>({2, 4}, {0.5f, 1, -1, 2, -3, 4, 0.25f, -0.5f}));
  return feed;
}

TEST(SurgeonExtract, KeepsExactlyTheNodesBetweenAndComputesTheSameValues) {
  const auto original = named_model(kChain);
  auto model = original;
  // The model records no type for a and c: the dtype is given, the shape left unknown.
  surgeon::extract_subgraph(model, {.inputs = {{"a", DataType::kFloat32, {}}, {"x", {}, {}}},
                                    .outputs = {{"c", DataType::kFloat32, {}}}});
  EXPECT_EQ(node_names(model), (std::vector<std::string>{"Relu_1", "Mul_2"}));
  ASSERT_EQ(model.graph().input_size(), 2);
  EXPECT_EQ(model.graph().input(0).name(), "a");
  EXPECT_EQ(model.graph().initializer_size(), 0);  // w is read only by Add, which is gone
  ASSERT_EQ(model.graph().output_size(), 1);
  EXPECT_EQ(model.graph().output(0).name(), "c");
  EXPECT_EQ(model.producer_name(), "chain-maker");
  EXPECT_EQ(model.doc_string(), "kept");

  const TensorMap expected = run_model(original, feed_x(), "pluginref", {"a", "c"});
  TensorMap feed;
  feed.set("a", expected.at("a"));
  feed.set("x", feed_x().at("x"));
  const TensorMap got = run_model(model, feed);
  EXPECT_TRUE(got.at("c").equals(expected.at("c")));
}

TEST(SurgeonExtract, TakesTypesFromTheModelAndFromTheUser) {
  auto model = named_model(kChain);
  surgeon::extract_subgraph(model, {.inputs = {{"x", {}, {}}},
                                    .outputs = {{"y", {}, {}}, {"a", DataType::kFloat32, {}}}});
  // x keeps its recorded type; y too; a got the dtype the user gave.
  EXPECT_EQ(model.graph().input(0).type().tensor_type().shape().dim(0).dim_param(), "N");
  EXPECT_EQ(model.graph().output(1).type().tensor_type().elem_type(), 1);
  EXPECT_EQ(node_names(model), (std::vector<std::string>{"Add_0", "Relu_1", "Mul_2", "Abs_3"}));
  EXPECT_EQ(model.graph().initializer_size(), 1);

  auto shaped = named_model(kChain);
  surgeon::extract_subgraph(
      shaped,
      {.inputs = {{"b", DataType::kFloat32, DimList{Dim::fixed(3), Dim::fixed(4)}}, {"x", {}, {}}},
       .outputs = {{"y", {}, {}}}});
  const auto& dims = shaped.graph().input(0).type().tensor_type().shape().dim();
  ASSERT_EQ(dims.size(), 2);
  EXPECT_EQ(dims[0].dim_value(), 3);
  EXPECT_EQ(node_names(shaped), (std::vector<std::string>{"Mul_2", "Abs_3"}));
}

TEST(SurgeonExtract, LeakingInputIsAnErrorNamingTheTensorTheNodeAndTheOutput) {
  auto model = named_model(kChain);
  const std::string before = model.SerializeAsString();
  const std::string message = error_of([&] {
    surgeon::extract_subgraph(model, {.inputs = {{"a", DataType::kFloat32, {}}},
                                      .outputs = {{"c", DataType::kFloat32, {}}}});
  });
  EXPECT_NE(message.find("tensor 'x' is an input of the model and is read by node 'Mul_2' (Mul) "
                         "on the way to output 'c'"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("add 'x'"), std::string::npos) << message;
  EXPECT_EQ(model.SerializeAsString(), before);  // untouched
}

TEST(SurgeonExtract, UnknownNameSuggestsTheNearest) {
  auto model = named_model(kChain);
  const std::string message = error_of([&] {
    surgeon::extract_subgraph(model, {.inputs = {{"x", {}, {}}}, .outputs = {{"cc", {}, {}}}});
  });
  EXPECT_NE(message.find("output 'cc' is no tensor of graph 'g'; did you mean"), std::string::npos)
      << message;
}

TEST(SurgeonExtract, MissingDtypeIsAnErrorSayingHowToGiveIt) {
  auto model = named_model(kChain);
  const std::string message = error_of([&] {
    surgeon::extract_subgraph(
        model, {.inputs = {{"b", {}, {}}, {"x", {}, {}}}, .outputs = {{"y", {}, {}}}});
  });
  EXPECT_NE(message.find("the data type of input 'b' is not given"), std::string::npos) << message;
  EXPECT_NE(message.find("'b:<shape>:<dtype>'"), std::string::npos) << message;
}

TEST(SurgeonExtract, SubgraphBodiesKeepWhatTheyReadFromOutside) {
  auto model = named_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x, bool c) => (float[2] y) {
      r = Relu (x)
      y = If (c) <
        then_branch = t () => (float[2] o) { o = Identity (r) },
        else_branch = e () => (float[2] o2) { o2 = Neg (r) }
      >
    }
  )");
  // Without r among the inputs, x leaks in through the branches' reads of r.
  auto leaking = model;
  const std::string message = error_of([&] {
    surgeon::extract_subgraph(leaking, {.inputs = {{"c", {}, {}}}, .outputs = {{"y", {}, {}}}});
  });
  EXPECT_NE(message.find("tensor 'x' is an input of the model and is read by node 'Relu_0'"),
            std::string::npos)
      << message;

  const auto original = model;
  surgeon::extract_subgraph(model, {.inputs = {{"c", {}, {}}, {"r", DataType::kFloat32, {}}},
                                    .outputs = {{"y", {}, {}}}});
  EXPECT_EQ(node_names(model), (std::vector<std::string>{"If_1"}));
  TensorMap feed;
  feed.set("x", Tensor::from_vector<float>({2}, {-1.5f, 2}));
  feed.set("c", Tensor::scalar<bool>(false));
  const TensorMap expected = run_model(original, feed, "pluginref", {"r", "y"});
  TensorMap sub_feed;
  sub_feed.set("c", feed.at("c"));
  sub_feed.set("r", expected.at("r"));
  EXPECT_TRUE(run_model(model, sub_feed).at("y").equals(expected.at("y")));
}

TEST(SurgeonExtract, AnInputMadeByAKeptNodeIsCutOffFromIt) {
  // Split makes p and q; q becomes an input while p is still needed, so Split stays and its
  // second output is renamed: the graph stays single-assignment.
  auto model = named_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[2] y) <int64[2] s = {2, 2}> {
      p, q = Split (x, s)
      y = Add (p, q)
    }
  )");
  const auto original = model;
  surgeon::extract_subgraph(model, {.inputs = {{"x", {}, {}}, {"q", DataType::kFloat32, {}}},
                                    .outputs = {{"y", {}, {}}}});
  EXPECT_EQ(model.graph().node(0).output(1), "q_before_extract");
  TensorMap feed;
  feed.set("x", Tensor::from_vector<float>({4}, {1, 2, 3, 4}));
  feed.set("q", Tensor::from_vector<float>({2}, {10, 20}));
  const Tensor y = run_model(model, feed).at("y");
  EXPECT_EQ(y.data<float>()[0], 11);
  EXPECT_EQ(y.data<float>()[1], 22);
}

}  // namespace
}  // namespace parity::testing
