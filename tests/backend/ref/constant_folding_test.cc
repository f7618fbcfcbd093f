// Constant folding in the executor: nodes whose inputs are all constants run once when the
// model is prepared; every run hands out the same values, the observer still sees them, random
// ops and nodes reading the feed are not folded, and a node that cannot run still fails
// at run time with its message. Expected values are NumPy's.
#include <gtest/gtest.h>

#include "backend/ref/executor.h"
#include "ref_test_util.h"
#include "support/onnx_text.h"

namespace parity::testing {
namespace {

// w = ConstantOfShape([4, 8]) * c, a weight made from constants; y = x @ w^T + sum(Softmax(w)).
const char* kModel = R"(
  <ir_version: 9, opset_import: ["" : 17]>
  g (float[3,8] x) => (float[3,4] y, float[4,8] w)
      <int64[2] shape = {4, 8}, float[8] c = {0.5, -1, 2, 3, -4, 0.25, 1, 6}> {
    axes1 = Constant<value = int64[1] {1}>()
    filled = ConstantOfShape<value = float[1] {0.5}>(shape)
    w = Mul(filled, c)
    wt = Transpose<perm = [1, 0]>(w)
    s = Softmax<axis = 1>(w)
    ssum = ReduceSum<keepdims = 0>(s, axes1)
    xw = MatMul(x, wt)
    y = Add(xw, ssum)
  }
)";

TEST(ConstantFolding, ConstantSubgraphRunsOnceAndGivesTheSameValues) {
  auto np = numpy_arrays(R"(
x = rng.randn(3, 8).astype(np.float32)
c = np.array([0.5, -1, 2, 3, -4, 0.25, 1, 6], dtype=np.float64)
w = (np.full((4, 8), 0.5) * c).astype(np.float32)
e = np.exp(w.astype(np.float64) - w.max(axis=1, keepdims=True))
s = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
y = ((x.astype(np.float64) @ w.T.astype(np.float64)).astype(np.float32) +
     s.astype(np.float64).sum(axis=1).astype(np.float32)).astype(np.float32)
save('x', x); save('w', w); save('y', y)
)");
  ref::Executor exec(model_from_text(kModel));
  // ConstantOfShape, Mul, Transpose, Softmax, ReduceSum and the Constant; not the two that
  // read x.
  EXPECT_EQ(exec.folded_nodes(), 6u);
  std::vector<std::string> seen;
  exec.set_observer(
      [&](const ir::Node& n, const std::vector<Value>&) { seen.push_back(n.op_type); });
  TensorMap feed;
  feed.set("x", np.at("x"));
  TensorMap first = exec.run(feed);
  EXPECT_EQ(seen.size(), 8u);  // every node, folded or not
  TensorMap second = exec.run(feed);
  EXPECT_TRUE(tensors_identical(first.at("w"), np.at("w")));
  EXPECT_TRUE(tensors_close(first.at("y"), np.at("y"), 1e-6, 1e-6));
  EXPECT_TRUE(tensors_identical(second.at("y"), first.at("y")));
  EXPECT_TRUE(tensors_identical(second.at("w"), first.at("w")));
}

// Random ops are never folded (this backend's draws restart from the node's seed at every run,
// so they repeat, but a seedless generator may not), nor are nodes that read the feed.
TEST(ConstantFolding, RandomOpsAndFeedReadersRunEveryTime) {
  ref::Executor exec(model_from_text(R"(
    <ir_version: 9, opset_import: ["" : 17]>
    g (float[2] x) => (float[64] r, float[2] y) <float[2] c = {1, 2}> {
      r = RandomUniform<shape = [64]>()
      y = Add(x, c)
    }
  )"));
  EXPECT_EQ(exec.folded_nodes(), 0u);
  TensorMap feed;
  feed.set("x", Tensor(DataType::kFloat32, {2}));
  TensorMap a = exec.run(feed), b = exec.run(feed);
  EXPECT_TRUE(a.at("r").equals(b.at("r")));
}

TEST(ConstantFolding, ANodeThatCannotRunStillFailsAtRunTime) {
  ref::Executor exec(model_from_text(R"(
    <ir_version: 9, opset_import: ["" : 17]>
    g (float[2] x) => (float[5] y) <float[6] c = {1, 2, 3, 4, 5, 6}, int64[1] shape = {5}> {
      y = Reshape(c, shape)
    }
  )"));
  EXPECT_EQ(exec.folded_nodes(), 0u);
  TensorMap feed;
  feed.set("x", Tensor(DataType::kFloat32, {2}));
  const std::string message = error_of([&] { exec.run(feed); });
  EXPECT_NE(message.find("failed to run node"), std::string::npos) << message;
}

}  // namespace
}  // namespace parity::testing
