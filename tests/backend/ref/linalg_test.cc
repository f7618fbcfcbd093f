// Matrix kernels beyond the ONNX node tests: Einsum's general forms (diagonals and traces,
// ellipsis broadcasting, implicit output, three operands, integers), Det, the quantized
// products with per-row/per-column parameters, float16/bfloat16 MatMul, and large MatMul/Gemm
// giving the same bits on 1 and 4 threads. NumPy computes the expected values at test time.
#include <cstring>

#include <gtest/gtest.h>

#include "core/thread_pool.h"
#include "ref_test_util.h"

namespace parity::testing {
namespace {

constexpr double kRtol = 1e-6, kAtol = 1e-6;

TEST(LinalgKernels, EinsumFollowsNumPy) {
  auto np = numpy_arrays(R"(
a = rng.randn(4, 4).astype(np.float32); b = rng.randn(3, 4, 4).astype(np.float32)
c = rng.randn(2, 1, 4, 5).astype(np.float32); d = rng.randn(3, 5, 6).astype(np.float32)
e = rng.randn(4, 5).astype(np.float32); f = rng.randn(5, 6).astype(np.float32)
i = rng.randint(-50, 50, size=(3, 4)).astype(np.int32); j = rng.randint(-50, 50, size=(4, 2)).astype(np.int32)
for k, v in dict(a=a, b=b, c=c, d=d, e=e, f=f, i=i, j=j, a0=a[0], e0=e[0]).items(): save(k, v)
D = lambda x: x.astype(np.float64)
save('trace', np.einsum('ii', D(a)).astype(np.float32).reshape(1))
save('diag', np.einsum('ii->i', D(a)).astype(np.float32))
save('bdiag', np.einsum('bii->bi', D(b)).astype(np.float32))
save('bcast', np.einsum('...ij,...jk->...ik', D(c), D(d)).astype(np.float32))
save('implicit', np.einsum('Bj,ja', D(e), D(f)).astype(np.float32))
save('three', np.einsum('ij,jk,kl->il', D(a), D(e), D(f)).astype(np.float32))
save('outer', np.einsum('i,j->ji', D(a[0]), D(e[0])).astype(np.float32))
save('ints', np.einsum('ij,jk->ik', i, j))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 12]>
    g (float[4,4] a, float[3,4,4] b, float[2,1,4,5] c, float[3,5,6] d, float[4,5] e,
       float[5,6] f, int32[3,4] i, int32[4,2] j, float[4] a0, float[5] e0)
      => (float trace, float diag, float bdiag, float bcast, float implicit, float three,
          float outer, int32 ints) {
      trace = Einsum<equation = "ii">(a)
      diag = Einsum<equation = "ii->i">(a)
      bdiag = Einsum<equation = "bii->bi">(b)
      bcast = Einsum<equation = "...ij,...jk->...ik">(c, d)
      implicit = Einsum<equation = "Bj,ja">(e, f)
      three = Einsum<equation = "ij, jk, kl -> il">(a, e, f)
      outer = Einsum<equation = "i,j->ji">(a0, e0)
      ints = Einsum<equation = "ij,jk->ik">(i, j)
    }
  )",
                                 feed_of(np, {"a", "b", "c", "d", "e", "f", "i", "j", "a0", "e0"}));
  EXPECT_EQ(out.at("trace").shape(), Shape{});
  EXPECT_TRUE(tensors_close(out.at("trace").reshaped({1}), np.at("trace"), kRtol, kAtol));
  for (const char* n : {"diag", "bdiag", "bcast", "implicit", "three", "outer"})
    EXPECT_TRUE(tensors_close(out.at(n), np.at(n), kRtol, kAtol)) << n;
  EXPECT_TRUE(tensors_identical(out.at("ints"), np.at("ints")));
}

TEST(LinalgKernels, EinsumRefusesBadEquations) {
  auto np = numpy_arrays("save('a', np.ones((2, 3), np.float32))\n");
  for (const char* eq : {"ij,jk->ik", "ijk->i", "ij->iq", "i1->i"}) {
    std::string e = error_of([&] {
      run_text_model(fmt::format(R"(
        <ir_version: 8, opset_import: ["" : 12]>
        g (float[2,3] a) => (float y) {{
          y = Einsum<equation = "{}">(a)
        }}
      )",
                                 eq),
                     feed_of(np, {"a"}));
    });
    EXPECT_NE(e.find("equation"), std::string::npos) << eq << ": " << e;
  }
}

TEST(LinalgKernels, DetMatchesNumPyIncludingSingularMatrices) {
  auto np = numpy_arrays(R"(
x = rng.randn(2, 3, 5, 5)
x[1, 2, 4] = x[1, 2, 0] * 2  # singular
save('x', x); save('det', np.linalg.det(x))
save('xf', x.astype(np.float32)); save('detf', np.linalg.det(x.astype(np.float32).astype(np.float64)).astype(np.float32))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 11]>
    g (double[2,3,5,5] x, float[2,3,5,5] xf) => (double det, float detf) {
      det = Det(x)
      detf = Det(xf)
    }
  )",
                                 feed_of(np, {"x", "xf"}));
  EXPECT_TRUE(tensors_close(out.at("det"), np.at("det"), 1e-9, 1e-12));
  EXPECT_TRUE(tensors_close(out.at("detf"), np.at("detf"), kRtol, 1e-6));
}

TEST(LinalgKernels, QuantizedProductsTakePerRowAndPerColumnParameters) {
  auto np = numpy_arrays(R"(
a = rng.randint(0, 256, size=(2, 5, 7)).astype(np.uint8); b = rng.randint(-128, 128, size=(7, 4)).astype(np.int8)
azp = rng.randint(0, 256, size=(2, 5, 1)).astype(np.uint8); bzp = rng.randint(-128, 128, size=(4,)).astype(np.int8)
save('a', a); save('b', b); save('azp', azp); save('bzp', bzp)
acc = np.matmul(a.astype(np.int64) - azp, b.astype(np.int64) - bzp)
save('mi', acc.astype(np.int32))
asc = (rng.rand(5) * 0.05).astype(np.float32); azq = rng.randint(0, 256, size=(5,)).astype(np.uint8)
bsc = (rng.rand(4) * 0.05).astype(np.float32)
ys, yzp = np.float32(0.37), np.uint8(120)
save('asc', asc); save('azq', azq); save('bsc', bsc); save('ys', np.array(ys)); save('yzp', np.array(yzp))
q = np.matmul(a.astype(np.int64) - azq.reshape(5, 1), b.astype(np.int64) - bzp).astype(np.float64)
q = q * (asc.astype(np.float64).reshape(5, 1) * bsc.astype(np.float64)) / np.float64(ys)
save('qm', np.clip(np.rint(q) + 120, 0, 255).astype(np.uint8))
)");
  TensorMap feed = feed_of(np, {"a", "b", "azp", "bzp", "asc", "azq", "bsc"});
  feed.set("ys", np.at("ys").reshaped({}));
  feed.set("yzp", np.at("yzp").reshaped({}));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (uint8[2,5,7] a, int8[7,4] b, uint8[2,5,1] azp, int8[4] bzp, float[5] asc, uint8[5] azq,
       float[4] bsc, float ys, uint8 yzp) => (int32 mi, uint8 qm) {
      mi = MatMulInteger(a, b, azp, bzp)
      qm = QLinearMatMul(a, asc, azq, b, bsc, bzp, ys, yzp)
    }
  )",
                                 feed);
  EXPECT_TRUE(tensors_identical(out.at("mi"), np.at("mi")));
  EXPECT_TRUE(tensors_identical(out.at("qm"), np.at("qm")));
}

Tensor as_bfloat16(const Tensor& bits) {
  Tensor t(DataType::kBFloat16, bits.shape());
  std::memcpy(t.raw_data(), bits.raw_data(), bits.nbytes());
  return t;
}

TEST(LinalgKernels, HalfPrecisionMatMulRoundsOnceFromDouble) {
  // Products of float16 (or 8-bit-mantissa) values are exact in double and these sums stay
  // exact too (few terms, small exponent range), so the result is the exact product rounded
  // once: NumPy's float64 result rounded must match bit for bit.
  auto np = numpy_arrays(R"(
h = (rng.randn(6, 9) * 2).astype(np.float16); g = (rng.randn(9, 5) * 2).astype(np.float16)
save('h', h); save('g', g)
save('hg', np.matmul(h.astype(np.float64), g.astype(np.float64)).astype(np.float16))
def bf16(shape):
    return ((rng.randn(*shape) * 2).astype(np.float32).view(np.uint32) & 0xFFFF0000).view(np.float32)
p, q = bf16((4, 6)), bf16((6, 3))
save('p', (p.view(np.uint32) >> 16).astype(np.uint16)); save('q', (q.view(np.uint32) >> 16).astype(np.uint16))
r = np.matmul(p.astype(np.float64), q.astype(np.float64))
f = r.astype(np.float32)
assert np.all(f.astype(np.float64) == r)  # exact in float32, so one rounding to bfloat16 below
u = f.view(np.uint32).astype(np.uint64)
save('pq', ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16))
)");
  TensorMap feed = feed_of(np, {"h", "g"});
  feed.set("p", as_bfloat16(np.at("p")));
  feed.set("q", as_bfloat16(np.at("q")));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float16[6,9] h, float16[9,5] g, bfloat16[4,6] p, bfloat16[6,3] q)
      => (float16 hg, bfloat16 pq) {
      hg = MatMul(h, g)
      pq = MatMul(p, q)
    }
  )",
                                 feed);
  EXPECT_TRUE(tensors_identical(out.at("hg"), np.at("hg")));
  EXPECT_TRUE(tensors_identical(out.at("pq"), as_bfloat16(np.at("pq"))));
}

// Same bits on 1 and 4 threads, and close to NumPy's float64 product rounded to float32.
TEST(LinalgKernels, LargeMatMulAndGemmGiveTheSameBitsOnAnyThreadCount) {
  auto np = numpy_arrays(R"(
a = rng.randn(3, 301, 259).astype(np.float32); b = rng.randn(259, 197).astype(np.float32)
c = rng.randn(197).astype(np.float32); w = rng.randn(197, 259).astype(np.float32)
save('a', a); save('b', b); save('c', c); save('w', w); save('a0', a[0])
A, B = a.astype(np.float64), b.astype(np.float64)
save('ab', np.matmul(A, B).astype(np.float32))
save('gemm', (0.5 * A[0] @ w.astype(np.float64).T + 2.0 * c.astype(np.float64)).astype(np.float32))
)");
  auto run = [&] {
    return run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[3,301,259] a, float[259,197] b, float[197] c, float[197,259] w, float[301,259] a0)
        => (float ab, float gemm) {
        ab = MatMul(a, b)
        gemm = Gemm<transB = 1, alpha = 0.5, beta = 2.0>(a0, w, c)
      }
    )",
                          feed_of(np, {"a", "b", "c", "w", "a0"}));
  };
  set_num_threads(1);
  TensorMap one = run();
  set_num_threads(4);
  TensorMap four = run();
  set_num_threads(0);
  for (const char* n : {"ab", "gemm"}) {
    EXPECT_TRUE(tensors_identical(four.at(n), one.at(n))) << n;
    EXPECT_TRUE(tensors_close(one.at(n), np.at(n), kRtol, kAtol)) << n;
  }
}

}  // namespace
}  // namespace parity::testing
