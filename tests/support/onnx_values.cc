#include "support/onnx_values.h"

#include <onnx/onnx-data_pb.h>

#include <fstream>
#include <memory>
#include <sstream>

#include "onnx/proto_convert.h"

namespace parity::testing {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("failed to read value file '{}': it cannot be opened", path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

template <typename Message>
Message parse(const std::string& bytes, const std::string& path, const char* what) {
  Message message;
  if (!message.ParseFromString(bytes))
    fail("failed to parse value file '{}' as a {}: the protobuf is malformed", path, what);
  return message;
}

// ONNX stores the bfloat16 reference data of its node tests as UINT16 tensors holding the
// bit patterns, while the graph declares BFLOAT16: read such a tensor as the declared type.
Tensor as_declared(Tensor t, const ir::ValueType* declared) {
  if (declared && declared->kind == ir::ValueType::Kind::kTensor && declared->elem_type &&
      *declared->elem_type == DataType::kBFloat16 && t.dtype() == DataType::kUInt16) {
    auto keep = std::make_shared<Tensor>(t);
    return Tensor::borrow(DataType::kBFloat16, t.shape(), keep->raw_data(), keep);
  }
  return t;
}

const ir::ValueType* inner_of(const ir::ValueType* type) {
  return type && type->inner ? type->inner.get() : nullptr;
}

DataType elem_type_of(const ir::ValueType* type, const std::vector<Tensor>& items) {
  if (type && type->kind == ir::ValueType::Kind::kTensor && type->elem_type)
    return *type->elem_type;
  return items.empty() ? DataType::kUndefined : items.front().dtype();
}

Tensor tensor_value(const ::onnx::TensorProto& proto, const ir::ValueType* declared) {
  return as_declared(onnx_io::tensor_from_proto(proto, {}), declared);
}

Value sequence_value(const ::onnx::SequenceProto& proto, const ir::ValueType* declared,
                     const std::string& path) {
  if (proto.elem_type() != ::onnx::SequenceProto::TENSOR &&
      proto.elem_type() != ::onnx::SequenceProto::UNDEFINED)
    fail(
        "failed to read sequence file '{}' with element type {}: only sequences of tensors "
        "are supported; valid: 1 (TENSOR)",
        path, static_cast<int>(proto.elem_type()));
  const ir::ValueType* element = inner_of(declared);
  std::vector<Tensor> items;
  items.reserve(proto.tensor_values_size());
  for (const auto& t : proto.tensor_values()) items.push_back(tensor_value(t, element));
  return Value::make_sequence(std::move(items), elem_type_of(element, items));
}

Value optional_value(const ::onnx::OptionalProto& proto, const ir::ValueType* declared,
                     const std::string& path) {
  const ir::ValueType* element = inner_of(declared);
  switch (proto.elem_type()) {
    case ::onnx::OptionalProto::UNDEFINED:
      return Value::none();
    case ::onnx::OptionalProto::TENSOR:
      return Value(tensor_value(proto.tensor_value(), element));
    case ::onnx::OptionalProto::SEQUENCE:
      return sequence_value(proto.sequence_value(), element, path);
    default:
      fail(
          "failed to read optional file '{}' with element type {}: only optional tensors and "
          "sequences are supported; valid: 0 (empty), 1 (TENSOR), 3 (SEQUENCE)",
          path, static_cast<int>(proto.elem_type()));
  }
}

}  // namespace

Value read_value_proto(const std::string& path, const ir::ValueType& declared) {
  const std::string bytes = read_file(path);
  switch (declared.kind) {
    case ir::ValueType::Kind::kSequence:
      return sequence_value(parse<::onnx::SequenceProto>(bytes, path, "SequenceProto"), &declared,
                            path);
    case ir::ValueType::Kind::kOptional:
      return optional_value(parse<::onnx::OptionalProto>(bytes, path, "OptionalProto"), &declared,
                            path);
    default:
      return Value(tensor_value(parse<::onnx::TensorProto>(bytes, path, "TensorProto"), &declared));
  }
}

}  // namespace parity::testing
