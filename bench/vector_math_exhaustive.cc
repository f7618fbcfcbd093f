// Every float32 input (all 2^32 bit patterns) through each transcendental op of the reference
// backend (the vector path with its guard, ops/vector_math.h) and through the old path (the
// spec formula with glibc's double functions, rounded once), counting the results whose bits
// differ (the goal, and the contract: 0).
//
// For the single functions it also counts where the vector function's own double result
// (SLEEF's, or for Exp and Tanh the kernels of vector_math_kernels.h), rounded to float without
// the guard, differs from glibc's, and for each of those asks MPFR (256 bits) which of the two
// is the correctly rounded float of the exact value: the evidence for the guard's choice of
// keeping glibc's bits. It also reports the largest distance between the vector function's
// double and glibc's, in ulps of glibc's, over the inputs where both are finite and not tiny:
// the guard assumes it is far below 256 (vmath::kRelTol).
//
//   vector_math_exhaustive [--seconds S] [--threads N] [--only Exp,Log,...] [--isa NAME]
//
// Each function gets S seconds (default 120) on N threads (default: the affinity mask); the
// 4096 blocks of 2^20 inputs are visited in a scattered order, so a function cut short has
// checked an even sample of the whole range, and the report says how much.
#include <mpfr.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <numbers>
#include <string>
#include <thread>
#include <vector>

#include "backend/ref/executor.h"
#include "backend/ref/ops/vector_math.h"
#include "core/thread_pool.h"
#include "onnx/model_io.h"
#include "support_models.h"

namespace parity::bench {
namespace {

using ref::vmath::Fn;

double softplus(double v) { return v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v)); }

using MpfrFn = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);

struct Function {
  const char* name;  // the op, or GeluTanh
  double (*old)(double);
  int raw = -1;            // the vmath::Fn of a single function, else -1
  MpfrFn exact = nullptr;  // its MPFR counterpart
};

#define SINGLE(Op, fn, F, m)                                               \
  Function {                                                               \
#Op, [](double v) { return std::fn(v); }, static_cast < int>(Fn::F), m \
  }
const Function kFunctions[] = {
    SINGLE(Exp, exp, kExp, mpfr_exp),
    SINGLE(Log, log, kLog, mpfr_log),
    SINGLE(Sin, sin, kSin, mpfr_sin),
    SINGLE(Cos, cos, kCos, mpfr_cos),
    SINGLE(Tan, tan, kTan, mpfr_tan),
    SINGLE(Asin, asin, kAsin, mpfr_asin),
    SINGLE(Acos, acos, kAcos, mpfr_acos),
    SINGLE(Atan, atan, kAtan, mpfr_atan),
    SINGLE(Sinh, sinh, kSinh, mpfr_sinh),
    SINGLE(Cosh, cosh, kCosh, mpfr_cosh),
    SINGLE(Asinh, asinh, kAsinh, mpfr_asinh),
    SINGLE(Acosh, acosh, kAcosh, mpfr_acosh),
    SINGLE(Atanh, atanh, kAtanh, mpfr_atanh),
    SINGLE(Tanh, tanh, kTanh, mpfr_tanh),
    SINGLE(Erf, erf, kErf, mpfr_erf),
    Function{"Sigmoid", [](double v) { return 1.0 / (1.0 + std::exp(-v)); }},
    Function{"Softplus", [](double v) { return softplus(v); }},
    Function{"Mish", [](double v) { return v * std::tanh(softplus(v)); }},
    Function{"Gelu", [](double v) { return 0.5 * v * (1.0 + std::erf(v / std::numbers::sqrt2)); }},
    Function{"GeluTanh",
             [](double v) {
               const double k = std::sqrt(2.0 / std::numbers::pi);
               return 0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v)));
             }},
};
#undef SINGLE

constexpr int64_t kBlock = int64_t{1} << 20;
constexpr int64_t kBlocks = (int64_t{1} << 32) / kBlock;

uint32_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// The correctly rounded float of fn(x), from 256 bits.
float correctly_rounded(MpfrFn fn, float x) {
  mpfr_t a, r;
  mpfr_inits2(256, a, r, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_flt(a, x, MPFR_RNDN);
  fn(r, a, MPFR_RNDN);
  const float f = mpfr_get_flt(r, MPFR_RNDN);
  mpfr_clears(a, r, static_cast<mpfr_ptr>(nullptr));
  return f;
}

struct Counts {
  int64_t checked = 0, differ = 0, raw_differ = 0, raw_glibc_right = 0, raw_vector_right = 0;
  int64_t declined = 0;  // NaN from the vector function where glibc gives a number
  double max_ulps = 0;
  std::vector<std::string> examples;
};

Counts check(const Function& f, double seconds, int threads) {
  const std::string op = std::string(f.name) == "GeluTanh" ? "Gelu" : f.name;
  std::vector<std::pair<std::string, std::string>> attrs;
  if (std::string(f.name) == "GeluTanh") attrs.push_back({"approximate", "tanh"});
  const int opset = op == "Gelu" ? 20 : (op == "Mish" ? 18 : 13);
  const std::string model = single_op_model_bytes(op, {kBlock}, opset, 1, attrs);
  const auto start = std::chrono::steady_clock::now();
  std::atomic<int64_t> next{0};
  Counts total;
  std::mutex mutex;
  auto worker = [&] {
    ref::Executor exec(onnx_io::load_model_from_bytes(model));
    Tensor x(DataType::kFloat32, {kBlock});
    std::vector<double> wide(kBlock), raw(kBlock);
    Counts c;
    for (;;) {
      const int64_t k = next.fetch_add(1);
      if (k >= kBlocks) break;
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > seconds)
        break;
      // Block k of a scattered order (an odd stride is a permutation of 0..4095).
      const uint64_t block = static_cast<uint64_t>(k * 2654435761LL) % kBlocks;
      float* xs = x.data<float>();
      for (int64_t i = 0; i < kBlock; ++i)
        xs[i] = from_bits(static_cast<uint32_t>(block * kBlock + i));
      TensorMap feed;
      feed.set("x0", x);
      const Tensor y = exec.run(feed).at("y");
      const float* ys = y.data<float>();
      if (f.raw >= 0) {
        for (int64_t i = 0; i < kBlock; ++i) wide[i] = xs[i];
        ref::vmath::apply(static_cast<Fn>(f.raw), wide.data(), raw.data(), kBlock);
      }
      for (int64_t i = 0; i < kBlock; ++i) {
        const float old = static_cast<float>(f.old(static_cast<double>(xs[i])));
        if (bits(ys[i]) != bits(old)) {
          ++c.differ;
          if (c.examples.size() < 3)
            c.examples.push_back("x=" + std::to_string(xs[i]) + " new=" + std::to_string(ys[i]) +
                                 " old=" + std::to_string(old));
        }
        if (f.raw < 0) continue;
        const double g = f.old(static_cast<double>(xs[i]));
        if (std::isfinite(g) && std::isfinite(raw[i]) && std::fabs(g) >= ref::vmath::kTiny) {
          const double ulp = std::nextafter(std::fabs(g), INFINITY) - std::fabs(g);
          c.max_ulps = std::max(c.max_ulps, std::fabs(raw[i] - g) / ulp);
        }
        const float vec = static_cast<float>(raw[i]);
        // NaNs differ only in payload here; the guard recomputes every NaN with glibc. A NaN
        // for a number is the kernel declining an input outside its range (exp above 708).
        if (std::isnan(vec) && !std::isnan(old)) ++c.declined;
        if (bits(vec) == bits(old) || std::isnan(vec)) continue;
        ++c.raw_differ;
        const float right = correctly_rounded(f.exact, xs[i]);
        c.raw_glibc_right += bits(right) == bits(old);
        c.raw_vector_right += bits(right) == bits(vec);
      }
      c.checked += kBlock;
    }
    std::lock_guard lock(mutex);
    total.checked += c.checked;
    total.differ += c.differ;
    total.raw_differ += c.raw_differ;
    total.raw_glibc_right += c.raw_glibc_right;
    total.raw_vector_right += c.raw_vector_right;
    total.max_ulps = std::max(total.max_ulps, c.max_ulps);
    total.declined += c.declined;
    for (auto& e : c.examples)
      if (total.examples.size() < 3) total.examples.push_back(e);
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  return total;
}

int affinity_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

// The whole of `text` as a number, or NaN ("8x" and "" are not numbers).
double number_or_nan(const char* text) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  return end != text && *end == '\0' ? v : std::nan("");
}

int main_impl(int argc, char** argv) {
  double seconds = 120;
  int threads = affinity_cpus();
  std::string only;
  for (int i = 1; i < argc; i += 2) {
    const std::string a = argv[i];
    const bool known = a == "--seconds" || a == "--threads" || a == "--only" || a == "--isa";
    if (known && i + 1 == argc) {
      std::fprintf(stderr, "option '%s' needs a value\n", a.c_str());
      return 2;
    }
    const double v = number_or_nan(argv[i + 1]);
    if (a == "--seconds") {
      if (!(v > 0)) {
        std::fprintf(stderr, "--seconds is '%s'; it must be a positive number\n", argv[i + 1]);
        return 2;
      }
      seconds = v;
    } else if (a == "--threads") {
      if (!(v >= 1 && v <= 1024 && v == std::floor(v))) {
        std::fprintf(stderr, "--threads is '%s'; it must be an integer in [1, 1024]\n",
                     argv[i + 1]);
        return 2;
      }
      threads = int(v);
    } else if (a == "--only") {
      only = "," + std::string(argv[i + 1]) + ",";
    } else if (a == "--isa") {
      const std::string n = argv[i + 1];
      if (n != "sse2" && n != "avx2" && n != "avx512f" && n != "auto") {
        std::fprintf(stderr, "--isa is '%s'; valid: sse2, avx2, avx512f, auto\n", n.c_str());
        return 2;
      }
      ref::vmath::force_isa(n == "sse2"      ? ref::vmath::Isa::kSse2
                            : n == "avx2"    ? ref::vmath::Isa::kAvx2
                            : n == "avx512f" ? ref::vmath::Isa::kAvx512
                                             : ref::vmath::Isa::kAuto);
    } else {
      std::fprintf(stderr, "unknown option '%s'; valid: --seconds, --threads, --only, --isa\n",
                   a.c_str());
      return 2;
    }
  }
  set_num_threads(1);  // the tool's own threads split the inputs
  std::printf("code path %s, %d threads, %.0f s per function at most\n",
              ref::vmath::isa_name(ref::vmath::active_isa()), threads, seconds);
  std::printf(
      "| function | inputs checked | new != old | vector alone != glibc | of those, glibc "
      "correctly rounded | vector correctly rounded | largest vector - glibc, double ulps "
      "| declined (NaN), glibc's |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
  int status = 0;
  for (const Function& f : kFunctions) {
    if (!only.empty() && only.find("," + std::string(f.name) + ",") == std::string::npos) continue;
    const Counts c = check(f, seconds, threads);
    const double pct = 100.0 * static_cast<double>(c.checked) / 4294967296.0;
    if (f.raw >= 0)
      std::printf("| %s | %lld (%.1f%%) | %lld | %lld | %lld | %lld | %.2f | %lld |\n", f.name,
                  static_cast<long long>(c.checked), pct, static_cast<long long>(c.differ),
                  static_cast<long long>(c.raw_differ), static_cast<long long>(c.raw_glibc_right),
                  static_cast<long long>(c.raw_vector_right), c.max_ulps,
                  static_cast<long long>(c.declined));
    else
      std::printf("| %s | %lld (%.1f%%) | %lld | | | | | |\n", f.name,
                  static_cast<long long>(c.checked), pct, static_cast<long long>(c.differ));
    for (const auto& e : c.examples) std::printf("  differs: %s\n", e.c_str());
    std::fflush(stdout);
    if (c.differ) status = 1;
  }
  return status;
}

}  // namespace
}  // namespace parity::bench

int main(int argc, char** argv) { return parity::bench::main_impl(argc, argv); }
