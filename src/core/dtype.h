// Element types: every ONNX TensorProto element type, with the names Polygraphy prints
// ("float32", "int64", ...) and the NumPy descriptors used in .npy files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace parity {

// Values equal ONNX's TensorProto.DataType so that conversion is a cast.
enum class DataType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUInt4 = 21,
  kInt4 = 22,
};

// Polygraphy's name for the type: float32, float16, bfloat16, int8, bool, string, float8e4m3fn...
std::string_view dtype_name(DataType t);
// Parses dtype_name's output and the common aliases (float, double, fp16, bf16, half).
std::optional<DataType> dtype_from_name(std::string_view name);
// ONNX's spelling (FLOAT, INT64, FLOAT8E4M3FN...), used by inspect model.
std::string_view dtype_onnx_name(DataType t);

bool dtype_is_valid(int32_t onnx_elem_type);
// Bits of one element: 4 for int4/uint4, 8 for float8 and bool, 0 for string.
size_t dtype_bits(DataType t);
// Bytes for n elements (int4 packs two per byte, rounding up).
size_t dtype_storage_bytes(DataType t, size_t n);
bool dtype_is_float(DataType t);    // any floating type incl. float8, bfloat16
bool dtype_is_integer(DataType t);  // signed or unsigned integer incl. int4
bool dtype_is_signed(DataType t);

// NumPy descriptor for .npy files ('<f4', '|b1', ...). Types NumPy itself lacks (bfloat16,
// float8, int4) and strings have none: nullopt.
std::optional<std::string> dtype_numpy_descr(DataType t);
std::optional<DataType> dtype_from_numpy_descr(std::string_view descr);

}  // namespace parity
