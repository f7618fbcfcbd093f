#include "surgeon/types.h"

#include <fmt/format.h>

namespace parity::surgeon {

::onnx::TypeProto tensor_type(DataType dtype, const std::optional<DimList>& shape) {
  ::onnx::TypeProto type;
  auto* t = type.mutable_tensor_type();
  t->set_elem_type(static_cast<int32_t>(dtype));
  if (!shape) return type;
  auto* s = t->mutable_shape();
  for (const Dim& d : *shape) {
    auto* dim = s->add_dim();
    if (d.is_fixed())
      dim->set_dim_value(d.value);
    else if (d.is_symbolic())
      dim->set_dim_param(d.param);
  }
  return type;
}

std::optional<DimList> dims_of(const ::onnx::TypeProto& type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return std::nullopt;
  DimList dims;
  for (const auto& d : type.tensor_type().shape().dim()) {
    if (d.has_dim_value())
      dims.push_back(Dim::fixed(d.dim_value()));
    else if (d.has_dim_param() && !d.dim_param().empty())
      dims.push_back(Dim::symbolic(d.dim_param()));
    else
      dims.push_back(Dim::unknown());
  }
  return dims;
}

std::optional<DataType> dtype_of(const ::onnx::TypeProto& type) {
  if (!type.has_tensor_type() || type.tensor_type().elem_type() == 0) return std::nullopt;
  return static_cast<DataType>(type.tensor_type().elem_type());
}

std::string type_str(const ::onnx::TypeProto& type) {
  if (type.has_tensor_type()) {
    const auto dtype = dtype_of(type);
    const auto dims = dims_of(type);
    return fmt::format("tensor({}, {})", dtype ? std::string(dtype_name(*dtype)) : "?",
                       dims ? dims_str(*dims) : "unknown rank");
  }
  if (type.has_sequence_type()) return "seq(" + type_str(type.sequence_type().elem_type()) + ")";
  if (type.has_optional_type())
    return "optional(" + type_str(type.optional_type().elem_type()) + ")";
  if (type.has_map_type()) return "map";
  return "unknown";
}

}  // namespace parity::surgeon
