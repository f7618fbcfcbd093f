// Range checks for numeric flags that word their failure in the project's template
// ("failed to parse --iterations with value 'abc': it must be an integer in [1, 1099511627776]")
// rather than CLI11's "Value abc not in range 1 to 1099511627776".
#pragma once

#include <cstdint>

#include <CLI/CLI.hpp>

namespace parity::cli {

// The option's values must be integers in [lo, hi]; returns `opt` for chaining.
CLI::Option* check_range(CLI::Option* opt, int64_t lo, int64_t hi);
// The option's values must be finite numbers in [lo, hi].
CLI::Option* check_range(CLI::Option* opt, double lo, double hi);

}  // namespace parity::cli
