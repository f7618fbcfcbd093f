// Conversion from ONNX protobuf messages to the IR: tensors (typed fields, raw data, external
// data), value types, attributes, nodes and graphs with their subgraphs.
#pragma once

#include "onnx/external_data.h"
#include "onnx/graph.h"

namespace onnx {
class TensorProto;
class SparseTensorProto;
class TypeProto;
class GraphProto;
}  // namespace onnx

namespace parity::onnx_io {

// How tensors with external data are handled while converting.
struct TensorSource {
  ExternalDataStore* external = nullptr;  // null: external data is an error
  bool ignore_external_data = false;      // true: such tensors become zeros of their shape
};

Tensor tensor_from_proto(const ::onnx::TensorProto& proto, const TensorSource& source);
// A sparse initializer as the dense tensor it stands for.
Tensor tensor_from_sparse_proto(const ::onnx::SparseTensorProto& proto, const TensorSource& source);
ir::ValueType value_type_from_proto(const ::onnx::TypeProto& proto);

// Fills `out` from `proto`, converting subgraphs recursively (their `parent` set to their
// enclosing graph). Nodes keep the file order; call toposort_recursive afterwards.
void graph_from_proto(const ::onnx::GraphProto& proto, ir::Graph& out, const TensorSource& source);
// Sorts `graph` and then every subgraph inside it.
void toposort_recursive(ir::Graph& graph);

}  // namespace parity::onnx_io
