// TensorMetadata: what a runner expects for each input (Polygraphy's TensorMetadata).
// A dimension is fixed (a size), symbolic (a dim_param name such as "batch") or unknown.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace parity {

struct Dim {
  int64_t value = -1;  // >= 0 when fixed
  std::string param;   // the dim_param name when symbolic

  static Dim fixed(int64_t v) { return Dim{v, {}}; }
  static Dim symbolic(std::string name) { return Dim{-1, std::move(name)}; }
  static Dim unknown() { return Dim{}; }
  bool is_fixed() const { return value >= 0; }
  bool is_symbolic() const { return value < 0 && !param.empty(); }
  bool operator==(const Dim&) const = default;
};

using DimList = std::vector<Dim>;

// "(1, 3, 'batch', ?)" style, as Polygraphy prints metadata shapes ("batch" quoted, unknown as -1).
std::string dims_str(const DimList& dims);
// Polygraphy's BoundedShape, as its data loader and feed coercion print a metadata shape:
// "BoundedShape(['N', 3, None], min=None, max=None)" (symbolic dims quoted, unknown ones None).
std::string bounded_shape_str(const DimList& dims);
DimList dims_from_shape(const Shape& shape);
bool dims_are_fixed(const DimList& dims);
// True when `shape` fits `dims`: same rank, each fixed dim equal; symbolic/unknown match anything.
bool dims_accept(const DimList& dims, const Shape& shape);

struct TensorMeta {
  std::string name;
  std::optional<DataType> dtype;  // unknown when not given
  std::optional<DimList> shape;   // unknown rank when not given
};

class TensorMetadata {
 public:
  TensorMetadata& add(std::string name, std::optional<DataType> dtype,
                      std::optional<DimList> shape);
  const TensorMeta* find(const std::string& name) const;
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  std::vector<std::string> names() const;
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }
  const TensorMeta& operator[](size_t i) const { return entries_.at(i); }
  // Polygraphy's rendering: "{x [dtype=float32, shape=(1, 1, 2, 2)],\n y [...]}".
  std::string str() const;

 private:
  std::vector<TensorMeta> entries_;
};

}  // namespace parity
