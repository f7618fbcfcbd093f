// The reference backend's resource limits on the command line (core/limits.h):
//   --limit-tensor-elements N   elements per tensor
//   --limit-memory SIZE         bytes held at once ("8G", "512M", "1073741824")
//   --limit-loop-iterations N   iterations of one Loop node
//   --limit-run-seconds S       wall time of one run (0: none)
// Each flag writes the process-wide defaults as it is parsed, so every executor built after
// parsing uses them. Kept apart from the other option groups so it can move as one piece.
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace parity::cli {

void add_limit_args(CLI::App& app);

}  // namespace parity::cli
