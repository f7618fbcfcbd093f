// Constant folding on the reference backend: folded models compute what the originals compute
// (on both backends), Shape folding, the size threshold, a node that cannot run, If inlining.
#include "surgeon/fold.h"

#include <gtest/gtest.h>

#include "support/test_util.h"
#include "surgeon/graph.h"
#include "surgeon/shape_inference.h"
#include "surgeon_test_util.h"

namespace parity::testing {
namespace {

surgeon::ModelFile model_file(const ::onnx::ModelProto& proto) {
  surgeon::ModelFile m;
  m.proto = std::make_shared<::onnx::ModelProto>(proto);
  m.external_data_dir = ".";
  return m;
}

TensorMap feed_of(const std::string& name, Shape shape, std::vector<float> values) {
  TensorMap feed;
  feed.set(name, Tensor::from_vector<float>(std::move(shape), values));
  return feed;
}

// Both backends agree that the folded model computes what the original computes.
void expect_same_outputs(const ::onnx::ModelProto& original, const ::onnx::ModelProto& folded,
                         const TensorMap& feed) {
  const TensorMap expected = run_model(original, feed, "pluginref");
  for (const char* backend : {"pluginref", "onnxrt"}) {
    const TensorMap got = run_model(folded, feed, backend);
    for (const auto& [name, t] : expected) {
      const Tensor* g = got.find(name);
      ASSERT_NE(g, nullptr) << name;
      EXPECT_TRUE(g->equals(t)) << backend << " " << name;
    }
  }
}

const char* kChain = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2, 3] x) => (float[2, 3] y) <float[3] w = {1, 2, 3}> {
    c = Constant <value = float[3] {0.5, -1, 2}> ()
    m = Mul (c, w)
    e = Exp (m)
    y = Add (x, e)
  }
)";

TEST(SurgeonFold, ConstantChainBecomesOneInitializerWithTheExactValues) {
  const auto original = named_model(kChain);
  auto model = model_file(original);
  LogCapture log;
  EXPECT_EQ(surgeon::fold_constants(model), 3u);
  EXPECT_EQ(node_names(*model.proto), (std::vector<std::string>{"Add_3"}));
  EXPECT_TRUE(log.contains("Folding Constants | Pass 1")) << log.text();
  EXPECT_TRUE(
      log.contains("Total Nodes | Original:     4, After Folding:     1 |     3 Nodes Folded"))
      << log.text();
  // Only the folded value is left; w was read by Mul alone.
  ASSERT_EQ(model.proto->graph().initializer_size(), 1);
  EXPECT_EQ(model.proto->graph().initializer(0).name(), "e");
  expect_same_outputs(original, *model.proto, feed_of("x", {2, 3}, {1, 2, 3, 4, 5, 6}));
}

TEST(SurgeonFold, ShapeOfAKnownShapeFoldsUnlessTurnedOff) {
  const auto chain = named_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2, 3] x) => (float[3, 2] y) <int64[1] one = {1}> {
      s = Shape (x)
      last = Slice (s, one, two)
      two = Constant <value = int64[1] {2}> ()
      lead = Constant <value = int64[1] {-1}> ()
      shape = Concat <axis = 0> (last, lead)
      y = Reshape (x, shape)
    }
  )");
  // Out of order on purpose: the folder sorts nothing itself, so sort first as sanitize does.
  auto sorted = chain;
  surgeon::toposort(*sorted.mutable_graph());
  auto folded = model_file(sorted);
  surgeon::fold_constants(folded);
  EXPECT_EQ(node_names(*folded.proto), (std::vector<std::string>{"Reshape_5"}));
  expect_same_outputs(sorted, *folded.proto, feed_of("x", {2, 3}, {1, 2, 3, 4, 5, 6}));

  auto kept = model_file(sorted);
  surgeon::FoldOptions no_shapes;
  no_shapes.fold_shapes = false;
  surgeon::fold_constants(kept, no_shapes);
  EXPECT_EQ(node_names(*kept.proto),
            (std::vector<std::string>{"Shape_0", "Slice_1", "Concat_4", "Reshape_5"}));
}

TEST(SurgeonFold, ValuesOverTheSizeThresholdAreNotFolded) {
  const auto original = named_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[64, 64] x) => (float[64, 64] y) <float[1] v = {2}, int64[2] big = {64, 64}> {
      e = Expand (v, big)
      y = Mul (x, e)
    }
  )");
  auto model = model_file(original);
  surgeon::FoldOptions small;
  small.size_threshold = 1024;  // e takes 16 KiB
  surgeon::fold_constants(model, small);
  EXPECT_EQ(node_names(*model.proto), (std::vector<std::string>{"Expand_0", "Mul_1"}));
  auto unbounded = model_file(original);
  surgeon::fold_constants(unbounded);
  EXPECT_EQ(node_names(*unbounded.proto), (std::vector<std::string>{"Mul_1"}));
}

const char* kOneBadNode = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2] x) => (float[2] y, float[2] z) <float[6] d = {1, 2, 3, 4, 5, 6}, int64[1] s = {4}, float[2] k = {1, 2}> {
    bad = Reshape (d, s)
    z = Add (x, bad)
    n = Neg (k)
    y = Add (x, n)
  }
)";

TEST(SurgeonFold, ANodeThatCannotRunIsKeptWithAWarningNamingIt) {
  auto model = model_file(named_model(kOneBadNode));
  LogCapture log(Severity::kWarning);
  surgeon::FoldOptions basic;
  basic.partitioning = surgeon::Partitioning::kBasic;
  surgeon::fold_constants(model, basic);
  EXPECT_TRUE(log.contains("Failed to fold node 'Reshape_0' (Reshape): it is kept unfolded"))
      << log.text();
  // The rest folds.
  EXPECT_EQ(node_names(*model.proto), (std::vector<std::string>{"Reshape_0", "Add_1", "Add_3"}));

  // Without partitioning, as in Polygraphy, a failure folds nothing.
  auto whole = model_file(named_model(kOneBadNode));
  LogCapture log2(Severity::kWarning);
  surgeon::fold_constants(whole);
  EXPECT_TRUE(log2.contains("no constants are folded")) << log2.text();
  EXPECT_EQ(whole.proto->graph().node_size(), 4);
}

TEST(SurgeonFold, IfWithAConstantConditionBecomesItsBranchAndBodiesFold) {
  const auto original = named_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x, bool c) => (float[2] y, float[2] z) <bool t = {1}, float[2] w = {1, 2}> {
      y = If (t) <
        then_branch = th () => (float[2] o) { o = Add (x, w) },
        else_branch = el () => (float[2] o2) { o2 = Sub (x, w) }
      >
      z = If (c) <
        then_branch = th2 () => (float[2] p) { k = Neg (w)  p = Mul (x, k) },
        else_branch = el2 () => (float[2] q) { q = Identity (x) }
      >
    }
  )");
  auto model = model_file(original);
  surgeon::fold_constants(model);
  const auto& g = model.proto->graph();
  ASSERT_EQ(g.node_size(), 2);
  EXPECT_EQ(g.node(0).op_type(), "Add");  // the taken branch, writing y itself
  EXPECT_EQ(g.node(0).output(0), "y");
  EXPECT_EQ(g.node(1).op_type(), "If");  // c is an input: kept, but its body folded Neg
  EXPECT_EQ(g.node(1).attribute(0).g().node_size(), 1);
  for (bool c : {true, false}) {
    TensorMap feed = feed_of("x", {2}, {3, -4});
    feed.set("c", Tensor::scalar<bool>(c));
    expect_same_outputs(original, *model.proto, feed);
  }
}

TEST(SurgeonFold, ReductionFeedingARangeFoldsWhenConstant) {
  const auto original = named_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y) <float[3] v = {1, 2, 1}, float[1] zero = {0}, float[1] one = {1}> {
      n = ReduceSum <keepdims = 0> (v)
      z = Squeeze (zero)
      o = Squeeze (one)
      r = Range (z, n, o)
      y = Add (x, r)
    }
  )");
  auto model = model_file(original);
  surgeon::fold_constants(model);
  EXPECT_EQ(node_names(*model.proto), (std::vector<std::string>{"Add_4"}));
  expect_same_outputs(original, *model.proto, feed_of("x", {4}, {1, 1, 1, 1}));
}

}  // namespace
}  // namespace parity::testing

namespace parity::testing {
namespace {

TEST(SurgeonFold, GatherAndSliceOfAPartlyKnownShapeFoldWhatTheyPick) {
  const auto original = named_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 3] x) => (float[N, 3] y, int64[1] sliced, int64 batch) <int64 one = {1}, int64 zero = {0}, int64[1] s1 = {1}, int64[1] s2 = {2}, int64[1] lead = {-1}> {
      s = Shape (x)
      d = Gather (s, one)
      du = Unsqueeze (d, zero)
      shape = Concat <axis = 0> (lead, du)
      y = Reshape (x, shape)
      sliced = Slice (s, s1, s2)
      batch = Gather (s, zero)
    }
  )");
  auto model = model_file(original);
  surgeon::fold_constants(model);
  // Everything that picks the known 3 folds (the graph output sliced into a Constant node);
  // the Gather of 'N' needs the Shape at run time.
  EXPECT_EQ(node_names(*model.proto),
            (std::vector<std::string>{"Shape_0", "Reshape_4", "sliced_folded", "Gather_6"}));
  expect_same_outputs(original, *model.proto, feed_of("x", {2, 3}, {1, 2, 3, 4, 5, 6}));
}

}  // namespace
}  // namespace parity::testing
