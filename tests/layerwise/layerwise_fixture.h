// Two backends that disagree at exactly one node, for the layer-wise tests: the reference runs
// model A; the "other backend" is the reference interpreter running model B, which is A with
// node 3 computing LeakyRelu instead of Relu (they differ wherever its input is negative).
#pragma once

#include <string>
#include <vector>

#include "backend/ref/executor.h"
#include "backend/registry.h"
#include "layerwise/layerwise.h"
#include "layerwise/layerwise_comparator.h"
#include "support/onnx_text.h"

namespace parity::testing {

inline std::string divergent_model_text(const std::string& node3) {
  return R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[64] x) => (float[64] y) {
      a = Sin(x)
      b = Mul(a, a)
      quarter = Constant <value = float {0.25}> ()
      d = Sub(b, quarter)
      e = )" +
         node3 + R"((d)
      f = Exp(e)
      y = Add(f, b)
    })";
}

struct DivergentPair {
  std::shared_ptr<ir::Model> reference = model_from_text(divergent_model_text("Relu"));
  std::shared_ptr<ir::Model> other =
      model_from_text(divergent_model_text("LeakyRelu <alpha = 0.5>"));
  TensorMap feed;
  int fetches = 0;

  DivergentPair() {
    std::vector<float> x(64);
    for (size_t i = 0; i < x.size(); ++i) x[i] = -1.5f + 3.0f * static_cast<float>(i) / 63.0f;
    feed.set("x", Tensor::from_vector<float>({64}, x));
  }

  // The node of A that differs from B.
  const ir::Node& divergent_node() const { return reference->graph.nodes[4]; }

  std::vector<std::string> all_marked() const {
    std::vector<std::string> names;
    for (const auto& n : reference->graph.nodes)
      if (n.op_type != "Constant") names.push_back(n.outputs[0]);
    return names;
  }

  LayerwiseResult run(LayerwiseOptions options) {
    BatchFetcher fetch = [this](const std::vector<std::string>& names) {
      ++fetches;
      ref::Executor executor(other);
      TensorMap all = executor.run(feed, names);
      TensorMap batch;
      for (const auto& n : names) batch.set(n, all.at(n));
      return batch;
    };
    LayerwiseComparison comparison(
        reference->graph, all_marked(), options, fetch,
        options.local_error
            ? single_node_runner(BackendRegistry::global().configure("pluginref", {}), reference)
            : nullptr);
    comparison.set_feed(feed);
    ref::Executor executor(reference);
    executor.set_observer([&](const ir::Node& node, const std::vector<Value>& outputs) {
      comparison.on_node(node, outputs);
    });
    executor.run(feed);
    return comparison.finish();
  }
};

}  // namespace parity::testing
