// The reference backend's vector exp, tanh and erf (ops/vector_math_kernels.h; erf only on
// AVX-512) against SLEEF's 1-ulp functions they replaced and glibc's scalar loop, on one guard
// block (256 doubles, in L1) of inputs in (-8, 8), on the code path this CPU runs. Results in
// bench/README.md.
#include <benchmark/benchmark.h>

#include <cmath>
#include <string>
#include <vector>

#include "backend/ref/ops/vector_math.h"

namespace {

using parity::ref::vmath::Fn;

struct Function {
  const char* name;
  Fn fn;
  double (*glibc)(double);
};
const Function kFunctions[] = {
    {"Exp", Fn::kExp, [](double v) { return std::exp(v); }},
    {"Tanh", Fn::kTanh, [](double v) { return std::tanh(v); }},
    {"Erf", Fn::kErf, [](double v) { return std::erf(v); }},
};

// Times f(x, y, n) on one block.
template <typename F>
void run(benchmark::State& state, F f) {
  std::vector<double> x(parity::ref::vmath::kBlock), y(x.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = -8.0 + 16.0 * static_cast<double>(i) / x.size();
  for (auto _ : state) {
    f(x.data(), y.data(), static_cast<int64_t>(x.size()));
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(x.size()));
}

}  // namespace

int main(int argc, char** argv) {
  namespace vmath = parity::ref::vmath;
  for (const Function& f : kFunctions) {
    const std::string name = f.name;
    benchmark::RegisterBenchmark((name + "/kernel").c_str(), [f](benchmark::State& s) {
      run(s, [&](const double* x, double* y, int64_t n) { vmath::apply(f.fn, x, y, n); });
    });
    benchmark::RegisterBenchmark((name + "/sleef").c_str(), [f](benchmark::State& s) {
      run(s, [&](const double* x, double* y, int64_t n) { vmath::apply_sleef(f.fn, x, y, n); });
    });
    benchmark::RegisterBenchmark((name + "/glibc").c_str(), [f](benchmark::State& s) {
      run(s, [&](const double* x, double* y, int64_t n) {
        for (int64_t i = 0; i < n; ++i) y[i] = f.glibc(x[i]);
      });
    });
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
