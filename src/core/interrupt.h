// Ctrl-C and SIGTERM: the process stops at once with one line on stderr and exit status 130
// (143 for SIGTERM), as a shell reports a signal, after removing the temporary files of any
// write in progress (core/file_util.h writes whole files under a temporary name), so an
// interrupted run leaves neither a partial output file nor a hidden temporary one.
#pragma once

namespace parity {

// Installs the handlers (once; later calls do nothing).
void install_interrupt_handlers();

// While alive, `path` (a file, or an empty folder) is removed if the process is interrupted;
// the latest guards first, so a folder's files go before it. At most 16 at once; the path
// must stay valid (the caller's string) until the guard ends.
class TemporaryFileGuard {
 public:
  explicit TemporaryFileGuard(const char* path);
  ~TemporaryFileGuard();
  TemporaryFileGuard(const TemporaryFileGuard&) = delete;
  TemporaryFileGuard& operator=(const TemporaryFileGuard&) = delete;

 private:
  int slot_ = -1;
};

// While alive, the process `pid` (a child this process started: the run's Python script) is
// killed with SIGKILL if this process is interrupted, so that nothing goes on writing output
// after the user stopped the run.
class ChildProcessGuard {
 public:
  explicit ChildProcessGuard(int pid);
  ~ChildProcessGuard();
  ChildProcessGuard(const ChildProcessGuard&) = delete;
  ChildProcessGuard& operator=(const ChildProcessGuard&) = delete;

 private:
  int slot_ = -1;
};

}  // namespace parity
