// Shape operators and Softmax/LogSoftmax against NumPy at test time.
#include <gtest/gtest.h>

#include "ref_test_util.h"

namespace parity::testing {
namespace {

TEST(ShapeKernels, ReshapeFlattenShapeTransposeConcatMatchNumPy) {
  auto np = numpy_arrays(R"(
x = rng.randn(2, 3, 4).astype(np.float32); save('x', x)
y = rng.randn(2, 3, 1).astype(np.float32); save('y', y)
save('r', x.reshape(2, -1, 2)); save('f', x.reshape(6, 4))
save('t', np.transpose(x, (1, 2, 0))); save('tr', np.transpose(x))
save('c', np.concatenate([x, y, x], axis=-1))
save('s', np.array(x.shape[1:], dtype=np.int64)); save('sall', np.array(x.shape, dtype=np.int64))
)");
  TensorMap feed;
  feed.set("x", np.at("x"));
  feed.set("y", np.at("y"));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[2,3,4] x, float[2,3,1] y)
      => (float r, float f, float t, float tr, float c, int64[2] s, int64[3] sall)
      <int64[3] shape = {0, -1, 2}> {
      r = Reshape(x, shape)
      f = Flatten<axis = -1>(x)
      t = Transpose<perm = [1, 2, 0]>(x)
      tr = Transpose(x)
      c = Concat<axis = -1>(x, y, x)
      s = Shape<start = -2>(x)
      sall = Shape(x)
    }
  )",
                                 feed);
  for (const char* n : {"r", "f", "t", "tr", "c", "s", "sall"})
    EXPECT_TRUE(tensors_identical(out.at(n), np.at(n))) << n;
}

TEST(ShapeKernels, ReshapeHonoursAllowZeroAndRejectsBadShapes) {
  TensorMap feed;
  feed.set("x", Tensor(DataType::kFloat32, {0, 3}));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g (float[0,3] x) => (float y) <int64[2] shape = {3, 0}> { y = Reshape<allowzero = 1>(x, shape) }
  )",
                                 feed);
  EXPECT_EQ(out.at("y").shape(), (Shape{3, 0}));
  feed.set("x", Tensor(DataType::kFloat32, {2, 3}));
  std::string message = error_of([&] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 14]>
      g (float[2,3] x) => (float y) <int64[2] shape = {4, -1}> { y = Reshape(x, shape) }
    )",
                   feed);
  });
  EXPECT_NE(message.find("failed to run node 'Reshape_0' (Reshape): input of shape (2, 3) "
                         "cannot be reshaped to [4, -1]"),
            std::string::npos)
      << message;
}

TEST(ShapeKernels, TransposeAndConcatMoveStrings) {
  TensorMap feed;
  feed.set("x", Tensor::from_vector<std::string>({2, 2}, {"a", "b", "c", "d"}));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (string[2,2] x) => (string t, string c) {
      t = Transpose(x)
      c = Concat<axis = 0>(x, t)
    }
  )",
                                 feed);
  EXPECT_TRUE(out.at("t").equals(Tensor::from_vector<std::string>({2, 2}, {"a", "c", "b", "d"})));
  EXPECT_TRUE(out.at("c").equals(
      Tensor::from_vector<std::string>({4, 2}, {"a", "b", "c", "d", "a", "c", "b", "d"})));
}

TEST(SoftmaxKernels, FollowOpset11And13Semantics) {
  auto np = numpy_arrays(R"(
x = (rng.randn(2, 3, 4) * 3).astype(np.float32); save('x', x)
X = x.astype(np.float64)
def softmax(v, axis):
    e = np.exp(v - v.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
def log_softmax(v, axis):
    m = v - v.max(axis=axis, keepdims=True)
    return m - np.log(np.exp(m).sum(axis=axis, keepdims=True))
flat = X.reshape(2, 12)
save('s11', softmax(flat, 1).reshape(2, 3, 4).astype(np.float32))
save('l11', log_softmax(flat, 1).reshape(2, 3, 4).astype(np.float32))
save('s13', softmax(X, 1).astype(np.float32))
save('l13', log_softmax(X, -1).astype(np.float32))
)");
  TensorMap feed;
  feed.set("x", np.at("x"));
  TensorMap v11 = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 11]>
    g (float[2,3,4] x) => (float s11, float l11) { s11 = Softmax(x) l11 = LogSoftmax(x) }
  )",
                                 feed);
  TensorMap v13 = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3,4] x) => (float s13, float l13) {
      s13 = Softmax<axis = 1>(x)
      l13 = LogSoftmax(x)
    }
  )",
                                 feed);
  EXPECT_TRUE(tensors_close(v11.at("s11"), np.at("s11"), 1e-6, 1e-7));
  EXPECT_TRUE(tensors_close(v11.at("l11"), np.at("l11"), 1e-6, 1e-7));
  EXPECT_TRUE(tensors_close(v13.at("s13"), np.at("s13"), 1e-6, 1e-7));
  EXPECT_TRUE(tensors_close(v13.at("l13"), np.at("l13"), 1e-6, 1e-7));
}

}  // namespace
}  // namespace parity::testing
