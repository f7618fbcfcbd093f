// ONNX's own shape inference (libonnx) on a model's protobuf: the onnx layer's, since run's
// loaders (InferShapes) and the model tools (surgeon/shape_inference.h) both use it.
#include <onnx/shape_inference/implementation.h>

#include "core/error.h"
#include "core/logger.h"
#include "onnx/model_io.h"

namespace parity::onnx_io {

void infer_shapes(::onnx::ModelProto& model, bool error_ok) {
  // libonnx edits the model in place (no copy of its weights); what it may have half-written
  // is put back when it fails.
  const auto saved_info = model.graph().value_info();
  const auto saved_outputs = model.graph().output();
  try {
    ::onnx::shape_inference::InferShapes(model);
  } catch (const std::exception& e) {
    *model.mutable_graph()->mutable_value_info() = saved_info;
    *model.mutable_graph()->mutable_output() = saved_outputs;
    if (!error_ok)
      fail("failed to infer the shapes of the model: ONNX shape inference said: {}", e.what());
    logger().warning("ONNX shape inference exited with an error:\n{}", e.what());
  }
}

}  // namespace parity::onnx_io
