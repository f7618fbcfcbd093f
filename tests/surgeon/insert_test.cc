// Node insertion: the subgraph between tensors replaced by one node, Polygraphy's renaming of
// an output that is also an input, and the values it computes on the reference backend.
#include "surgeon/insert.h"

#include <gtest/gtest.h>

#include "surgeon_test_util.h"

namespace parity::testing {
namespace {

const char* kChain = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2] x) => (float[2] y) <float[2] w = {1, -5}> {
    a = Add (x, w)
    b = Relu (a)
    c = Mul (b, x)
    y = Abs (c)
  }
)";

::onnx::AttributeProto float_attr(const std::string& name, float v) {
  ::onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(::onnx::AttributeProto::FLOAT);
  a.set_f(v);
  return a;
}

TEST(SurgeonInsert, ReplacesTheSubgraphBetweenTheTensors) {
  auto model = named_model(kChain);
  surgeon::insert_node(*model.mutable_graph(),
                       {{"a"}, {"c"}, "LeakyRelu", "leaky", {float_attr("alpha", 0.25f)}});
  EXPECT_EQ(node_names(model), (std::vector<std::string>{"Add_0", "leaky", "Abs_3"}));
  TensorMap feed;
  feed.set("x", Tensor::from_vector<float>({2}, {2, 1}));
  // a = [3, -4]; LeakyRelu 0.25 -> [3, -1]; Abs -> [3, 1].
  const Tensor y = run_model(model, feed).at("y");
  EXPECT_EQ(y.data<float>()[0], 3);
  EXPECT_EQ(y.data<float>()[1], 1);
}

TEST(SurgeonInsert, AnOutputThatIsAlsoAnInputGetsANewTensor) {
  auto model = named_model(kChain);
  surgeon::insert_node(*model.mutable_graph(), {{"c"}, {"c"}, "Neg", "neg", {}});
  const auto& g = model.graph();
  ASSERT_EQ(g.node_size(), 5);
  EXPECT_EQ(g.node(3).output(0), "c_polygraphy_surgeon_insert_output");
  EXPECT_EQ(g.node(4).input(0), "c_polygraphy_surgeon_insert_output");  // Abs reads the new one

  auto out = named_model(kChain);
  surgeon::insert_node(*out.mutable_graph(), {{"y"}, {"y"}, "Neg", "neg", {}});
  // A graph output keeps its name: the old value is renamed and the node writes y.
  EXPECT_EQ(out.graph().node(3).output(0), "y_polygraphy_surgeon_insert_output");
  EXPECT_EQ(out.graph().node(4).output(0), "y");
  TensorMap feed;
  feed.set("x", Tensor::from_vector<float>({2}, {2, 1}));
  const Tensor y = run_model(out, feed).at("y");
  EXPECT_EQ(y.data<float>()[0], -6);  // -|relu(3) * 2|
}

TEST(SurgeonInsert, UnknownTensorSuggestsTheNearest) {
  auto model = named_model(kChain);
  const std::string message = error_of([&] {
    surgeon::insert_node(*model.mutable_graph(), {{"aa"}, {"c"}, "Neg", "", {}});
  });
  EXPECT_NE(message.find("tensor 'aa' does not exist in graph 'g'; did you mean 'a'?"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace parity::testing
