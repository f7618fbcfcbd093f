// Helpers of the surgeon tests: models from ONNX text with named nodes, runs on a backend.
#pragma once

#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "core/tensor.h"

namespace parity::testing {

// The model of `onnx_text`, its unnamed nodes named "<op_type>_<index>" as the loader names
// them, so that tests and messages can refer to nodes.
::onnx::ModelProto named_model(const std::string& onnx_text);
// The names of the nodes of the top-level graph, in order.
std::vector<std::string> node_names(const ::onnx::ModelProto& model);
// Runs the model on a backend of the registry ("pluginref", "onnxrt") with `feed` and returns
// the values of `names` (default: the graph outputs, from a runner's infer()).
TensorMap run_model(const ::onnx::ModelProto& model, const TensorMap& feed,
                    const std::string& backend = "pluginref",
                    const std::vector<std::string>& names = {});
// The message of the parity::Error `fn` throws, or "(no error)".
template <typename F>
std::string error_of(F fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace parity::testing
