#include "cli/scripts.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "cli/app.h"
#include "cli/gen_script.h"
#include "core/error.h"
#include "core/logger.h"
#include "io/json.h"

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

// Removes a file when it goes out of scope.
struct TempFile {
  std::string path;
  ~TempFile() {
    std::error_code ec;
    if (!path.empty()) fs::remove(path, ec);
  }
};

}  // namespace

ScriptRef parse_script_ref(const std::string& spec, const std::string& default_function) {
  const size_t colon = spec.rfind(':');
  if (colon != std::string::npos && is_identifier(spec.substr(colon + 1)))
    return {spec.substr(0, colon), spec.substr(colon + 1)};
  return {spec, default_function};
}

void add_script_args(CLI::App& app, RunArgs& args) {
  app.add_option("--plugins", args.plugins,
                 "Plugin libraries that add reference kernels for custom ops, or backends "
                 "(docs/plugins.md)")
      ->group("Scripts and Plugins");
  app.add_option("--gen-script,--gen", args.gen_script,
                 "Write a Python script that does this run with the module parity, instead of "
                 "running ('-' for stdout)")
      ->group("Scripts and Plugins");
  app.add_option("--data-loader-script", args.data_loader_script,
                 "Python script whose function (default load_data) returns an iterable of feed "
                 "dicts: path.py[:func]")
      ->group("Scripts and Plugins");
  app.add_option("--compare-func-script", args.compare_func_script,
                 "Python script whose function (default compare_outputs) compares two "
                 "IterationResults and returns {output: bool}: path.py[:func]")
      ->group("Scripts and Plugins");
}

bool run_needs_python(const RunArgs& args) {
  return !args.data_loader_script.empty() || !args.compare_func_script.empty();
}

std::string python_executable() {
  if (const char* env = std::getenv("PARITY_PYTHON"); env && *env) return env;
  return PARITY_PYTHON_EXECUTABLE;
}

int run_in_python(const RunArgs& args, const ComparatorOptions& cmp,
                  const std::vector<ConfiguredBackend>& backends) {
  for (const std::string* spec : {&args.data_loader_script, &args.compare_func_script}) {
    if (spec->empty()) continue;
    const std::string path = parse_script_ref(*spec, "").path;
    if (!fs::is_regular_file(path))
      fail_usage("failed to use script '{}' with path '{}': no such file; give path.py[:func]",
                 *spec, path);
  }
  return run_python_script(generate_run_script(args, cmp, backends, invoked_command()));
}

int run_python_script(const std::string& script) {
  TempFile file;
  std::string pattern = (fs::temp_directory_path() / "parity-run-XXXXXX.py").string();
  int fd = mkstemps(pattern.data(), 3);
  if (fd < 0) fail("failed to create a temporary script in {}: {}", pattern, std::strerror(errno));
  close(fd);
  file.path = pattern;
  io::write_file(file.path, script);

  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e)
    if (std::string_view(*e).rfind("PYTHONPATH=", 0) != 0) env_strings.emplace_back(*e);
  std::string python_path = build_tree_python_path();
  if (const char* old = std::getenv("PYTHONPATH"); old && *old)
    python_path = python_path.empty() ? old : python_path + ":" + old;
  if (!python_path.empty()) env_strings.push_back("PYTHONPATH=" + python_path);
  std::vector<char*> env;
  for (auto& s : env_strings) env.push_back(s.data());
  env.push_back(nullptr);

  std::string python = python_executable();
  std::vector<char*> argv{python.data(), file.path.data(), nullptr};
  logger().verbose("Running the run's script with {}", python);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = 0;
  if (int err = posix_spawnp(&pid, python.c_str(), nullptr, nullptr, argv.data(), env.data()))
    fail("failed to start Python with '{}': {}; install python3 or set PARITY_PYTHON", python,
         std::strerror(err));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) fail("failed to wait for Python: {}", std::strerror(errno));
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  fail("failed to run the script: Python was killed by signal {}", WTERMSIG(status));
}

}  // namespace parity::cli
