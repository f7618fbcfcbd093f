// Checks of flag values that parse but make no sense. Kept apart from the parsers so the
// option groups can call them wherever they move.
#pragma once

#include <string>

#include "comparator/compare.h"

namespace parity::cli {

// --atol / --rtol: every value must be a number of 0 or more (inf allowed: never fail). NaN
// would make every comparison fail (nothing is <= NaN) and a negative tolerance every
// comparison of equal values fail, so both are usage errors naming the flag and the output.
void check_tolerances(const std::string& flag, const PerOutput<double>& values);

}  // namespace parity::cli
