#include "core/metadata.h"

#include <fmt/format.h>

#include "core/py_format.h"

namespace parity {

std::string dims_str(const DimList& dims) {
  std::vector<std::string> parts;
  for (const Dim& d : dims) {
    if (d.is_fixed())
      parts.push_back(std::to_string(d.value));
    else if (d.is_symbolic())
      parts.push_back(fmt::format("'{}'", d.param));
    else
      parts.push_back("-1");
  }
  if (parts.size() == 1) return fmt::format("({},)", parts[0]);
  return fmt::format("({})", fmt::join(parts, ", "));
}

std::string bounded_shape_str(const DimList& dims) {
  std::vector<std::string> items;
  for (const Dim& d : dims)
    items.push_back(d.is_fixed()      ? std::to_string(d.value)
                    : d.is_symbolic() ? py_repr(d.param)
                                      : "None");
  return fmt::format("BoundedShape([{}], min=None, max=None)", fmt::join(items, ", "));
}

DimList dims_from_shape(const Shape& shape) {
  DimList r;
  for (int64_t d : shape) r.push_back(Dim::fixed(d));
  return r;
}

bool dims_are_fixed(const DimList& dims) {
  for (const Dim& d : dims)
    if (!d.is_fixed()) return false;
  return true;
}

bool dims_accept(const DimList& dims, const Shape& shape) {
  if (dims.size() != shape.size()) return false;
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i].is_fixed() && dims[i].value != shape[i]) return false;
  return true;
}

TensorMetadata& TensorMetadata::add(std::string name, std::optional<DataType> dtype,
                                    std::optional<DimList> shape) {
  for (auto& e : entries_)
    if (e.name == name) {
      e.dtype = dtype;
      e.shape = std::move(shape);
      e.value.reset();
      return *this;
    }
  entries_.push_back(TensorMeta{std::move(name), dtype, std::move(shape), std::nullopt});
  return *this;
}

TensorMetadata& TensorMetadata::add_value(std::string name, ValueMeta value) {
  add(name, std::nullopt, std::nullopt);
  for (auto& e : entries_)
    if (e.name == name) e.value = std::move(value);
  return *this;
}

std::string ValueMeta::str() const {
  auto type = [](const std::optional<DataType>& t) {
    return t ? std::string(dtype_name(*t)) : std::string("?");
  };
  std::string map = fmt::format("map({}, {})", type(key_type), type(elem_type));
  switch (kind) {
    case Kind::kSequence:
      return fmt::format("seq(tensor({}, {}))", type(elem_type),
                         elem_shape ? dims_str(*elem_shape) : "?");
    case Kind::kMap:
      return map;
    default:
      return fmt::format("seq({})", map);
  }
}

const TensorMeta* TensorMetadata::find(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

std::vector<std::string> TensorMetadata::names() const {
  std::vector<std::string> r;
  for (const auto& e : entries_) r.push_back(e.name);
  return r;
}

std::string TensorMetadata::str() const {
  std::vector<std::string> parts;
  for (const auto& e : entries_) {
    std::string dtype = e.dtype ? std::string(dtype_name(*e.dtype)) : "None";
    std::string shape = e.shape ? dims_str(*e.shape) : "None";
    parts.push_back(fmt::format("{} [dtype={}, shape={}]", e.name, dtype, shape));
  }
  return fmt::format("{{{}}}", fmt::join(parts, ",\n "));
}

}  // namespace parity
