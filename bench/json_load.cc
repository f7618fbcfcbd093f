// Loading Polygraphy's JSON results files: throughput against reading the same file and a
// memcpy of its decoded bytes (the yardsticks, run side by side), and the peak memory of a load
// against the decoded arrays' size. Results in bench/README.md.
//
//   build/bench/json_load [--mib 256] [--rounds 5]
//
// The file holds two runners' results of one iteration, each one float32 output of MIB/2 MiB,
// written by Parity's own writer (Polygraphy's encoding: base64 of .npy files).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "comparator/struct.h"
#include "io/json.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// The peak resident memory that one load adds, measured in a child process so that each
// measurement starts from the same high-water mark.
long load_peak_kib(const std::string& path) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(pipe_fds[0]);
    const long before = peak_rss_kib();
    parity::RunResults loaded = parity::io::load_run_results(path);
    const long delta = peak_rss_kib() - before;
    if (write(pipe_fds[1], &delta, sizeof delta) != sizeof delta) _exit(1);
    _exit(loaded.size() == 2 ? 0 : 1);
  }
  close(pipe_fds[1]);
  long delta = -1;
  if (read(pipe_fds[0], &delta, sizeof delta) != sizeof delta) delta = -1;
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? delta : -1;
}

}  // namespace

int main(int argc, char** argv) {
  size_t mib = 256;
  int rounds = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--mib") == 0) mib = std::stoul(argv[i + 1]);
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::stoi(argv[i + 1]);
  }
  const int64_t per_runner = static_cast<int64_t>(mib) * (1 << 20) / 2 / 4;  // float32s

  parity::RunResults results;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (const char* runner : {"onnxrt-runner-N0", "pluginref-runner-N0"}) {
    parity::IterationResult it;
    it.runner_name = runner;
    parity::Tensor y(parity::DataType::kFloat32, {per_runner});
    float* data = y.data<float>();
    for (int64_t i = 0; i < per_runner; ++i) data[i] = uniform(rng);
    it.outputs.set("y", std::move(y));
    results.add({std::move(it)}, runner);
  }
  const std::string path =
      (std::filesystem::temp_directory_path() / "parity_json_load_bench.json").string();
  parity::io::save_run_results(path, results);
  results = {};
  const double file_mb = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
  const double decoded_mb = static_cast<double>(mib) * (1 << 20) / 1e6;

  std::vector<double> load, read, copy;
  std::vector<char> from(static_cast<size_t>(decoded_mb * 1e6)), to(from.size());
  std::memset(from.data(), 1, from.size());
  std::memset(to.data(), 2, to.size());
  for (int r = 0; r < rounds; ++r) {
    auto start = Clock::now();
    parity::RunResults loaded = parity::io::load_run_results(path);
    load.push_back(seconds_since(start));
    start = Clock::now();
    std::string text = parity::io::read_file(path);
    read.push_back(seconds_since(start));
    start = Clock::now();
    std::memcpy(to.data(), from.data(), from.size());
    copy.push_back(seconds_since(start));
    if (loaded.size() != 2 || text.empty() || to[to.size() / 2] != 1) return 1;
  }
  const long peak = load_peak_kib(path);
  std::filesystem::remove(path);

  std::printf("file %.0f MB (%.0f MB of float32 data), median of %d rounds\n", file_mb, decoded_mb,
              rounds);
  std::printf("load_run_results  %7.3f s  %7.0f MB/s of file\n", median(load),
              file_mb / median(load));
  std::printf("read_file         %7.3f s  %7.0f MB/s  (load / read %.1fx)\n", median(read),
              file_mb / median(read), median(load) / median(read));
  std::printf("memcpy of data    %7.3f s  %7.0f MB/s  (load / memcpy %.1fx)\n", median(copy),
              decoded_mb / median(copy), median(load) / median(copy));
  std::printf("peak memory of a load: %.0f MB = %.2fx the decoded arrays\n", peak * 1024 / 1e6,
              peak * 1024 / 1e6 / decoded_mb);
  return 0;
}
