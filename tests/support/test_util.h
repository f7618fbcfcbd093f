// Helpers shared by the tests.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/logger.h"

namespace parity::testing {

// A fresh folder under the system temp folder, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs a shell command and captures what it prints.
CommandResult run_command(const std::string& command);
// Runs the built `parity` executable with these arguments (each shell-quoted).
CommandResult run_parity(const std::vector<std::string>& args);
// Runs Debian's Python (/usr/bin/python3) on a script given as text.
CommandResult run_python(const std::string& script);

// Captures every log line while alive (and hides it from the terminal).
class LogCapture {
 public:
  explicit LogCapture(Severity severity = Severity::kInfo);
  ~LogCapture();
  const std::string& text() const { return text_; }
  bool contains(const std::string& s) const { return text_.find(s) != std::string::npos; }

 private:
  std::string text_;
  Severity previous_;
};

std::string source_path(const std::string& relative);  // a file of the repository
void write_text(const std::string& path, const std::string& text);
std::string read_text(const std::string& path);

}  // namespace parity::testing
