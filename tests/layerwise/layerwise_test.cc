// Layer-wise comparison: the first divergence, local errors, inherited nodes, batching within
// the budget.
#include <gtest/gtest.h>

#include "layerwise/layerwise.h"
#include "layerwise/layerwise_fixture.h"
#include "support/test_util.h"

namespace parity::testing {
namespace {

TEST(Layerwise, FirstDivergenceAndLocalErrorNameTheDifferingNode) {
  DivergentPair pair;
  LayerwiseOptions options;
  options.local_error = true;
  LogCapture log;
  const LayerwiseResult r = pair.run(options);

  const std::string divergent = pair.divergent_node().name;
  ASSERT_EQ(r.tensors.size(), 6u);  // every node but the Constant
  ASSERT_TRUE(r.first_divergence.has_value());
  const NodeResult& first = r.nodes[*r.first_divergence];
  EXPECT_EQ(first.name, divergent);
  EXPECT_EQ(first.op_type, "Relu");
  EXPECT_EQ(first.index, 4u);
  EXPECT_EQ(r.total_nodes, 7u);
  EXPECT_EQ(first.status, NodeStatus::kDiverges);
  ASSERT_EQ(first.inputs.size(), 1u);
  EXPECT_EQ(r.tensors[first.inputs[0]].name, "d");
  EXPECT_TRUE(r.tensors[first.inputs[0]].passed);

  ASSERT_FALSE(r.top_local.empty());
  EXPECT_EQ(r.nodes[r.top_local[0]].name, divergent);
  EXPECT_GT(*r.nodes[r.top_local[0]].local_ratio, 1.0);
  EXPECT_FALSE(*r.nodes[r.top_local[0]].local_passed);

  // Downstream of the faulty node: they fail, add nothing of their own, and inherit.
  for (const char* name : {"f", "y"}) {
    const NodeResult* n = nullptr;
    for (const auto& node : r.nodes)
      if (r.tensors[node.outputs[0]].name == name) n = &node;
    ASSERT_NE(n, nullptr) << name;
    EXPECT_FALSE(r.tensors[n->outputs[0]].passed) << name;
    EXPECT_EQ(n->status, NodeStatus::kInherited) << name;
    EXPECT_TRUE(*n->local_passed) << name;
    EXPECT_EQ(*n->local_ratio, 0.0) << name;  // same kernel, same inputs: the same bits
  }
  // Upstream nodes pass.
  for (const auto& n : r.nodes)
    if (n.index < 4) {
      EXPECT_EQ(n.status, NodeStatus::kPassed) << n.name;
    }

  // The path from the graph input to the divergence.
  ASSERT_GE(r.path.size(), 2u);
  EXPECT_EQ(r.path.front(), "x");
  EXPECT_EQ(r.path.back(), divergent);

  log_layerwise_summary(r, options);
  EXPECT_TRUE(log.contains("First divergence: node '" + divergent + "' (Relu), node 5 of 7"))
      << log.text();
  EXPECT_TRUE(log.contains("1. '" + divergent + "' (Relu)")) << log.text();
  EXPECT_TRUE(log.contains("Comparing Output: 'e' (dtype=float32, shape=(64,)) | FAILED"));
}

TEST(Layerwise, WithoutLocalErrorDownstreamFailuresAreInherited) {
  DivergentPair pair;
  LogCapture log;
  const LayerwiseResult r = pair.run(LayerwiseOptions{});
  ASSERT_TRUE(r.first_divergence.has_value());
  EXPECT_EQ(r.nodes[*r.first_divergence].name, pair.divergent_node().name);
  EXPECT_TRUE(r.top_local.empty());
  size_t inherited = 0;
  for (const auto& n : r.nodes) inherited += n.status == NodeStatus::kInherited ? 1 : 0;
  EXPECT_EQ(inherited, 2u);
  EXPECT_FALSE(r.passed());
}

TEST(Layerwise, IdenticalBackendsPassWithNoDivergence) {
  DivergentPair pair;
  pair.other = pair.reference;
  LayerwiseOptions options;
  options.local_error = true;
  LogCapture log;
  const LayerwiseResult r = pair.run(options);
  EXPECT_TRUE(r.passed());
  EXPECT_FALSE(r.first_divergence.has_value());
  for (const auto& t : r.tensors) EXPECT_EQ(t.max_abs, 0.0) << t.name;
}

TEST(Layerwise, SmallBudgetBatchesWithinItAndGivesTheSameAnswer) {
  DivergentPair whole, batched;
  LayerwiseOptions options;
  options.local_error = true;
  LogCapture log;
  const LayerwiseResult one = whole.run(options);
  EXPECT_EQ(one.batches, 1u);
  EXPECT_EQ(whole.fetches, 1);

  // Four 64-float tensors: the largest node needs its output held plus its output and two
  // inputs fetched.
  options.budget_bytes = 4 * 256;
  const LayerwiseResult many = batched.run(options);
  EXPECT_GT(many.batches, 2u);
  EXPECT_EQ(static_cast<size_t>(batched.fetches), many.batches);
  EXPECT_LE(many.peak_batch_bytes, options.budget_bytes);
  ASSERT_EQ(many.tensors.size(), one.tensors.size());
  for (size_t i = 0; i < one.tensors.size(); ++i) {
    EXPECT_EQ(many.tensors[i].name, one.tensors[i].name);
    EXPECT_EQ(many.tensors[i].passed, one.tensors[i].passed);
    EXPECT_EQ(many.tensors[i].max_abs, one.tensors[i].max_abs);
  }
  ASSERT_TRUE(many.first_divergence.has_value());
  EXPECT_EQ(many.nodes[*many.first_divergence].name, whole.divergent_node().name);
  EXPECT_EQ(many.nodes[many.top_local[0]].name, whole.divergent_node().name);
}

TEST(Layerwise, MissingTensorsAreReportedNotCompared) {
  DivergentPair pair;
  LogCapture log;
  BatchFetcher fetch = [&](const std::vector<std::string>& names) {
    ref::Executor executor(pair.other);
    TensorMap all = executor.run(pair.feed, names);
    TensorMap batch;
    for (const auto& n : names)
      if (n != "b") batch.set(n, all.at(n));
    return batch;
  };
  LayerwiseComparison comparison(pair.reference->graph, pair.all_marked(), {}, fetch);
  ref::Executor executor(pair.reference);
  executor.set_observer(
      [&](const ir::Node& n, const std::vector<Value>& v) { comparison.on_node(n, v); });
  executor.run(pair.feed);
  const LayerwiseResult r = comparison.finish();
  EXPECT_EQ(r.missing, std::vector<std::string>{"b"});
  EXPECT_EQ(r.tensors.size(), 5u);
}

TEST(Layerwise, LocalErrorWithoutNodeRunnerIsAUsageError) {
  DivergentPair pair;
  LayerwiseOptions options;
  options.local_error = true;
  EXPECT_THROW(LayerwiseComparison(pair.reference->graph, pair.all_marked(), options,
                                   [](const std::vector<std::string>&) { return TensorMap{}; }),
               UsageError);
}

}  // namespace
}  // namespace parity::testing
