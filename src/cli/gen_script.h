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

// The Python form of each backend's runner (Backend::script) and their imports, each once as
// "from ... import ...\n" lines. A backend without one is a UsageError: "failed to <what> for
// backend 'x': it has no Python form; <instead>".
struct RunnerScripts {
  std::vector<RunnerScript> runners;
  std::string import_lines;
};
RunnerScripts runner_scripts_of(const std::vector<ConfiguredBackend>& backends,
                                const std::string& what, const std::string& instead);

// The end of every script parity generates and may run itself: `main()` is called, errors are
// reported as `parity run` reports them, and the exit status is written to the verdict file.
// The script must import os, sys, parity and G_LOGGER.
std::string script_main_block();

// The script for these arguments, from the values every option group parsed (`cmp`, the
// configured `backends`). `command` is quoted in the header comment.
std::string generate_run_script(const RunArgs& args, const ComparatorOptions& cmp,
                                const std::vector<ConfiguredBackend>& backends,
                                const std::string& command);

// Pieces of the script, shared with the dataset script (cli/dataset_run.h): the lines that set
// `data_loader` (4-space indented), and the expression of the compare function.
std::string data_loader_code(const DataLoaderArgs& data, const std::string& script);
std::string compare_func_code(const RunArgs& args, const ComparatorOptions& cmp);
// The "    load_model = SaveOnnx(...)\n" line of --save-onnx (Polygraphy's keyword arguments, the
// threshold in bytes), "" without it.
std::string save_onnx_code(const RunArgs& args);

// Writes the script to args.gen_script ("-" for stdout) and returns the exit status (0).
int write_run_script(const RunArgs& args, const ComparatorOptions& cmp,
                     const std::vector<ConfiguredBackend>& backends);

}  // namespace parity::cli
