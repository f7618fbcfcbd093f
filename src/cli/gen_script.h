// `parity run ... --gen-script out.py`: the run written as a Python script over the module
// `parity` (Polygraphy's --gen-script). Running the script does what the command does, prints
// the same lines and exits with the same status: 0 when everything passed, 1 when a comparison
// or validation failed (or an error occurred), 2 for a usage error.
#pragma once

#include <string>

#include "cli/run.h"

namespace parity::cli {

// The script for these arguments. Every value is parsed first, so a malformed flag is a
// UsageError here, as it would be when running. `command` is quoted in the header comment.
std::string generate_run_script(const RunArgs& args, const std::string& command);

// The command line of this process (/proc/self/cmdline), for the script's header comment.
std::string this_command_line();

// Writes the script to args.gen_script ("-" for stdout) and returns the exit status (0).
int write_run_script(const RunArgs& args);

}  // namespace parity::cli
