#include "support/test_util.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

namespace parity::testing {

namespace fs = std::filesystem;

TempDir::TempDir() {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    fs::path p = fs::temp_directory_path() / ("parity-test-" + std::to_string(rd()));
    if (fs::create_directory(p)) {
      path_ = p;
      return;
    }
  }
  throw std::runtime_error("could not create a temporary folder");
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

static std::string shell_quote(const std::string& s) {
  std::string r = "'";
  for (char c : s) {
    if (c == '\'')
      r += "'\\''";
    else
      r += c;
  }
  return r + "'";
}

CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) result.output.append(buf.data(), n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

CommandResult run_parity(const std::vector<std::string>& args) {
  std::string cmd = shell_quote(PARITY_CLI);
  for (const auto& a : args) cmd += " " + shell_quote(a);
  return run_command(cmd);
}

CommandResult run_python(const std::string& script) {
  TempDir dir;
  std::string path = dir.file("script.py");
  write_text(path, script);
  return run_command(std::string(PARITY_PYTHON) + " " + shell_quote(path));
}

LogCapture::LogCapture(Severity severity) : previous_(logger().severity()) {
  logger().set_severity(severity);
  logger().set_sink([this](Severity, const std::string& line) {
    text_ += line;
    text_ += '\n';
  });
}

LogCapture::~LogCapture() {
  logger().reset_sink();
  logger().set_severity(previous_);
}

std::string source_path(const std::string& relative) {
  return (fs::path(PARITY_SOURCE_DIR) / relative).string();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace parity::testing
