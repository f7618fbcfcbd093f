// `data to-input`: Polygraphy's merge of input files and (layer-wise) output files into one
// input file. Each file contributes a list of iterations (name -> array); iteration i of the
// result holds every array of iteration i of every file, later files overriding earlier ones
// for the same name.
#pragma once

#include <string>
#include <vector>

#include "core/tensor.h"

namespace parity::surgeon {

// Merges the iterations of the file `path` into `inputs`, padding `inputs` with empty
// iterations to the file's length, and warning as Polygraphy does when the lengths differ.
// (Polygraphy pads with one dict object repeated, so all padded iterations are one dict and
// end up holding the last iteration's values: merging a 2-iteration file into nothing gives two
// copies of iteration 1. Parity pads with independent iterations, keeping each one.)
void merge_iterations(std::vector<TensorMap>& inputs, const std::vector<TensorMap>& from,
                      const std::string& path);

}  // namespace parity::surgeon
