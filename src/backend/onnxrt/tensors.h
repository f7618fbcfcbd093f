// Moving tensors between Parity and ONNX Runtime without copying: an input is an ONNX Runtime
// value over the Tensor's own buffer, and an output Tensor borrows ONNX Runtime's buffer and
// releases the value when the last copy of the Tensor goes away. Strings are the exception:
// ONNX Runtime stores them its own way, so they are copied both ways.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "backend/onnxrt/library.h"
#include "core/tensor.h"

namespace parity {

struct OrtValueRelease {
  void (*release)(ort::Value*) = nullptr;
  void operator()(ort::Value* v) const {
    if (v) release(v);
  }
};
using OrtValuePtr = std::unique_ptr<ort::Value, OrtValueRelease>;

// The Parity type of an ONNX Runtime element type; nullopt for types Parity lacks (complex
// types are never produced by ONNX Runtime; newer ones such as float4 may be).
std::optional<DataType> dtype_from_ort(int element_type);

// A value for `tensor` (named `name` in errors). Non-string tensors are wrapped in place:
// the tensor must outlive the value, and ONNX Runtime only reads it.
OrtValuePtr to_ort_value(const OrtRuntime& runtime, const Tensor& tensor, const std::string& name);

// A Tensor for the output `value`, taking ownership of it.
Tensor from_ort_value(const OrtRuntime& runtime, OrtValuePtr value, const std::string& name);

}  // namespace parity
