// Reading the values ONNX stores as protobuf files (the node tests' input_N.pb and
// output_N.pb): a TensorProto, a SequenceProto or an OptionalProto, chosen by the type the
// graph declares for the value, as ONNX's own test runner does.
#pragma once

#include <string>

#include "core/value.h"
#include "onnx/graph.h"

namespace parity::testing {

// Parses `path` as the protobuf message for `declared` (a tensor, or a type the file's
// content decides when the graph does not say) and converts it to a Value: a tensor, a
// sequence of tensors, or an optional (its value, or Value::none() when empty). Throws
// parity::Error for an unreadable file or a message that does not fit the declared type.
Value read_value_proto(const std::string& path, const ir::ValueType& declared);

}  // namespace parity::testing
