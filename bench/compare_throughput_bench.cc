// Comparison throughput: bytes of both outputs compared per second, for float32 outputs of
// 16 MiB and 1 GiB, beside a plain copy of the same bytes (memcpy of both outputs, the memory
// bandwidth yardstick, on as many threads as the comparison). Compared:
//   CompareTensors         the fused pass of layer-wise runs (every metric, statistics only)
//   CompareTensorsProfile  the same with the report's histograms and heatmap
//   CompareFuncSimple      Polygraphy's CompareFunc.simple with its report lines (logging off):
//                          statistics, median and p90/p95/p99 of both outputs and both
//                          differences (one fused pass plus radix selection passes)
//   CompareFuncSimpleHalf  the same with out0 in float16 (bytes counted as for float32)
//
//   build/bench/compare_throughput_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "comparator/compare.h"
#include "comparator/tensor_error.h"
#include "core/logger.h"
#include "core/numeric.h"
#include "core/thread_pool.h"

namespace parity {
namespace {

// Two outputs that differ a little everywhere, built once per size and shared.
const std::pair<Tensor, Tensor>& outputs(int64_t bytes) {
  static std::map<int64_t, std::pair<Tensor, Tensor>> cache;
  auto it = cache.find(bytes);
  if (it != cache.end()) return it->second;
  const int64_t n = bytes / 4;
  Tensor a(DataType::kFloat32, {n / 1024, 1024}), b(DataType::kFloat32, {n / 1024, 1024});
  float* pa = a.data<float>();
  float* pb = b.data<float>();
  uint32_t state = 1;
  for (int64_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    const float x = static_cast<float>(state >> 8) / 16777216.0f - 0.5f;
    pa[i] = x;
    pb[i] = x * (1.0f + 1e-6f * static_cast<float>(state & 7));
  }
  return cache.emplace(bytes, std::make_pair(a, b)).first->second;
}

// Both outputs copied, split into pieces of 1 MiB shared by the threads (one thread: two plain
// memcpy calls' worth of work).
void BM_Copy(benchmark::State& state) {
  const auto& [a, b] = outputs(state.range(0));
  Tensor da(DataType::kFloat32, a.shape()), db(DataType::kFloat32, b.shape());
  set_num_threads(static_cast<int>(state.range(1)));
  constexpr int64_t kPiece = int64_t{1} << 20;
  const int64_t pieces = (a.nbytes() + kPiece - 1) / kPiece;
  const auto copy = [&] {
    parallel_for(2 * pieces, 1, [&](int64_t first, int64_t last) {
      for (int64_t p = first; p < last; ++p) {
        const Tensor& from = p < pieces ? a : b;
        Tensor& to = p < pieces ? da : db;
        const int64_t at = (p % pieces) * kPiece;
        const int64_t bytes = std::min<int64_t>(kPiece, from.nbytes() - at);
        std::memcpy(static_cast<char*>(to.raw_data()) + at,
                    static_cast<const char*>(from.raw_data()) + at, static_cast<size_t>(bytes));
      }
    });
  };
  copy();  // untimed: the destination's pages faulted in, so that the copy measures bandwidth
  for (auto _ : state) {
    copy();
    benchmark::ClobberMemory();
  }
  set_num_threads(0);
  state.SetBytesProcessed(state.iterations() * 2 * state.range(0));
}

void compare_tensors_bench(benchmark::State& state, bool profile) {
  const auto& [a, b] = outputs(state.range(0));
  set_num_threads(static_cast<int>(state.range(1)));
  TensorCompareOptions options;
  options.with_profile = profile;
  for (auto _ : state) {
    TensorErrorStats s = compare_tensors("out", a, b, options);
    benchmark::DoNotOptimize(s);
  }
  set_num_threads(0);
  state.SetBytesProcessed(state.iterations() * 2 * state.range(0));
}

void BM_CompareTensors(benchmark::State& state) { compare_tensors_bench(state, false); }
void BM_CompareTensorsProfile(benchmark::State& state) { compare_tensors_bench(state, true); }

// CompareFunc.simple on out0 against the float32 reference of this size.
void compare_func_simple_bench(benchmark::State& state, const Tensor& out0) {
  const Tensor& reference = outputs(state.range(0)).second;
  set_num_threads(static_cast<int>(state.range(1)));
  IterationResult r0{{}, std::nullopt, "r0", std::nullopt, ""},
      r1{{}, std::nullopt, "r1", std::nullopt, ""};
  r0.outputs.set("out", out0);
  r1.outputs.set("out", reference);
  const CompareFunc compare = compare_func::simple();
  const Severity previous = logger().severity();
  logger().set_severity(Severity::kCritical);
  for (auto _ : state) {
    IterationCompareResult r = compare(r0, r1);
    benchmark::DoNotOptimize(r);
  }
  logger().set_severity(previous);
  set_num_threads(0);
  state.SetBytesProcessed(state.iterations() * 2 * state.range(0));
}

void BM_CompareFuncSimple(benchmark::State& state) {
  compare_func_simple_bench(state, outputs(state.range(0)).first);
}

// A float16 output (an engine running in half precision) against the float32 reference: after
// Polygraphy's cast_up both are float32, so the float32 path runs with a conversion per block.
void BM_CompareFuncSimpleHalf(benchmark::State& state) {
  static std::map<int64_t, Tensor> halves;
  auto it = halves.find(state.range(0));
  if (it == halves.end())
    it =
        halves
            .emplace(state.range(0), cast_tensor(outputs(state.range(0)).first, DataType::kFloat16))
            .first;
  compare_func_simple_bench(state, it->second);
}

constexpr int64_t k16MiB = int64_t{16} << 20;
constexpr int64_t k1GiB = int64_t{1} << 30;

// Arguments: bytes of one output, threads.
BENCHMARK(BM_Copy)
    ->ArgsProduct({{k16MiB, k1GiB}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_CompareTensors)
    ->ArgsProduct({{k16MiB, k1GiB}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_CompareTensorsProfile)
    ->ArgsProduct({{k16MiB, k1GiB}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_CompareFuncSimple)
    ->ArgsProduct({{k16MiB, k1GiB}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_CompareFuncSimpleHalf)
    ->ArgsProduct({{k16MiB, k1GiB}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace parity

BENCHMARK_MAIN();
