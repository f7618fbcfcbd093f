// What this process is doing, for a parent process that watches it: a child made by
// backend/subprocess_runner.h notes each node it runs in memory shared with its parent, so
// that when a kernel (a plugin's, a Python op's) crashes the child, the parent can say which
// node and which library it was running. Without a watcher, noting costs one branch.
#pragma once

#include <cstddef>
#include <string_view>

namespace parity {

// `buffer` (shared with the watcher) receives each note, NUL-terminated and cut to `size`;
// nullptr stops noting.
void watch_activity(char* buffer, size_t size);
bool activity_watched();
void note_activity(std::string_view what);

}  // namespace parity
