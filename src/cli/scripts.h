// User scripts and plugins of `parity run`: --plugins (C++ op plugins, loaded in-process),
// --data-loader-script and --compare-func-script (Python, as in Polygraphy), --gen-script.
//
// The CLI does not link Python, so it starts in milliseconds whatever the flags. A run that
// needs a Python script is written out as the --gen-script script and run by Debian's Python
// with the module `parity` (exactly what Polygraphy's `run` does with its own script): the
// output and exit status are the script's.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "cli/run.h"

namespace parity::cli {

// "file.py:func" -> {"file.py", "func"}; "file.py" -> {"file.py", default_function}.
struct ScriptRef {
  std::string path;
  std::string function;
};
ScriptRef parse_script_ref(const std::string& spec, const std::string& default_function);

// Adds --plugins, --gen-script, --data-loader-script and --compare-func-script.
void add_script_args(CLI::App& app, RunArgs& args);

// True when the run needs Python (a data-loader or compare-function script).
bool run_needs_python(const RunArgs& args);

// Runs a script with Debian's Python and the module `parity` of this build (PYTHONPATH), and
// returns its exit status.
int run_python_script(const std::string& script);

// Runs the generated script with Python and returns its exit status.
int run_in_python(const RunArgs& args, const ComparatorOptions& cmp,
                  const std::vector<ConfiguredBackend>& backends);

// The interpreter used: $PARITY_PYTHON, else the one the module was built for.
std::string python_executable();

}  // namespace parity::cli
