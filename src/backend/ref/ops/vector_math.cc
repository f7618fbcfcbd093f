// SLEEF's 1-ulp double functions behind one entry point per function, on the widest code path
// the CPU runs: AVX-512F and AVX2 in their own files (vector_math_isa.h), SSE2 (the x86-64
// baseline) here. Which path ran never shows in a result: vector_math.h's guard turns every
// SLEEF value into glibc's rounded value or recomputes it with glibc.
#include "backend/ref/ops/vector_math.h"

#include <sleef.h>

#include <atomic>
#include <iterator>
#include <numbers>

#include "backend/ref/ops/vector_math_isa.h"
#define PARITY_ISA_NS sse2
#include "backend/ref/ops/vector_math_kernels.h"

namespace parity::ref::vmath {
namespace {

using F2 = decltype(&Sleef_expd2_u10sse2);  // sleef.h marks its functions const
#define PARITY_ENTRY(name) Sleef_##name##d2_u10sse2,
const F2 kSse2[] = {PARITY_VMATH_FUNCTIONS(PARITY_ENTRY)};
#undef PARITY_ENTRY
static_assert(std::size(kSse2) == static_cast<size_t>(Fn::kAtanh) + 1);

void apply_sse2(int fn, const double* x, double* y, int64_t n) {
  const F2 f = kSse2[fn];
  int64_t i = 0;
  for (; i + 2 <= n; i += 2) _mm_storeu_pd(y + i, f(_mm_loadu_pd(x + i)));
  if (i < n) y[i] = _mm_cvtsd_f64(f(_mm_set_pd(isa::kPad, x[i])));
}

Isa detect() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return Isa::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::kAvx2;
  return Isa::kSse2;
}

Isa best_isa() {
  static const Isa best = detect();
  return best;
}

std::atomic<Isa> g_forced{Isa::kAuto};

}  // namespace

bool cpu_supports(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return best_isa() == Isa::kAvx512;
    case Isa::kAvx2:
      return best_isa() != Isa::kSse2;
    default:
      return true;
  }
}

void force_isa(Isa isa) {
  if (!cpu_supports(isa)) fail("this CPU cannot run the {} code path", isa_name(isa));
  g_forced.store(isa, std::memory_order_relaxed);
}

Isa active_isa() {
  const Isa forced = g_forced.load(std::memory_order_relaxed);
  return forced == Isa::kAuto ? best_isa() : forced;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return "avx512f";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kSse2:
      return "sse2";
    default:
      return "auto";
  }
}

namespace {
const isa::GuardKernels& guard_kernels() {
  switch (active_isa()) {
    case Isa::kAvx512:
      return isa::kernels_avx512;
    case Isa::kAvx2:
      return isa::kernels_avx2;
    default:
      return isa::kernels_sse2;
  }
}
}  // namespace

void apply(Fn f, const double* x, double* y, int64_t n) {
  if (f == Fn::kExp) return guard_kernels().exp(x, y, n);
  if (f == Fn::kTanh) return guard_kernels().tanh(x, y, n);
  if (f == Fn::kErf && guard_kernels().erf) return guard_kernels().erf(x, y, n);
  apply_sleef(f, x, y, n);
}

void apply_sleef(Fn f, const double* x, double* y, int64_t n) {
  const int fn = static_cast<int>(f);
  switch (active_isa()) {
    case Isa::kAvx512:
      return isa::apply_avx512(fn, x, y, n);
    case Isa::kAvx2:
      return isa::apply_avx2(fn, x, y, n);
    default:
      return apply_sse2(fn, x, y, n);
  }
}

void sigmoid(const double* x, double* y, int64_t n) { guard_kernels().sigmoid(x, y, n); }

void gelu(const double* x, double* y, int64_t n, bool tanh_form) {
  const isa::GuardKernels& k = guard_kernels();
  if (tanh_form) return k.gelu_tanh(x, y, n);
  if (k.gelu) return k.gelu(x, y, n);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] / std::numbers::sqrt2;
  apply_sleef(Fn::kErf, y, y, n);
  for (int64_t i = 0; i < n; ++i) y[i] = 0.5 * x[i] * (1.0 + y[i]);
}

void widen(const float* x, double* v, int64_t n) { guard_kernels().widen(x, v, n); }

void widen_shift(const float* x, double s, double* v, int64_t n) {
  guard_kernels().widen_shift(x, s, v, n);
}

bool narrow_checked(const double* r, const double* v, const LinearTol& tol, bool nonneg, float* y,
                    int64_t n) {
  return guard_kernels().narrow(r, v, tol.c, tol.a, tol.b, nonneg, y, n);
}

double max_or_nan(const float* x, int64_t n) { return guard_kernels().max(x, n); }

double unordered_sum(const double* v, int64_t n) { return guard_kernels().sum(v, n); }

double unordered_sum(const float* x, int64_t n, double* partials) {
  return guard_kernels().sum_f32(x, n, partials);
}

void apply_pow(const double* a, const double* b, double* y, int64_t n) {
  switch (active_isa()) {
    case Isa::kAvx512:
      return isa::pow_avx512(a, b, y, n);
    case Isa::kAvx2:
      return isa::pow_avx2(a, b, y, n);
    default: {
      int64_t i = 0;
      for (; i + 2 <= n; i += 2)
        _mm_storeu_pd(y + i, Sleef_powd2_u10sse2(_mm_loadu_pd(a + i), _mm_loadu_pd(b + i)));
      if (i < n)
        y[i] = _mm_cvtsd_f64(
            Sleef_powd2_u10sse2(_mm_set_pd(isa::kPad, a[i]), _mm_set_pd(isa::kPad, b[i])));
    }
  }
}

namespace isa {
const GuardKernels kernels_sse2 = sse2::kGuardKernels;
}  // namespace isa

}  // namespace parity::ref::vmath
