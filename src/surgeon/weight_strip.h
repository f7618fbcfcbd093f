// `surgeon weight-strip` and `surgeon weight-reconstruct`, in Polygraphy's format: a stripped
// initializer keeps its name, dtype and dims, loses its data, and has the doc_string
// "TRT_WEIGHTLESS/" ("TRT_WEIGHTLESS/SPARSE_2_4" when its values were 2:4 sparse); the model's
// doc_string gets "-TRT_WEIGHTLESS" appended (or becomes "TRT_WEIGHTLESS"). Reconstruction
// fills each marked initializer with standard-normal proxy values of its dtype and prunes the
// SPARSE_2_4 ones back to 2:4 sparsity, so that the model runs (its results mean nothing).
//
// What is stripped (Polygraphy's patterns): the initializer inputs of Conv, ConvTranspose, Gemm,
// MatMul, Gather and Slice (input 0 only) nodes, of a QuantizeLinear (input 0) whose output goes
// through a DequantizeLinear into Conv / ConvTranspose (input 0), Gemm (0, 1, 2) or MatMul
// (0, 1), of a Transpose feeding those, and of nodes whose op ONNX does not define (plugins);
// never uint8 initializers, those named in the exclude list, or those below the size
// threshold of their op (Gather and Slice: 1024 elements).
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include <onnx/onnx_pb.h>

namespace parity::surgeon {

// Strips in place. `exclude` names initializers to keep. Returns the number stripped.
size_t strip_weights(::onnx::ModelProto& model, const std::set<std::string>& exclude = {},
                     const std::string& external_data_dir = ".");

// Fills the stripped initializers in place (NumPy's RandomState(seed).randn, cast to the
// initializer's dtype). Returns the number reconstructed.
size_t reconstruct_weights(::onnx::ModelProto& model, uint32_t seed = 1);

}  // namespace parity::surgeon
