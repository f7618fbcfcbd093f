// Transcendentals over arrays of doubles through vector functions (SLEEF's 1-ulp ones, and
// for exp, tanh and erf the few-ulp kernels of vector_math_kernels.h), and the guard that keeps the
// reference backend's bits those of the C library.
//
// The contract: an op's value is its formula evaluated in double with glibc's functions and
// rounded once to the element type. A vector result r and glibc's result g are both within a
// few ulps of the exact value, so |r - g| <= tol with tol a generous bound (2^-44 relative,
// i.e. 256 ulps, for a single function). When every double in [r - tol, r + tol] rounds to
// the same element value, g rounds to it too, since rounding is monotone: that value is the
// old result, whatever SLEEF's code path (AVX-512, AVX2, SSE2) computed r. Otherwise (r near
// a rounding boundary, not finite, or so small that relative bounds fail) the element is
// recomputed with glibc. Double outputs keep the glibc path: their rounding *is* the result.
// bench/vector_math_exhaustive checks every float32 input of every function against it.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "backend/ref/ops/kernel_util.h"

namespace parity::ref::vmath {

// The functions with a vector form.
enum class Fn {
  kExp,
  kExpm1,
  kLog,
  kLog1p,
  kTanh,
  kErf,
  kSin,
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh
};

// SLEEF's code path. kAuto picks the widest the CPU runs (AVX-512F, then AVX2 with FMA, then
// SSE2); tests force each one the CPU supports.
enum class Isa { kAuto, kSse2, kAvx2, kAvx512 };
void force_isa(Isa isa);  // kAuto restores the CPU's choice
Isa active_isa();
bool cpu_supports(Isa isa);
const char* isa_name(Isa isa);

// y[i] = f(x[i]) for i < n, within a few ulps (SLEEF's 1 ulp; exp, tanh and on AVX-512 erf
// vector_math_kernels.h's own: under 8 ulps, exp NaN above 708 and 0 below -708); x and y may
// be the same array.
void apply(Fn f, const double* x, double* y, int64_t n);
// The fast forms of two activations' formulas, in vector lanes (the ops' guards in
// activations.cc bound how far they may be from the exact formulas): y = 1 / (1 + exp(-x)), and
// y = x/2 (1 + erf(x / sqrt 2)) or, tanh_form, x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
void sigmoid(const double* x, double* y, int64_t n);
void gelu(const double* x, double* y, int64_t n, bool tanh_form);
// apply through SLEEF's function even for exp, tanh and erf (bench/vector_functions_bench.cc's
// yardstick).
void apply_sleef(Fn f, const double* x, double* y, int64_t n);
// y[i] = pow(a[i], b[i]) through SLEEF (1 ulp).
void apply_pow(const double* a, const double* b, double* y, int64_t n);

// The relative bound on |vector result - glibc result| for one function call (256 ulps: both
// are within a few ulps of the exact value; the margin costs one libm call in ~2^19).
inline constexpr double kRelTol = 0x1p-44;
// Below this magnitude relative bounds no longer hold (SLEEF's bound is max(1 ulp, DBL_MIN))
// and a sign could flip: such results are recomputed, unless the function's value is known to
// be non-negative, where rounding up from 0 is all that can happen.
inline constexpr double kTiny = 0x1p-1000;

// The bits of an element value, to compare NaN-free values exactly (-0 differs from +0).
template <typename T>
inline uint64_t bits_of(T v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}

// True when r is finite and every double within tol of it (within [0, r + tol] when the
// function is non-negative) rounds to the same T, so narrow<T>(glibc's result) == narrow<T>(r).
template <typename T>
inline bool rounds_alike(double r, double tol, bool nonneg = false) {
  if (!std::isfinite(r) || !std::isfinite(tol)) return false;
  if (nonneg) {
    if (r < 0) return false;
    const double t = std::max(tol, kTiny);
    return bits_of(narrow<T>(std::max(r - t, 0.0))) == bits_of(narrow<T>(r + t));
  }
  if (std::fabs(r) < kTiny) return false;
  return bits_of(narrow<T>(r - tol)) == bits_of(narrow<T>(r + tol));
}

// The bound tol(v, r) = c + a |r| + b |v| on |fast result r - glibc's result| for an input v:
// every op's bound has this form (a term is left out where its factor is 0, so an infinite
// input whose factor is 0 leaves the bound finite).
struct LinearTol {
  double c = 0, a = 0, b = 0;
  double operator()(double v, double r) const {
    double t = a * std::fabs(r);
    if (c != 0) t += c;
    if (b != 0) t += b * std::fabs(v);
    return t;
  }
};

// The guard's vector kernels (vector_math_kernels.h) on the active code path.
// v[i] = double(x[i]) for i < n.
void widen(const float* x, double* v, int64_t n);
// y[i] = float(r[i]) for i < n, and true when every element provably rounds as glibc's value
// does (rounds_alike(r[i], tol(v[i], r[i]), nonneg) for every i); on false the caller redoes
// the elements with the scalar guard.
bool narrow_checked(const double* r, const double* v, const LinearTol& tol, bool nonneg, float* y,
                    int64_t n);
// v[i] = double(x[i]) - s for i < n.
void widen_shift(const float* x, double s, double* v, int64_t n);
// The largest x[i] (n > 0) as double, or NaN when any x[i] is NaN; a zero maximum may have
// either sign.
double max_or_nan(const float* x, int64_t n);
// The sum of v[0..n) in another order than the sequential one (8 interleaved partial sums):
// within n roundings of it, for callers that bound the difference.
double unordered_sum(const double* v, int64_t n);
// The sum in double of float x[0..n) in 8 interleaved lanes, and in *partials the sum of the
// magnitudes of every running sum it formed (each step's 8 lanes, then the lanes' combination):
// u * *partials bounds its rounding error, u = 2^-53.
double unordered_sum(const float* x, int64_t n, double* partials);

// Elements per block: the doubles of one block stay in L1.
inline constexpr int64_t kBlock = 256;

// y[i] = narrow<T>(exact(x[i])) for n elements of a float32/float16/bfloat16 array, computed as
// fast(block of widened x, block of results) and checked with rounds_alike(r, tol(v, r)); the
// elements that fail are recomputed with `exact` (the glibc formula that defines the bits).
// float32 blocks are widened and checked by the vector kernels; a block with any element in
// doubt goes through the scalar check, which gives the same bits for the elements that pass.
template <typename T, typename Fast, typename Exact>
void guarded_map(const T* x, T* y, int64_t n, Fast&& fast, Exact&& exact, const LinearTol& tol,
                 bool nonneg = false) {
  double v[kBlock], r[kBlock];
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t len = std::min(kBlock, n - b);
    if constexpr (std::is_same_v<T, float>) {
      widen(x + b, v, len);
      fast(v, r, len);
      if (narrow_checked(r, v, tol, nonneg, y + b, len)) continue;
    } else {
      for (int64_t i = 0; i < len; ++i) v[i] = to_double(x[b + i]);
      fast(v, r, len);
    }
    for (int64_t i = 0; i < len; ++i) {
      const double t = tol(v[i], r[i]);
      y[b + i] = rounds_alike<T>(r[i], t, nonneg) ? narrow<T>(r[i]) : narrow<T>(exact(v[i]));
    }
  }
}

// A unary op's tensor: the guarded vector path for float, float16 and bfloat16, the glibc
// formula for double.
template <typename T, typename Fast, typename Exact>
Tensor guarded_unary(const Tensor& x, Fast fast, Exact exact, const LinearTol& tol,
                     bool nonneg = false) {
  if constexpr (std::is_same_v<T, double>) {
    return unary_elementwise<T, T>(x, exact);
  } else {
    Tensor y = uninitialized_tensor(x.dtype(), x.shape());
    const T* src = x.data<T>();
    T* dst = y.data<T>();
    parallel_for(x.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
      guarded_map<T>(src + b, dst + b, e - b, fast, exact, tol, nonneg);
    });
    return y;
  }
}

// The tolerance of a single 1-ulp function: kRelTol relative to the result.
inline constexpr LinearTol kSingleCallTol{0, kRelTol, 0};

// A fast block function applying one SLEEF function.
struct Apply {
  Fn f;
  void operator()(const double* v, double* r, int64_t n) const { apply(f, v, r, n); }
};

}  // namespace parity::ref::vmath
