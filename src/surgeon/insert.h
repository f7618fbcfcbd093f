// Node insertion (Polygraphy's `surgeon insert`): one new node reads the given tensors and
// writes the given ones, replacing whatever subgraph made them before.
#pragma once

#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace parity::surgeon {

struct InsertOptions {
  std::vector<std::string> inputs;   // tensors the node reads, in order
  std::vector<std::string> outputs;  // tensors it writes; one that is also an input gets a
                                     // new tensor (see below)
  std::string op;
  std::string name;
  std::vector<::onnx::AttributeProto> attributes;
};

// Inserts the node into `graph` after the last node that makes one of its inputs, then removes
// what no longer reaches an output. The outputs' old producers no longer write them. An output
// that is also an input is split in two, as Polygraphy does: for a graph output, the old value
// is renamed "<name>_polygraphy_surgeon_insert_output" and the node writes the graph output;
// otherwise the node writes "<name>_polygraphy_surgeon_insert_output", which the old value's
// readers read from then on. Unknown names are an Error with the nearest names.
void insert_node(::onnx::GraphProto& graph, const InsertOptions& options);

}  // namespace parity::surgeon
