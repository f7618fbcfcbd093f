// SLEEF's AVX2 functions (compiled with -mavx2 -mfma; run only where the CPU has it).
#include <sleef.h>

#include "backend/ref/ops/vector_math_isa.h"
#define PARITY_ISA_NS avx2
#include "backend/ref/ops/vector_math_kernels.h"

namespace parity::ref::vmath::isa {
namespace {
using F4 = decltype(&Sleef_expd4_u10avx2);  // sleef.h marks its functions const
#define PARITY_ENTRY(name) Sleef_##name##d4_u10avx2,
const F4 kFunctions[] = {PARITY_VMATH_FUNCTIONS(PARITY_ENTRY)};
#undef PARITY_ENTRY
}  // namespace

void apply_avx2(int fn, const double* x, double* y, int64_t n) {
  const F4 f = kFunctions[fn];
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) _mm256_storeu_pd(y + i, f(_mm256_loadu_pd(x + i)));
  if (i == n) return;
  double buf[4];
  for (int64_t k = 0; k < 4; ++k) buf[k] = i + k < n ? x[i + k] : kPad;
  _mm256_storeu_pd(buf, f(_mm256_loadu_pd(buf)));
  for (int64_t k = 0; i + k < n; ++k) y[i + k] = buf[k];
}

void pow_avx2(const double* a, const double* b, double* y, int64_t n) {
  for (int64_t i = 0; i < n; i += 4) {
    double ba[4], bb[4], by[4];
    const int64_t len = n - i < 4 ? n - i : 4;
    for (int64_t k = 0; k < 4; ++k) {
      ba[k] = k < len ? a[i + k] : kPad;
      bb[k] = k < len ? b[i + k] : kPad;
    }
    _mm256_storeu_pd(by, Sleef_powd4_u10avx2(_mm256_loadu_pd(ba), _mm256_loadu_pd(bb)));
    for (int64_t k = 0; k < len; ++k) y[i + k] = by[k];
  }
}

const GuardKernels kernels_avx2 = avx2::kGuardKernels;

}  // namespace parity::ref::vmath::isa
