#include "backend/onnxrt/tensors.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/mx_types.h"

namespace parity {

namespace {

// ONNX Runtime wants a non-null pointer even for a tensor with no elements.
alignas(64) char g_empty_buffer[64];

std::string_view onnx_type_name(int type) {
  switch (type) {
    case ort::kTypeTensor:
      return "tensor";
    case ort::kTypeSequence:
      return "sequence";
    case ort::kTypeMap:
      return "map";
    case ort::kTypeOpaque:
      return "opaque value";
    case ort::kTypeSparseTensor:
      return "sparse tensor";
    case ort::kTypeOptional:
      return "optional";
    default:
      return "value of unknown kind";
  }
}

struct ShapeInfoRelease {
  void (*release)(ort::TensorTypeAndShapeInfo*);
  void operator()(ort::TensorTypeAndShapeInfo* p) const {
    if (p) release(p);
  }
};

std::vector<std::string> read_strings(const ort::Api& api, const ort::Value* value, size_t count) {
  std::vector<std::string> strings(count);
  if (count == 0) return strings;
  size_t total = 0;
  ort::check(api, api.GetStringTensorDataLength(value, &total), "measure a string output");
  // The strings come back concatenated, without terminators; offsets[i] is where i starts.
  std::string buffer(total, '\0');
  std::vector<size_t> offsets(count);
  ort::check(api, api.GetStringTensorContent(value, buffer.data(), total, offsets.data(), count),
             "read a string output");
  for (size_t i = 0; i < count; ++i) {
    size_t end = i + 1 < count ? offsets[i + 1] : total;
    strings[i].assign(buffer, offsets[i], end - offsets[i]);
  }
  return strings;
}

// ONNX Runtime's C API numbers element types as ONNX does up to FLOAT4E2M1 (23); after it its
// enum has UINT2 (24), INT2 (25) and FLOAT8E8M0 (26), where ONNX has FLOAT8E8M0 (24), UINT2
// (25) and INT2 (26). ONNX Runtime 1.30 reports a tensor's type in its own numbering
// (GetTensorElementType gives 26 for FLOAT8E8M0) but reads the type given to
// CreateTensorWithDataAsOrtValue in ONNX's (26 makes an INT2 tensor), so inputs are made with
// ONNX's number and outputs read with ONNX Runtime's (tests/backend/onnxrt/float4_e8m0_test.cc).
// Parity has no 2-bit types.
constexpr int kOrtFloat8E8M0 = 26, kOrtUInt2 = 24, kOrtInt2 = 25;

}  // namespace

std::optional<DataType> dtype_from_ort(int element_type) {
  if (element_type == kOrtFloat8E8M0) return kDtypeFloat8E8M0;
  if (element_type == kOrtUInt2 || element_type == kOrtInt2) return std::nullopt;
  if (!dtype_is_valid(element_type) || element_type == 0) return std::nullopt;
  return static_cast<DataType>(element_type);
}

OrtValuePtr to_ort_value(const OrtRuntime& runtime, const Tensor& tensor, const std::string& name) {
  const ort::Api& api = runtime.api();
  OrtValuePtr value(nullptr, OrtValueRelease{api.ReleaseValue});
  const Shape& shape = tensor.shape();
  int type = static_cast<int>(tensor.dtype());
  ort::Value* raw = nullptr;
  if (tensor.dtype() == DataType::kString) {
    ort::check(
        api,
        api.CreateTensorAsOrtValue(runtime.allocator(), shape.data(), shape.size(), type, &raw),
        "create the string input " + name);
    value.reset(raw);
    // FillStringTensor reads NUL-terminated strings, so a string stops at its first NUL.
    size_t count = static_cast<size_t>(tensor.numel());
    if (count > 0) {
      const std::string* strings = tensor.data<std::string>();
      std::vector<const char*> pointers(count);
      for (size_t i = 0; i < count; ++i) pointers[i] = strings[i].c_str();
      ort::check(api, api.FillStringTensor(raw, pointers.data(), count),
                 "fill the string input " + name);
    }
    return value;
  }
  // ONNX Runtime does not write to inputs; the const_cast only satisfies the C signature.
  void* data = const_cast<void*>(tensor.raw_data());
  if (!data) data = g_empty_buffer;
  ort::Status* status = api.CreateTensorWithDataAsOrtValue(
      runtime.cpu_memory(), data, tensor.nbytes(), shape.data(), shape.size(), type, &raw);
  if (status) ort::check(api, status, "wrap the input " + name);
  value.reset(raw);
  return value;
}

Tensor from_ort_value(const OrtRuntime& runtime, OrtValuePtr value, const std::string& name) {
  const ort::Api& api = runtime.api();
  int kind = ort::kTypeUnknown;
  ort::check(api, api.GetValueType(value.get(), &kind), "inspect an output");
  if (kind != ort::kTypeTensor)
    fail(
        "failed to read the output '{}' of ONNX Runtime with kind {}: Parity's ONNX Runtime "
        "runner returns tensors only; mark a tensor output instead",
        name, onnx_type_name(kind));

  ort::TensorTypeAndShapeInfo* raw_info = nullptr;
  ort::check(api, api.GetTensorTypeAndShape(value.get(), &raw_info), "inspect an output");
  std::unique_ptr<ort::TensorTypeAndShapeInfo, ShapeInfoRelease> info(
      raw_info, ShapeInfoRelease{api.ReleaseTensorTypeAndShapeInfo});
  int element_type = 0;
  size_t rank = 0;
  ort::check(api, api.GetTensorElementType(info.get(), &element_type), "inspect an output");
  ort::check(api, api.GetDimensionsCount(info.get(), &rank), "inspect an output");
  Shape shape(rank);
  if (rank > 0)
    ort::check(api, api.GetDimensions(info.get(), shape.data(), rank), "inspect an output");

  std::optional<DataType> dtype = dtype_from_ort(element_type);
  if (!dtype)
    fail(
        "failed to read the output '{}' of ONNX Runtime with element type {} (its C API's "
        "numbering): Parity has no such type; valid types are ONNX's TensorProto types 1 to "
        "24 (FLOAT8E8M0, 24, is 26 in ONNX Runtime's numbering)",
        name, element_type);

  if (*dtype == DataType::kString) {
    std::vector<std::string> strings =
        read_strings(api, value.get(), static_cast<size_t>(shape_numel(shape)));
    Tensor t(DataType::kString, std::move(shape));
    std::move(strings.begin(), strings.end(), t.data<std::string>());
    return t;
  }

  void* data = nullptr;
  ort::check(api, api.GetTensorMutableData(value.get(), &data), "read an output");
  // The Tensor keeps the value alive; releasing the value frees ONNX Runtime's buffer.
  auto release = api.ReleaseValue;
  std::shared_ptr<const void> keep_alive(
      static_cast<const void*>(value.release()),
      [release](const void* v) { release(static_cast<ort::Value*>(const_cast<void*>(v))); });
  return Tensor::borrow(*dtype, std::move(shape), data, std::move(keep_alive));
}

}  // namespace parity
