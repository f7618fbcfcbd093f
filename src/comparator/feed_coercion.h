// Loaded feeds fitted to a runner's inputs, as Polygraphy's DataLoaderCache does for every
// runner: each input is found by exact name, then case-insensitive substring, then position
// (a single input is renamed); a dtype that differs is cast; a shape that differs is frozen,
// reshaped and permuted when the elements allow (util.try_match_shape); keys the runner does
// not take are dropped. Each step says so in Polygraphy's words. What still does not fit is
// given up as Polygraphy gives it up: the buffer as loaded under the input's own name, left
// for the runner to refuse, or, under another name, an Error ("Could not reload inputs...").
#pragma once

#include "core/metadata.h"
#include "core/tensor.h"

namespace parity {

TensorMap coerce_feed(const TensorMap& cached, const TensorMetadata& meta);

}  // namespace parity
