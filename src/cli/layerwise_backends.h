// The backends behind a layer-wise comparison: the other side's batches (ONNX Runtime with only
// the batch marked, the reference interpreter with the batch kept, or saved results), and the
// reference interpreter running a single node for local errors.
#pragma once

#include <memory>
#include <string>

#include "backend/onnxrt/session.h"
#include "comparator/layerwise.h"
#include "onnx/loaders.h"

namespace parity::cli {

// One ONNX Runtime session per batch, made from `model` with exactly the batch marked; the
// session is released once its outputs are (they borrow its values).
BatchFetcher onnxrt_batches(ModelPtr model, OrtOptions options, std::string runner_name,
                            const TensorMap& feed);
// The reference interpreter with the batch kept as extra outputs.
BatchFetcher reference_batches(ModelPtr model, const TensorMap& feed);
// Saved results of one iteration.
BatchFetcher saved_batches(const TensorMap& saved);

// Runs one node of `model` alone on the reference interpreter (a one-node model with the
// node's constants and types), for local errors.
NodeRunner single_node_runner(ModelPtr model);

// The command line of this process ("parity run model.onnx ..."), for the report.
std::string process_command_line();

}  // namespace parity::cli
