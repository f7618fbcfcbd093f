// SLEEF's AVX-512F functions (compiled with -mavx512f; run only where the CPU has it).
#include <sleef.h>

#include "backend/ref/ops/vector_math_isa.h"
#define PARITY_ISA_NS avx512
#include "backend/ref/ops/vector_math_kernels.h"

namespace parity::ref::vmath::isa {
namespace {
using F8 = decltype(&Sleef_expd8_u10avx512f);  // sleef.h marks its functions const
#define PARITY_ENTRY(name) Sleef_##name##d8_u10avx512f,
const F8 kFunctions[] = {PARITY_VMATH_FUNCTIONS(PARITY_ENTRY)};
#undef PARITY_ENTRY
}  // namespace

void apply_avx512(int fn, const double* x, double* y, int64_t n) {
  const F8 f = kFunctions[fn];
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm512_storeu_pd(y + i, f(_mm512_loadu_pd(x + i)));
  if (i == n) return;
  double buf[8];
  for (int64_t k = 0; k < 8; ++k) buf[k] = i + k < n ? x[i + k] : kPad;
  _mm512_storeu_pd(buf, f(_mm512_loadu_pd(buf)));
  for (int64_t k = 0; i + k < n; ++k) y[i + k] = buf[k];
}

void pow_avx512(const double* a, const double* b, double* y, int64_t n) {
  for (int64_t i = 0; i < n; i += 8) {
    double ba[8], bb[8], by[8];
    const int64_t len = n - i < 8 ? n - i : 8;
    for (int64_t k = 0; k < 8; ++k) {
      ba[k] = k < len ? a[i + k] : kPad;
      bb[k] = k < len ? b[i + k] : kPad;
    }
    _mm512_storeu_pd(by, Sleef_powd8_u10avx512f(_mm512_loadu_pd(ba), _mm512_loadu_pd(bb)));
    for (int64_t k = 0; k < len; ++k) y[i + k] = by[k];
  }
}

const GuardKernels kernels_avx512 = avx512::kGuardKernels;

}  // namespace parity::ref::vmath::isa
