// The candidates `debug reduce` tries: a view of the full model's graph (which nodes, which
// tensors are graph inputs and outputs), cut down as GraphSurgeon's cleanup() does, then
// exported as a model of its own. Tensors the candidate needs but can no longer compute (a
// branch cut off from the new graph inputs) are frozen into initializers with the values they
// had in the full model, as Polygraphy does.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "onnx/graph.h"

namespace parity::debug {

using ModelPtr = std::shared_ptr<ir::Model>;
struct CandidateIndex;

// Values and types of tensors of the full model for the feed used, computed on demand.
class TensorSource {
 public:
  virtual ~TensorSource() = default;
  // The values of `names` in the full model (each name once; all must exist).
  virtual TensorMap values(const std::vector<std::string>& names) = 0;
  // True when the feed is generated (a check command with other inputs could disagree).
  virtual bool random_data() const { return true; }
};

class Candidate {
 public:
  // The whole graph of `model` (which must outlive the candidate).
  explicit Candidate(const ir::Model& model);

  // The nodes that count (Constant nodes are constants, not nodes): indices into the full
  // graph's nodes, topological.
  const std::vector<size_t>& nodes() const { return nodes_; }
  const std::vector<std::string>& inputs() const { return inputs_; }
  const std::vector<std::string>& outputs() const { return outputs_; }
  const ir::Node& node(size_t position) const { return graph_->nodes[nodes_[position]]; }

  // Polygraphy's mark_io: makes `names` the graph outputs (or inputs) and cleans up. Constant
  // tensors are not marked as inputs; a producer of a new input loses its graph outputs.
  void mark_outputs(const std::vector<std::string>& names);
  void mark_inputs(const std::vector<std::string>& names);
  // The outputs (inputs) of the node at `position`, as mark_io would take them.
  std::vector<std::string> node_outputs(size_t position) const;
  std::vector<std::string> node_inputs(size_t position) const;

  // "[Variable (t4): (shape=[1, 4], dtype=float32)]", as GraphSurgeon prints a tensor list.
  std::string describe_tensors(const std::vector<std::string>& names) const;

  // The candidate as a model. Graph inputs take the types of the full model (or of their
  // values in `source` when it has none); tensors cut off from the inputs are frozen with their
  // values from `source` ("Freezing tensor: ..." is logged once per tensor).
  ModelPtr to_model(TensorSource& source) const;

  bool is_constant(const std::string& name) const;

 private:
  void cleanup();
  std::optional<size_t> producer(const std::string& name) const;  // index into graph nodes

  const ir::Model* model_;
  std::shared_ptr<const CandidateIndex> index_;  // shared by copies
  const ir::Graph* graph_;
  std::vector<size_t> nodes_;
  std::vector<std::string> inputs_, outputs_;
};

// The metadata text of a tensor as GraphSurgeon prints it: "(shape=[1, 4], dtype=float32)".
std::string gs_tensor_meta(const ir::ValueType* type);

}  // namespace parity::debug
