// FLOAT4E2M1 (opset 23) and FLOAT8E8M0 (opset 24) in Cast, CastLike, QuantizeLinear,
// DequantizeLinear and the data-movement ops, against NumPy restatements of the spec computed
// at test time: the table of the 16 E2M1 values (nearest, ties to the even code, saturating
// at 6, NaN to +6) and the 256 E8M0 codes (2^(c-127), 255 NaN; round_mode up/down/nearest by
// magnitude; saturate past 2^127). Debian's NumPy has no ml_dtypes, so the oracles work on the
// codes.
#include <algorithm>
#include <cstring>

#include <gtest/gtest.h>

#include "core/mx_types.h"
#include "ref_test_util.h"

namespace parity::testing {
namespace {

// The NumPy oracles. Codes are computed from float64 values (float32 inputs are exact there).
constexpr const char* kOracle = R"(
FP4 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], np.float64)
def fp4_decode(codes):
    v = FP4[codes & 7]
    return np.where(codes & 8, -v, v)
def fp4_code(x):
    x = np.asarray(x, np.float64)
    a = np.abs(x)
    a = np.where(np.isnan(a), 0, np.minimum(a, 6))  # NaN and beyond 6: overridden below
    d = np.abs(a[:, None] - FP4[None, :])
    best = d.min(axis=1)
    # the nearest magnitudes; of two at equal distance, the even code
    cands = d == best[:, None]
    code = np.array([np.flatnonzero(c)[0] if c.sum() == 1 else
                     [k for k in np.flatnonzero(c) if k % 2 == 0][0] for c in cands])
    code = np.where(a >= 6, 7, code)
    code = np.where(np.signbit(x), code | 8, code)
    return np.where(np.isnan(x), 7, code).astype(np.uint8)
def pack4(codes):
    n = np.append(codes.astype(np.uint8) & 0xF, [0] * (len(codes) % 2)).astype(np.uint8)
    return n[0::2] | (n[1::2] << 4)
def e8m0_decode(codes):
    c = codes.astype(np.float64)
    return np.where(codes == 255, np.nan, np.exp2(c - 127))
def e8m0_code(x, mode, saturate):
    x = np.asarray(x, np.float64)
    out = np.zeros(x.shape, np.int64)
    for i, v in enumerate(x):
        if np.isnan(v) or np.isinf(v): out[i] = 255; continue
        a = abs(v)
        if a == 0: out[i] = 0; continue
        m, e = np.frexp(a)           # a = m * 2^e, m in [0.5, 1)
        p = e - 1
        if m != 0.5:
            if mode == 'up' or (mode == 'nearest' and m >= 0.75): p += 1
        c = p + 127
        out[i] = 0 if c < 0 else ((254 if saturate else 255) if c > 254 else c)
    return out.astype(np.uint8)
)";

Tensor retyped(const Tensor& t, DataType dtype, Shape shape) {
  Tensor r(dtype, std::move(shape));
  EXPECT_EQ(r.nbytes(), t.nbytes());
  std::memcpy(r.raw_data(), t.raw_data(), std::min(r.nbytes(), t.nbytes()));
  return r;
}

Tensor bytes_of(const Tensor& t) {
  Tensor r(DataType::kUInt8, {static_cast<int64_t>(t.nbytes())});
  std::memcpy(r.raw_data(), t.raw_data(), t.nbytes());
  return r;
}

TEST(NarrowFloatOps, Float4E2M1RoundsToNearestEvenSaturatesAndPacksLowNibbleFirst) {
  auto np = numpy_arrays(std::string(kOracle) + R"(
vals = [0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 6.0, 6.5, 7.0, 1e30, -1e30, 1e-30]
vals += list((FP4[:-1] + FP4[1:]) / 2) + list(-(FP4[:-1] + FP4[1:]) / 2)  # every tie
vals += list(FP4) + list(-FP4)
vals += list(rng.randn(160) * 3)
x = np.array(vals, np.float32); save('x', x)
c = fp4_code(x); save('bytes', pack4(c)); save('y', fp4_decode(c).astype(np.float32))
save('d', fp4_decode(c))
)");
  const int64_t n = np.at("x").numel();
  TensorMap out = run_text_model(fmt::format(R"(
    <ir_version: 11, opset_import: ["" : 23]>
    g (float[{0}] x) => (uint8[{1}] f4, float[{0}] y, double[{0}] d, float[{0}] like) {{
      f4 = Cast<to = 23, saturate = 0>(x)
      y = Cast<to = 1>(f4)
      dx = Cast<to = 11>(x)
      d4 = CastLike(dx, f4)
      d = Cast<to = 11>(d4)
      like = CastLike(d4, x)
    }}
  )",
                                             n, (n + 1) / 2),
                                 feed_of(np, {"x"}));
  EXPECT_EQ(out.at("f4").dtype(), kDtypeFloat4E2M1);
  EXPECT_TRUE(tensors_identical(bytes_of(out.at("f4")), np.at("bytes")));
  EXPECT_TRUE(tensors_identical(out.at("y"), np.at("y")));
  EXPECT_TRUE(tensors_identical(out.at("d"), np.at("d")));
  EXPECT_TRUE(tensors_identical(out.at("like"), np.at("y")));
}

TEST(NarrowFloatOps, EveryFloat4CodeDecodesAndCastsToIntegersAndStrings) {
  auto np = numpy_arrays(std::string(kOracle) + R"(
codes = np.arange(16, dtype=np.uint8); save('packed', pack4(codes))
v = fp4_decode(codes); save('f', v.astype(np.float32)); save('i8', v.astype(np.int8))
save('b', v != 0)
save('i4', pack4(np.rint(np.clip(v, -8, 7)).astype(np.int8)))
)");
  TensorMap feed;
  feed.set("x", retyped(np.at("packed"), kDtypeFloat4E2M1, {16}));
  TensorMap out = run_text_model(R"(
    <ir_version: 11, opset_import: ["" : 23]>
    g (uint8[16] x) => (float[16] f, int8[16] i8, bool[16] b, uint8[8] i4, string[16] s) {
      f = Cast<to = 1>(x)
      i8 = Cast<to = 3>(x)
      b = Cast<to = 9>(x)
      i4 = Cast<to = 22>(x)
      s = Cast<to = 8>(x)
    }
  )",
                                 feed);
  EXPECT_TRUE(tensors_identical(out.at("f"), np.at("f")));
  EXPECT_TRUE(tensors_identical(out.at("i8"), np.at("i8")));
  EXPECT_TRUE(tensors_identical(out.at("b"), np.at("b")));
  EXPECT_TRUE(tensors_identical(bytes_of(out.at("i4")), np.at("i4")));
  const std::string* s = out.at("s").data<std::string>();
  EXPECT_EQ(s[0], "0.0");
  EXPECT_EQ(s[7], "6.0");
  EXPECT_EQ(s[8], "-0.0");
  EXPECT_EQ(s[11], "-1.5");
}

TEST(NarrowFloatOps, Float8E8M0RoundModesAndSaturate) {
  auto np = numpy_arrays(std::string(kOracle) + R"(
p = np.exp2(np.arange(-130, 129, dtype=np.float64))
vals = [0.0, -0.0, np.nan, np.inf, -np.inf, 3.0, -3.0, 1.5, 1.4999, 0.75, -6.0, 2.0 ** -127,
        2.0 ** -128, 1.5 * 2.0 ** -127, 2.0 ** -140, 2.0 ** 127, 1.5 * 2.0 ** 127, 3e38, 1e-45]
vals += list(p[(p > 1e-45) & (p < 3.4e38)] * 1.0) + list(p[(p > 1e-45) & (p < 1e38)] * 1.5)
vals += list(rng.randn(100) * 10.0 ** rng.randint(-30, 30, size=100))
x = np.array(vals, np.float32); save('x', x)
for mode in ('up', 'down', 'nearest'):
    for s in (0, 1):
        c = e8m0_code(x, mode, s); save('%s_%d' % (mode, s), c)
        save('%s_%d_f' % (mode, s), e8m0_decode(c).astype(np.float32))
)");
  const int64_t n = np.at("x").numel();
  std::string outputs, body;
  for (const char* mode : {"up", "down", "nearest"})
    for (int s : {0, 1}) {
      outputs += fmt::format("{}uint8[{}] {}_{}, float[{}] {}_{}_f", outputs.empty() ? "" : ", ", n,
                             mode, s, n, mode, s);
      body += fmt::format("{0}_{1} = Cast<to = 24, saturate = {1}, round_mode = \"{0}\">(x)\n",
                          mode, s);
      body += fmt::format("{0}_{1}_f = Cast<to = 1>({0}_{1})\n", mode, s);
    }
  TensorMap out = run_text_model(fmt::format(R"(
    <ir_version: 11, opset_import: ["" : 25]>
    g (float[{}] x) => ({}) {{
      {}
    }}
  )",
                                             n, outputs, body),
                                 feed_of(np, {"x"}));
  for (const char* mode : {"up", "down", "nearest"})
    for (int s : {0, 1}) {
      const std::string key = fmt::format("{}_{}", mode, s);
      EXPECT_EQ(out.at(key).dtype(), kDtypeFloat8E8M0);
      EXPECT_TRUE(tensors_identical(bytes_of(out.at(key)), np.at(key))) << key;
      EXPECT_TRUE(tensors_identical(out.at(key + "_f"), np.at(key + "_f"))) << key;
    }
  // Opset 24 has no round_mode: it rounds up.
  TensorMap v24 = run_text_model(fmt::format(R"(
    <ir_version: 11, opset_import: ["" : 24]>
    g (float[{0}] x) => (uint8[{0}] y) {{ y = Cast<to = 24>(x) }}
  )",
                                             n),
                                 feed_of(np, {"x"}));
  EXPECT_TRUE(tensors_identical(bytes_of(v24.at("y")), np.at("up_1")));
}

TEST(NarrowFloatOps, EveryFloat8E8M0CodeDecodes) {
  auto np = numpy_arrays(std::string(kOracle) + R"(
codes = np.arange(256, dtype=np.uint8); save('codes', codes)
save('d', e8m0_decode(codes)); save('f', e8m0_decode(codes).astype(np.float32))
save('h', e8m0_decode(codes).astype(np.float16))
)");
  TensorMap feed;
  feed.set("x", retyped(np.at("codes"), kDtypeFloat8E8M0, {256}));
  TensorMap out = run_text_model(R"(
    <ir_version: 11, opset_import: ["" : 24]>
    g (uint8[256] x) => (double[256] d, float[256] f, float16[256] h) {
      d = Cast<to = 11>(x)
      f = Cast<to = 1>(x)
      h = Cast<to = 10>(x)
    }
  )",
                                 feed);
  EXPECT_TRUE(tensors_identical(out.at("d"), np.at("d")));
  EXPECT_TRUE(tensors_identical(out.at("f"), np.at("f")));
  EXPECT_TRUE(tensors_identical(out.at("h"), np.at("h")));
}

TEST(NarrowFloatOps, RoundModeAndSaturateOutsideTheSpecAreErrors) {
  TensorMap feed;
  feed.set("x", Tensor::from_vector<float>({2}, {1.0f, 3.0f}));
  std::string message = error_of([&] {
    run_text_model(R"(
      <ir_version: 11, opset_import: ["" : 25]>
      g (float[2] x) => (uint8[2] y) { y = Cast<to = 24, round_mode = "even">(x) }
    )",
                   feed);
  });
  EXPECT_NE(message.find("attribute 'round_mode' is 'even'; valid choices are 'up', 'down', "
                         "'nearest'"),
            std::string::npos)
      << message;
  message = error_of([&] {
    run_text_model(R"(
      <ir_version: 11, opset_import: ["" : 25]>
      g (float[2] x) => (uint8[2] y) { y = Cast<to = 24, saturate = 2>(x) }
    )",
                   feed);
  });
  EXPECT_NE(message.find("attribute 'saturate' is 2; it must be 0 or 1"), std::string::npos)
      << message;
  message = error_of([&] {
    run_text_model(R"(
      <ir_version: 11, opset_import: ["" : 25]>
      g (float[2] x) => (uint8[2] y) { y = Cast<to = 25>(x) }
    )",
                   feed);
  });
  EXPECT_NE(message.find("attribute 'to' is 25; it must be a TensorProto data type in [1, 24]"),
            std::string::npos)
      << message;
}

// Data movement moves codes: the same ops on the uint8 codes in NumPy give the expected codes.
TEST(NarrowFloatOps, DataMovementMovesFloat4AndFloat8E8M0Codes) {
  auto np = numpy_arrays(std::string(kOracle) + R"(
c4 = rng.randint(0, 16, size=(3, 5)).astype(np.uint8); save('p4', pack4(c4.ravel()))
c8 = rng.randint(0, 256, size=(3, 5)).astype(np.uint8); save('c8', c8.ravel())
def moved(c):
    t = c.T                                    # Transpose
    cat = np.concatenate([c, c[:1]], axis=0)   # Concat
    g = c[[2, 0, 2]]                           # Gather axis 0
    s = c[:, 1:4]                              # Slice
    r = c.reshape(5, 3)                        # Reshape
    return [t, cat, g, s, r]
for name, c in (('f4', c4), ('e8', c8)):
    for k, m in zip(('t', 'cat', 'g', 's', 'r'), moved(c)):
        m = np.ascontiguousarray(m).ravel()
        save('%s_%s' % (name, k), pack4(m) if name == 'f4' else m)
save('shape', np.array([3, 5], np.int64))
)");
  const std::string text = R"(
    <ir_version: 11, opset_import: ["" : 24]>
    g (uint8[3,5] x) => (uint8[5,3] t, uint8[4,5] cat, uint8[3,5] g, uint8[3,3] s,
                         uint8[5,3] r, int64[2] shape, int64 size, uint8[3,5] id) {
      zero = Constant<value = int64[1] {0}>()
      one = Constant<value = int64[1] {1}>()
      four = Constant<value = int64[1] {4}>()
      idx = Constant<value = int64[3] {2, 0, 2}>()
      five_three = Constant<value = int64[2] {5, 3}>()
      three_five = Constant<value = int64[2] {3, 5}>()
      t = Transpose<perm = [1, 0]>(x)
      first = Slice(x, zero, one, zero)
      cat = Concat<axis = 0>(x, first)
      g = Gather<axis = 0>(x, idx)
      s = Slice(x, one, four, one)
      r = Reshape(x, five_three)
      shape = Shape(x)
      size = Size(x)
      flat = Flatten<axis = 0>(x)
      back = Reshape(flat, three_five)
      un = Unsqueeze(back, zero)
      id = Squeeze(un, zero)
    }
  )";
  const struct {
    const char* name;
    DataType dtype;
    const char* data;
  } types[] = {{"f4", kDtypeFloat4E2M1, "p4"}, {"e8", kDtypeFloat8E8M0, "c8"}};
  for (const auto& t : types) {
    TensorMap feed;
    feed.set("x", retyped(np.at(t.data), t.dtype, {3, 5}));
    TensorMap out = run_text_model(text, feed);
    for (const char* k : {"t", "cat", "g", "s", "r"}) {
      EXPECT_EQ(out.at(k).dtype(), t.dtype) << t.name << " " << k;
      EXPECT_TRUE(tensors_identical(bytes_of(out.at(k)), np.at(fmt::format("{}_{}", t.name, k))))
          << t.name << " " << k;
    }
    EXPECT_TRUE(tensors_identical(bytes_of(out.at("id")), np.at(t.data))) << t.name;
    EXPECT_TRUE(tensors_identical(out.at("shape"), np.at("shape")));
    EXPECT_EQ(out.at("size").data<int64_t>()[0], 15);
  }
}

TEST(NarrowFloatOps, QuantizeToFloat4AndDequantizeBlocks) {
  auto np = numpy_arrays(std::string(kOracle) + R"(
x = (rng.randn(2, 8) * 4).astype(np.float32); save('x', x)
scale = np.array([[0.5, 2.0], [1.0, 0.25]], np.float32); save('scale', scale)
s = np.repeat(scale, 4, axis=1)               # block_size 4 along axis 1
q = np.array([fp4_code([v])[0] for v in (x / s).ravel()], np.uint8)  # x / s in float32
save('qbytes', pack4(q))
save('dq', (fp4_decode(q).reshape(2, 8) * s).astype(np.float32))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 11, opset_import: ["" : 23]>
    g (float[2,8] x, float[2,2] scale) => (uint8[8] q, float[2,8] dq) {
      q = QuantizeLinear<axis = 1, block_size = 4, output_dtype = 23>(x, scale)
      dq = DequantizeLinear<axis = 1, block_size = 4>(q, scale)
    }
  )",
                                 feed_of(np, {"x", "scale"}));
  EXPECT_EQ(out.at("q").dtype(), kDtypeFloat4E2M1);
  EXPECT_TRUE(tensors_identical(bytes_of(out.at("q")), np.at("qbytes")));
  EXPECT_TRUE(tensors_identical(out.at("dq"), np.at("dq")));
}

}  // namespace
}  // namespace parity::testing
