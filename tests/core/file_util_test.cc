// Reading only regular files and writing whole files (core/file_util.h): a FIFO or a device
// given as input is refused at once instead of blocking or reading for ever; a written file
// appears whole under its name, symlinks and special files are written through, never
// replaced, and no temporary file is left behind.
#include "core/file_util.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/error.h"
#include "support/test_util.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

template <typename F>
std::string error_of(F&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(FileUtil, ReadsARegularFileWhole) {
  TempDir dir;
  std::ofstream(dir.file("a.txt")) << "hello";
  EXPECT_EQ(read_regular_file(dir.file("a.txt"), "read a"), "hello");
  std::string m = error_of([&] { read_regular_file(dir.file("a.txt"), "read a", 4); });
  EXPECT_NE(m.find("failed to read a: it holds 5 bytes, more than the limit of 4"),
            std::string::npos)
      << m;
}

TEST(FileUtil, RefusesAFifoWithoutBlocking) {
  TempDir dir;
  const std::string fifo = dir.file("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // No writer ever opens it: a blocking open would never return.
  std::string m = error_of([&] { read_regular_file(fifo, "load model 'pipe'"); });
  EXPECT_EQ(m,
            "failed to load model 'pipe': it is a FIFO (named pipe), not a regular file; "
            "Parity reads only regular files (copy the data to a file first)");
}

TEST(FileUtil, RefusesDevicesFoldersLoopsAndMissingFiles) {
  std::string m = error_of([] { read_regular_file("/dev/zero", "read file /dev/zero"); });
  EXPECT_NE(m.find("failed to read file /dev/zero: it is a character device, not a regular file"),
            std::string::npos)
      << m;
  TempDir dir;
  m = error_of([&] { read_regular_file(dir.path().string(), "read x"); });
  EXPECT_EQ(m, "failed to read x: it is a folder; give the path of a file");
  fs::create_symlink(dir.file("b"), dir.file("a"));
  fs::create_symlink(dir.file("a"), dir.file("b"));
  m = error_of([&] { read_regular_file(dir.file("a"), "read a"); });
  EXPECT_EQ(m, "failed to read a: its path is a loop of symbolic links; point it at a file");
  m = error_of([&] { read_regular_file(dir.file("missing"), "read missing"); });
  EXPECT_EQ(m, "failed to read missing: the file does not exist; check the path");
}

TEST(FileUtil, WritesWholeFilesAndLeavesNoTemporaryBehind) {
  TempDir dir;
  const std::string path = dir.file("out.json");
  write_file_atomically(path, "first");
  write_file_atomically(path, "second");
  EXPECT_EQ(slurp(path), "second");
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) entries += e.exists() ? 1 : 0;
  EXPECT_EQ(entries, 1u) << "a temporary file was left in the folder";
}

TEST(FileUtil, WritesThroughASymlinkAndKeepsIt) {
  TempDir dir;
  std::ofstream(dir.file("real.json")) << "old";
  fs::create_symlink(dir.file("real.json"), dir.file("link.json"));
  write_file_atomically(dir.file("link.json"), "new");
  EXPECT_TRUE(fs::is_symlink(dir.file("link.json")));
  EXPECT_EQ(slurp(dir.file("real.json")), "new");
}

TEST(FileUtil, WritesIntoSpecialFilesWithoutReplacingThem) {
  write_file_atomically("/dev/null", "discarded");
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  TempDir dir;
  const std::string fifo = dir.file("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = slurp(fifo); });
  write_file_atomically(fifo, "through the pipe");
  reader.join();
  EXPECT_EQ(received, "through the pipe");
  EXPECT_TRUE(fs::is_fifo(fifo)) << "the FIFO was replaced by a regular file";
}

TEST(FileUtil, WritingToAFolderSaysSo) {
  TempDir dir;
  std::string m = error_of([&] { write_file_atomically(dir.path().string(), "x", "file"); });
  EXPECT_NE(m.find("it is a folder; give the path of a file inside it"), std::string::npos) << m;
  m = error_of([] { write_file_atomically(".", "x", "file"); });
  EXPECT_EQ(m, "failed to write file '.': it is a folder; give the path of a file inside it");
  m = error_of([&] { write_file_atomically(dir.file("no/such/folder/x.json"), "x", "file"); });
  EXPECT_NE(m.find("the folder '" + dir.file("no/such/folder") + "' does not exist"),
            std::string::npos)
      << m;
}

}  // namespace
}  // namespace parity
