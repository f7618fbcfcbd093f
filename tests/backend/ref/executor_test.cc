// The executor and registry: kernel lookup by opset, Polygraphy's error for unknown ops, errors
// that name their node, observers, extra outputs, freeing after last use, and bodies that read
// values of the enclosing graph.
#include "backend/ref/executor.h"

#include <gtest/gtest.h>

#include "backend/ref/registry.h"
#include "ref_test_util.h"
#include "support/onnx_text.h"

namespace parity::ref {
namespace {

using testing::error_of;
using testing::model_from_text;

// Test kernels in a domain of their own.

// Returns no outputs at all: the executor must call that a bug.
class ReturnsNothing : public Kernel {
 public:
  explicit ReturnsNothing(const OpContext&) {}
  Outputs run(const Inputs&, RunContext&) override { return {}; }
};
PARITY_REF_OP("parity.test", "ReturnsNothing", 1, kOpsetMax, ReturnsNothing);

// Runs its `body` on its inputs and returns the body's outputs.
class RunBody : public Kernel {
 public:
  explicit RunBody(const OpContext& ctx) : body_(ctx.attr_graph("body")) {}
  Outputs run(const Inputs& in, RunContext& ctx) override { return ctx.run_subgraph(*body_, in); }

 private:
  std::shared_ptr<ir::Graph> body_;
};
PARITY_REF_OP("parity.test", "RunBody", 1, kOpsetMax, RunBody);

// Only for opsets 1 to 5 of its domain.
class OldOnly : public Kernel {
 public:
  explicit OldOnly(const OpContext&) {}
  Outputs run(const Inputs& in, RunContext&) override { return {in[0]}; }
};
PARITY_REF_OP("parity.test", "OldOnly", 1, 5, OldOnly);

// Reports the constant value of its second input, read when the node is prepared.
class ConstantProbe : public Kernel {
 public:
  explicit ConstantProbe(const OpContext& ctx) {
    const Tensor* c = ctx.constant_input(1);
    if (!c) ctx.fail("input 1 is not a constant");
    value_ = c->clone();
  }
  Outputs run(const Inputs&, RunContext&) override { return {value_}; }

 private:
  Tensor value_;
};
PARITY_REF_OP("parity.test", "ConstantProbe", 1, kOpsetMax, ConstantProbe);

Tensor ramp(Shape shape, float start = -3.0f) {
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + 0.25f * static_cast<float>(i % 29);
  return Tensor::from_vector<float>(std::move(shape), v);
}

TEST(Registry, FindsByOpsetRangeAndLetsALaterRegistrationReplace) {
  Registry registry;
  // The factories are never called here; only the ranges matter.
  auto factory = [](int) {
    return [](const OpContext&) -> std::unique_ptr<Kernel> { return nullptr; };
  };
  registry.add({"", "Foo", 1, 12, factory(1), ""});
  registry.add({"", "Foo", 13, kOpsetMax, factory(2), ""});
  EXPECT_EQ(registry.find("", "Foo", 12)->until, 12);
  EXPECT_EQ(registry.find("ai.onnx", "Foo", 13)->since, 13);
  EXPECT_EQ(registry.find("", "Foo", 0), nullptr);
  EXPECT_EQ(registry.find("other", "Foo", 13), nullptr);
  EXPECT_TRUE(registry.has_op("", "Foo"));
  registry.add({"", "Foo", 1, 12, factory(3), ""});
  EXPECT_EQ(registry.entries().size(), 2u);  // replaced, not added
  registry.add({"", "Bar", 1, kOpsetMax, factory(4), ""});
  registry.add({"", "Conv", 1, kOpsetMax, factory(5), ""});
  EXPECT_EQ(registry.op_types(""), (std::vector<std::string>{"Bar", "Conv", "Foo"}));
  EXPECT_EQ(registry.nearest("conv", 1), std::vector<std::string>{"Conv"});
  EXPECT_EQ(registry.nearest("Fooo", 2), (std::vector<std::string>{"Foo", "Conv"}));
}

TEST(Registry, HoldsTheBuiltInKernelsWithTheirRanges) {
  const Registry& r = Registry::global();
  EXPECT_EQ(r.find("", "Softmax", 11)->until, 12);
  EXPECT_EQ(r.find("", "Softmax", 13)->since, 13);
  for (const char* op : {"Identity",
                         "InstanceNormalization",
                         "MeanVarianceNormalization",
                         "Add",
                         "Sub",
                         "Mul",
                         "Div",
                         "Relu",
                         "MatMul",
                         "Gemm",
                         "Conv",
                         "MaxPool",
                         "AveragePool",
                         "GlobalAveragePool",
                         "GlobalMaxPool",
                         "Reshape",
                         "Flatten",
                         "Shape",
                         "Transpose",
                         "Concat",
                         "LogSoftmax"})
    EXPECT_NE(r.find("", op, 17), nullptr) << op;
}

TEST(Executor, NamesSimilarOpsForAnUnregisteredOne) {
  std::string message = error_of([] {
    Executor e(model_from_text(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[2] x) => (float[2] y) { y = Reluu(x) }
    )"));
  });
  EXPECT_NE(message.find("Op: Reluu does not have a reference implementation registered!"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("Note: registered ops with similar names: [Relu"), std::string::npos)
      << message;
}

TEST(Executor, RefusesAnOpsetOutsideTheRegisteredRanges) {
  std::string message = error_of([] {
    Executor e(model_from_text(R"(
      <ir_version: 8, opset_import: ["" : 13, "parity.test" : 7]>
      g (float[2] x) => (float[2] y) { y = parity.test.OldOnly(x) }
    )"));
  });
  EXPECT_NE(message.find("failed to prepare node 'OldOnly_0' (OldOnly): the reference kernel "
                         "does not support opset 7 of domain 'parity.test'; supported opsets: "
                         "[1-5]"),
            std::string::npos)
      << message;
}

TEST(Executor, PrepareErrorsNameTheNodeAndTheAttribute) {
  std::string wrong_type = error_of([] {
    Executor e(model_from_text(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[2,3] x) => (float[2,3] y) { y = Softmax<axis = 1.0>(x) }
    )"));
  });
  EXPECT_NE(wrong_type.find("failed to prepare node 'Softmax_0' (Softmax): attribute 'axis' has "
                            "type float; it must be of type int"),
            std::string::npos)
      << wrong_type;
  std::string missing = error_of([] {
    Executor e(model_from_text(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[2] x, float[2] z) => (float[4] y) { y = Concat(x, z) }
    )"));
  });
  EXPECT_NE(missing.find("failed to prepare node 'Concat_0' (Concat): attribute 'axis' is "
                         "required but missing"),
            std::string::npos)
      << missing;
}

TEST(Executor, RunErrorsNameTheNode) {
  Executor e(model_from_text(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[N] a, float[M] b) => (float[K] c) { c = Add(a, b) }
  )"));
  TensorMap feed;
  feed.set("a", ramp({3}));
  feed.set("b", ramp({4}));
  std::string message = error_of([&] { e.run(feed); });
  EXPECT_EQ(message.rfind("failed to run node 'Add_0' (Add): failed to broadcast shapes (3,) "
                          "and (4,)",
                          0),
            0u)
      << message;
}

TEST(Executor, AWrongNumberOfOutputsIsAnInternalError) {
  Executor e(model_from_text(R"(
    <ir_version: 8, opset_import: ["" : 13, "parity.test" : 1]>
    g (float[2] x) => (float[2] y) { y = parity.test.ReturnsNothing(x) }
  )"));
  TensorMap feed;
  feed.set("x", ramp({2}));
  try {
    e.run(feed);
    FAIL() << "no error";
  } catch (const InternalError& err) {
    EXPECT_NE(std::string(err.what())
                  .find("node 'ReturnsNothing_0' (ReturnsNothing) has 1 "
                        "outputs but its kernel returned 0"),
              std::string::npos)
        << err.what();
  }
}

TEST(Executor, GivesKernelsTheInitializersAsConstants) {
  Executor e(model_from_text(R"(
    <ir_version: 8, opset_import: ["" : 13, "parity.test" : 1]>
    g (float[2] x) => (int64[3] a) <int64[3] k = {7, 8, 9}> {
      a = parity.test.ConstantProbe(x, k)
    }
  )"));
  TensorMap feed;
  feed.set("x", ramp({2}));
  EXPECT_TRUE(e.run(feed).at("a").equals(Tensor::from_vector<int64_t>({3}, {7, 8, 9})));
  std::string message = error_of([] {
    Executor bad(model_from_text(R"(
      <ir_version: 8, opset_import: ["" : 13, "parity.test" : 1]>
      g (float[2] x, int64[3] k) => (int64[3] a) { a = parity.test.ConstantProbe(x, k) }
    )"));
  });
  EXPECT_NE(message.find("(ConstantProbe): input 1 is not a constant"), std::string::npos)
      << message;
}

TEST(OpContext, ReadsConstantsOfEnclosingGraphsAndConstantNodes) {
  ir::Graph outer;
  outer.initializers["k"] = Tensor::from_vector<int64_t>({2}, {4, 5});
  ir::Node constant{"c0", "Constant", "", {}, {"c"}, {}};
  ir::Attribute floats;
  floats.name = "value_floats";
  floats.type = ir::Attribute::Type::kFloats;
  floats.floats = {0.5f, 1.5f};
  constant.attributes.push_back(floats);
  outer.nodes.push_back(constant);
  ir::Graph body;
  body.parent = &outer;
  body.inputs.push_back({"t", {}});
  ir::Node user{"n", "Probe", "", {"k", "c", "t", ""}, {"y"}, {}};
  OpContext ctx(user, 13, body);
  ASSERT_NE(ctx.constant_input(0), nullptr);
  EXPECT_TRUE(ctx.constant_input(0)->equals(outer.initializers["k"]));
  ASSERT_NE(ctx.constant_input(1), nullptr);
  EXPECT_TRUE(ctx.constant_input(1)->equals(Tensor::from_vector<float>({2}, {0.5f, 1.5f})));
  EXPECT_EQ(ctx.constant_input(2), nullptr);  // a graph input
  EXPECT_EQ(ctx.constant_input(3), nullptr);  // absent
  EXPECT_FALSE(ctx.has_input(3));
  EXPECT_EQ(ctx.attr_int("missing", 3), 3);
}

constexpr const char* kChain = R"(
  <ir_version: 8, opset_import: ["" : 13]>
  g (float[256,1024] x) => (float[256,1024] y) {
    a = Relu(x)
    b = Relu(a)
    c = Relu(b)
    d = Relu(c)
    y = Relu(d)
  }
)";

TEST(Executor, FreesEachValueAfterItsLastUse) {
  Executor e(model_from_text(kChain));
  TensorMap feed;
  feed.set("x", ramp({256, 1024}));
  std::vector<std::string> order;
  e.set_observer([&](const ir::Node& n, const std::vector<Value>& outs) {
    order.push_back(n.outputs[0]);
    EXPECT_EQ(outs.size(), 1u);
  });
  e.run(feed);
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "c", "d", "y"}));
  // The input and one intermediate at most, never all six values.
  EXPECT_EQ(e.last_run_stats().peak_live_values, 2u);
  EXPECT_EQ(e.last_run_stats().peak_live_bytes, 2u * 256 * 1024 * 4);

  // An intermediate asked for is kept, and returned after the graph outputs.
  TensorMap with_extra = e.run(feed, {"b"});
  EXPECT_EQ(with_extra.names(), (std::vector<std::string>{"y", "b"}));
  EXPECT_EQ(e.last_run_stats().peak_live_values, 3u);
}

TEST(Executor, KeepsAValueUntilItsLastReaderRuns) {
  Executor e(model_from_text(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[4] x) => (float[4] y) {
      a = Relu(x)
      b = Relu(a)
      c = Relu(b)
      y = Add(a, c)
    }
  )"));
  TensorMap feed;
  feed.set("x", ramp({4}));
  TensorMap out = e.run(feed);
  std::vector<float> expected;
  for (float v : {-3.0f, -2.75f, -2.5f, -2.25f}) expected.push_back(2 * std::max(v, 0.0f));
  EXPECT_TRUE(out.at("y").equals(Tensor::from_vector<float>({4}, expected)));
  EXPECT_EQ(e.last_run_stats().peak_live_values, 3u);  // a stays alive beside b, then c
}

TEST(Executor, BodiesReadValuesOfTheEnclosingGraph) {
  // `a` is used only inside the body: it must live until the node owning the body has run.
  Executor e(model_from_text(R"(
    <ir_version: 8, opset_import: ["" : 13, "parity.test" : 1]>
    g (float[5] x) => (float[5] y) {
      a = Relu(x)
      y = parity.test.RunBody<body = inner (float[5] t) => (float[5] u) {
        v = Relu(t)
        u = Add(v, a)
      }>(x)
    }
  )"));
  TensorMap feed;
  feed.set("x", Tensor::from_vector<float>({5}, {-1, 2, -3, 4, 0.5f}));
  std::vector<std::string> seen;
  e.set_observer([&](const ir::Node& n, const std::vector<Value>&) { seen.push_back(n.name); });
  TensorMap out = e.run(feed);
  EXPECT_TRUE(out.at("y").equals(Tensor::from_vector<float>({5}, {0, 4, 0, 8, 1})));
  EXPECT_EQ(seen.size(), 4u);  // Relu, the body's Relu and Add, then RunBody
  EXPECT_EQ(seen.back(), "RunBody_1");
  // A second run uses the cached body plan and gives the same result.
  EXPECT_TRUE(e.run(feed).at("y").equals(out.at("y")));
}

TEST(Executor, ReturnsGraphInputsAndInitializersNamedAsOutputs) {
  Executor e(model_from_text(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x) => (float[2] x2, int64[2] k) <int64[2] k = {1, 2}> { x2 = Identity(x) }
  )"));
  TensorMap feed;
  feed.set("x", ramp({2}));
  TensorMap out = e.run(feed, {"x"});
  EXPECT_EQ(out.names(), (std::vector<std::string>{"x2", "k", "x"}));
  EXPECT_TRUE(out.at("k").equals(Tensor::from_vector<int64_t>({2}, {1, 2})));
  EXPECT_NE(error_of([&] { e.run(feed, {"nope"}); }).find("failed to keep value 'nope'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { e.run(TensorMap{}); }).find("input 'x' missing from the feed"),
            std::string::npos);
}

}  // namespace
}  // namespace parity::ref
