// The subcommands of the model tools (check, convert, data, surgeon's weight tools, inspect
// sparsity) register themselves with app.cc through this: their parsed CLI11 app, the logging
// flags they own, whether Polygraphy frames them with RUNNING / PASSED lines, and the function
// that runs them and returns the exit status.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/logging_args.h"

namespace parity::cli {

struct ToolCommand {
  CLI::App* app = nullptr;
  const LoggingArgs* logging = nullptr;
  bool framed = false;  // Polygraphy's show_start_end_logging
  std::function<int()> run;
};
using ToolCommands = std::vector<ToolCommand>;

// The subcommand `name` of `app` (a group such as "surgeon"), made with `description` (and a
// required subcommand of its own) when it does not exist yet, so that several files can add
// subcommands to one group.
inline CLI::App& command_group(CLI::App& app, const std::string& name,
                               const std::string& description) {
  for (CLI::App* sub : app.get_subcommands({}))
    if (sub->get_name() == name) return *sub;
  CLI::App* group = app.add_subcommand(name, description);
  group->require_subcommand(1);
  return *group;
}

// `parity check lint`.
void setup_check(CLI::App& app, ToolCommands& commands);
// `parity convert` (ONNX to ONNX, --fp-to-fp16).
void setup_convert(CLI::App& app, ToolCommands& commands);
// `parity data to-input`.
void setup_data(CLI::App& app, ToolCommands& commands);
// `parity surgeon prune`, `surgeon weight-strip`, `surgeon weight-reconstruct`.
void setup_surgeon_weights(CLI::App& app, ToolCommands& commands);
// `parity inspect sparsity`.
void setup_inspect_sparsity(CLI::App& app, ToolCommands& commands);

}  // namespace parity::cli
