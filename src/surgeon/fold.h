// Constant folding (Polygraphy's FoldConstants, `parity surgeon sanitize --fold-constants`):
// every node whose inputs are all constant is evaluated on Parity's reference backend (found
// through the backend registry; no ONNX Runtime) and replaced by initializers holding exactly
// the values it computes. Shape nodes of tensors whose shape is known fold too, and an If whose
// condition is constant is replaced by the nodes of the branch it takes, as GraphSurgeon does.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "surgeon/model_file.h"

namespace parity::surgeon {

enum class Partitioning {
  kNone,      // one node that cannot be evaluated stops the folding of its graph (Polygraphy's
              // default: "if inference fails, no constants are folded")
  kBasic,     // a node that cannot be evaluated is kept; the rest folds
  kRecursive  // the same, node by node (Parity evaluates node by node in both modes)
};

struct FoldOptions {
  std::optional<int> num_passes;         // nullopt: until a pass folds nothing
  bool fold_shapes = true;               // fold Shape/Size of tensors whose shape is known
  std::optional<size_t> size_threshold;  // values larger than this (bytes) are not folded
  Partitioning partitioning = Partitioning::kNone;
  bool shape_inference = true;  // ONNX shape inference between passes (finds more shapes)
  bool error_ok = true;         // a failing pass is a warning, not an error
};

// Folds `model` in place, logging Polygraphy's lines ("Folding Constants | Pass 1", the node
// counts) and a warning naming each node that could not be evaluated. Returns the number of
// nodes removed.
size_t fold_constants(ModelFile& model, const FoldOptions& options = {});

}  // namespace parity::surgeon
