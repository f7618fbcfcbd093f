// Cast and CastLike beyond what the ONNX node tests cover: float8 with saturate on and off
// (opset 19) against an oracle of the spec's rules written with NumPy, every float8 bit
// pattern decoded, int4/uint4 (opset 21) values and packing, strings printed and parsed as
// NumPy does, bool, and Cast-1's type name. Expected values are computed at test time.
#include <cstring>

#include <gtest/gtest.h>

#include "float8_oracle.h"
#include "ref_test_util.h"

namespace parity::testing {
namespace {

Tensor retyped(const Tensor& t, DataType dtype) {
  Tensor r(dtype, t.shape());
  std::memcpy(r.raw_data(), t.raw_data(), t.nbytes());
  return r;
}

// The storage bytes of a tensor (two 4-bit values per byte) as a uint8 vector.
Tensor bytes_of(const Tensor& t) {
  Tensor r(DataType::kUInt8, {static_cast<int64_t>(t.nbytes())});
  std::memcpy(r.raw_data(), t.raw_data(), t.nbytes());
  return r;
}

// Strings travel from the NumPy script as one uint8 array of '\n'-joined UTF-8 text.
std::vector<std::string> lines_of(const Tensor& bytes) {
  std::string text(static_cast<const char*>(bytes.raw_data()), bytes.nbytes());
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
    lines.push_back(text.substr(start, nl - start));
  lines.push_back(text.substr(start));
  return lines;
}

std::vector<std::string> strings_of(const Tensor& t) {
  const std::string* p = t.data<std::string>();
  return {p, p + t.numel()};
}

TEST(CastOps, Float8WithAndWithoutSaturateRoundsToNearestEven) {
  auto np = numpy_arrays(std::string(kFloat8Oracle) + R"(
vals = [0.0, -0.0, np.nan, 1e6, -1e6]
for name in FORMATS:
    t = decode(name); fin = np.sort(np.unique(np.abs(t[np.isfinite(t)])))
    vals += list((fin[:-1] + fin[1:]) / 2)          # every tie between neighbours
    vals += [fin[-1] * 1.01, -fin[-1] * 1.1, fin[-1] * 1.2, fin[1] / 3]
vals += list(rng.randn(200) * 10.0 ** rng.randint(-6, 5, size=200))
x = np.array(vals, np.float32); save('x', x)
for name in FORMATS:
    for s in (0, 1): save('%s_%d' % (name, s), to_float8(name, x, s))
)");
  const int64_t n = np.at("x").numel();
  std::string text = fmt::format(R"(
    <ir_version: 9, opset_import: ["" : 19]>
    g (float[{0}] x) => (float[{0}] e4m3fn_0, float[{0}] e4m3fn_1, float[{0}] e4m3fnuz_0,
        float[{0}] e4m3fnuz_1, float[{0}] e5m2_0, float[{0}] e5m2_1, float[{0}] e5m2fnuz_0,
        float[{0}] e5m2fnuz_1) {{
      a0 = Cast<to = 17, saturate = 0>(x)
      a1 = Cast<to = 17>(x)
      b0 = Cast<to = 18, saturate = 0>(x)
      b1 = Cast<to = 18, saturate = 1>(x)
      c0 = Cast<to = 19, saturate = 0>(x)
      c1 = Cast<to = 19>(x)
      d0 = Cast<to = 20, saturate = 0>(x)
      like = Cast<to = 20>(x)
      d1 = CastLike<saturate = 1>(x, like)
      e4m3fn_0 = Cast<to = 1>(a0)
      e4m3fn_1 = Cast<to = 1>(a1)
      e4m3fnuz_0 = Cast<to = 1>(b0)
      e4m3fnuz_1 = Cast<to = 1>(b1)
      e5m2_0 = Cast<to = 1>(c0)
      e5m2_1 = Cast<to = 1>(c1)
      e5m2fnuz_0 = Cast<to = 1>(d0)
      e5m2fnuz_1 = CastLike(d1, x)
    }}
  )",
                                 n);
  TensorMap feed;
  feed.set("x", np.at("x"));
  TensorMap out = run_text_model(text, feed);
  for (const char* name : {"e4m3fn", "e4m3fnuz", "e5m2", "e5m2fnuz"})
    for (int s : {0, 1}) {
      std::string key = fmt::format("{}_{}", name, s);
      EXPECT_TRUE(tensors_close(out.at(key), np.at(key), 0, 0)) << key;
    }
}

TEST(CastOps, EveryFloat8BitPatternDecodes) {
  auto np = numpy_arrays(std::string(kFloat8Oracle) + R"(
save('bits', np.arange(256, dtype=np.uint8))
for name in FORMATS: save(name, decode(name).astype(np.float32))
)");
  const struct {
    const char* name;
    DataType dtype;
  } formats[] = {{"e4m3fn", DataType::kFloat8E4M3FN},
                 {"e4m3fnuz", DataType::kFloat8E4M3FNUZ},
                 {"e5m2", DataType::kFloat8E5M2},
                 {"e5m2fnuz", DataType::kFloat8E5M2FNUZ}};
  for (const auto& f : formats) {
    TensorMap feed;
    feed.set("x", retyped(np.at("bits"), f.dtype));
    // The graph declares uint8 for the float8 input: the executor runs on the fed type.
    TensorMap out = run_text_model(R"(
      <ir_version: 9, opset_import: ["" : 19]>
      g (uint8[256] x) => (float[256] y) { y = Cast<to = 1>(x) }
    )",
                                   feed);
    EXPECT_TRUE(tensors_close(out.at("y"), np.at(f.name), 0, 0)) << f.name;
  }
}

TEST(CastOps, Int4AndUInt4ClampThenRoundHalfToEvenAndPackLowNibbleFirst) {
  auto np = numpy_arrays(R"(
x = np.array([-9.5, -8.5, -7.5, -2.5, -0.5, 0.5, 1.5, 2.5, 6.5, 7.5, 14.5, 15.5, 100, -100, 3.7],
             np.float32)
save('x', x)
q = np.rint(np.clip(x, -8, 7)).astype(np.int8); u = np.rint(np.clip(x, 0, 15)).astype(np.uint8)
save('q', q.astype(np.float32)); save('u', u.astype(np.float32))
def pack(v):
    n = np.append(v.astype(np.uint8) & 0xF, [0] * (len(v) % 2)).astype(np.uint8)
    return n[0::2] | (n[1::2] << 4)
save('qbytes', pack(q)); save('ubytes', pack(u))
i = np.array([-20, -8, -1, 0, 7, 8, 300], np.int32); save('i', i)
save('iq', np.clip(i, -8, 7).astype(np.int8)); save('iu', np.clip(i, 0, 15).astype(np.uint8))
)");
  TensorMap feed;
  feed.set("x", np.at("x"));
  feed.set("i", np.at("i"));
  TensorMap out = run_text_model(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[15] x, int32[7] i)
      => (uint8[8] q4, uint8[8] u4, float[15] q, float[15] u, int8[7] iq, uint8[7] iu) {
      q4 = Cast<to = 22>(x)
      u4 = Cast<to = 21>(x)
      q = Cast<to = 1>(q4)
      u = Cast<to = 1>(u4)
      i4 = Cast<to = 22>(i)
      iq = Cast<to = 3>(i4)
      i4u = CastLike(i, u4)
      iu = Cast<to = 2>(i4u)
    }
  )",
                                 feed);
  EXPECT_TRUE(tensors_identical(out.at("q"), np.at("q")));
  EXPECT_TRUE(tensors_identical(out.at("u"), np.at("u")));
  EXPECT_TRUE(tensors_identical(out.at("iq"), np.at("iq")));
  EXPECT_TRUE(tensors_identical(out.at("iu"), np.at("iu")));
  EXPECT_EQ(out.at("q4").dtype(), DataType::kInt4);
  EXPECT_EQ(out.at("u4").dtype(), DataType::kUInt4);
  EXPECT_TRUE(tensors_identical(bytes_of(out.at("q4")), np.at("qbytes")));
  EXPECT_TRUE(tensors_identical(bytes_of(out.at("u4")), np.at("ubytes")));
}

TEST(CastOps, NumbersPrintAsNumPyPrintsThem) {
  auto np = numpy_arrays(R"(
def text(a): return np.frombuffer('\n'.join(a.astype(str)).encode(), np.uint8)
vals = [0.6048455, 1e-5, 1e-4, 0.00012345, 123456789.0, 1e15, 1e16, 1.5e17, -0.0, 0.0, 3.0,
        -2.5e-40, 3.4e38, np.inf, -np.inf, np.nan, 1 / 3, 65504.0, 100.0, 1e-7]
vals += list(rng.randn(30) * 10.0 ** rng.randint(-8, 20, size=30))
f = np.array(vals, np.float32); d = np.array(vals, np.float64) * 1.1
h = np.array(vals, np.float16)
i = np.array([0, -1, 2**63 - 1, -2**63], np.int64); b = np.array([True, False])
for n, a in [('f', f), ('d', d), ('h', h), ('i', i), ('b', b)]: save(n, a); save(n + 's', text(a))
)");
  TensorMap feed;
  for (const char* n : {"f", "d", "h", "i", "b"}) feed.set(n, np.at(n));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[50] f, double[50] d, float16[50] h, int64[4] i, bool[2] b)
      => (string[50] fs, string[50] ds, string[50] hs, string[4] is, string[2] bs) {
      fs = Cast<to = 8>(f)
      ds = Cast<to = 8>(d)
      hs = Cast<to = 8>(h)
      is = Cast<to = 8>(i)
      bs = Cast<to = 8>(b)
    }
  )",
                                 feed);
  for (const char* n : {"fs", "ds", "hs", "is", "bs"})
    EXPECT_EQ(strings_of(out.at(n)), lines_of(np.at(n))) << n;
}

TEST(CastOps, StringsParseAsNumbersAndBadTextIsAnError) {
  const std::vector<std::string> texts = {"3.14", "1e-5", "1E8",  "-INF",      "+inf",
                                          "INF",  "NaN",  "-0",   "100",       "-7",
                                          "0.1",  "1e40", "2e-3", "123456789", "65519"};
  auto np = numpy_arrays(R"(
texts = np.array(['3.14', '1e-5', '1E8', '-INF', '+inf', 'INF', 'NaN', '-0', '100', '-7', '0.1',
                  '1e40', '2e-3', '123456789', '65519'])
save('f', texts.astype(np.float32)); save('d', texts.astype(np.float64))
save('h', texts.astype(np.float16))
ints = np.array(['100', '-7', '0', '2147483647']); save('i', ints.astype(np.int32))
)");
  TensorMap feed;
  feed.set("s", Tensor::from_vector<std::string>({15}, texts));
  feed.set("t", Tensor::from_vector<std::string>({4}, {"100", "-7", "0", "2147483647"}));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (string[15] s, string[4] t) => (float[15] f, double[15] d, float16[15] h, int32[4] i) {
      f = Cast<to = 1>(s)
      d = Cast<to = 11>(s)
      h = Cast<to = 10>(s)
      i = Cast<to = 6>(t)
    }
  )",
                                 feed);
  for (const char* n : {"f", "d", "h", "i"})
    EXPECT_TRUE(tensors_identical(out.at(n), np.at(n))) << n;

  std::string message = error_of([] {
    TensorMap f;
    f.set("s", Tensor::from_vector<std::string>({2}, {"1.5", "Hello World!"}));
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (string[2] s) => (float[2] y) { y = Cast<to = 1>(s) }
    )",
                   f);
  });
  EXPECT_NE(message.find("failed to run node 'Cast_0' (Cast): failed to cast string 'Hello "
                         "World!' to float32: it is not a number"),
            std::string::npos)
      << message;
}

TEST(CastOps, BoolsAndCastOneTypeNames) {
  auto np = numpy_arrays(R"(
x = np.array([0.0, -0.0, np.nan, 0.5, -3, np.inf], np.float32); save('x', x)
save('b', x.astype(bool)); save('back', x.astype(bool).astype(np.float64))
i = np.array([3, -4, 70000], np.int32); save('i', i); save('f', i.astype(np.float32))
save('s', i.astype(np.int16))
)");
  TensorMap feed;
  feed.set("x", np.at("x"));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[6] x) => (bool[6] b, double[6] back) {
      b = Cast<to = 9>(x)
      back = Cast<to = 11>(b)
    }
  )",
                                 feed);
  EXPECT_TRUE(tensors_identical(out.at("b"), np.at("b")));
  EXPECT_TRUE(tensors_identical(out.at("back"), np.at("back")));

  // Cast-1 names the type instead of numbering it.
  TensorMap v1 = run_text_model(R"(
    <ir_version: 3, opset_import: ["" : 1]>
    g (int32[3] i) => (float[3] f, int16[3] s) {
      f = Cast<to = "FLOAT">(i)
      s = Cast<to = "INT16">(i)
    }
  )",
                                [&] {
                                  TensorMap f;
                                  f.set("i", np.at("i"));
                                  return f;
                                }());
  EXPECT_TRUE(tensors_identical(v1.at("f"), np.at("f")));
  EXPECT_TRUE(tensors_identical(v1.at("s"), np.at("s")));
}

}  // namespace
}  // namespace parity::testing
