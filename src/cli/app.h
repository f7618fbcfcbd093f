// The `parity` command line: subcommands `run` and `inspect` (model, data).
#pragma once

#include <string>

namespace parity::cli {

// Parses the arguments, runs the subcommand and returns the exit status: 0 when everything
// passed, 1 when a comparison or validation failed (or any other error), 2 for a usage error.
int main(int argc, char** argv);

// The command line this process was started with, on one line (for the report and scripts).
const std::string& invoked_command();

}  // namespace parity::cli
