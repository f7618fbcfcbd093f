// 2:4 structured sparsity of weights, as Polygraphy's SparsityPruner finds and makes it
// (`surgeon prune`, `inspect sparsity`, and weight-strip / weight-reconstruct).
//
// Candidates are the initializers read by MatMul (A along axis 1, B along axis 0), Gemm (the
// axis that is reduced, after transA / transB) and Conv (W along axis 1), looking back through
// QuantizeLinear, DequantizeLinear, Cast (and the TRT FP8 Q/DQ ops) and Transpose (the axis
// mapped through perm). Eligible candidates are float32, float16 or bfloat16 with the axis
// length a multiple of 4. Along the axis, each group of 4 values is sparse when at least two
// are zero; pruning zeroes the two of smallest magnitude (the first of equal ones).
// (Polygraphy zeroes the 2nd and 3rd value of each group for bfloat16 held as raw data; Parity
// prunes bfloat16 by magnitude as it prunes the other types.)
#pragma once

#include <set>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace parity::surgeon {

struct PruneCandidate {
  std::string name;  // the initializer
  int64_t axis = 0;  // the axis groups of 4 run along
};

// The eligible weights, in the order Polygraphy finds them ("Found: N weight tensor(s)
// eligible for pruning."). Those in `skip` are left out with Polygraphy's warning.
std::vector<PruneCandidate> prune_candidates(const ::onnx::ModelProto& model,
                                             const std::set<std::string>& skip = {});

// Checks every candidate, printing "Found sparse tensor: x" / "Found non-sparse tensor: x";
// returns the names of the sparse ones.
std::set<std::string> check_sparsity(const ::onnx::ModelProto& model,
                                     const std::string& external_data_dir = ".");

// Prunes every candidate not in `skip` to 2:4 sparsity in place. Returns the number pruned.
size_t prune_to_2_4(::onnx::ModelProto& model, const std::string& external_data_dir = ".",
                    const std::set<std::string>& skip = {});

}  // namespace parity::surgeon
