// Subgraph extraction (Polygraphy's ExtractSubgraph, `parity surgeon extract`): the model
// holding exactly the nodes between the given tensors, which become its inputs and outputs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "core/dtype.h"
#include "core/metadata.h"

namespace parity::surgeon {

// One input or output of the subgraph. What is left out is taken from the types the model
// records (graph inputs/outputs, value_info, initializers); run shape inference first
// (surgeon/shape_inference.h) when the model records too little.
struct TensorSpec {
  std::string name;
  std::optional<DataType> dtype;
  std::optional<DimList> shape;  // ignored for outputs unless given
};

struct ExtractOptions {
  std::vector<TensorSpec> inputs;   // empty: the model's own inputs
  std::vector<TensorSpec> outputs;  // empty: the model's own outputs
};

// Turns `model`'s graph, in place, into the subgraph between `options.inputs` and
// `options.outputs`; everything else of the model (metadata, opsets, functions) is kept.
// Errors (parity::Error; nothing is changed then):
//   - a name that is no tensor of the graph (with the nearest names),
//   - inputs that do not separate the outputs from the model's inputs: the message names the
//     tensor that leaks in, the node that reads it and the output it reaches,
//   - an input or output whose dtype is neither given nor recorded in the model.
void extract_subgraph(::onnx::ModelProto& model, const ExtractOptions& options);

// The inputs and outputs of `options` whose dtype (or, for inputs, shape) is neither given nor
// recorded in the graph, with what is known of them: what shape inference must find.
TensorMetadata missing_metadata(const ::onnx::GraphProto& graph, const ExtractOptions& options);

// The same on a GraphProto (the top-level graph of a model, or any graph).
void extract_subgraph(::onnx::GraphProto& graph, const ExtractOptions& options);

}  // namespace parity::surgeon
