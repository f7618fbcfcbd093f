// Running a command as a child process with its output captured (the --check command of the
// debug tools).
#pragma once

#include <string>
#include <vector>

namespace parity::debug {

struct ProcessResult {
  // The exit status, or minus the signal that ended the process (as Python's subprocess).
  int returncode = 0;
  std::string out, err;
};

// Runs argv[0] (looked up in PATH) with the arguments, stdin inherited, stdout and stderr
// captured. Throws Error when the program cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv);

}  // namespace parity::debug
