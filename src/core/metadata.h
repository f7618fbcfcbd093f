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

// What a graph input that is not a tensor holds: a sequence of tensors, a map, or a sequence
// of maps (ONNX's seq(tensor(T)), map(K, V), seq(map(K, V))), as far as the model declares it.
struct ValueMeta {
  enum class Kind { kSequence, kMap, kMapSequence };
  Kind kind = Kind::kSequence;
  std::optional<DataType> elem_type;  // a sequence's tensors; a map's values
  std::optional<DimList> elem_shape;  // kSequence: each tensor's shape (nullopt = unknown rank)
  std::optional<DataType> key_type;   // kMap, kMapSequence: int64 or string
  std::string str() const;            // "seq(tensor(float32))", "map(int64, float32)", ...
};

struct TensorMeta {
  std::string name;
  std::optional<DataType> dtype;  // unknown when not given (always, for a value input)
  std::optional<DimList> shape;   // unknown rank when not given (always, for a value input)
  // Set when the input is a sequence or a map (its dtype and shape then stay unset).
  std::optional<ValueMeta> value;
};

class TensorMetadata {
 public:
  TensorMetadata& add(std::string name, std::optional<DataType> dtype,
                      std::optional<DimList> shape);
  // A sequence or map input.
  TensorMetadata& add_value(std::string name, ValueMeta value);
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
