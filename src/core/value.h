// Value: what flows along a graph edge in the reference backend. Most edges carry a tensor;
// ONNX also has sequences of tensors and optionals (an optional that holds a value is
// represented by that value; an empty optional, or an absent input, is kNone).
#pragma once

#include <vector>

#include "core/tensor.h"

namespace parity {

struct Value {
  enum class Kind { kNone, kTensor, kSequence };

  Kind kind = Kind::kNone;
  Tensor tensor;                 // kTensor
  std::vector<Tensor> sequence;  // kSequence
  DataType elem_type = DataType::kUndefined;  // a sequence's element type (also when empty)

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

  bool is_none() const { return kind == Kind::kNone; }
  bool is_tensor() const { return kind == Kind::kTensor; }
  bool is_sequence() const { return kind == Kind::kSequence; }
};

}  // namespace parity
