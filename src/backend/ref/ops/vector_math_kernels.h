// The guard's block kernels (vector_math.h), written once with GCC's generic vector types and
// compiled once per instruction set: each of vector_math.cc (SSE2), vector_math_avx2.cc and
// vector_math_avx512.cc defines PARITY_ISA_NS and includes this file, so the same source
// becomes 8-lane AVX-512, 2 x 4-lane AVX2 or 4 x 2-lane SSE2 code, in a namespace of its own
// (no inline function is shared between files compiled with different flags). Include only
// <cstdint> here, for the same reason (vector_math_isa.h).
//
// Everything here is exact: a widening float -> double, IEEE subtractions and additions, and
// double -> float conversions in the default rounding mode, the same operations as the scalar
// guard (rounds_alike), lane by lane. The kernels only decide faster; a block with any lane
// in doubt is handed back whole to the scalar guard.
#pragma once

#include <cstdint>

#include "backend/ref/ops/vector_math_isa.h"

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
};

}  // namespace parity::ref::vmath::isa::PARITY_ISA_NS
