// Shapes and types of a model's tensors: ONNX's own shape inference (libonnx) for what it
// knows, and, for what it cannot tell, a run of the model on generated inputs on the reference
// backend (Polygraphy's fallback inference), found through the backend registry.
#pragma once

#include <string>
#include <vector>

#include "comparator/data_loader.h"
#include "core/metadata.h"
#include "onnx/model_io.h"
#include "surgeon/model_file.h"

namespace parity::surgeon {

// ONNX's shape inference on the model in place (onnx/model_io.h: libonnx, warnings on failure
// with `error_ok`).
using onnx_io::infer_shapes;

// Runs the model once on inputs from `data` on the reference backend and returns the dtype and
// shape each of `names` had (dynamic dims become those of the run).
TensorMetadata fallback_shapes(const ModelFile& model, const std::vector<std::string>& names,
                               const DataLoaderOptions& data = {});

// Writes what `meta` says into the graph's records: graph inputs and outputs get their dtype
// and shape, other tensors a value_info entry.
void set_shapes(::onnx::GraphProto& graph, const TensorMetadata& meta);

// Polygraphy's override_input_shapes: the named graph inputs get these shapes (their dtypes
// kept), and the recorded shapes of every other tensor are dropped, since they may no longer
// hold (run infer_shapes again afterwards). An unknown input name is an Error with the nearest.
void override_input_shapes(::onnx::GraphProto& graph, const TensorMetadata& shapes);

}  // namespace parity::surgeon
