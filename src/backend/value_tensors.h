// How sequences and maps travel through the runner contract, whose results are a TensorMap
// (name -> Tensor): a non-tensor value is spelled as tensors under derived names, so that
// everything downstream (comparison with its verdict lines, saved outputs, reports) handles
// it item by item without knowing about maps.
//
//   sequence of tensors  s      ->  s[0], s[1], ...
//   map                  m      ->  m.keys, m.values          (keys ascending, 1-D each)
//   sequence of maps     z      ->  z[0].keys, z[0].values, z[1].keys, ...
//
// An empty sequence has no tensors: it is spelled `s[]`, an empty tensor of its element type
// (map sequences: of the value type), so that it does not vanish from the results.
#pragma once

#include <string>
#include <vector>

#include "core/tensor.h"
#include "core/value.h"

namespace parity {

// Appends `value` to `out` under `name` (a tensor keeps its name).
void add_value_tensors(TensorMap& out, const std::string& name, const Value& value);

// The value of graph input `name` from a feed that spells it as above: a tensor under `name`,
// else the derived names. `kind` says what the model expects (kMap, kSequence or
// kMapSequence; kTensor for a plain tensor). Throws naming the missing tensors.
Value value_from_tensors(const TensorMap& feed, const std::string& name, Value::Kind kind);

// The sequence and map inputs of a feed: each of `inputs` that the feed holds not as a tensor
// but as derived tensors, with the value they spell (its kind read from their names: `m.keys`
// and `m.values` a map, `z[0].keys`... a sequence of maps, `s[0]`... or `s[]` a sequence).
// `rest` gets the feed's other tensors. Throws naming what is missing from a value.
std::vector<std::pair<std::string, Value>> value_inputs(const TensorMap& feed,
                                                        const std::vector<std::string>& inputs,
                                                        TensorMap& rest);

// True when `tensor_name` is one of the derived names of `name`.
bool is_value_tensor_of(const std::string& tensor_name, const std::string& name);

// The inverse of add_value_tensors over a whole result: each run of derived names becomes
// one value again (in the order of the first tensor of each), other tensors stay tensors.
// A name reads as derived only when the whole set is there: `m.keys` with `m.values`, and
// `s[0]`, `s[1]`, ... numbered from 0 without a gap.
std::vector<std::pair<std::string, Value>> group_value_tensors(const TensorMap& tensors);

}  // namespace parity
