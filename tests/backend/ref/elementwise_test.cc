// Elementwise math, logic and variadic ops beyond what the ONNX node tests cover: opset-18
// bitwise ops, float16/bfloat16 inputs, legacy (opset < 7) broadcasting, broadcasting edge
// cases (empty dims, scalars, three operands), errors, and thread-count independence.
// Expected values are computed by NumPy at test time.
#include <cstring>

#include <gtest/gtest.h>

#include "core/thread_pool.h"
#include "ref_test_util.h"

namespace parity::testing {
namespace {

// The same bytes seen as another element type of the same size (bfloat16 from uint16 bits).
Tensor retyped(const Tensor& t, DataType dtype) {
  Tensor r(dtype, t.shape());
  std::memcpy(r.raw_data(), t.raw_data(), t.nbytes());
  return r;
}

TensorMap feed_of(const std::map<std::string, Tensor>& arrays,
                  std::initializer_list<const char*> names) {
  TensorMap feed;
  for (const char* n : names) feed.set(n, arrays.at(n));
  return feed;
}

TEST(ElementwiseOps, BitwiseOpsOfOpset18MatchNumPy) {
  auto np = numpy_arrays(R"(
a = rng.randint(-128, 128, size=(3, 4)).astype(np.int8)
b = rng.randint(-128, 128, size=(4,)).astype(np.int8)
u = rng.randint(0, 2**64 - 1, size=(5,), dtype=np.uint64)
v = rng.randint(0, 2**64 - 1, size=(5,), dtype=np.uint64)
p = rng.randint(-2**31, 2**31, size=(2, 3)).astype(np.int32)
q = rng.randint(0, 2**16, size=(2, 1)).astype(np.uint16)
r = rng.randint(0, 2**16, size=(3,)).astype(np.uint16)
for n, x in [('a', a), ('b', b), ('u', u), ('v', v), ('p', p), ('q', q), ('r', r)]: save(n, x)
save('and8', a & b); save('or8', a | b); save('xor8', a ^ b); save('not8', ~a)
save('and64', u & v); save('xor64', u ^ v); save('not32', ~p); save('or16', q | r)
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (int8[3,4] a, int8[4] b, uint64[5] u, uint64[5] v, int32[2,3] p, uint16[2,1] q, uint16[3] r)
      => (int8[3,4] and8, int8[3,4] or8, int8[3,4] xor8, int8[3,4] not8, uint64[5] and64,
          uint64[5] xor64, int32[2,3] not32, uint16[2,3] or16) {
      and8 = BitwiseAnd(a, b)
      or8 = BitwiseOr(a, b)
      xor8 = BitwiseXor(a, b)
      not8 = BitwiseNot(a)
      and64 = BitwiseAnd(u, v)
      xor64 = BitwiseXor(u, v)
      not32 = BitwiseNot(p)
      or16 = BitwiseOr(q, r)
    }
  )",
                                 feed_of(np, {"a", "b", "u", "v", "p", "q", "r"}));
  for (const char* n : {"and8", "or8", "xor8", "not8", "and64", "xor64", "not32", "or16"})
    EXPECT_TRUE(tensors_identical(out.at(n), np.at(n))) << n;
}

// Unary math on float16 and bfloat16: computed in double and rounded once to the type, which
// NumPy does for float16 (float64 -> float16 rounds once) and the script does for bfloat16.
TEST(ElementwiseOps, HalfAndBFloat16MathRoundsOnceFromDouble) {
  auto np = numpy_arrays(R"(
import math
def bf16_bits(x):  # nearest-even bfloat16 of float64 values in the normal range
    m, e = np.frexp(x)
    r = np.ldexp(np.rint(np.ldexp(m, 8)), e - 8)
    return (r.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
h = (rng.rand(40) * 3 + 0.1).astype(np.float16); save('h', h)
b32 = (rng.rand(40) * 3 + 0.1).astype(np.float32)
bbits = (b32.view(np.uint32) >> 16).astype(np.uint16); save('b', bbits)
bv = (bbits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
H = h.astype(np.float64)
erf = np.vectorize(math.erf)
for name, f in [('sqrt', np.sqrt), ('exp', np.exp), ('log', np.log), ('sin', np.sin),
                ('tanh', np.tanh), ('erf', erf), ('recip', lambda x: 1 / x)]:
    save('h' + name, f(H).astype(np.float16)); save('b' + name, bf16_bits(f(bv)))
save('four', np.array([4], np.float16)); save('hround', np.round(H * 4).astype(np.float16))
)");
  TensorMap feed;
  feed.set("h", np.at("h"));
  feed.set("four", np.at("four"));
  feed.set("b", retyped(np.at("b"), DataType::kBFloat16));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (float16[40] h, float16[1] four, bfloat16[40] b)
      => (float16[40] hsqrt, float16[40] hexp, float16[40] hlog, float16[40] hsin,
          float16[40] htanh, float16[40] herf, float16[40] hrecip, float16[40] hround,
          bfloat16[40] bsqrt, bfloat16[40] bexp, bfloat16[40] blog, bfloat16[40] bsin,
          bfloat16[40] btanh, bfloat16[40] berf, bfloat16[40] brecip) {
      hsqrt = Sqrt(h)
      hexp = Exp(h)
      hlog = Log(h)
      hsin = Sin(h)
      htanh = Tanh(h)
      herf = Erf(h)
      hrecip = Reciprocal(h)
      hmul = Mul(h, four)
      hround = Round(hmul)
      bsqrt = Sqrt(b)
      bexp = Exp(b)
      blog = Log(b)
      bsin = Sin(b)
      btanh = Tanh(b)
      berf = Erf(b)
      brecip = Reciprocal(b)
    }
  )",
                                 feed);
  for (const char* n : {"hsqrt", "hexp", "hlog", "hsin", "htanh", "herf", "hrecip", "hround"})
    EXPECT_TRUE(tensors_identical(out.at(n), np.at(n))) << n;
  for (const char* n : {"bsqrt", "bexp", "blog", "bsin", "btanh", "berf", "brecip"})
    EXPECT_TRUE(tensors_identical(out.at(n), retyped(np.at(n), DataType::kBFloat16))) << n;
}

TEST(ElementwiseOps, BroadcastingEdgeCases) {
  auto np = numpy_arrays(R"(
e = np.zeros((0, 3), np.float32); r = rng.randn(1, 3).astype(np.float32)
s = np.array(2.5, np.float32); t = rng.randn(2, 3, 4).astype(np.float32)
x = rng.randn(2, 1, 3).astype(np.float32); y = rng.randn(4, 1).astype(np.float32)
x[0, 0, 1] = np.nan; y[2, 0] = np.nan
c = rng.rand(2, 1, 4) > 0.5
for n, v in [('e', e), ('r', r), ('s', s), ('t', t), ('x', x), ('y', y), ('c', c)]: save(n, v)
X, Y, S = x.astype(np.float64), y.astype(np.float64), np.float64(s)
save('empty', e + r); save('scaled', (t.astype(np.float64) * S).astype(np.float32))
save('sum', (X + Y + S).astype(np.float32)); save('mean', ((X + Y + S) / 3).astype(np.float32))
save('max', np.maximum(np.maximum(x, y), s)); save('min', np.minimum(np.minimum(x, y), s))
save('where', np.where(c, s, y[:3]))
save('gt', x > y)
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[0,3] e, float[1,3] r, float s, float[2,3,4] t, float[2,1,3] x, float[4,1] y,
       bool[2,1,4] c)
      => (float[0,3] empty, float[2,3,4] scaled, float[2,4,3] sum, float[2,4,3] mean,
          float[2,4,3] max, float[2,4,3] min, float[2,3,4] where, bool[2,4,3] gt) {
      empty = Add(e, r)
      scaled = Mul(t, s)
      sum = Sum(x, y, s)
      mean = Mean(x, y, s)
      max = Max(x, y, s)
      min = Min(x, y, s)
      starts = Constant<value = int64[1] {0}>()
      ends = Constant<value = int64[1] {3}>()
      y3 = Slice(y, starts, ends)
      where = Where(c, s, y3)
      gt = Greater(x, y)
    }
  )",
                                 [&] {
                                   TensorMap f = feed_of(np, {"e", "r", "t", "x", "y", "c"});
                                   f.set("s", np.at("s").reshaped({}));  // a rank-0 scalar
                                   return f;
                                 }());
  for (const char* n : {"empty", "scaled", "sum", "mean", "max", "min", "where", "gt"})
    EXPECT_TRUE(tensors_identical(out.at(n), np.at(n))) << n;
}

TEST(ElementwiseOps, StringEqualityOfOpset19Broadcasts) {
  const std::vector<std::string> left = {"a", "bb", "", "ccc"}, right = {"bb", "", "a"};
  auto np = numpy_arrays(R"(
left = np.array(['a', 'bb', '', 'ccc']).reshape(4, 1); right = np.array(['bb', '', 'a'])
save('eq', left == right)
)");
  TensorMap feed;
  feed.set("l", Tensor::from_vector<std::string>({4, 1}, left));
  feed.set("r", Tensor::from_vector<std::string>({3}, right));
  TensorMap out = run_text_model(R"(
    <ir_version: 9, opset_import: ["" : 19]>
    g (string[4,1] l, string[3] r) => (bool[4,3] eq) { eq = Equal(l, r) }
  )",
                                 feed);
  EXPECT_TRUE(tensors_identical(out.at("eq"), np.at("eq")));
}

// Opsets 1-6 broadcast only with broadcast=1, aligning B at `axis`; Clip-6 takes attributes.
TEST(ElementwiseOps, LegacyBroadcastAttributesAndClipAttributes) {
  auto np = numpy_arrays(R"(
a = rng.randn(2, 3, 4, 5).astype(np.float32); b = rng.randn(3, 4).astype(np.float32)
save('a', a); save('b', b)
save('sum', (a.astype(np.float64) + b[None, :, :, None]).astype(np.float32))
save('clip', np.clip(a, np.float32(-0.5), np.float32(0.75)))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 3, opset_import: ["" : 6]>
    g (float[2,3,4,5] a, float[3,4] b) => (float[2,3,4,5] sum, float[2,3,4,5] clip) {
      sum = Add<broadcast = 1, axis = 1>(a, b)
      clip = Clip<min = -0.5, max = 0.75>(a)
    }
  )",
                                 feed_of(np, {"a", "b"}));
  EXPECT_TRUE(tensors_identical(out.at("sum"), np.at("sum")));
  EXPECT_TRUE(tensors_identical(out.at("clip"), np.at("clip")));

  // Without broadcast=1 the shapes must be equal.
  std::string message = error_of([&] {
    run_text_model(R"(
      <ir_version: 3, opset_import: ["" : 6]>
      g (float[2,3,4,5] a, float[3,4] b) => (float[2,3,4,5] sum) { sum = Add(a, b) }
    )",
                   feed_of(np, {"a", "b"}));
  });
  EXPECT_NE(message.find("failed to run node 'Add_0' (Add): inputs have shapes (2, 3, 4, 5) and "
                         "(3, 4); without broadcast=1 they must be equal"),
            std::string::npos)
      << message;
}

TEST(ElementwiseOps, IntegerClipPowAndModStayExact) {
  auto np = numpy_arrays(R"(
i = rng.randint(-2**40, 2**40, size=(7,)).astype(np.int64); save('i', i)
lo = np.array(-2**39, np.int64); hi = np.array(2**38, np.int64); save('lo', lo); save('hi', hi)
save('clip', np.clip(i, lo, hi))
base = np.array([3, -3, 7, 2, -1, 5], np.int64); ex = np.array([39, 39, 22, 63, 7, 0], np.int64)
save('base', base); save('ex', ex); save('pow', base ** ex)
m = rng.randint(-1000, 1000, size=(10,)).astype(np.int16)
d = np.array([7, -7, 3, -3, 11], np.int16)
save('m', m.reshape(2, 5)); save('d', d)
save('mod', np.mod(m.reshape(2, 5), d)); save('fmod', np.fmod(m.reshape(2, 5), d))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (int64[7] i, int64 lo, int64 hi, int64[6] base, int64[6] ex, int16[2,5] m, int16[5] d)
      => (int64[7] clip, int64[6] pow, int16[2,5] mod, int16[2,5] fmod) {
      clip = Clip(i, lo, hi)
      pow = Pow(base, ex)
      mod = Mod(m, d)
      fmod = Mod<fmod = 1>(m, d)
    }
  )",
                                 feed_of(np, {"i", "lo", "hi", "base", "ex", "m", "d"}));
  for (const char* n : {"clip", "pow", "mod", "fmod"})
    EXPECT_TRUE(tensors_identical(out.at(n), np.at(n))) << n;
}

TEST(ElementwiseOps, ErrorsNameTheNodeAndTheRule) {
  auto run_one = [](const std::string& text, TensorMap feed) {
    return error_of([&] { run_text_model(text, feed); });
  };
  TensorMap f23;
  f23.set("a", Tensor(DataType::kFloat32, {2, 3}));
  f23.set("b", Tensor(DataType::kFloat32, {4}));
  std::string m = run_one(R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g (float[2,3] a, float[4] b) => (float[2,3] c) { c = Add(a, b) }
  )",
                          f23);
  EXPECT_NE(m.find("failed to run node 'Add_0' (Add): failed to broadcast shapes (2, 3) and "
                   "(4,)"),
            std::string::npos)
      << m;

  TensorMap fi;
  fi.set("x", Tensor(DataType::kInt32, {2}));
  m = run_one(R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g (int32[2] x) => (int32[2] y) { y = Sqrt(x) }
  )",
              fi);
  EXPECT_NE(m.find("failed to run node 'Sqrt_0' (Sqrt): element type int32 of input X is not "
                   "supported; supported types: [float32, float64, float16, bfloat16]"),
            std::string::npos)
      << m;

  TensorMap fs;
  fs.set("x", Tensor(DataType::kInt8, {2}));
  m = run_one(R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g (int8[2] x) => (int8[2] y) { y = BitShift<direction = "LEFT">(x, x) }
  )",
              fs);
  EXPECT_NE(m.find("element type int8 of input X is not supported; supported types: [uint8, "
                   "uint16, uint32, uint64]"),
            std::string::npos)
      << m;

  TensorMap ff;
  ff.set("a", Tensor(DataType::kFloat32, {2}));
  m = run_one(R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g (float[2] a) => (float[2] y) { y = Mod(a, a) }
  )",
              ff);
  EXPECT_NE(m.find("failed to run node 'Mod_0' (Mod): attribute 'fmod' is 0 for floating input "
                   "type float32; the spec requires fmod=1"),
            std::string::npos)
      << m;

  m = run_one(R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g (float[2] a, float[2] b) => (float[2] y) { y = Less(a, b) }
  )",
              [] {
                TensorMap f;
                f.set("a", Tensor(DataType::kFloat32, {2}));
                f.set("b", Tensor(DataType::kFloat64, {2}));
                return f;
              }());
  EXPECT_NE(m.find("failed to run node 'Less_0' (Less): inputs A and B have element types "
                   "float32 and float64; they must be equal"),
            std::string::npos)
      << m;
}

// Every output of a chain of elementwise ops is bit-identical on 1 and 4 threads.
TEST(ElementwiseOps, SameBitsOnOneAndFourThreads) {
  auto np = numpy_arrays(R"(
n = 1 << 20
save('x', rng.randn(4, n // 4).astype(np.float32))
save('y', rng.randn(n // 4).astype(np.float32))
save('c', rng.rand(4, 1) > 0.5)
)");
  const std::string text = R"(
    <ir_version: 8, opset_import: ["" : 20]>
    g (float[4,262144] x, float[262144] y, bool[4,1] c)
      => (float[4,262144] s, float[4,262144] m, float[4,262144] p, float16[4,262144] h,
          float[4,262144] w, float[4,262144] g, int32[4,262144] i, float[4,262144] cl) {
      e = Exp(x)
      s = Sum(x, y, e)
      m = Max(x, y)
      p = Pow(e, y)
      h = Cast<to = 10>(s)
      w = Where(c, x, y)
      g = Gelu<approximate = "tanh">(x)
      k = Mul(s, m)
      i = Cast<to = 6>(k)
      lo = Constant<value = float {-0.5}>()
      cl = Clip(x, lo)
    }
  )";
  TensorMap feed = feed_of(np, {"x", "y", "c"});
  set_num_threads(1);
  TensorMap one = run_text_model(text, feed);
  set_num_threads(4);
  TensorMap four = run_text_model(text, feed);
  set_num_threads(0);
  for (const auto& [name, t] : one) EXPECT_TRUE(tensors_identical(four.at(name), t)) << name;
}

}  // namespace
}  // namespace parity::testing
