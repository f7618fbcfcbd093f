#include "core/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace parity {

namespace {

constexpr int kSlots = 16;
// Read by the signal handler: plain pointers published atomically.
std::atomic<const char*> g_temporary[kSlots];
std::atomic<int> g_children[kSlots];  // 0: free

void write_stderr(const char* s) {
  ssize_t ignored = ::write(STDERR_FILENO, s, std::strlen(s));
  (void)ignored;
}

// Only async-signal-safe calls: kill, unlink, rmdir, write, signal, raise.
void on_signal(int sig) {
  for (auto& slot : g_children)
    if (const int pid = slot.load(); pid > 0) ::kill(pid, SIGKILL);
  // Latest first, so that files go before the temporary folder that holds them.
  for (int i = kSlots - 1; i >= 0; --i)
    if (const char* p = g_temporary[i].load())
      if (::unlink(p) != 0) ::rmdir(p);
  write_stderr(sig == SIGINT ? "\n[!] Interrupted (SIGINT): the run stopped; no output file was "
                               "written\n"
                             : "\n[!] Terminated (SIGTERM): the run stopped; no output file was "
                               "written\n");
  // The default action then ends the process with the signal, so the exit status says so.
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void install_interrupt_handlers() {
  static bool installed = [] {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    return true;
  }();
  (void)installed;
}

TemporaryFileGuard::TemporaryFileGuard(const char* path) {
  for (int i = 0; i < kSlots; ++i) {
    const char* expected = nullptr;
    if (g_temporary[i].compare_exchange_strong(expected, path)) {
      slot_ = i;
      return;
    }
  }
}

TemporaryFileGuard::~TemporaryFileGuard() {
  if (slot_ >= 0) g_temporary[slot_].store(nullptr);
}

ChildProcessGuard::ChildProcessGuard(int pid) {
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (g_children[i].compare_exchange_strong(expected, pid)) {
      slot_ = i;
      return;
    }
  }
}

ChildProcessGuard::~ChildProcessGuard() {
  if (slot_ >= 0) g_children[slot_].store(0);
}

}  // namespace parity
