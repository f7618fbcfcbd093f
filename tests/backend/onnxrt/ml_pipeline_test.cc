// A scikit-learn-style pipeline as skl2onnx exports one (Scaler on the numeric columns,
// OneHotEncoder on a categorical column, a random-forest TreeEnsembleClassifier whose leaf
// weights are class probabilities divided by the number of trees, and ZipMap turning the
// probabilities into one map per row), built in the test with onnx.helper and run on both
// backends end to end through `parity run --onnxrt --pluginref`. The ZipMap output is a
// sequence of maps; it is compared item by item (backend/value_tensors.h spells it as tensors).
#include <gtest/gtest.h>

#include "backend/ref/ml_cases.h"
#include "support/test_util.h"

namespace parity {
namespace {

const char* kPipeline = R"(
n_trees, depth = 3, 2
nodes = dict(nodes_treeids=[], nodes_nodeids=[], nodes_featureids=[], nodes_modes=[], nodes_values=[],
             nodes_truenodeids=[], nodes_falsenodeids=[])
leaves = dict(class_treeids=[], class_nodeids=[], class_ids=[], class_weights=[])
for t in range(n_trees):
    count = 2 ** (depth + 1) - 1        # a full tree, nodes numbered breadth first
    for n in range(count):
        leaf = n >= 2 ** depth - 1
        nodes['nodes_treeids'].append(t); nodes['nodes_nodeids'].append(n)
        nodes['nodes_featureids'].append(0 if leaf else int(rng.randint(0, 6)))
        nodes['nodes_modes'].append('LEAF' if leaf else 'BRANCH_LEQ')
        nodes['nodes_values'].append(0.0 if leaf else float(rng.uniform(-0.5, 0.5)))
        nodes['nodes_truenodeids'].append(0 if leaf else 2 * n + 1)
        nodes['nodes_falsenodeids'].append(0 if leaf else 2 * n + 2)
        if leaf:
            p = rng.dirichlet([1, 1, 1])
            for k in range(3):
                leaves['class_treeids'].append(t); leaves['class_nodeids'].append(n)
                leaves['class_ids'].append(k); leaves['class_weights'].append(float(p[k] / n_trees))
graph_nodes = [
    ml('Scaler', ['num'], ['scaled'], offset=[0.1, -0.2, 0.05], scale=[1.5, 0.8, 2.0]),
    ml('OneHotEncoder', ['cat'], ['hot3'], cats_int64s=[0, 1, 2], zeros=1),
    oh.make_node('Flatten', ['hot3'], ['hot'], axis=1),
    oh.make_node('Concat', ['scaled', 'hot'], ['features'], axis=1),
    ml('TreeEnsembleClassifier', ['features'], ['label', 'probabilities'], classlabels_int64s=[0, 1, 2],
       post_transform='NONE', **nodes, **leaves),
    ml('ZipMap', ['probabilities'], ['output_probability'], classlabels_int64s=[0, 1, 2])]
prob_type = oh.make_sequence_type_proto(map_type(TP.INT64, TP.FLOAT))
g = oh.make_graph(graph_nodes, 'pipeline', [vi('num', TP.FLOAT, ['N', 3]), vi('cat', TP.INT64, ['N', 1])],
                  [vi('label', TP.INT64, ['N']), oh.make_value_info('output_probability', prob_type)])
m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 17), oh.make_opsetid(ML, 1)])
m.ir_version = 8
onnx.save(m, OUT + '/model.onnx')
)";

TEST(OrtMlPipeline, ScalerOneHotForestZipMapAgreeEndToEnd) {
  testing::MlCase c = testing::ml_case(kPipeline);
  testing::TempDir dir;
  const std::string model = dir.file("pipeline.onnx"), outputs = dir.file("outputs.json");
  testing::write_text(model, c.model_bytes);
  testing::CommandResult r = testing::run_parity(
      {"run", model, "--onnxrt", "--pluginref", "--input-shapes", "num:[5,3]", "cat:[5,1]",
       "--val-range", "num:[-1,1]", "cat:[0,2]", "--save-outputs", outputs});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // Every item of the sequence of maps is compared: the keys exactly, the probabilities
  // within the tolerances.
  for (int i = 0; i < 5; ++i)
    for (const char* part : {"keys", "values"})
      EXPECT_NE(r.output.find(fmt::format("output_probability[{}].{}", i, part)), std::string::npos)
          << i << part << "\n"
          << r.output;
  EXPECT_NE(r.output.find("PASSED | All outputs matched"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace parity
