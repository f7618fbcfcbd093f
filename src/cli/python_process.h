// Running Python from the `parity` command, which does not link Python (so it starts in
// milliseconds whatever the flags): the run's generated script (--data-loader-script,
// --compare-func-script) and a model script (--model-type onnx-script) run in a child
// process of Debian's Python with the module `parity` importable.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/interrupt.h"

namespace parity::cli {

// "file.py:func" -> {"file.py", "func"}; "file.py" -> {"file.py", default_function}.
struct ScriptRef {
  std::string path;
  std::string function;
};
ScriptRef parse_script_ref(const std::string& spec, const std::string& default_function);

// The interpreter used: $PARITY_PYTHON, else the one the module was built for.
std::string python_executable();

// Runs `python <args...>` with the module importable (the build tree's module when this
// executable runs from the build tree) and `extra_env` ("NAME=value") set, and returns its exit
// status; its output goes to ours. Interrupting parity kills it (core/interrupt.h).
int run_python(const std::vector<std::string>& args,
               const std::vector<std::string>& extra_env = {});

// A Python child that this process talks to a line at a time: `python <args...>` started as
// run_python starts it, with its stdin and stdout joined to this process by a socket (its
// stderr is ours). A child that died makes write_line return false and read_line nullopt,
// never a signal. The destructor closes the socket and waits for the child to end.
class PythonChild {
 public:
  explicit PythonChild(const std::vector<std::string>& args,
                       const std::vector<std::string>& extra_env = {});
  ~PythonChild();
  PythonChild(const PythonChild&) = delete;
  PythonChild& operator=(const PythonChild&) = delete;

  bool write_line(const std::string& line);  // adds the newline
  std::optional<std::string> read_line();    // without the newline

 private:
  int pid_ = -1;
  int socket_ = -1;
  std::string buffered_;
  std::unique_ptr<ChildProcessGuard> guard_;  // Ctrl-C to parity stops the child too
};

// Removes a file or folder (recursively) when it goes out of scope.
struct TempPath {
  std::string path;
  TempPath() = default;
  explicit TempPath(std::string p) : path(std::move(p)) {}
  TempPath(const TempPath&) = delete;
  TempPath& operator=(const TempPath&) = delete;
  ~TempPath();
};

// A new empty folder under the system's temporary folder, named after `prefix`.
std::string make_temp_dir(const std::string& prefix);

}  // namespace parity::cli
