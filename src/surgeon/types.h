// ONNX type protos and Parity's metadata types, both ways, and how messages print them.
#pragma once

#include <optional>
#include <string>

#include <onnx/onnx_pb.h>

#include "core/dtype.h"
#include "core/metadata.h"

namespace parity::surgeon {

// A tensor type; without a shape, the rank is unknown.
::onnx::TypeProto tensor_type(DataType dtype, const std::optional<DimList>& shape);
// The dims of a tensor type (fixed, symbolic or unknown); nullopt for an unknown rank or a
// type that is no tensor.
std::optional<DimList> dims_of(const ::onnx::TypeProto& type);
// The element type of a tensor type; nullopt when unset or no tensor.
std::optional<DataType> dtype_of(const ::onnx::TypeProto& type);
// "tensor(float32, ('N', 4))", "seq(...)": for messages.
std::string type_str(const ::onnx::TypeProto& type);

}  // namespace parity::surgeon
