// Test models written in ONNX's textual syntax (onnx/defs/parser.h), e.g.
//
//   auto model = model_from_text(R"(
//     <ir_version: 8, opset_import: ["" : 17]>
//     add (float[N] x, float[N] y) => (float[N] z) { z = Add(x, y) }
//   )");
#pragma once

#include <memory>
#include <string>

#include "onnx/graph.h"

namespace onnx {
class ModelProto;
}

namespace parity::testing {

// Parses the text into a ModelProto; throws parity::Error with the parser's message.
::onnx::ModelProto model_proto_from_text(const std::string& onnx_text);
// The serialized ModelProto.
std::string model_bytes_from_text(const std::string& onnx_text);
// The model loaded into the IR (as load_model would; external data relative to the cwd).
std::shared_ptr<ir::Model> model_from_text(const std::string& onnx_text);
// Writes the serialized model to `path`.
void write_model_from_text(const std::string& path, const std::string& onnx_text);

}  // namespace parity::testing
