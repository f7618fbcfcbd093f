// `parity run ... --gen-script out.py`: the run written as a Python script over the module
// `parity` (Polygraphy's --gen-script). Running the script does what the command does, prints
// the same lines and exits with the same status: 0 when everything passed, 1 when a comparison
// or validation failed (or an error occurred), 2 for a usage error.
#pragma once

#include <string>

#include "cli/run.h"

namespace parity::cli {

// When `parity run` runs the script itself, it names a file here; the script writes its exit
// status there as its last act, so that a script that ended early cannot pass the run.
inline constexpr const char* kVerdictFileVariable = "PARITY_VERDICT_FILE";

// The script for these arguments, from the values every option group parsed (`cmp`, the
// configured `backends`). `command` is quoted in the header comment.
std::string generate_run_script(const RunArgs& args, const ComparatorOptions& cmp,
                                const std::vector<ConfiguredBackend>& backends,
                                const std::string& command);

// Writes the script to args.gen_script ("-" for stdout) and returns the exit status (0).
int write_run_script(const RunArgs& args, const ComparatorOptions& cmp,
                     const std::vector<ConfiguredBackend>& backends);

}  // namespace parity::cli
