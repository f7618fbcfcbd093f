// The reference backend's vector exp, tanh and erf (ops/vector_math_kernels.h; erf only on
// AVX-512) against SLEEF's 1-ulp functions they replaced and glibc's scalar loop, on one guard
// block (256 doubles, in L1) of inputs in (-8, 8), on the code path this CPU runs. Results in
// bench/README.md.
#include <benchmark/benchmark.h>

#include <cmath>
#include <vector>

#include "backend/ref/ops/vector_math.h"

namespace {

using parity::ref::vmath::Fn;

std::vector<double> inputs() {
  std::vector<double> x(parity::ref::vmath::kBlock);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -8.0 + 16.0 * static_cast<double>(i) / x.size();
  return x;
}

template <typename F>
void run(benchmark::State& state, F f) {
  const std::vector<double> x = inputs();
  std::vector<double> y(x.size());
  for (auto _ : state) {
    f(x.data(), y.data(), static_cast<int64_t>(x.size()));
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(x.size()));
}

void glibc(double (*fn)(double), const double* x, double* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = fn(x[i]);
}

void BM_ExpKernel(benchmark::State& s) {
  run(s,
      [](const double* x, double* y, int64_t n) { parity::ref::vmath::apply(Fn::kExp, x, y, n); });
}
void BM_ExpSleef(benchmark::State& s) {
  run(s, [](const double* x, double* y, int64_t n) {
    parity::ref::vmath::apply_sleef(Fn::kExp, x, y, n);
  });
}
void BM_ExpGlibc(benchmark::State& s) {
  run(s, [](const double* x, double* y, int64_t n) { glibc(std::exp, x, y, n); });
}
void BM_TanhKernel(benchmark::State& s) {
  run(s,
      [](const double* x, double* y, int64_t n) { parity::ref::vmath::apply(Fn::kTanh, x, y, n); });
}
void BM_TanhSleef(benchmark::State& s) {
  run(s, [](const double* x, double* y, int64_t n) {
    parity::ref::vmath::apply_sleef(Fn::kTanh, x, y, n);
  });
}
void BM_TanhGlibc(benchmark::State& s) {
  run(s, [](const double* x, double* y, int64_t n) { glibc(std::tanh, x, y, n); });
}
void BM_ErfKernel(benchmark::State& s) {
  run(s,
      [](const double* x, double* y, int64_t n) { parity::ref::vmath::apply(Fn::kErf, x, y, n); });
}
void BM_ErfSleef(benchmark::State& s) {
  run(s, [](const double* x, double* y, int64_t n) {
    parity::ref::vmath::apply_sleef(Fn::kErf, x, y, n);
  });
}
void BM_ErfGlibc(benchmark::State& s) {
  run(s, [](const double* x, double* y, int64_t n) { glibc(std::erf, x, y, n); });
}
BENCHMARK(BM_ExpKernel);
BENCHMARK(BM_ExpSleef);
BENCHMARK(BM_ExpGlibc);
BENCHMARK(BM_TanhKernel);
BENCHMARK(BM_TanhSleef);
BENCHMARK(BM_TanhGlibc);
BENCHMARK(BM_ErfKernel);
BENCHMARK(BM_ErfSleef);
BENCHMARK(BM_ErfGlibc);

}  // namespace

BENCHMARK_MAIN();
