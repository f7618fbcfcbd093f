// InstanceNormalization on float32 [8,64,128,128] in the reference backend, beside a plain
// copy of the same bytes: the memory-bandwidth yardstick. A memory-bound kernel reads its
// input at least twice (statistics, then normalisation) and writes its output once, so about
// 1.5x the copy is the floor; the target is within 3x.
//
//   build/bench/ref_instancenorm_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>

#include "backend/ref/runner.h"
#include "core/thread_pool.h"
#include "onnx/model_io.h"
#include "support_models.h"

namespace parity {
namespace {

const Shape kShape{8, 64, 128, 128};

Tensor random_tensor(const Shape& shape) {
  Tensor t(DataType::kFloat32, shape);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
  return t;
}

void BM_MemcpyYardstick(benchmark::State& state) {
  Tensor src = random_tensor(kShape);
  Tensor dst(DataType::kFloat32, kShape);
  for (auto _ : state) {
    std::memcpy(dst.raw_data(), src.raw_data(), src.nbytes());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * src.nbytes()));
}

void BM_InstanceNormalization(benchmark::State& state) {
  set_num_threads(static_cast<int>(state.range(0)));
  auto model = onnx_io::load_model_from_bytes(bench::instance_norm_model_bytes(kShape));
  PluginRefRunner runner{Loader<ModelPtr>(model)};
  RunnerActivation active(runner);
  TensorMap feed;
  feed.set("x", random_tensor(kShape));
  feed.set("scale", random_tensor({kShape[1]}));
  feed.set("bias", random_tensor({kShape[1]}));
  for (auto _ : state) {
    TensorMap out = runner.infer(feed);
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * feed.at("x").nbytes()));
  set_num_threads(0);
}

BENCHMARK(BM_MemcpyYardstick)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_InstanceNormalization)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace parity

BENCHMARK_MAIN();
