// Heatmaps of the error per channel (the third-to-last dim) for the report's choice of channel:
// the cells of ErrorProfile's heatmap, each the largest |out0 - out1| over the leading dims.
#pragma once

#include "comparator/tensor_error.h"
#include "core/tensor.h"

namespace parity {

// Fills profile.channel_heat when `profile` has a heatmap and the tensors (of one shape, any
// numeric type) have rank 3 or more; leaves it empty otherwise.
void add_channel_heatmaps(const Tensor& out0, const Tensor& out1, ErrorProfile& profile);

}  // namespace parity
