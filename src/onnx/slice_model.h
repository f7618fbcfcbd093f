// Contiguous runs of a model's nodes as models of their own: what layer-wise comparison runs on
// the other backend, batch after batch, so that each batch computes only its own nodes (fed
// with the values the earlier batches computed) instead of the model from its start.
//
//   ModelSlicer slicer(model);
//   if (slicer.why_not().empty())
//     auto part = slicer.slice(12, 20, {{"t11", DataType::kFloat32, {1024}}}, {"t12", ..., "t20"});
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/tensor.h"
#include "onnx/graph.h"

namespace parity::onnx_io {

struct SliceInput {
  std::string name;
  DataType dtype = DataType::kUndefined;
  Shape shape;
};

class ModelSlicer {
 public:
  explicit ModelSlicer(std::shared_ptr<const ir::Model> model);

  // Why slices of this model cannot be made ("" when they can): it has no protobuf (other
  // backends need one), or a node has a subgraph (which may read any earlier value).
  const std::string& why_not() const { return why_not_; }

  // Nodes [begin, end] of the top-level graph plus the Constant nodes before `begin` whose
  // outputs they read, with `inputs` as graph inputs (exact types and shapes: the values that
  // will be fed), the initializers they read, and `outputs` as graph outputs (typed as the
  // model types them). Opsets, functions and external data locations are the model's.
  std::shared_ptr<ir::Model> slice(size_t begin, size_t end, const std::vector<SliceInput>& inputs,
                                   const std::vector<std::string>& outputs) const;

 private:
  std::shared_ptr<const ir::Model> model_;
  std::string why_not_;
  std::vector<int> proto_node_;                        // IR node index -> protobuf node index
  std::unordered_map<std::string, size_t> producer_;   // tensor -> IR node index
  std::unordered_map<std::string, int> initializer_;   // name -> protobuf initializer index
  std::unordered_map<std::string, int> value_info_;    // name -> protobuf value_info index
  std::unordered_map<std::string, int> graph_output_;  // name -> protobuf output index
};

}  // namespace parity::onnx_io
