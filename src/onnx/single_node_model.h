// A model holding one node of another model: its inputs become graph inputs (or keep their
// initializers), its outputs become graph outputs, types are copied from the original. What
// layer-wise comparison runs to measure the error one node adds, and what a tool runs to ask
// whether a backend can run a node at all.
#pragma once

#include <memory>

#include "onnx/graph.h"

namespace parity::onnx_io {

std::shared_ptr<ir::Model> single_node_model(const ir::Model& model, const ir::Node& node);

}  // namespace parity::onnx_io
