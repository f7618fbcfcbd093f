#include "cli/python_process.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "core/interrupt.h"
#include "core/logger.h"

extern char** environ;

#ifndef PARITY_PYTHON_EXECUTABLE
#define PARITY_PYTHON_EXECUTABLE "/usr/bin/python3"
#endif

namespace parity::cli {

namespace fs = std::filesystem;

namespace {

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (unsigned char c : s)
    if (!std::isalnum(c) && c != '_') return false;
  return true;
}

// The build tree's module folder when this executable runs from the build tree (so tests use
// the module built with it); empty for an installed executable, which uses the installed one.
std::string build_tree_python_path() {
#if defined(PARITY_PYTHON_BUILD_DIR) && defined(PARITY_BUILD_BINARY_DIR)
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  fs::path build = fs::weakly_canonical(PARITY_BUILD_BINARY_DIR, ec);
  if (ec || exe.parent_path() != build) return "";
  return PARITY_PYTHON_BUILD_DIR;
#else
  return "";
#endif
}

}  // namespace

ScriptRef parse_script_ref(const std::string& spec, const std::string& default_function) {
  const size_t colon = spec.rfind(':');
  if (colon != std::string::npos && is_identifier(spec.substr(colon + 1)))
    return {spec.substr(0, colon), spec.substr(colon + 1)};
  return {spec, default_function};
}

std::string python_executable() {
  if (const char* env = std::getenv("PARITY_PYTHON"); env && *env) return env;
  return PARITY_PYTHON_EXECUTABLE;
}

int run_python(const std::vector<std::string>& args, const std::vector<std::string>& extra_env) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e)
    if (std::string_view(*e).rfind("PYTHONPATH=", 0) != 0) env_strings.emplace_back(*e);
  std::string python_path = build_tree_python_path();
  if (const char* old = std::getenv("PYTHONPATH"); old && *old)
    python_path = python_path.empty() ? old : python_path + ":" + old;
  if (!python_path.empty()) env_strings.push_back("PYTHONPATH=" + python_path);
  env_strings.insert(env_strings.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> env;
  for (auto& s : env_strings) env.push_back(s.data());
  env.push_back(nullptr);

  std::string python = python_executable();
  std::vector<std::string> argv_strings{python};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  logger().verbose("Running Python: {}", python);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = 0;
  if (int err = posix_spawnp(&pid, python.c_str(), nullptr, nullptr, argv.data(), env.data()))
    fail("failed to start Python with '{}': {}; install python3 or set PARITY_PYTHON", python,
         std::strerror(err));
  int status = 0;
  {
    ChildProcessGuard child(pid);  // Ctrl-C to parity stops Python too
    while (waitpid(pid, &status, 0) < 0)
      if (errno != EINTR) fail("failed to wait for Python: {}", std::strerror(errno));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  fail("failed to run Python: it was killed by signal {} ({})", WTERMSIG(status),
       strsignal(WTERMSIG(status)));
}

TempPath::~TempPath() {
  std::error_code ec;
  if (!path.empty()) fs::remove_all(path, ec);
}

std::string make_temp_dir(const std::string& prefix) {
  std::string pattern = (fs::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (!mkdtemp(pattern.data()))
    fail("failed to create a temporary folder {}: {}", pattern, std::strerror(errno));
  return pattern;
}

}  // namespace parity::cli
