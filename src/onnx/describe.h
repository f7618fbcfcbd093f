// A text description of an ONNX model, laid out as Polygraphy's `inspect model` prints an
// ONNX model (its str_from_onnx): graph inputs and outputs, initializers, nodes with their
// tensors and attributes, subgraphs indented under the attribute that holds them.
#pragma once

#include <functional>
#include <string>

#include "onnx/graph.h"

namespace parity::onnx_io {

struct DescribeOptions {
  bool layers = false;   // one entry per node: op, inputs and outputs with their metadata
  bool attrs = false;    // node attributes (with `layers`) and graph doc strings
  bool weights = false;  // initializer and tensor-attribute values
  // How values are printed (the CLI passes NumPy's str(array) from the comparator layer);
  // when empty, values are printed as nested lists.
  std::function<std::string(const Tensor&)> format_values;
};

// The body below the "[I] ==== ONNX Model ====" header, starting with
// "Name: <graph> | ONNX Opset: <n>".
std::string describe_model(const ir::Model& model, const DescribeOptions& options = {});

}  // namespace parity::onnx_io
