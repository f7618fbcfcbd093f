// Models the benchmarks build in memory (serialized ModelProto bytes), so no large file is
// shipped.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace parity::bench {

// x[N,C,...] -> InstanceNormalization(x, scale[C], bias[C]) -> y, opset 13.
std::string instance_norm_model_bytes(const Shape& shape);

// One node `op` (default domain, `opset`) over `inputs` float tensors x0, x1... of `shape`,
// giving y; `string_attrs`, `int_attrs` and `ints_attrs` set the node's attributes.
std::string single_op_model_bytes(
    const std::string& op, const Shape& shape, int opset, int inputs = 1,
    const std::vector<std::pair<std::string, std::string>>& string_attrs = {},
    const std::vector<std::pair<std::string, int64_t>>& int_attrs = {},
    const std::vector<std::pair<std::string, std::vector<int64_t>>>& ints_attrs = {});

// One input of `node_model_bytes`: a float graph input of `shape` (fed by the caller), or,
// when `ints` or `floats` is set, an initializer holding them (int64 or float).
struct NodeInput {
  std::string name;
  Shape shape;
  std::vector<int64_t> ints = {};
  std::vector<float> floats = {};
  bool constant = false;  // an initializer (from `ints` if non-empty, else `floats`)
};

// One node `op` (default domain, `opset`) over `inputs` (an empty name leaves that input out),
// giving y; the attributes as in single_op_model_bytes.
std::string node_model_bytes(
    const std::string& op, int opset, const std::vector<NodeInput>& inputs,
    const std::vector<std::pair<std::string, std::string>>& string_attrs = {},
    const std::vector<std::pair<std::string, int64_t>>& int_attrs = {},
    const std::vector<std::pair<std::string, std::vector<int64_t>>>& ints_attrs = {},
    const std::vector<std::pair<std::string, float>>& float_attrs = {});

}  // namespace parity::bench
