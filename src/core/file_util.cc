#include "core/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.h"
#include "core/interrupt.h"
#include "core/large_buffer.h"

namespace parity {

namespace fs = std::filesystem;

std::string describe_file_type(unsigned mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

int open_regular_file(const std::string& path, std::string_view action, int64_t* size) {
  if (path.find('\0') != std::string::npos)
    fail("failed to {}: the path contains a NUL character", action);
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) fail("failed to {}: the file does not exist; check the path", action);
    if (err == ELOOP)
      fail("failed to {}: its path is a loop of symbolic links; point it at a file", action);
    fail("failed to {}: {}", action, std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    fail("failed to {}: {}", action, std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    if (S_ISDIR(st.st_mode)) fail("failed to {}: it is a folder; give the path of a file", action);
    fail(
        "failed to {}: it is {}, not a regular file; Parity reads only regular files "
        "(copy the data to a file first)",
        action, describe_file_type(st.st_mode));
  }
  // Regular files never block; reads go back to the ordinary blocking mode.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (size) *size = static_cast<int64_t>(st.st_size);
  return fd;
}

std::string read_regular_file(const std::string& path, std::string_view action, int64_t max_bytes) {
  int64_t size = 0;
  int fd = open_regular_file(path, action, &size);
  if (size > max_bytes) {
    ::close(fd);
    fail("failed to {}: it holds {} bytes, more than the limit of {}", action, size, max_bytes);
  }
  std::string bytes = large_zeroed_string(static_cast<size_t>(size));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      fail("failed to {}: {}", action, std::strerror(err));
    }
    if (n == 0) break;  // shrank while being read
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  bytes.resize(done);
  return bytes;
}

namespace {

void write_all(int fd, std::string_view bytes, std::string_view what) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("failed to write {}: {}", what, std::strerror(errno));
    done += static_cast<size_t>(n);
  }
}

}  // namespace

void write_file_atomically(const std::string& path, std::string_view bytes, std::string_view what) {
  write_file_atomically_streamed(
      path, [&](const std::function<void(std::string_view)>& write) { write(bytes); }, what);
}

void write_file_atomically_streamed(
    const std::string& path,
    const std::function<void(const std::function<void(std::string_view)>&)>& produce,
    std::string_view what) {
  const std::string named = fmt::format("{} '{}'", what, path);
  if (path.empty()) fail("failed to write {}: the path is empty; give a file path", what);
  if (path.find('\0') != std::string::npos)
    fail("failed to write {}: the path contains a NUL character", what);
  std::error_code ec;
  fs::path target(path);
  // What the path names once links are followed (the kernel follows /proc's magic links, such
  // as /dev/stdout -> /proc/self/fd/1 -> pipe:[...], which no path resolution can).
  fs::file_status st = fs::status(target, ec);
  if (ec == std::errc::too_many_symbolic_link_levels)
    fail("failed to write {}: its path is a loop of symbolic links", named);
  if (fs::is_directory(st))
    fail("failed to write {}: it is a folder; give the path of a file inside it", named);
  if (fs::exists(st) && !fs::is_regular_file(st)) {
    // /dev/stdout, a FIFO, a terminal: written to as it is, never replaced by a file.
    int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) fail("failed to write {}: {}", named, std::strerror(errno));
    try {
      produce([&](std::string_view bytes) { write_all(fd, bytes, named); });
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
    return;
  }
  if (fs::is_symlink(fs::symlink_status(target, ec))) {
    // A link to a regular file (or a dangling one): the file it points at is replaced, the
    // link stays.
    fs::path resolved = fs::weakly_canonical(target, ec);
    if (ec) fail("failed to write {}: the link cannot be followed: {}", named, ec.message());
    target = resolved;
  }
  // A hidden temporary name beside the target: the rename stays on one file system.
  static std::atomic<unsigned> counter{0};
  fs::path folder = target.parent_path();
  if (folder.empty()) folder = ".";
  if (!fs::is_directory(folder, ec))
    fail("failed to write {}: the folder '{}' does not exist; create it first", named,
         folder.string());
  const std::string tmp =
      (folder / fmt::format(".{}.tmp.{}.{}", target.filename().string(), ::getpid(), counter++))
          .string();
  TemporaryFileGuard removed_on_interrupt(tmp.c_str());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) fail("failed to write {}: {}", named, std::strerror(errno));
  try {
    produce([&](std::string_view bytes) { write_all(fd, bytes, named); });
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail("failed to write {}: {}", named, std::strerror(err));
  }
  // Keep the permissions of a file that is replaced.
  if (fs::exists(st)) ::chmod(tmp.c_str(), static_cast<mode_t>(st.permissions()));
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail("failed to write {}: {}", named, std::strerror(err));
  }
}

}  // namespace parity
