// QuantizeLinear / DequantizeLinear beyond what the ONNX node tests cover: blocks (opset 21)
// with int4 and uint8 and a ragged last block, 16-bit outputs chosen by output_dtype, float8
// outputs with saturate (opset 19), float16 inputs and scales, rounding half to even, and
// shape errors. Expected values follow the spec's formulas in NumPy at test time: the
// quotient x / scale in x's type, rounded half to even, plus the zero point, saturated.
#include <gtest/gtest.h>

#include "float8_oracle.h"
#include "ref_test_util.h"

namespace parity::testing {
namespace {

// An int4/uint4 tensor holding the values of an int8/uint8 one.
Tensor packed_4bit(const Tensor& values, DataType dtype) {
  Tensor t(dtype, values.shape());
  auto* dst = static_cast<uint8_t*>(t.raw_data());
  for (int64_t i = 0; i < values.numel(); ++i) {
    if (dtype == DataType::kInt4)
      int4_set(dst, static_cast<size_t>(i), values.data<int8_t>()[i]);
    else
      uint4_set(dst, static_cast<size_t>(i), values.data<uint8_t>()[i]);
  }
  return t;
}

TEST(QuantizeOps, BlockedQuantizationOfOpset21) {
  auto np = numpy_arrays(R"(
x = (rng.randn(4, 6) * 3).astype(np.float32); s = (rng.rand(4, 3) + 0.5).astype(np.float32)
z = rng.randint(-3, 3, size=(4, 3)).astype(np.int8)
S, Z = np.repeat(s, 2, axis=1), np.repeat(z, 2, axis=1)
q = np.clip(np.rint(x / S) + Z, -8, 7).astype(np.int8)
save('x', x); save('s', s); save('z', z); save('q', q)
save('dq', ((q - Z).astype(np.float64) * S).astype(np.float32))
# uint8 blocks of 3 along axis 0 of 7 rows: the last block has one row.
a = (rng.rand(7, 2) * 50).astype(np.float32); t = (rng.rand(3, 2) + 0.1).astype(np.float32)
u = rng.randint(0, 20, size=(3, 2)).astype(np.uint8)
T, U = np.repeat(t, 3, axis=0)[:7], np.repeat(u, 3, axis=0)[:7]
save('a', a); save('t', t); save('u', u)
save('qa', np.clip(np.rint(a / T) + U, 0, 255).astype(np.uint8))
)");
  TensorMap feed;
  for (const char* n : {"x", "s", "a", "t", "u"}) feed.set(n, np.at(n));
  feed.set("z", packed_4bit(np.at("z"), DataType::kInt4));
  TensorMap out = run_text_model(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[4,6] x, float[4,3] s, uint8[4,3] z, float[7,2] a, float[3,2] t, uint8[3,2] u)
      => (uint8[4,6] q4, int8[4,6] q, float[4,6] dq, uint8[7,2] qa) {
      q4 = QuantizeLinear<axis = 1, block_size = 2>(x, s, z)
      q = Cast<to = 3>(q4)
      dq = DequantizeLinear<axis = 1, block_size = 2>(q4, s, z)
      qa = QuantizeLinear<axis = 0, block_size = 3>(a, t, u)
    }
  )",
                                 feed);
  EXPECT_EQ(out.at("q4").dtype(), DataType::kInt4);
  EXPECT_TRUE(tensors_identical(out.at("q"), np.at("q")));
  EXPECT_TRUE(tensors_identical(out.at("dq"), np.at("dq")));
  EXPECT_TRUE(tensors_identical(out.at("qa"), np.at("qa")));
}

TEST(QuantizeOps, SixteenBitOutputsPerAxisAndRoundingHalfToEven) {
  auto np = numpy_arrays(R"(
x = (rng.randn(2, 3, 4) * 30000).astype(np.float32); s = np.array([0.5, 1.0, 2.0], np.float32)
h = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 1e9, -1e9], np.float32)
save('x', x); save('s', s); save('h', h)
S = s.reshape(1, 3, 1)
save('q16', np.clip(np.rint(x / S), -32768, 32767).astype(np.int16))
save('qu16', np.clip(np.rint(x / S), 0, 65535).astype(np.uint16))
save('qh', np.clip(np.rint(h), -128, 127).astype(np.int8))
save('dq', (np.clip(np.rint(x / S), -32768, 32767).astype(np.float64) * S).astype(np.float32))
)");
  TensorMap feed;
  for (const char* n : {"x", "s", "h"}) feed.set(n, np.at(n));
  TensorMap out = run_text_model(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[2,3,4] x, float[3] s, float[9] h)
      => (int16[2,3,4] q16, uint16[2,3,4] qu16, int8[9] qh, float[2,3,4] dq) {
      q16 = QuantizeLinear<output_dtype = 5>(x, s)
      qu16 = QuantizeLinear<axis = -2, output_dtype = 4>(x, s)
      one = Constant<value = float {1.0}>()
      zero = Constant<value = int8 {0}>()
      qh = QuantizeLinear(h, one, zero)
      dq = DequantizeLinear(q16, s)
    }
  )",
                                 feed);
  for (const char* n : {"q16", "qu16", "qh", "dq"})
    EXPECT_TRUE(tensors_identical(out.at(n), np.at(n))) << n;
}

TEST(QuantizeOps, HalfPrecisionInputsAndScales) {
  auto np = numpy_arrays(R"(
x = (rng.randn(40) * 20).astype(np.float16); s = np.array(0.3, np.float16)
q = rng.randint(-128, 128, size=(40,)).astype(np.int8); z = np.array(5, np.int8)
save('x', x); save('s', s); save('q', q); save('z', z)
save('y', np.clip(np.rint(x / s) + 5, -128, 127).astype(np.int8))  # x / s in float16
save('d', ((q.astype(np.float64) - 5) * np.float64(s)).astype(np.float16))
)");
  TensorMap feed;
  for (const char* n : {"x", "s", "q", "z"}) feed.set(n, np.at(n));
  TensorMap out = run_text_model(R"(
    <ir_version: 9, opset_import: ["" : 19]>
    g (float16[40] x, float16 s, int8[40] q, int8 z) => (int8[40] y, float16[40] d) {
      y = QuantizeLinear(x, s, z)
      d = DequantizeLinear(q, s, z)
    }
  )",
                                 feed);
  EXPECT_TRUE(tensors_identical(out.at("y"), np.at("y")));
  EXPECT_TRUE(tensors_identical(out.at("d"), np.at("d")));
}

TEST(QuantizeOps, Float8OutputsSaturateOnRequest) {
  auto np = numpy_arrays(std::string(kFloat8Oracle) + R"(
x = np.array([1.0, 100.0, 500.0, 900.0, 1000.0, -1000.0, 0.3, -7.0], np.float32)
s = np.array(2.0, np.float32); save('x', x); save('s', s)
x100 = (x * 100).astype(np.float32); save('x100', x100)
for name, q in (('e4m3fn', x / s), ('e5m2', x100 / s)):  # quotients in float32, as the spec
    for sat in (0, 1): save('%s_%d' % (name, sat), to_float8(name, q, sat))
)");
  TensorMap feed;
  feed.set("x", np.at("x"));
  feed.set("x100", np.at("x100"));
  feed.set("s", np.at("s"));
  feed.set("z", Tensor(DataType::kFloat8E4M3FN, {}));  // 0.0
  feed.set("z5", Tensor(DataType::kFloat8E5M2, {}));
  // Float8 graph values are declared uint8: the executor runs on the fed types.
  TensorMap out = run_text_model(R"(
    <ir_version: 9, opset_import: ["" : 19]>
    g (float[8] x, float[8] x100, float s, uint8 z, uint8 z5)
      => (float[8] e4m3fn_1, float[8] e4m3fn_0, float[8] e5m2_1, float[8] e5m2_0) {
      a = QuantizeLinear(x, s, z)
      b = QuantizeLinear<saturate = 0>(x, s, z)
      c = QuantizeLinear<saturate = 1>(x100, s, z5)
      d = QuantizeLinear<saturate = 0>(x100, s, z5)
      e4m3fn_1 = Cast<to = 1>(a)
      e4m3fn_0 = Cast<to = 1>(b)
      e5m2_1 = Cast<to = 1>(c)
      e5m2_0 = Cast<to = 1>(d)
    }
  )",
                                 feed);
  for (const char* n : {"e4m3fn_1", "e4m3fn_0", "e5m2_1", "e5m2_0"})
    EXPECT_TRUE(tensors_close(out.at(n), np.at(n), 0, 0)) << n;
}

// fuzz_prepare: a NaN in x, or an infinity (inf / inf), was cast to uint8 (undefined; UBSan
// stopped the fuzzer). As in QuantizeLinear, NaN quantizes to 0; the range ignores NaN.
TEST(QuantizeOps, DynamicQuantizationOfNaNAndInfinitiesIsZero) {
  auto np = numpy_arrays(R"(
def dql(x):
    lo, hi = min(0, np.nanmin(x)), max(0, np.nanmax(x))
    with np.errstate(all='ignore'):
        scale = np.float32((hi - lo) / np.float32(255))
        zp = np.rint(np.clip(np.float32(0) - lo / scale, 0, 255)) if scale != 0 else np.float32(0)
        zp = np.float32(0) if np.isnan(zp) else zp
        q = np.rint(x / scale) + zp
    return np.where(np.isnan(q), 0, np.clip(q, 0, 255)).astype(np.uint8), scale, np.uint8(zp)
for name, x in (('a', [1, np.nan, -2, 3]), ('b', [np.inf, 1, -1, 0]), ('c', [-np.inf, np.inf, 2, np.nan])):
    x = np.array(x, np.float32)
    q, scale, zp = dql(x)
    save(name, x); save(name + 'q', q); save(name + 's', np.array(scale)); save(name + 'z', np.array(zp))
)");
  for (const char* name : {"a", "b", "c"}) {
    const std::string n = name;
    TensorMap out = run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[4] x) => (uint8[4] q, float s, uint8 z) { q, s, z = DynamicQuantizeLinear(x) }
    )",
                                   [&] {
                                     TensorMap f;
                                     f.set("x", np.at(n));
                                     return f;
                                   }());
    EXPECT_TRUE(tensors_identical(out.at("q"), np.at(n + "q"))) << n;
    EXPECT_TRUE(tensors_identical(out.at("s"), np.at(n + "s"))) << n;
    EXPECT_TRUE(tensors_identical(out.at("z"), np.at(n + "z"))) << n;
  }
}

TEST(QuantizeOps, MismatchedParameterShapesAreErrors) {
  TensorMap feed;
  feed.set("x", Tensor(DataType::kFloat32, {4, 6}));
  feed.set("s", Tensor(DataType::kFloat32, {4, 2}));
  std::string message = error_of([&] {
    run_text_model(R"(
      <ir_version: 10, opset_import: ["" : 21]>
      g (float[4,6] x, float[4,2] s) => (uint8[4,6] y) {
        y = QuantizeLinear<axis = 1, block_size = 2>(x, s)
      }
    )",
                   feed);
  });
  EXPECT_NE(message.find("failed to run node 'QuantizeLinear_0' (QuantizeLinear): scale has "
                         "shape (4, 2); with block_size 2 along axis 1 of x (4, 6) it must be "
                         "(4, 3)"),
            std::string::npos)
      << message;

  feed.set("s", Tensor(DataType::kFloat32, {5}));
  message = error_of([&] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[4,6] x, float[5] s) => (uint8[4,6] y) { y = QuantizeLinear(x, s) }
    )",
                   feed);
  });
  EXPECT_NE(message.find("scale has shape (5,); per axis it must be 1-D with x's dim 6 along "
                         "axis 1"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace parity::testing
