// Sequences and maps between Parity and ONNX Runtime (tensors.h moves the tensors): an output
// of any kind becomes a Value, and a map or sequence input becomes an ONNX Runtime value,
// through the C API's GetValue / GetValueCount / CreateValue.
#pragma once

#include <string>
#include <vector>

#include "backend/onnxrt/tensors.h"
#include "core/value.h"

namespace parity {

// The output `value` (a tensor, a sequence of tensors, a map, or a sequence of maps), taking
// ownership of it. Maps come back with their keys ascending.
Value value_from_ort(const OrtRuntime& runtime, OrtValuePtr value, const std::string& name);

// An ONNX Runtime value for a tensor, map, sequence or sequence of maps. The returned value
// may point into `value`'s tensors, which must outlive it.
OrtValuePtr value_to_ort(const OrtRuntime& runtime, const Value& value, const std::string& name);

}  // namespace parity
