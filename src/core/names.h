// Names the user may have mistyped: the nearest of the valid ones, for "did you mean" in
// messages.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace parity {

// Levenshtein distance, case-insensitive, so "conv" finds "Conv" first.
size_t edit_distance(const std::string& a, const std::string& b);

// Up to `count` of `candidates`, nearest to `name` first (ties keep the candidates' order).
std::vector<std::string> nearest_names(const std::string& name,
                                       const std::vector<std::string>& candidates,
                                       size_t count = 3);

// "; did you mean 'conv_out'?" for the nearest candidate within a third of the name's length
// (at least 2 edits), else "; valid names are ['a', 'b', ...]" (the first 10), or "" when there
// are no candidates.
std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace parity
