#include "fuzz/fuzz_util.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/limits.h"

namespace parity::fuzz {

const std::string& external_data_folder() {
  static const std::string folder = [] {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("parity-fuzz-" + std::to_string(::getpid()));
    fs::create_directories(dir / "sub");
    std::ofstream(dir / "w.bin", std::ios::binary) << std::string(4096, '\x3f');
    std::ofstream(dir / "sub" / "x.bin", std::ios::binary) << std::string(256, '\x01');
    return dir.string();
  }();
  return folder;
}

void use_small_limits() {
  ResourceLimits& l = default_limits();
  l.max_tensor_elements = 1 << 20;
  l.max_memory_bytes = int64_t{256} << 20;
  l.max_loop_iterations = 64;
  l.max_run_seconds = 2;
}

}  // namespace parity::fuzz
