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

}  // namespace parity::bench
