// Value: what flows along a graph edge in the reference backend. Most edges carry a tensor;
// ONNX also has sequences of tensors, optionals (an optional that holds a value is
// represented by that value; an empty optional, or an absent input, is kNone), maps (what
// ai.onnx.ml's DictVectorizer and CastMap take) and sequences of maps (what ZipMap makes).
#pragma once

#include <string>
#include <vector>

#include "core/tensor.h"

namespace parity {

// An ONNX map<K, V>: its keys (int64 or string) and its values as two 1-D tensors of equal
// length. Keys are unique and in ascending order (the order of ONNX Runtime's std::map), so two
// maps with the same entries are equal position by position.
struct MapValue {
  Tensor keys;
  Tensor values;
  int64_t size() const { return keys.numel(); }
};

struct Value {
  enum class Kind { kNone, kTensor, kSequence, kMap, kMapSequence };

  Kind kind = Kind::kNone;
  Tensor tensor;                 // kTensor
  std::vector<Tensor> sequence;  // kSequence
  // A sequence's element type (also when empty); for maps, the value type.
  DataType elem_type = DataType::kUndefined;
  DataType key_type = DataType::kUndefined;  // kMap, kMapSequence
  MapValue map;                              // kMap
  std::vector<MapValue> maps;                // kMapSequence

  Value() = default;
  Value(Tensor t) : kind(Kind::kTensor), tensor(std::move(t)) {}  // NOLINT: implicit by design
  static Value none() { return Value(); }
  static Value make_sequence(std::vector<Tensor> items, DataType elem_type) {
    Value v;
    v.kind = Kind::kSequence;
    v.sequence = std::move(items);
    v.elem_type = elem_type;
    return v;
  }
  // Keys and values must be 1-D, of equal length, the keys unique and ascending
  // (sorted_map_from_entries below builds them from any order).
  static Value make_map(MapValue m) {
    Value v;
    v.kind = Kind::kMap;
    v.key_type = m.keys.dtype();
    v.elem_type = m.values.dtype();
    v.map = std::move(m);
    return v;
  }
  static Value make_map_sequence(std::vector<MapValue> items, DataType key_type,
                                 DataType value_type) {
    Value v;
    v.kind = Kind::kMapSequence;
    v.maps = std::move(items);
    v.key_type = key_type;
    v.elem_type = value_type;
    return v;
  }

  bool is_none() const { return kind == Kind::kNone; }
  bool is_tensor() const { return kind == Kind::kTensor; }
  bool is_sequence() const { return kind == Kind::kSequence; }
  bool is_map() const { return kind == Kind::kMap; }
  bool is_map_sequence() const { return kind == Kind::kMapSequence; }

  // "a tensor", "a sequence", "a map", "a sequence of maps", "an empty optional": for messages.
  const char* kind_name() const {
    switch (kind) {
      case Kind::kTensor:
        return "a tensor";
      case Kind::kSequence:
        return "a sequence";
      case Kind::kMap:
        return "a map";
      case Kind::kMapSequence:
        return "a sequence of maps";
      case Kind::kNone:
        break;
    }
    return "an empty optional";
  }
  // The ONNX type: "map(int64, float32)", "seq(map(string, float32))", ... (tensors and
  // sequences of tensors: "tensor(float32)", "seq(tensor(float32))").
  std::string type_str() const;
};

// The map of these entries sorted by key; a repeated key keeps its last value. `keys` is a 1-D
// int64 or string tensor, `values` 1-D of the same length. Throws otherwise.
MapValue sorted_map_from_entries(const Tensor& keys, const Tensor& values);

}  // namespace parity
