// Models the benchmarks build in memory (serialized ModelProto bytes), so no large file is
// shipped.
#pragma once

#include <string>

#include "core/tensor.h"

namespace parity::bench {

// x[N,C,...] -> InstanceNormalization(x, scale[C], bias[C]) -> y, opset 13.
std::string instance_norm_model_bytes(const Shape& shape);

}  // namespace parity::bench
