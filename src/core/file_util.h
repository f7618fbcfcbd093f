// Reading and writing files given by the user, safely.
//
// Reading: only regular files. A FIFO, a device (/dev/zero, /dev/stdin) or a socket given as a
// model, external data or a data file would block for ever or read until memory runs out, so
// it is refused before it is read, with a message that says what the path is. The file is
// opened without blocking and checked on the descriptor itself (no race with a swap).
//
// Writing: whole files appear at once. A regular target (or a new one) is written to a hidden
// temporary name in the target's folder and renamed over it when complete, so an interrupted
// run never leaves a partial file that looks complete. A target that is a symlink is written
// through the link (the link stays); a special file (/dev/stdout, a FIFO, a terminal) is
// written directly, never replaced.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace parity {

// Opens `path` for reading and returns the descriptor; messages start "failed to <action>: "
// (action: "load model 'm.onnx'", "read file in.json"). Throws Error when it does not exist, is a
// folder, a symlink loop, or not a regular file. `size` receives the file's size.
int open_regular_file(const std::string& path, std::string_view action, int64_t* size);

// The whole content of a regular file, at most `max_bytes` long.
std::string read_regular_file(const std::string& path, std::string_view action,
                              int64_t max_bytes = INT64_MAX);

// Writes `bytes` to `path` as described above; `what` names the file in messages.
void write_file_atomically(const std::string& path, std::string_view bytes,
                           std::string_view what = "file");

// The same, for content made piece by piece: `produce` is called once and hands each piece to
// the function it is given, so a large file is never held whole. Its exceptions abandon the
// temporary file and leave `path` as it was.
void write_file_atomically_streamed(
    const std::string& path,
    const std::function<void(const std::function<void(std::string_view)>&)>& produce,
    std::string_view what = "file");

// "a FIFO (named pipe)", "a character device", ... for a stat mode that is not a regular file.
std::string describe_file_type(unsigned mode);

}  // namespace parity
