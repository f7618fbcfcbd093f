// The reference backend against ONNX Runtime on generated networks, one backend per process
// so each process's peak memory is its own. bench/ref_vs_ort.sh runs the ResNet-18-style and
// transformer pairs; bench/model_table.sh runs the model-zoo architectures (issue #14).
//
//   ref_vs_ort --model NAME --runner ref|ort [--threads N] [--iterations K]
//   ref_vs_ort --model NAME --save NAME.onnx        (writes the generated model)
//
// Prints one line: "<model> <runner> threads=N median_ms=... cpu_ms=... peak_rss_mb=...";
// cpu_ms is the process's user + system CPU time per timed iteration (their mean), which a
// loaded machine disturbs less than wall time.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "backend/onnxrt/runner.h"
#include "backend/ref/runner.h"
#include "core/logger.h"
#include "core/thread_pool.h"
#include "network_models.h"
#include "onnx/model_io.h"
#include "zoo_models.h"

using namespace parity;

namespace {

struct ModelEntry {
  const char* name;
  std::string (*bytes)();
  Shape input_shape;
};

const Shape kImage = {1, 3, 224, 224};
const ModelEntry kModels[] = {
    {"resnet", bench::resnet_style_model_bytes, kImage},
    {"transformer", bench::transformer_block_model_bytes, {1, 128, 768}},
    {"resnet50", bench::resnet50_model_bytes, kImage},
    {"densenet121", bench::densenet121_model_bytes, kImage},
    {"inception_v1", bench::inception_v1_model_bytes, kImage},
    {"inception_v2", bench::inception_v2_model_bytes, kImage},
    {"squeezenet1.1", bench::squeezenet11_model_bytes, kImage},
    {"shufflenet_v1", bench::shufflenet_v1_model_bytes, kImage},
    {"vgg19", bench::vgg19_model_bytes, kImage},
    {"alexnet", bench::alexnet_model_bytes, kImage},
    {"zfnet512", bench::zfnet512_model_bytes, kImage},
    {"lstm", bench::lstm_model_bytes, {32, 1, 256}},
};

double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

Tensor random_input(const Shape& shape) {
  Tensor t(DataType::kFloat32, shape);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(0.0f, 1.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

int usage() {
  std::string names;
  for (const ModelEntry& m : kModels) names += (names.empty() ? "" : "|") + std::string(m.name);
  std::fprintf(stderr,
               "usage: ref_vs_ort --model %s (--runner ref|ort [--threads N] [--iterations K] | "
               "--save PATH)\n",
               names.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_name, runner_name, save_path;
  int threads = 1, iterations = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--model")
      model_name = value;
    else if (flag == "--runner")
      runner_name = value;
    else if (flag == "--threads")
      threads = std::stoi(value);
    else if (flag == "--iterations")
      iterations = std::stoi(value);
    else if (flag == "--save")
      save_path = value;
    else
      return usage();
  }
  const ModelEntry* entry = nullptr;
  for (const ModelEntry& m : kModels)
    if (model_name == m.name) entry = &m;
  if (entry == nullptr) return usage();
  std::string bytes = entry->bytes();
  const Shape& input_shape = entry->input_shape;
  if (!save_path.empty()) {
    std::ofstream(save_path, std::ios::binary) << bytes;
    return 0;
  }
  if (runner_name != "ref" && runner_name != "ort") return usage();

  logger().set_severity(Severity::kWarning);
  try {
    auto model = onnx_io::load_model_from_bytes(bytes);
    bytes.clear();
    bytes.shrink_to_fit();
    std::unique_ptr<Runner> runner;
    if (runner_name == "ref") {
      set_num_threads(threads);
      runner = std::make_unique<PluginRefRunner>(Loader<ModelPtr>(model));
    } else {
      OrtOptions options;
      options.intra_op_threads = threads;
      runner = make_onnxrt_runner(Loader<ModelPtr>(model), options);
    }
    RunnerActivation active(*runner);
    TensorMap feed;
    feed.set(runner->input_metadata()[0].name, random_input(input_shape));
    runner->infer(feed);  // warm-up
    std::vector<double> ms;
    const double cpu_start = cpu_seconds();
    for (int i = 0; i < iterations; ++i) {
      auto start = std::chrono::steady_clock::now();
      runner->infer(feed);
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
    }
    const double cpu_ms = (cpu_seconds() - cpu_start) * 1e3 / iterations;
    std::sort(ms.begin(), ms.end());
    std::printf("%s %s threads=%d median_ms=%.2f cpu_ms=%.2f peak_rss_mb=%.1f\n",
                model_name.c_str(), runner_name.c_str(), threads, ms[ms.size() / 2], cpu_ms,
                peak_rss_mb());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ref_vs_ort: %s\n", e.what());
    return 1;
  }
  return 0;
}
