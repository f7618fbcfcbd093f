// The CLI's value parsers: --atol/--rtol ([output:]number), --input-shapes (name:[dims]) and
// --val-range ([output:][min,max]); the input is split into tokens at newlines.
#include <sstream>

#include "cli/parse_util.h"
#include "core/error.h"
#include "fuzz/fuzz_util.h"

// parse_util.cc's --check-error-stat parser calls this function of compare_match.cc, which the
// fuzzing compiler (clang 14) cannot build (fuzz/CMakeLists.txt). That parser is not fuzzed
// here, so the link gets a definition that says so if it is ever reached.
namespace parity {
ErrorStat error_stat_from_name(std::string_view) {
  throw InternalError("error_stat_from_name is not part of the fuzz_cli_values target");
}
}  // namespace parity

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> tokens;
  std::istringstream in(parity::fuzz::bytes_of(data, size));
  for (std::string line; std::getline(in, line);) tokens.push_back(line);
  try {
    parity::cli::parse_per_output_number("--atol", tokens);
  } catch (const parity::Error&) {
  }
  try {
    parity::cli::parse_input_shapes("--input-shapes", tokens);
  } catch (const parity::Error&) {
  }
  try {
    parity::cli::parse_val_ranges(tokens);
  } catch (const parity::Error&) {
  }
  return 0;
}
