// The guard's block kernels (vector_math.h), written once with GCC's generic vector types and
// compiled once per instruction set: each of vector_math.cc (SSE2), vector_math_avx2.cc and
// vector_math_avx512.cc defines PARITY_ISA_NS and includes this file, so the same source
// becomes 8-lane AVX-512, 2 x 4-lane AVX2 or 4 x 2-lane SSE2 code, in a namespace of its own
// (no inline function is shared between files compiled with different flags). Include only
// <cstdint>, tables and the intrinsics here, for the same reason (vector_math_isa.h).
//
// Everything here is exact: a widening float -> double, IEEE subtractions and additions, and
// double -> float conversions in the default rounding mode, the same operations as the scalar
// guard (rounds_alike), lane by lane. The kernels only decide faster; a block with any lane
// in doubt is handed back whole to the scalar guard.
#pragma once

#include <cstdint>

#include "backend/ref/ops/vector_math_erf.h"
#include "backend/ref/ops/vector_math_isa.h"
#if defined(__AVX512F__) || defined(__FMA__)
#include <immintrin.h>  // always-inline intrinsics: no out-of-line copy to share between files
#endif

#ifndef PARITY_ISA_NS
#error "define PARITY_ISA_NS (the instruction set's namespace) before including this file"
#endif

// The kernels are always inlined into the functions of kGuardKernels, so the vector types
// never cross a call between files of different instruction sets. (GCC warns at the end of
// the file, so the including file keeps the warning off: only the three files above.)
#pragma GCC diagnostic ignored "-Wpsabi"

namespace parity::ref::vmath::isa::PARITY_ISA_NS {

using D8 = double __attribute__((vector_size(64)));
using I8 = int64_t __attribute__((vector_size(64)));
using F8 = float __attribute__((vector_size(32)));
using U8 = uint32_t __attribute__((vector_size(32)));

#define PARITY_KERNEL inline __attribute__((always_inline))

PARITY_KERNEL D8 load(const double* p) {
  D8 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
PARITY_KERNEL D8 splat(double s) { return D8{s, s, s, s, s, s, s, s}; }
PARITY_KERNEL D8 abs(D8 v) {
  return reinterpret_cast<D8>(reinterpret_cast<I8>(v) & 0x7fffffffffffffff);
}

// v[i] = double(x[i]) for i < n.
PARITY_KERNEL void widen_f32_kernel(const float* x, double* v, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    F8 f;
    __builtin_memcpy(&f, x + i, sizeof f);
    const D8 d = __builtin_convertvector(f, D8);
    __builtin_memcpy(v + i, &d, sizeof d);
  }
  for (; i < n; ++i) v[i] = static_cast<double>(x[i]);
}

// v[i] = double(x[i]) - s for i < n.
PARITY_KERNEL void widen_shift_f32_kernel(const float* x, double s, double* v, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    F8 f;
    __builtin_memcpy(&f, x + i, sizeof f);
    const D8 d = __builtin_convertvector(f, D8) - s;
    __builtin_memcpy(v + i, &d, sizeof d);
  }
  for (; i < n; ++i) v[i] = static_cast<double>(x[i]) - s;
}

// The largest of x[0..n) (n > 0), or NaN when any element is NaN. Floats compare exactly, so
// the value is any ordered maximum's, the sign of a zero maximum aside.
PARITY_KERNEL double max_f32_kernel(const float* x, int64_t n) {
  constexpr float kLow = -__builtin_inff();
  F8 m = {kLow, kLow, kLow, kLow, kLow, kLow, kLow, kLow};
  F8 nan = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    F8 f;
    __builtin_memcpy(&f, x + i, sizeof f);
    m = f > m ? f : m;
    nan = f != f ? f : nan;
  }
  float best = kLow;
  bool any_nan = false;
  for (int k = 0; k < 8; ++k) {
    best = m[k] > best ? m[k] : best;
    any_nan |= nan[k] != nan[k];
  }
  for (; i < n; ++i) {
    best = x[i] > best ? x[i] : best;
    any_nan |= x[i] != x[i];
  }
  return any_nan ? __builtin_nan("") : static_cast<double>(best);
}

// The sum of v[0..n) in 8 interleaved partial sums: not the sequential order, so a caller
// bounds its difference from the sequential sum (at most n roundings either way).
PARITY_KERNEL double sum_f64_kernel(const double* v, int64_t n) {
  D8 acc = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) acc += load(v + i);
  double s = 0;
  for (int k = 0; k < 8; ++k) s += acc[k];
  for (; i < n; ++i) s += v[i];
  return s;
}

// Sums x[0..n) in 8 interleaved lanes (lane j adds x[j], x[j + 8], ... in order, in double;
// the lanes then add up in order), for a guarded sum (reduce.cc). Returns the sum, and in
// *partials the sum over every step of the lanes' |running sums| (the bound's ingredient).
PARITY_KERNEL double sum_f32_kernel(const float* x, int64_t n, double* partials) {
  D8 acc = {}, mag = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    F8 f;
    __builtin_memcpy(&f, x + i, sizeof f);
    acc += __builtin_convertvector(f, D8);
    mag += abs(acc);
  }
  if (i < n) {  // the tail as one more step, zero-padded (zeros change no sum)
    float pad[8] = {};
    for (int k = 0; i + k < n; ++k) pad[k] = x[i + k];
    F8 f;
    __builtin_memcpy(&f, pad, sizeof f);
    acc += __builtin_convertvector(f, D8);
    mag += abs(acc);
  }
  double s = 0, m = 0;
  for (int k = 0; k < 8; ++k) {
    s += acc[k];
    m += mag[k] + (s < 0 ? -s : s);  // the lane combination's partial sums too
  }
  *partials = m;
  return s;
}

// The lanes of 8 results r (inputs v) whose float rounding is provably glibc's, as rounds_alike
// decides with tol = c + a |r| + b |v| (a mask: -1 where so), and y = float(r) in every lane.
PARITY_KERNEL I8 narrow_lanes(D8 r, D8 v, double c, double a, double b, bool nonneg, float* y) {
  constexpr double kInf = __builtin_inf();
  constexpr double kTinyValue = 0x1p-1000;  // vector_math.h's kTiny
  const D8 ar = abs(r);
  D8 tol = splat(a) * ar;
  // Only the terms in use, so that an infinite input cannot make the bound NaN (0 * inf).
  if (c != 0) tol += splat(c);
  if (b != 0) tol += splat(b) * abs(v);
  I8 ok = (ar < kInf) & (tol < kInf);
  D8 lo, hi;
  if (nonneg) {
    const D8 t = tol < kTinyValue ? splat(kTinyValue) : tol;  // max(tol, kTiny)
    const D8 below = r - t;
    lo = below < 0.0 ? splat(0.0) : below;  // max(r - t, 0)
    hi = r + t;
    ok &= r >= 0.0;
  } else {
    lo = r - tol;
    hi = r + tol;
    ok &= ar >= kTinyValue;
  }
  const U8 flo = reinterpret_cast<U8>(__builtin_convertvector(lo, F8));
  const U8 fhi = reinterpret_cast<U8>(__builtin_convertvector(hi, F8));
  ok &= __builtin_convertvector(flo == fhi, I8);
  const F8 out = __builtin_convertvector(r, F8);
  __builtin_memcpy(y, &out, sizeof out);
  return ok;
}

// y[i] = float(r[i]) for i < n; true when every lane passed the guard (otherwise y holds
// unchecked values and the caller redoes the block).
PARITY_KERNEL bool narrow_f32_kernel(const double* r, const double* v, double c, double a, double b,
                                     bool nonneg, float* y, int64_t n) {
  I8 ok = ~I8{};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) ok &= narrow_lanes(load(r + i), load(v + i), c, a, b, nonneg, y + i);
  if (i < n) {
    // The tail through a padded copy; the padding lanes' verdicts and values are discarded.
    double rp[8], vp[8];
    float yp[8];
    for (int k = 0; k < 8; ++k) {
      rp[k] = i + k < n ? r[i + k] : 1.0;
      vp[k] = i + k < n ? v[i + k] : 1.0;
    }
    const I8 lane = {0, 1, 2, 3, 4, 5, 6, 7};
    ok &= narrow_lanes(load(rp), load(vp), c, a, b, nonneg, yp) | (lane >= n - i);
    for (int k = 0; i + k < n; ++k) y[i + k] = yp[k];
  }
  for (int k = 0; k < 8; ++k)
    if (ok[k] == 0) return false;
  return true;
}

// --- Exp, Tanh and Erf of double lanes, cheaper than SLEEF's 1-ulp functions ---------------
//
// The guard only needs |r - glibc| well inside its bound (kRelTol, 256 ulps): these are within
// a few ulps (the argument below; bench/vector_math_exhaustive measures the largest difference
// over float32 inputs) at a fraction of SLEEF's cost, because they need not be correctly
// rounded. A lane outside the range where the argument holds gives NaN, which the guard always
// recomputes with glibc. Kept because measured faster than SLEEF's functions on the same block
// (bench/vector_functions_bench, AVX-512: exp 1.4x, tanh 3.3x, erf 3.9x; bench/README.md).

// a * b + c, fused where the instruction set has it. Only the function kernels below use it:
// their accuracy argument holds either way, while the guard's own arithmetic above must round
// as the scalar guard does (these files compile with -ffp-contract=off).
PARITY_KERNEL D8 mul_add(D8 a, D8 b, D8 c) {
#if defined(__AVX512F__)
  return reinterpret_cast<D8>(_mm512_fmadd_pd(
      reinterpret_cast<__m512d>(a), reinterpret_cast<__m512d>(b), reinterpret_cast<__m512d>(c)));
#elif defined(__FMA__)
  __m256d x[2], y[2], z[2];
  __builtin_memcpy(x, &a, sizeof a);
  __builtin_memcpy(y, &b, sizeof b);
  __builtin_memcpy(z, &c, sizeof c);
  for (int h = 0; h < 2; ++h) x[h] = _mm256_fmadd_pd(x[h], y[h], z[h]);
  D8 r;
  __builtin_memcpy(&r, x, sizeof r);
  return r;
#else
  return a * b + c;
#endif
}

// 1/n!, rounded once (n! is exact in double up to 22!).
constexpr double inv_factorial(int n) {
  double f = 1;
  for (int i = 2; i <= n; ++i) f *= i;
  return 1 / f;
}

// e^x = 2^k (1 + q), q = e^r - 1, for x = k ln2 + r with k = round(x / ln2), |r| <= ln2/2.
// k * kLn2Hi is exact (|k| < 2^11, kLn2Hi has 32 significant bits) and so is x - k * kLn2Hi
// (Sterbenz); the fused second step leaves r within half an ulp of r plus |k| 2^-85. q is
// Taylor's polynomial r + r^2/2! + ... + r^13/13! (truncation under 2^-56 relative to q),
// by Horner on terms of falling size: within about an ulp of q. 2^k is exact while k stays in
// the normal range, which the callers' bounds on x keep it.
struct ExpParts {
  D8 q, scale;  // e^x = scale * (1 + q)
};
PARITY_KERNEL ExpParts exp_parts(D8 x) {
  constexpr double kLog2e = 0x1.71547652b82fep0;
  constexpr double kLn2Hi = 0x1.62e42fee00000p-1;
  constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;  // ln 2 - kLn2Hi
  constexpr double kShifter = 0x1.8p52;             // adding it rounds to an integer
  const D8 t = mul_add(x, splat(kLog2e), splat(kShifter));
  const D8 k = t - kShifter;
  const D8 r = mul_add(k, splat(-kLn2Lo), mul_add(k, splat(-kLn2Hi), x));
  D8 p = splat(inv_factorial(13));
  for (int n = 12; n >= 1; --n) p = mul_add(p, r, splat(inv_factorial(n)));
  // 2^k from k's bits in t, in unsigned lanes: a lane out of range (discarded by the callers)
  // wraps instead of overflowing, which signed arithmetic may not.
  using W8 = uint64_t __attribute__((vector_size(64)));
  const W8 kbits = reinterpret_cast<W8>(t) - reinterpret_cast<W8>(splat(kShifter));
  return {p * r, reinterpret_cast<D8>((kbits + 1023) << 52)};
}

// exp(x) = scale + scale * q, one rounding after the parts' errors: within 2 ulps for
// |x| <= 708 (a normal result and scale). Below -708 it is 0, off by under 2^-1021 (a result
// under kTiny, which the guard never takes as it stands, and nothing to a Softmax sum of at
// least 1; exp(-inf) is 0); above 708 and for NaN it is NaN, which the guard recomputes.
PARITY_KERNEL D8 exp_lanes(D8 x) {
  const ExpParts e = exp_parts(x);
  const D8 y = x <= 708.0 ? mul_add(e.scale, e.q, e.scale) : splat(__builtin_nan(""));
  return x < -708.0 ? splat(0.0) : y;
}

// tanh(x) = m / (m + 2) with m = expm1(2|x|), and x's sign. m = scale q + (scale - 1) (scale - 1
// exact for k <= 53; for k = 0 that is q itself, accurate relative to a small m; for k >= 1,
// m >= 0.4 and the error is a few ulps of m); the quotient adds one ulp. |x| is capped
// at 20, where tanh is 1 to within 2^-56, which keeps k <= 58 (NaN stays NaN: the cap's
// comparison is false for it).
PARITY_KERNEL D8 tanh_lanes(D8 x) {
  const D8 ax = abs(x);
  const ExpParts e = exp_parts(2.0 * (ax > 20.0 ? splat(20.0) : ax));
  const D8 m = mul_add(e.scale, e.q, e.scale - 1.0);
  const D8 q = m / (m + 2.0);
  const I8 sign = reinterpret_cast<I8>(x) & static_cast<int64_t>(0x8000000000000000ULL);
  return reinterpret_cast<D8>(reinterpret_cast<I8>(q) | sign);
}

#if defined(__AVX512F__)
// table[idx[k]] in lane k (0 <= idx < 8): one permute. (Without AVX-512 the lookups cost more
// than SLEEF's whole erf, which those code paths keep.)
PARITY_KERNEL D8 lookup8(const double* table, I8 idx) {
  // (The zero-masking form: the plain one's undefined source upsets GCC 12's warnings.)
  return reinterpret_cast<D8>(
      _mm512_maskz_permutexvar_pd(0xff, reinterpret_cast<__m512i>(idx), _mm512_loadu_pd(table)));
}

// erf(x) within 2^-51 of the exact value plus the evaluation's roundings (a few ulps), from
// the polynomials of vector_math_erf.h (scripts/fit_erf.py): x P(x^2) for |x| < 0.75, where
// the relative error stays small down to the tiny, and with x's sign P_j(|x| - c_j) on eight
// intervals of [0.75, 6], erf being 1 to within 2^-55 beyond 6 (|x| is capped there; NaN stays
// NaN). Both forms are computed for every lane and the lane's own kept; an interval's
// coefficients come by table lookup.
PARITY_KERNEL D8 erf_lanes(D8 x) {
  namespace table = vmath::erf_table;
  const D8 a = abs(x);
  const D8 ax = a > 6.0 ? splat(6.0) : a;
  const D8 u = x * x;
  D8 p = splat(table::kSmall[0]);
  for (int n = 1; n < 11; ++n) p = mul_add(p, u, splat(table::kSmall[n]));
  I8 idx = {};
  for (int j = 1; j < 8; ++j) idx -= ax >= table::kEdge[j];  // a true comparison is -1
  const D8 t = ax - lookup8(table::kCenter, idx);
  D8 q = lookup8(table::kTail[0], idx);
  for (int n = 1; n < 13; ++n) q = mul_add(q, t, lookup8(table::kTail[n], idx));
  const I8 sign = reinterpret_cast<I8>(x) & static_cast<int64_t>(0x8000000000000000ULL);
  const D8 tail = reinterpret_cast<D8>(reinterpret_cast<I8>(q) | sign);
  return a < 0.75 ? x * p : tail;
}
#endif

// Whole activation formulas in lanes, as activations.cc's ops define them (the guard's bound
// for each op is argued there): sigmoid 1 / (1 + e^-x), and Gelu x/2 (1 + erf(x / sqrt 2)) or
// x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). The argument's scaling rounds differently from
// the exact formula's division (an ulp), which the Gelu bound's |x| term covers.
PARITY_KERNEL D8 sigmoid_lanes(D8 x) { return 1.0 / (1.0 + exp_lanes(-x)); }
PARITY_KERNEL D8 gelu_tanh_lanes(D8 x) {
  constexpr double kSqrt2OverPi = 0x1.9884533d43651p-1;
  return 0.5 * x * (1.0 + tanh_lanes(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}
#if defined(__AVX512F__)
PARITY_KERNEL D8 gelu_lanes(D8 x) {
  constexpr double kInvSqrt2 = 0x1.6a09e667f3bcdp-1;
  return 0.5 * x * (1.0 + erf_lanes(x * kInvSqrt2));
}
#endif

// y[i] = f(x[i]) for i < n, 8 lanes at a time, the tail through a padded copy.
template <typename F>
PARITY_KERNEL void map_f64_kernel(F f, const double* x, double* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const D8 r = f(load(x + i));
    __builtin_memcpy(y + i, &r, sizeof r);
  }
  if (i == n) return;
  double buf[8];
  for (int k = 0; k < 8; ++k) buf[k] = i + k < n ? x[i + k] : kPad;
  const D8 r = f(load(buf));
  __builtin_memcpy(buf, &r, sizeof r);
  for (int k = 0; i + k < n; ++k) y[i + k] = buf[k];
}

#undef PARITY_KERNEL

// The kernels of this instruction set, for vector_math.cc's dispatch.
inline constexpr GuardKernels kGuardKernels = {
    [](const float* x, double* v, int64_t n) { widen_f32_kernel(x, v, n); },
    [](const float* x, double s, double* v, int64_t n) { widen_shift_f32_kernel(x, s, v, n); },
    [](const double* r, const double* v, double c, double a, double b, bool nonneg, float* y,
       int64_t n) { return narrow_f32_kernel(r, v, c, a, b, nonneg, y, n); },
    [](const float* x, int64_t n) { return max_f32_kernel(x, n); },
    [](const double* v, int64_t n) { return sum_f64_kernel(v, n); },
    [](const float* x, int64_t n, double* partials) { return sum_f32_kernel(x, n, partials); },
    [](const double* x, double* y, int64_t n) { map_f64_kernel(exp_lanes, x, y, n); },
    [](const double* x, double* y, int64_t n) { map_f64_kernel(tanh_lanes, x, y, n); },
    [](const double* x, double* y, int64_t n) { map_f64_kernel(sigmoid_lanes, x, y, n); },
    [](const double* x, double* y, int64_t n) { map_f64_kernel(gelu_tanh_lanes, x, y, n); },
#if defined(__AVX512F__)
    [](const double* x, double* y, int64_t n) { map_f64_kernel(erf_lanes, x, y, n); },
    [](const double* x, double* y, int64_t n) { map_f64_kernel(gelu_lanes, x, y, n); },
#else
    nullptr,  // without one-instruction table lookups erf_lanes is slower than SLEEF's erf
    nullptr,
#endif
};

}  // namespace parity::ref::vmath::isa::PARITY_ISA_NS
