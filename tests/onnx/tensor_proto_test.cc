// TensorProto → Tensor for every element type, from raw_data and from the typed fields, checked
// against the bytes NumPy holds for the same array (written by Debian's python3-onnx).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include <onnx/onnx_pb.h>

#include "core/error.h"
#include "core/mx_types.h"
#include "onnx/model_io.h"
#include "support/test_util.h"

namespace parity::testing {
namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string bytes_of(const Tensor& t) {
  return std::string(static_cast<const char*>(t.raw_data()), t.nbytes());
}

// For each case the script writes <name>.raw.pb (numpy_helper.from_array), <name>.typed.pb
// (helper.make_tensor with raw=False, i.e. the typed fields), <name>.bin (the array's bytes)
// and a manifest line "<name> <onnx type> <dims...>".
constexpr const char* kWriteTensors = R"PY(
import os
import numpy as np
from onnx import helper, numpy_helper, mapping, TensorProto
os.chdir("DIR")
cases = {
    "float32": np.array([[1.5, -2.25, 3.0], [0.1, 1e-8, -0.0]], np.float32),
    "float64": np.array([1.0 / 3.0, -1e300, 2.5], np.float64),
    "float16": np.array([[1.5, -2.25], [65504.0, 6e-8]], np.float16),
    "int8": np.array([-128, 0, 127], np.int8),
    "int16": np.array([-32768, 1, 32767], np.int16),
    "int32": np.array([[-2147483648], [2147483647]], np.int32),
    "int64": np.array([-(2 ** 63), 2 ** 62, 5], np.int64),
    "uint8": np.array([0, 200, 255], np.uint8),
    "uint16": np.array([0, 40000, 65535], np.uint16),
    "uint32": np.array([0, 4000000000], np.uint32),
    "uint64": np.array([0, 2 ** 64 - 1], np.uint64),
    "bool": np.array([[True, False, True]], np.bool_),
    "complex64": np.array([1 + 2j, 3 - 4j], np.complex64),
    "complex128": np.array([0.5 - 1j], np.complex128),
    "scalar": np.array(7.25, np.float32),
    "empty": np.zeros((2, 0), np.float32),
}
with open("manifest.txt", "w") as manifest:
    for name, arr in cases.items():
        onnx_type = mapping.NP_TYPE_TO_TENSOR_TYPE[arr.dtype]
        raw = numpy_helper.from_array(arr, name)
        typed = helper.make_tensor(name, onnx_type, arr.shape, arr.flatten().tolist(), raw=False)
        assert not typed.HasField("raw_data")
        open(name + ".raw.pb", "wb").write(raw.SerializeToString())
        open(name + ".typed.pb", "wb").write(typed.SerializeToString())
        open(name + ".bin", "wb").write(np.ascontiguousarray(arr).tobytes())
        manifest.write(" ".join([name, str(onnx_type)] + [str(d) for d in arr.shape]) + "\n")
    # bfloat16: numpy has none; the expected bits are the top half of each float32.
    values = np.array([1.5, -2.0, 0.25, 2.0 ** 100], np.float32)  # exact in bfloat16
    bits = (values.view(np.uint32) >> 16).astype(np.uint16)
    typed = helper.make_tensor("bfloat16", TensorProto.BFLOAT16, [4], values.tolist(), raw=False)
    raw = helper.make_tensor("bfloat16", TensorProto.BFLOAT16, [4], bits.tobytes(), raw=True)
    open("bfloat16.raw.pb", "wb").write(raw.SerializeToString())
    open("bfloat16.typed.pb", "wb").write(typed.SerializeToString())
    open("bfloat16.bin", "wb").write(bits.tobytes())
    manifest.write("bfloat16 16 4\n")
)PY";

TEST(TensorProto, EveryNumpyTypeFromRawAndTypedFields) {
  TempDir dir;
  std::string script = kWriteTensors;
  script.replace(script.find("DIR"), 3, dir.path().string());
  auto result = run_python(script);
  ASSERT_EQ(result.exit_code, 0) << result.output;

  std::istringstream manifest(read_text(dir.file("manifest.txt")));
  std::string line;
  int cases = 0;
  while (std::getline(manifest, line)) {
    std::istringstream fields(line);
    std::string name;
    int onnx_type = 0;
    fields >> name >> onnx_type;
    Shape shape;
    for (int64_t d; fields >> d;) shape.push_back(d);
    const std::string expected = read_bytes(dir.file(name + ".bin"));
    for (const char* kind : {".raw.pb", ".typed.pb"}) {
      SCOPED_TRACE(name + kind);
      Tensor t = onnx_io::tensor_from_proto_bytes(read_bytes(dir.file(name + kind)));
      EXPECT_EQ(static_cast<int>(t.dtype()), onnx_type);
      EXPECT_EQ(t.shape(), shape);
      EXPECT_EQ(bytes_of(t), expected);
    }
    ++cases;
  }
  EXPECT_EQ(cases, 17);
}

// Types python3-onnx 1.12 does not know yet (float8, int4): the protos are built here and the
// expected bits come from Parity's own conversions, which have their own tests in core.
::onnx::TensorProto typed_proto(DataType dtype, Shape shape, const std::vector<int32_t>& values) {
  ::onnx::TensorProto p;
  p.set_name("t");
  p.set_data_type(static_cast<int32_t>(dtype));
  for (int64_t d : shape) p.add_dims(d);
  for (int32_t v : values) p.add_int32_data(v);
  return p;
}

Tensor load(const ::onnx::TensorProto& p) {
  return onnx_io::tensor_from_proto_bytes(p.SerializeAsString());
}

TEST(TensorProto, Float8FromInt32DataAndRawData) {
  const std::vector<float> values = {1.0f, -0.5f, 448.0f, 0.0f};
  std::vector<int32_t> bits;
  std::string raw;
  for (float v : values) {
    uint8_t b = float8e4m3fn::from_float(v).bits;
    bits.push_back(b);
    raw.push_back(static_cast<char>(b));
  }
  auto p = typed_proto(DataType::kFloat8E4M3FN, {2, 2}, bits);
  Tensor typed = load(p);
  p.clear_int32_data();
  p.set_raw_data(raw);
  Tensor from_raw = load(p);
  for (const Tensor* t : {&typed, &from_raw}) {
    ASSERT_EQ(t->dtype(), DataType::kFloat8E4M3FN);
    ASSERT_EQ(t->shape(), (Shape{2, 2}));
    for (size_t i = 0; i < values.size(); ++i)
      EXPECT_EQ(t->data<float8e4m3fn>()[i].to_float(), values[i]);
  }
  for (DataType dt :
       {DataType::kFloat8E4M3FNUZ, DataType::kFloat8E5M2, DataType::kFloat8E5M2FNUZ}) {
    Tensor t = load(typed_proto(dt, {3}, {0x38, 0xC0, 0x01}));
    EXPECT_EQ(t.dtype(), dt);
    EXPECT_EQ(bytes_of(t), std::string("\x38\xC0\x01", 3));
  }
}

TEST(TensorProto, Int4PackedTwoPerInt32AndRaw) {
  // ONNX packs element 2k in the low nibble and 2k+1 in the high nibble.
  const std::vector<int8_t> values = {-8, 7, 3, -1, 5};
  std::vector<int32_t> packed;
  for (size_t i = 0; i < values.size(); i += 2) {
    int lo = values[i] & 0xF, hi = i + 1 < values.size() ? values[i + 1] & 0xF : 0;
    packed.push_back(lo | (hi << 4));
  }
  auto p = typed_proto(DataType::kInt4, {5}, packed);
  Tensor typed = load(p);
  ASSERT_EQ(typed.nbytes(), 3u);
  for (size_t i = 0; i < values.size(); ++i)
    EXPECT_EQ(int4_get(static_cast<const uint8_t*>(typed.raw_data()), i), values[i]);

  p.clear_int32_data();
  p.set_raw_data(bytes_of(typed));
  EXPECT_TRUE(load(p).equals(typed));

  Tensor u = load(typed_proto(DataType::kUInt4, {3}, {0xF1, 0x0A}));
  EXPECT_EQ(uint4_get(static_cast<const uint8_t*>(u.raw_data()), 0), 1);
  EXPECT_EQ(uint4_get(static_cast<const uint8_t*>(u.raw_data()), 1), 15);
  EXPECT_EQ(uint4_get(static_cast<const uint8_t*>(u.raw_data()), 2), 10);
}

void expect_error(const ::onnx::TensorProto& p, const std::string& fragment) {
  try {
    load(p);
    ADD_FAILURE() << "expected an error containing: " << fragment;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(TensorProto, DataShorterThanShapeIsAClearError) {
  ::onnx::TensorProto p;
  p.set_name("w");
  p.set_data_type(::onnx::TensorProto::FLOAT);
  p.add_dims(2);
  p.add_dims(3);
  for (int i = 0; i < 5; ++i) p.add_float_data(1.0f);
  expect_error(p,
               "failed to load tensor 'w' with 5 values in float_data: shape (2, 3) of "
               "float32 needs 6");
  p.clear_float_data();
  p.set_raw_data(std::string(20, '\0'));
  expect_error(p,
               "failed to load tensor 'w' with 20 bytes of raw_data: shape (2, 3) of "
               "float32 needs 24 bytes");
  p.clear_raw_data();
  expect_error(p, "with 0 values in float_data");
  expect_error(typed_proto(DataType::kInt4, {5}, {0x11, 0x22}), "needs 3");

  // A huge shape with little data is refused before anything is allocated.
  p.clear_dims();
  p.add_dims(int64_t{1} << 40);
  p.set_raw_data(std::string(4, '\0'));
  expect_error(p,
               "with 4 bytes of raw_data: shape (1099511627776,) of float32 needs "
               "4398046511104 bytes");
  p.clear_raw_data();
  p.add_float_data(1.0f);
  expect_error(p,
               "with 1 values in float_data: shape (1099511627776,) of float32 needs "
               "1099511627776");
}

TEST(TensorProto, BadTypesShapesAndBytesAreErrors) {
  ::onnx::TensorProto p;
  p.set_name("w");
  p.set_data_type(99);
  expect_error(p, "failed to load tensor 'w' with data_type 99");
  p.set_data_type(::onnx::TensorProto::FLOAT);
  p.add_dims(-2);
  expect_error(p, "with shape (-2,)");
  p.clear_dims();
  p.set_data_type(::onnx::TensorProto::STRING);
  p.set_raw_data("abc");
  expect_error(p, "string tensors must use string_data");

  ::onnx::TensorProto external;
  external.set_name("e");
  external.set_data_type(::onnx::TensorProto::FLOAT);
  external.set_data_location(::onnx::TensorProto::EXTERNAL);
  expect_error(external, "a lone tensor has no folder");

  try {
    onnx_io::tensor_from_proto_bytes("\xff\xff\xff garbage");
    ADD_FAILURE() << "garbage parsed as a tensor";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a valid TensorProto"), std::string::npos);
  }
}

// FLOAT4E2M1 (23) packs like int4; FLOAT8E8M0 (24) is one byte per element. Both come from
// int32_data and raw_data alike.
TEST(TensorProto, MxTypesFromInt32DataAndRaw) {
  auto f4 = typed_proto(kDtypeFloat4E2M1, {3}, {0x9F, 0x02});  // codes 0xF, 0x9, 0x2
  Tensor t = load(f4);
  ASSERT_EQ(t.dtype(), kDtypeFloat4E2M1);
  ASSERT_EQ(t.nbytes(), 2u);
  const auto* packed = static_cast<const uint8_t*>(t.raw_data());
  EXPECT_EQ(float4e2m1_get(packed, 0), -6.0f);
  EXPECT_EQ(float4e2m1_get(packed, 1), -0.5f);
  EXPECT_EQ(float4e2m1_get(packed, 2), 1.0f);
  f4.clear_int32_data();
  f4.set_raw_data(bytes_of(t));
  EXPECT_TRUE(load(f4).equals(t));

  auto e8 = typed_proto(kDtypeFloat8E8M0, {3}, {127, 0, 255});
  Tensor e = load(e8);
  ASSERT_EQ(e.dtype(), kDtypeFloat8E8M0);
  EXPECT_EQ(e.data<float8e8m0>()[0].to_float(), 1.0f);
  EXPECT_EQ(e.data<float8e8m0>()[1].to_float(), std::ldexp(1.0f, -127));
  EXPECT_TRUE(std::isnan(e.data<float8e8m0>()[2].to_float()));
  e8.clear_int32_data();
  e8.set_raw_data(std::string("\x7f\x00\xff", 3));
  EXPECT_TRUE(load(e8).equals(e));
  expect_error(typed_proto(kDtypeFloat4E2M1, {5}, {0x11}), "needs 3");
}

}  // namespace
}  // namespace parity::testing
