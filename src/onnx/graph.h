// The graph IR: what Parity works on after loading an ONNX model. Nodes are kept in
// topological order; initializers and Constant outputs are tensors (external data mapped,
// not copied); attributes are typed; control-flow bodies are subgraphs that may read
// values of the enclosing graphs.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/metadata.h"
#include "core/tensor.h"

namespace onnx {
class ModelProto;
}

namespace parity::ir {

struct Graph;

// The type of a graph value: a tensor, a map, or a sequence / optional of one (nested as ONNX
// allows).
struct ValueType {
  enum class Kind { kUnknown, kTensor, kSequence, kOptional, kMap };
  Kind kind = Kind::kUnknown;
  std::optional<DataType> elem_type;  // kTensor; kMap: the key type
  std::optional<DimList> shape;       // kTensor; nullopt = unknown rank
  std::shared_ptr<ValueType> inner;   // kSequence, kOptional; kMap: the value type

  static ValueType tensor(std::optional<DataType> dtype, std::optional<DimList> shape) {
    ValueType v;
    v.kind = Kind::kTensor;
    v.elem_type = dtype;
    v.shape = std::move(shape);
    return v;
  }
  std::string str() const;  // "tensor(float32, (1, 'N'))", "seq(tensor(int64))", ...
};

struct ValueInfo {
  std::string name;
  ValueType type;
};

struct Attribute {
  enum class Type {
    kUndefined,
    kFloat,
    kInt,
    kString,
    kTensor,
    kGraph,
    kFloats,
    kInts,
    kStrings,
    kTensors,
    kGraphs,
    kTypeProto,
    kTypeProtos,
  };
  std::string name;
  Type type = Type::kUndefined;
  float f = 0;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::shared_ptr<Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
  std::vector<ValueType> type_protos;  // kTypeProto (one entry) / kTypeProtos
};

std::string_view attribute_type_name(Attribute::Type t);

struct Node {
  std::string name;  // may be empty in the file; the loader names such nodes "<op_type>_<index>"
  std::string op_type;
  std::string domain;  // "" for the default ONNX domain ("ai.onnx" is normalised to "")
  std::vector<std::string> inputs;   // "" marks an absent optional input
  std::vector<std::string> outputs;  // "" marks an unused optional output
  std::vector<Attribute> attributes;

  const Attribute* attribute(std::string_view name) const;
};

struct Graph {
  std::string name;
  std::vector<Node> nodes;        // topologically sorted
  std::vector<ValueInfo> inputs;  // graph inputs that are not initializers
  std::vector<ValueInfo> outputs;
  std::map<std::string, Tensor> initializers;   // includes initializers that are also inputs
  std::map<std::string, ValueType> value_info;  // everything the file says about other values
  Graph* parent = nullptr;                      // enclosing graph for a control-flow body

  // The type known for `name`: input, output, value_info or initializer; nullptr if none.
  const ValueType* find_type(const std::string& name) const;
};

struct Model {
  int64_t ir_version = 0;
  std::map<std::string, int64_t> opsets;  // domain ("" for ONNX) -> version
  std::string producer_name, producer_version, doc_string;
  std::string path;  // the file it was loaded from, if any
  // The folder external data locations are relative to (the model's folder, or the
  // --external-data-dir it was loaded with).
  std::string external_data_dir;
  Graph graph;

  // The parsed protobuf, with external data left where it was (needed to hand the model to
  // other backends and to save it again). Tensors in `graph` may point into mapped files.
  std::shared_ptr<onnx::ModelProto> proto;

  int64_t opset(const std::string& domain = "") const;
};

// Returns the nodes of `graph` in topological order (stable: ties keep file order). Throws
// Error naming the nodes of a cycle, or a node input that nothing produces.
void toposort(Graph& graph);

}  // namespace parity::ir
