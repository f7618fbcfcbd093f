// A text description of an ONNX model, laid out as Polygraphy's `inspect model` prints an
// ONNX model (its str_from_onnx, byte for byte): graph inputs and outputs, initializers in file
// order with NumPy's str() of their values, nodes in file order with their tensors and
// attributes, subgraphs indented under the attribute that holds them. Made from the model's
// protobuf; attributes Polygraphy skips are logged as its warnings, weights that cannot be read
// as its error (once) and "<error: failed to load weights>".
#pragma once

#include <functional>
#include <string>

#include "onnx/graph.h"

namespace parity::onnx_io {

struct DescribeOptions {
  bool layers = false;   // one entry per node: op, inputs and outputs with their metadata
  bool attrs = false;    // node attributes (with `layers`) and graph doc strings
  bool weights = false;  // initializer and tensor-attribute values
  // Tensors with external data are not read (the model was loaded with --ignore-external-data):
  // their values print as Polygraphy's "<error: failed to load weights>".
  bool ignore_external_data = false;
  // How values are printed; when empty, NumPy's str(array) (core/py_format.h).
  std::function<std::string(const Tensor&)> format_values;
};

// The body below the "[I] ==== ONNX Model ====" header, starting with
// "Name: <graph> | ONNX Opset: <n>". The model must have its protobuf (every loaded model has).
std::string describe_model(const ir::Model& model, const DescribeOptions& options = {});

}  // namespace parity::onnx_io
