// `convert --fp-to-fp16` (Polygraphy's ConvertToFp16, which calls onnxmltools'
// convert_float_to_float16 with keep_io_types=True): float32 tensors become float16 except
// where they must stay float32, with Casts between the two.
//
// What stays float32, and why:
//   - every tensor of the ops onnxmltools blocks by default (ops without float16 kernels in
//     common runtimes: Range, Resize, TopK, CumSum, Min, Max, NonMaxSuppression, RoiAlign,
//     Upsample, RandomUniformLike, and the ai.onnx.ml ops; Parity adds
//     MeanVarianceNormalization, whose ONNX function has float32 constants), of ops in other
//     domains (their kernels are unknown) and of nodes with subgraphs (If, Loop, Scan: kept whole);
//   - every input or output whose type constraint in the op's ONNX schema does not allow
//     float16 at the model's opset (Resize's scales, Range at any opset, ...): decided per
//     slot from the schema, not from a list;
//   - the graph's own inputs and outputs with keep_io_types (Polygraphy's choice): a Cast
//     after each float input ("graph_input_cast_<i>") and before each float output.
// A float32 initializer read only where float32 is needed stays float32 (exact); one read as
// float16 is converted, its values clamped as onnxmltools clamps them (magnitudes below
// min_positive_val raised to it, above max_finite_val lowered to it).
//
// Element types of intermediate tensors come from ONNX's shape inference (libonnx). The result
// is checked with ONNX's strict type inference before it is returned: a model it cannot type
// is an Error, never written.
#pragma once

#include <set>
#include <string>

#include <onnx/onnx_pb.h>

namespace parity::surgeon {

struct Fp16Options {
  bool keep_io_types = true;  // Polygraphy's ConvertToFp16
  double min_positive_val = 1e-7;
  double max_finite_val = 1e4;
  std::set<std::string> op_block_list;    // added to the default list
  std::set<std::string> node_block_list;  // node names kept in float32
  std::string external_data_dir = ".";    // where external initializers are read from
};

// The ops onnxmltools keeps in float32 by default.
const std::set<std::string>& default_fp16_op_block_list();

// Converts `model` in place. Returns the number of Cast nodes inserted.
size_t convert_to_fp16(::onnx::ModelProto& model, const Fp16Options& options = {});

}  // namespace parity::surgeon
