#include "core/activity.h"

#include <algorithm>
#include <cstring>

namespace parity {

namespace {
char* g_buffer = nullptr;
size_t g_size = 0;
}  // namespace

void watch_activity(char* buffer, size_t size) {
  g_buffer = size > 0 ? buffer : nullptr;
  g_size = size;
}

bool activity_watched() { return g_buffer != nullptr; }

void note_activity(std::string_view what) {
  if (!g_buffer) return;
  const size_t n = std::min(what.size(), g_size - 1);
  std::memcpy(g_buffer, what.data(), n);
  g_buffer[n] = '\0';
}

}  // namespace parity
