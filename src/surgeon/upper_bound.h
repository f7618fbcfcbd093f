// Unbounded data-dependent shapes (Polygraphy's get_unbounded_dds_tensors and SetUpperBound):
// the runtime inputs of Range (limit), Pad (pads), Resize (sizes), Tile (repeats) and Expand
// (shape) that give their node's output a size no shape symbol of the model bounds, and a Min
// that bounds them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace parity::surgeon {

// The tensors that make an unbounded shape, in node order. Sorts the graph first (as
// Polygraphy does); needs shapes inferred (run infer_shapes) and constants folded to be exact.
std::vector<std::string> unbounded_dds_tensors(::onnx::GraphProto& graph);

// "[Variable (n): (shape=[], dtype=float32)]": how Polygraphy prints the list.
std::string unbounded_dds_str(const ::onnx::GraphProto& graph,
                              const std::vector<std::string>& names);

// Bounds each unbounded tensor (and each tensor named in `bounds`) by a Min with the bound in
// the tensor's own dtype, placed right after the node that makes it. `bounds` maps tensor
// names to bounds; key "" is the bound for every unbounded tensor not named. Returns the bounds
// applied, by tensor. An unknown name is an Error with the nearest names; a named tensor that
// is not unbounded gets a warning and is bounded anyway, as in Polygraphy.
std::map<std::string, int64_t> set_upper_bounds(::onnx::GraphProto& graph,
                                                const std::map<std::string, int64_t>& bounds);

}  // namespace parity::surgeon
