// Loaded feeds fitted to a runner's inputs, as Polygraphy's DataLoaderCache does for every
// runner: each input is found by exact name, then case-insensitive substring, then position
// (a single input is renamed); a dtype that differs is cast; a shape that differs is frozen,
// reshaped and permuted when the elements allow (util.try_match_shape); keys the runner does
// not take are dropped. Each step says so in Polygraphy's words. What still does not fit is
// left for the runner to refuse.
#pragma once

#include "core/metadata.h"
#include "core/tensor.h"

namespace parity {

TensorMap coerce_feed(const TensorMap& cached, const TensorMetadata& meta);

// Only the derived tensors of sequence and map inputs (backend/value_tensors.h) fitted to
// their declared element, value and key types (JSON and Python cannot say float32 from
// float64 or "1" from 1); every other tensor as given.
TensorMap fit_value_inputs(const TensorMap& feed, const TensorMetadata& meta);

}  // namespace parity
