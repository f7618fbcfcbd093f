// Elementwise, matrix, shape and softmax kernels against NumPy, which computes the expected
// values at test time (in float64, rounded once to the output type, as the kernels promise).
#include <gtest/gtest.h>

#include "ref_test_util.h"

namespace parity::testing {
namespace {

TEST(ElementwiseKernels, BroadcastAndRoundOnceLikeNumPy) {
  auto np = numpy_arrays(R"(
a = rng.randn(3, 1, 5).astype(np.float32)
b = (rng.randn(4, 1) + 2).astype(np.float32)
save('a', a); save('b', b)
A, B = a.astype(np.float64), b.astype(np.float64)
save('add', (A + B).astype(np.float32)); save('sub', (A - B).astype(np.float32))
save('mul', (A * B).astype(np.float32)); save('div', (A / B).astype(np.float32))
save('relu', np.maximum(A, 0).astype(np.float32))
i = rng.randint(-2**62, 2**62, size=(2, 3)).astype(np.int64)
j = rng.randint(-2**62, 2**62, size=(3,)).astype(np.int64)
save('i', i); save('j', j); save('imul', i * j)
p = rng.randint(-100, 100, size=(6,)).astype(np.int32)
q = np.array([7, -7, 3, -3, 5, 1], dtype=np.int32)
save('p', p); save('q', q); save('idiv', np.trunc(p / q).astype(np.int32))
h = rng.randn(7).astype(np.float16); save('h', h)
save('hadd', (h.astype(np.float64) + 1.0 / 3.0).astype(np.float16))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g (float[3,1,5] a, float[4,1] b, int64[2,3] i, int64[3] j, int32[6] p, int32[6] q)
      => (float[3,4,5] add, float[3,4,5] sub, float[3,4,5] mul, float[3,4,5] div,
          float[3,1,5] relu, int64[2,3] imul, int32[6] idiv) {
      add = Add(a, b)
      sub = Sub(a, b)
      mul = Mul(a, b)
      div = Div(a, b)
      relu = Relu(a)
      imul = Mul(i, j)
      idiv = Div(p, q)
    }
  )",
                                 [&] {
                                   TensorMap f;
                                   for (const char* n : {"a", "b", "i", "j", "p", "q"})
                                     f.set(n, np.at(n));
                                   return f;
                                 }());
  for (const char* n : {"add", "sub", "mul", "div", "relu", "imul", "idiv"})
    EXPECT_TRUE(tensors_identical(out.at(n), np.at(n))) << n;
}

TEST(ElementwiseKernels, Float16SumsRoundOnceFromDouble) {
  auto np = numpy_arrays(R"(
h = rng.randn(64).astype(np.float16); k = rng.randn(64).astype(np.float16)
save('h', h); save('k', k)
save('sum', (h.astype(np.float64) + k.astype(np.float64)).astype(np.float16))
save('prod', (h.astype(np.float64) * k.astype(np.float64)).astype(np.float16))
)");
  TensorMap feed;
  feed.set("h", np.at("h"));
  feed.set("k", np.at("k"));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g (float16[64] h, float16[64] k) => (float16[64] sum, float16[64] prod) {
      sum = Add(h, k)
      prod = Mul(h, k)
    }
  )",
                                 feed);
  EXPECT_TRUE(tensors_identical(out.at("sum"), np.at("sum")));
  EXPECT_TRUE(tensors_identical(out.at("prod"), np.at("prod")));
}

TEST(ElementwiseKernels, IntegerDivisionByZeroIsAnError) {
  std::string message = error_of([] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 14]>
      g (int32[2] p, int32[2] q) => (int32[2] r) { r = Div(p, q) }
    )",
                   [] {
                     TensorMap f;
                     f.set("p", Tensor::from_vector<int32_t>({2}, {1, 2}));
                     f.set("q", Tensor::from_vector<int32_t>({2}, {1, 0}));
                     return f;
                   }());
  });
  EXPECT_NE(message.find("failed to run node 'Div_0' (Div): integer division by zero"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace parity::testing
