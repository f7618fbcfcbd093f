#include "core/dtype.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "core/mx_types.h"

namespace parity {

namespace {

struct DTypeInfo {
  DataType type;
  const char* name;       // Polygraphy's name
  const char* onnx_name;  // TensorProto spelling
  size_t bits;
  const char* numpy;  // NumPy descriptor, nullptr when NumPy has none
};

// One row per type; every lookup below reads this table.
constexpr std::array<DTypeInfo, 24> kTypes = {{
    {DataType::kFloat32, "float32", "FLOAT", 32, "<f4"},
    {DataType::kUInt8, "uint8", "UINT8", 8, "|u1"},
    {DataType::kInt8, "int8", "INT8", 8, "|i1"},
    {DataType::kUInt16, "uint16", "UINT16", 16, "<u2"},
    {DataType::kInt16, "int16", "INT16", 16, "<i2"},
    {DataType::kInt32, "int32", "INT32", 32, "<i4"},
    {DataType::kInt64, "int64", "INT64", 64, "<i8"},
    {DataType::kString, "string", "STRING", 0, nullptr},
    {DataType::kBool, "bool", "BOOL", 8, "|b1"},
    {DataType::kFloat16, "float16", "FLOAT16", 16, "<f2"},
    {DataType::kFloat64, "float64", "DOUBLE", 64, "<f8"},
    {DataType::kUInt32, "uint32", "UINT32", 32, "<u4"},
    {DataType::kUInt64, "uint64", "UINT64", 64, "<u8"},
    {DataType::kComplex64, "complex64", "COMPLEX64", 64, "<c8"},
    {DataType::kComplex128, "complex128", "COMPLEX128", 128, "<c16"},
    {DataType::kBFloat16, "bfloat16", "BFLOAT16", 16, nullptr},
    {DataType::kFloat8E4M3FN, "float8e4m3fn", "FLOAT8E4M3FN", 8, nullptr},
    {DataType::kFloat8E4M3FNUZ, "float8e4m3fnuz", "FLOAT8E4M3FNUZ", 8, nullptr},
    {DataType::kFloat8E5M2, "float8e5m2", "FLOAT8E5M2", 8, nullptr},
    {DataType::kFloat8E5M2FNUZ, "float8e5m2fnuz", "FLOAT8E5M2FNUZ", 8, nullptr},
    {DataType::kUInt4, "uint4", "UINT4", 4, nullptr},
    {DataType::kInt4, "int4", "INT4", 4, nullptr},
    // Polygraphy names TensorRT's FP4 (the same E2M1 format) "float4"; E8M0 has no
    // Polygraphy name, so it is spelled like the other float8 types.
    {kDtypeFloat4E2M1, "float4", "FLOAT4E2M1", 4, nullptr},
    {kDtypeFloat8E8M0, "float8e8m0", "FLOAT8E8M0", 8, nullptr},
}};

const DTypeInfo* info(DataType t) {
  for (const auto& i : kTypes)
    if (i.type == t) return &i;
  return nullptr;
}

std::string lower(std::string_view s) {
  std::string r(s);
  std::transform(r.begin(), r.end(), r.begin(), [](unsigned char c) { return std::tolower(c); });
  return r;
}

}  // namespace

std::string_view dtype_name(DataType t) {
  const auto* i = info(t);
  return i ? i->name : "undefined";
}

std::string_view dtype_onnx_name(DataType t) {
  const auto* i = info(t);
  return i ? i->onnx_name : "UNDEFINED";
}

std::optional<DataType> dtype_from_name(std::string_view name) {
  std::string n = lower(name);
  for (const auto& i : kTypes)
    if (n == i.name || n == lower(i.onnx_name)) return i.type;
  static const std::pair<const char*, DataType> kAliases[] = {{"float", DataType::kFloat32},
                                                              {"fp32", DataType::kFloat32},
                                                              {"half", DataType::kFloat16},
                                                              {"fp16", DataType::kFloat16},
                                                              {"bf16", DataType::kBFloat16},
                                                              {"double", DataType::kFloat64},
                                                              {"fp64", DataType::kFloat64},
                                                              {"float4e2m1", kDtypeFloat4E2M1},
                                                              // ml_dtypes' names
                                                              {"float4_e2m1fn", kDtypeFloat4E2M1},
                                                              {"float8_e8m0fnu", kDtypeFloat8E8M0}};
  for (const auto& [k, v] : kAliases)
    if (n == k) return v;
  return std::nullopt;
}

bool dtype_is_valid(int32_t t) { return info(static_cast<DataType>(t)) != nullptr; }

size_t dtype_bits(DataType t) {
  const auto* i = info(t);
  return i ? i->bits : 0;
}

size_t dtype_storage_bytes(DataType t, size_t n) {
  if (t == DataType::kString) return n * sizeof(std::string);
  size_t bits = dtype_bits(t);
  // (n * bits + 7) / 8 without forming n * bits, which overflows for n near 2^61 and above
  // (check_tensor_allocation refuses sizes whose byte count itself overflows).
  return n / 8 * bits + ((n % 8) * bits + 7) / 8;
}

bool dtype_is_float(DataType t) {
  switch (t) {
    case DataType::kFloat32:
    case DataType::kFloat64:
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
      return true;
    default:
      return t == kDtypeFloat4E2M1 || t == kDtypeFloat8E8M0;
  }
}

bool dtype_is_integer(DataType t) {
  switch (t) {
    case DataType::kUInt8:
    case DataType::kInt8:
    case DataType::kUInt16:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kUInt32:
    case DataType::kUInt64:
    case DataType::kUInt4:
    case DataType::kInt4:
      return true;
    default:
      return false;
  }
}

bool dtype_is_signed(DataType t) {
  switch (t) {
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kInt4:
      return true;
    default:
      // float8e8m0 is a bare exponent: no sign bit.
      return dtype_is_float(t) && t != kDtypeFloat8E8M0;
  }
}

std::optional<std::string> dtype_numpy_descr(DataType t) {
  const auto* i = info(t);
  if (!i || !i->numpy) return std::nullopt;
  return std::string(i->numpy);
}

std::optional<DataType> dtype_from_numpy_descr(std::string_view d) {
  // '=' and '|' (native / not applicable) are equivalent to '<' on little-endian x86.
  std::string s(d);
  if (!s.empty() && (s[0] == '=' || s[0] == '|')) s[0] = '<';
  for (const auto& i : kTypes) {
    if (!i.numpy) continue;
    std::string n(i.numpy);
    if (n[0] == '|') n[0] = '<';
    if (s == n) return i.type;
  }
  if (s == "<b1" || s == "?") return DataType::kBool;
  return std::nullopt;
}

}  // namespace parity
