#include "core/progress.h"

#include <atomic>
#include <cstdio>
#include <mutex>

#include <fmt/format.h>

namespace parity {

namespace {

std::atomic<bool> g_enabled{false};
std::mutex g_mutex;  // guards g_shown and the writes to stderr
size_t g_shown = 0;  // the length of the progress line on the terminal now (0: none)

// Overwrites the line with spaces and goes back to its start: plain characters only, no escape
// sequences, so that a terminal without them (or NO_COLOR) shows the same.
void erase_locked() {
  if (g_shown == 0) return;
  const std::string blank = "\r" + std::string(g_shown, ' ') + "\r";
  std::fputs(blank.c_str(), stderr);
  g_shown = 0;
}

}  // namespace

void set_progress_enabled(bool enabled) { g_enabled = enabled; }
bool progress_enabled() { return g_enabled; }

void clear_progress_line() {
  if (!g_enabled) return;
  std::lock_guard lock(g_mutex);
  if (g_shown == 0) return;
  erase_locked();
  std::fflush(stderr);
}

Progress::Progress(std::string label, size_t total) : label_(std::move(label)), total_(total) {}

Progress::~Progress() {
  if (drawn_) clear_progress_line();
}

void Progress::update(size_t done) {
  if (!g_enabled) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  const std::string line =
      total_ ? fmt::format("{} {}/{} ({}%)", label_, done, total_, done * 100 / total_)
             : fmt::format("{} {}", label_, done);  // an endless or unsized source
  std::fflush(stdout);  // what the log printed comes first on a shared terminal
  std::lock_guard lock(g_mutex);
  erase_locked();
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  g_shown = line.size();
  drawn_ = true;
  last_draw_ = now;
}

}  // namespace parity
