// A progress line for long runs ("pluginref-runner-N0 | Iteration 3/100"), drawn in place on
// stderr when it is a terminal, so that a run of thousands of nodes or iterations shows that it
// is moving. It never reaches a pipe or a file: the CLI enables it only when stderr is a
// terminal and --silent is not given, and the logger clears it (\r, spaces over it, \r) before
// each line it prints, so log lines stay whole; the next update draws it again.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace parity {

// Off by default (the Python module, the tests' own processes); `parity` turns it on.
void set_progress_enabled(bool enabled);
bool progress_enabled();
// Erases the progress line if one is shown (the logger calls it before printing a line).
void clear_progress_line();

// One progress line, erased when it goes out of scope. Updates are cheap: the line is redrawn
// at most ten times a second (and at the first update), so a per-node update costs nothing.
class Progress {
 public:
  Progress(std::string label, size_t total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` of `total` units are finished.
  void update(size_t done);

 private:
  std::string label_;
  size_t total_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace parity
