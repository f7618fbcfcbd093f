#include "core/progress.h"

#include <atomic>
#include <cstdio>
#include <mutex>

#include <fmt/format.h>

namespace parity {

namespace {

std::atomic<bool> g_enabled{false};
std::mutex g_mutex;    // guards g_shown and the writes to stderr
bool g_shown = false;  // a progress line is on the terminal now

// "\r" to the start of the line, ESC[K erases to its end.
constexpr char kErase[] = "\r\033[K";

}  // namespace

void set_progress_enabled(bool enabled) { g_enabled = enabled; }
bool progress_enabled() { return g_enabled; }

void clear_progress_line() {
  if (!g_enabled) return;
  std::lock_guard lock(g_mutex);
  if (!g_shown) return;
  std::fputs(kErase, stderr);
  std::fflush(stderr);
  g_shown = false;
}

Progress::Progress(std::string label, size_t total) : label_(std::move(label)), total_(total) {}

Progress::~Progress() {
  if (drawn_) clear_progress_line();
}

void Progress::update(size_t done) {
  if (!g_enabled) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  const std::string line = fmt::format("{}{} {}/{} ({}%)", kErase, label_, done, total_,
                                       total_ ? done * 100 / total_ : 100);
  std::fflush(stdout);  // what the log printed comes first on a shared terminal
  std::lock_guard lock(g_mutex);
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  g_shown = true;
  drawn_ = true;
  last_draw_ = now;
}

}  // namespace parity
