// Shared by the compare functions: pairing the outputs of two iteration results and the
// per-output loop around a match function (Polygraphy's run_comparison).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "comparator/struct.h"
#include "stats/differences.h"

namespace parity {

// Exact name, then the first case-insensitive substring match in either direction, then the
// name at `index` (Polygraphy's util.find_str_in_iterable).
std::optional<std::string> find_str_in_names(const std::string& name,
                                             const std::vector<std::string>& names,
                                             std::optional<size_t> index = std::nullopt);

// Compares one output pair, logging its report; returns its result.
using OutputMatchFunc =
    std::function<OutputCompareResult(const std::string& out0_name, const Tensor& out0,
                                      const std::string& out1_name, const Tensor& out1)>;

// Pairs every output of r0 with one of r1, runs `match` on each pair (indented under a
// "Comparing Output: ..." line) and logs the iteration's verdict. Throws when outputs exist but
// none could be paired.
IterationCompareResult run_comparison(const OutputMatchFunc& match, bool fail_fast,
                                      const IterationResult& r0, const IterationResult& r1);

}  // namespace parity
