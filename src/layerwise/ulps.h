// Errors in units in the last place (ulps) of the output's floating type: how many values of
// that type lie between the two results. A difference of one ulp is what rounding a tiny
// inherited difference to a narrow type (float16, bfloat16) makes; counting ulps tells such
// rounding apart from an error of the node's own.
#pragma once

#include <optional>

#include "core/tensor.h"

namespace parity {

struct UlpStats {
  double max_ulps = 0;       // the largest distance over elements (NaN pairs are skipped)
  double max_magnitude = 0;  // the largest finite |value| of the reference side
};

// For two tensors of one floating type (float64, float32, float16, bfloat16) and element count;
// nullopt for any other pair.
std::optional<UlpStats> ulp_stats(const Tensor& out0, const Tensor& out1);

// Stored significand bits of a floating type (52, 23, 10, 7); 0 for other types.
int significand_bits(DataType dtype);

// One ulp of `dtype` at `magnitude` (a normal number of that type): 2^(floor(log2 m) - bits).
double ulp_at(DataType dtype, double magnitude);

}  // namespace parity
