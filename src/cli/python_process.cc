#include "cli/python_process.h"

#include <spawn.h>
#include <sys/socket.h>
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

namespace {

// The environment and command line of a Python child: the module importable, `extra_env` set.
struct PythonCommand {
  std::vector<std::string> env_strings, argv_strings;
  std::vector<char*> env, argv;
  std::string python;

  PythonCommand(const std::vector<std::string>& args, const std::vector<std::string>& extra_env) {
    for (char** e = environ; *e; ++e)
      if (std::string_view(*e).rfind("PYTHONPATH=", 0) != 0) env_strings.emplace_back(*e);
    std::string python_path = build_tree_python_path();
    if (const char* old = std::getenv("PYTHONPATH"); old && *old)
      python_path = python_path.empty() ? old : python_path + ":" + old;
    if (!python_path.empty()) env_strings.push_back("PYTHONPATH=" + python_path);
    env_strings.insert(env_strings.end(), extra_env.begin(), extra_env.end());
    for (auto& s : env_strings) env.push_back(s.data());
    env.push_back(nullptr);

    python = python_executable();
    argv_strings.push_back(python);
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    for (auto& s : argv_strings) argv.push_back(s.data());
    argv.push_back(nullptr);
  }

  pid_t spawn(const posix_spawn_file_actions_t* actions) {
    logger().verbose("Running Python: {}", python);
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t pid = 0;
    if (int err = posix_spawnp(&pid, python.c_str(), actions, nullptr, argv.data(), env.data()))
      fail("failed to start Python with '{}': {}; install python3 or set PARITY_PYTHON", python,
           std::strerror(err));
    return pid;
  }
};

// Waits for the child and returns its exit status; Error when a signal killed it.
int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) fail("failed to wait for Python: {}", std::strerror(errno));
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  fail("failed to run Python: it was killed by signal {} ({})", WTERMSIG(status),
       strsignal(WTERMSIG(status)));
}

}  // namespace

int run_python(const std::vector<std::string>& args, const std::vector<std::string>& extra_env) {
  PythonCommand command(args, extra_env);
  const pid_t pid = command.spawn(nullptr);
  ChildProcessGuard child(pid);  // Ctrl-C to parity stops Python too
  return wait_for(pid);
}

PythonChild::PythonChild(const std::vector<std::string>& args,
                         const std::vector<std::string>& extra_env) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    fail("failed to start Python: no socket to talk to it: {}", std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // The child's end becomes its stdin and stdout (dup2 clears close-on-exec).
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  PythonCommand command(args, extra_env);
  try {
    pid_ = command.spawn(&actions);
  } catch (...) {
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[0]);
    ::close(fds[1]);
    throw;
  }
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  socket_ = fds[0];
  guard_ = std::make_unique<ChildProcessGuard>(pid_);
}

PythonChild::~PythonChild() {
  if (socket_ >= 0) ::close(socket_);  // the child reads the end of its input and ends
  if (pid_ > 0) {
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

bool PythonChild::write_line(const std::string& line) {
  const std::string data = line + "\n";
  const char* p = data.data();
  size_t n = data.size();
  while (n > 0) {
    const ssize_t sent = ::send(socket_, p, n, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    p += sent;
    n -= static_cast<size_t>(sent);
  }
  return true;
}

std::optional<std::string> PythonChild::read_line() {
  for (;;) {
    if (const size_t end = buffered_.find('\n'); end != std::string::npos) {
      std::string line = buffered_.substr(0, end);
      buffered_.erase(0, end + 1);
      return line;
    }
    char chunk[65536];
    const ssize_t got = ::recv(socket_, chunk, sizeof chunk, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return std::nullopt;
    buffered_.append(chunk, static_cast<size_t>(got));
  }
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
