// `parity debug reduce` and `parity debug repeat` (Polygraphy's debug tools): flags into the
// options of debug/reduce.h and debug/iterate.h.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/comparator_args.h"
#include "cli/data_loader_args.h"
#include "cli/logging_args.h"
#include "cli/model_args.h"

namespace parity::cli {

// The flags shared by the debug tools: the check command and how it is judged, artifacts,
// iterations and replays.
struct IterativeArgs {
  std::vector<std::string> check;  // everything after --check (taken before parsing)
  bool has_check = false;
  std::vector<int> fail_codes, ignore_fail_codes;
  std::vector<std::string> fail_regex;
  bool show_output = false, hide_fail_output = false;
  std::vector<std::string> artifacts;
  std::string artifacts_dir = "polygraphy_artifacts";
  std::string iter_artifact;
  bool no_remove_intermediate = false;
  std::string iteration_info;
  std::string until;
  std::string load_debug_replay;
  std::string save_debug_replay = "polygraphy_debug_replay.json";
};

struct DebugReduceArgs {
  LoggingArgs logging;
  ModelArgs model;
  DataLoaderArgs data;
  ComparatorArgs comparator;  // only the tolerance flags are offered (native mode)
  IterativeArgs iterative;
  std::vector<std::string> model_input_shapes;
  std::string output, min_good, mode = "bisect";
  bool no_reduce_inputs = false, no_reduce_outputs = false;
};

struct DebugRepeatArgs {
  LoggingArgs logging;
  IterativeArgs iterative;
};

// Adds `debug` with its subcommands `reduce` and `repeat`.
CLI::App* setup_debug(CLI::App& app, DebugReduceArgs& reduce, DebugRepeatArgs& repeat);
int run_debug_reduce(const DebugReduceArgs& args, const CLI::App& reduce_app);
int run_debug_repeat(const DebugRepeatArgs& args);

// Takes the --check command out of the command line: `--check` (or `--check-inference`) and
// everything after it, as Polygraphy's argparse.REMAINDER does. Returns the tokens left.
std::vector<std::string> take_check_command(std::vector<std::string> args,
                                            std::vector<std::string>& check, bool& found);

}  // namespace parity::cli
