// The SLEEF entry points of one instruction set, each in its own file compiled for that set
// (vector_math_avx2.cc, vector_math_avx512.cc): sleef.h declares them only under the compiler
// flags of their set, and only those files may carry instructions the baseline CPU lacks.
// Include only <cstdint> here, so no inline function of a shared header is compiled with them.
#pragma once

#include <cstdint>

// The functions of vmath::Fn, in its order, as SLEEF names them. (clang-format does not settle
// on one layout for this list.)
// clang-format off
#define PARITY_VMATH_FUNCTIONS(X) \
  X(exp) X(expm1) X(log) X(log1p) X(tanh) X(erf) X(sin) X(cos) X(tan) X(asin) X(acos) X(atan) \
  X(sinh) X(cosh) X(asinh) X(acosh) X(atanh)
// clang-format on

namespace parity::ref::vmath::isa {

// y[i] = function number `fn` of x[i], for i < n; the tail is padded inside.
void apply_avx512(int fn, const double* x, double* y, int64_t n);
void apply_avx2(int fn, const double* x, double* y, int64_t n);
void pow_avx512(const double* a, const double* b, double* y, int64_t n);
void pow_avx2(const double* a, const double* b, double* y, int64_t n);

// The guard's kernels (vector_math_kernels.h), compiled for each set.
struct GuardKernels {
  void (*widen)(const float* x, double* v, int64_t n);                  // v = double(x)
  void (*widen_shift)(const float* x, double s, double* v, int64_t n);  // v = double(x) - s
  // y = float(r); true when every element passed the guard for tol = c + a |r| + b |v|.
  bool (*narrow)(const double* r, const double* v, double c, double a, double b, bool nonneg,
                 float* y, int64_t n);
  double (*max)(const float* x, int64_t n);   // NaN when any x is NaN
  double (*sum)(const double* v, int64_t n);  // in 8 interleaved partial sums
  // The same for float x, with *partials = the sum of the lanes' |running sums| over the steps.
  double (*sum_f32)(const float* x, int64_t n, double* partials);
  // y = exp(x), tanh(x), erf(x) within a few ulps (NaN where the kernel does not apply), in
  // place of SLEEF's (vector_math_kernels.h says why they may be less exact).
  void (*exp)(const double* x, double* y, int64_t n);
  void (*tanh)(const double* x, double* y, int64_t n);
  void (*sigmoid)(const double* x, double* y, int64_t n);    // 1 / (1 + exp(-x))
  void (*gelu_tanh)(const double* x, double* y, int64_t n);  // Gelu's tanh form
  // Null where SLEEF's erf is faster (no AVX-512): erf, and Gelu's erf form.
  void (*erf)(const double* x, double* y, int64_t n);
  void (*gelu)(const double* x, double* y, int64_t n);
};
extern const GuardKernels kernels_avx512, kernels_avx2, kernels_sse2;

// The value every function accepts, for the lanes past the end of an array.
inline constexpr double kPad = 0.5;

}  // namespace parity::ref::vmath::isa
