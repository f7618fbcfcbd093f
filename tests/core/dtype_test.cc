#include "core/dtype.h"
#include "core/mx_types.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include <fmt/format.h>

#include "support/test_util.h"

namespace parity {
namespace {

using testing::run_python;

std::vector<DataType> all_types() {
  std::vector<DataType> types;
  for (int32_t v = 0; v < 64; ++v)
    if (dtype_is_valid(v)) types.push_back(static_cast<DataType>(v));
  return types;
}

TEST(DType, EveryOnnxElementTypeIsKnown) {
  // TensorProto.DataType runs from 1 (FLOAT) to 24 (FLOAT8E8M0) without gaps (UINT2 and INT2,
  // 25 and 26, are not Parity's).
  auto types = all_types();
  ASSERT_EQ(types.size(), 24u);
  EXPECT_EQ(static_cast<int32_t>(types.front()), 1);
  EXPECT_EQ(static_cast<int32_t>(types.back()), 24);
  EXPECT_EQ(dtype_onnx_name(kDtypeFloat4E2M1), "FLOAT4E2M1");
  EXPECT_EQ(dtype_onnx_name(kDtypeFloat8E8M0), "FLOAT8E8M0");
  EXPECT_EQ(dtype_name(kDtypeFloat4E2M1), "float4");              // Polygraphy's name for FP4
  EXPECT_EQ(dtype_from_name("float4_e2m1fn"), kDtypeFloat4E2M1);  // ml_dtypes' names
  EXPECT_EQ(dtype_from_name("float8_e8m0fnu"), kDtypeFloat8E8M0);
  EXPECT_FALSE(dtype_is_valid(0));
  EXPECT_FALSE(dtype_is_valid(25));
  EXPECT_FALSE(dtype_is_valid(-1));
}

TEST(DType, NamesParseBack) {
  for (DataType t : all_types()) {
    EXPECT_EQ(dtype_from_name(dtype_name(t)), t) << dtype_name(t);
    EXPECT_EQ(dtype_from_name(dtype_onnx_name(t)), t) << dtype_onnx_name(t);
  }
  EXPECT_EQ(dtype_from_name("float"), DataType::kFloat32);
  EXPECT_EQ(dtype_from_name("double"), DataType::kFloat64);
  EXPECT_EQ(dtype_from_name("fp16"), DataType::kFloat16);
  EXPECT_EQ(dtype_from_name("half"), DataType::kFloat16);
  EXPECT_EQ(dtype_from_name("bf16"), DataType::kBFloat16);
  EXPECT_EQ(dtype_from_name("Float32"), DataType::kFloat32);
  EXPECT_EQ(dtype_from_name("float128"), std::nullopt);
  EXPECT_EQ(dtype_name(DataType::kUndefined), "undefined");
}

// The ONNX names and enum values agree with the installed onnx package (which knows the
// types up to BFLOAT16); Polygraphy's names, the NumPy descriptors and element sizes agree
// with NumPy for every type NumPy has.
TEST(DType, AgreesWithOnnxAndNumpy) {
  auto r = run_python(R"(
import numpy as np, onnx
for name, value in onnx.TensorProto.DataType.items():
    if value == 0: continue
    try:
        d = np.dtype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[value])
        print(value, name, d.name, d.str, d.itemsize)
    except Exception:
        print(value, name, '-', '-', '-')
)");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::istringstream lines(r.output);
  std::string line;
  int seen = 0, with_numpy = 0;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    int value;
    std::string onnx_name, np_name, np_str, itemsize;
    fields >> value >> onnx_name >> np_name >> np_str >> itemsize;
    ASSERT_TRUE(dtype_is_valid(value)) << line;
    auto t = static_cast<DataType>(value);
    EXPECT_EQ(dtype_onnx_name(t), onnx_name);
    ++seen;
    if (np_name == "-" || t == DataType::kString || t == DataType::kBFloat16) continue;
    ++with_numpy;
    EXPECT_EQ(dtype_name(t), np_name);
    EXPECT_EQ(dtype_numpy_descr(t), np_str);
    EXPECT_EQ(dtype_from_numpy_descr(np_str), t) << np_str;
    EXPECT_EQ(dtype_storage_bytes(t, 1), std::stoul(itemsize)) << np_name;
    EXPECT_EQ(dtype_storage_bytes(t, 7), 7 * std::stoul(itemsize)) << np_name;
    EXPECT_EQ(dtype_bits(t), 8 * std::stoul(itemsize)) << np_name;
  }
  EXPECT_EQ(seen, 16);
  EXPECT_EQ(with_numpy, 14);
}

TEST(DType, TypesWithoutNumpyEquivalent) {
  for (DataType t : {DataType::kBFloat16, DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ,
                     DataType::kFloat8E5M2, DataType::kFloat8E5M2FNUZ, DataType::kInt4,
                     DataType::kUInt4, kDtypeFloat4E2M1, kDtypeFloat8E8M0})
    EXPECT_EQ(dtype_numpy_descr(t), std::nullopt) << dtype_name(t);
}

TEST(DType, NumpyDescriptorByteOrderMarks) {
  EXPECT_EQ(dtype_from_numpy_descr("=f4"), DataType::kFloat32);
  EXPECT_EQ(dtype_from_numpy_descr("|f4"), DataType::kFloat32);
  EXPECT_EQ(dtype_from_numpy_descr("|b1"), DataType::kBool);
  EXPECT_EQ(dtype_from_numpy_descr("<b1"), DataType::kBool);
  EXPECT_EQ(dtype_from_numpy_descr("<V2"), std::nullopt);
  EXPECT_EQ(dtype_from_numpy_descr("<f3"), std::nullopt);
}

TEST(DType, StorageBytes) {
  EXPECT_EQ(dtype_storage_bytes(DataType::kInt4, 3), 2u);
  EXPECT_EQ(dtype_storage_bytes(DataType::kUInt4, 4), 2u);
  EXPECT_EQ(dtype_storage_bytes(DataType::kUInt4, 0), 0u);
  EXPECT_EQ(dtype_storage_bytes(DataType::kFloat8E5M2, 5), 5u);
  EXPECT_EQ(dtype_storage_bytes(DataType::kBFloat16, 5), 10u);
  EXPECT_EQ(dtype_storage_bytes(DataType::kString, 2), 2 * sizeof(std::string));
  EXPECT_EQ(dtype_bits(DataType::kInt4), 4u);
  EXPECT_EQ(dtype_storage_bytes(kDtypeFloat4E2M1, 3), 2u);  // packed like int4
  EXPECT_EQ(dtype_storage_bytes(kDtypeFloat8E8M0, 3), 3u);
  EXPECT_TRUE(dtype_is_4bit(kDtypeFloat4E2M1));
  EXPECT_FALSE(dtype_is_4bit(kDtypeFloat8E8M0));
  EXPECT_EQ(dtype_bits(DataType::kString), 0u);
}

TEST(DType, Categories) {
  for (DataType t : all_types()) {
    std::string n(dtype_name(t));
    bool is_float = n.starts_with("float") || n == "bfloat16";
    bool is_int = n.starts_with("int") || n.starts_with("uint");
    EXPECT_EQ(dtype_is_float(t), is_float) << n;
    EXPECT_EQ(dtype_is_integer(t), is_int) << n;
    // float8e8m0 is a bare exponent, without a sign bit.
    EXPECT_EQ(dtype_is_signed(t), (is_float && n != "float8e8m0") || n.starts_with("int")) << n;
  }
}

}  // namespace
}  // namespace parity
