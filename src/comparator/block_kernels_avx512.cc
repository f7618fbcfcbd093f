// The float32 block kernels in AVX-512: 16 elements per step, everything a stage needs in
// registers, masks for the block's tail, and the keys between interval ends compressed out
// without a branch. Same results as the portable loops, bit for bit: the sums go to lane i % 8
// in element order with a separate multiply and add (no FMA: the build does not contract), the
// extremes skip NaNs as `x < m ? x : m` does, and counts and keys are exact.
#include "comparator/block_kernels.h"

#if defined(__x86_64__)

// GCC 12 warns about the deliberately undefined registers (_mm512_undefined_*) inside its own
// intrinsics once they are inlined here.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include <algorithm>
#include <limits>

#define PARITY_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,popcnt")))

namespace parity::kernels::avx512 {

namespace {

PARITY_AVX512 inline __mmask16 tail_mask(int64_t left) {
  return left >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
}

// key_of for 16 floats: bits ^ ((bits >> 31, arithmetic) | sign bit), as one ternary op.
PARITY_AVX512 inline __m512i keys_of(__m512 x) {
  const __m512i bits = _mm512_castps_si512(x);
  return _mm512_ternarylogic_epi32(bits, _mm512_srai_epi32(bits, 31),
                                   _mm512_set1_epi32(static_cast<int32_t>(0x80000000u)), 0x1E);
}

// Counts, in 16 lanes, of the keys below, in and at the low end of M intervals, and the keys
// strictly between an interval's ends as a mask per step (OR-ed into hits).
template <int M>
PARITY_AVX512 void count_intervals(const uint32_t* keys, int64_t n, const uint32_t* lo,
                                   const uint32_t* width, int64_t* counts, __mmask16* hits) {
  __m512i l[M], w[M], between[M], below[M], inside[M], at_lo[M];
  const __m512i one = _mm512_set1_epi32(1), zero = _mm512_setzero_si512();
  for (int j = 0; j < M; ++j) {
    l[j] = _mm512_set1_epi32(static_cast<int32_t>(lo[j]));
    w[j] = _mm512_set1_epi32(static_cast<int32_t>(width[j]));
    between[j] = _mm512_set1_epi32(static_cast<int32_t>(width[j] >= 2 ? width[j] - 1 : 0));
    below[j] = inside[j] = at_lo[j] = zero;
  }
  for (int64_t i = 0, step = 0; i < n; i += 16, ++step) {
    const __mmask16 k = tail_mask(n - i);
    const __m512i key = _mm512_loadu_si512(keys + i);
    __mmask16 hit = 0;
    for (int j = 0; j < M; ++j) {
      const __m512i d = _mm512_sub_epi32(key, l[j]);
      below[j] = _mm512_mask_add_epi32(below[j], _mm512_mask_cmplt_epu32_mask(k, key, l[j]),
                                       below[j], one);
      inside[j] = _mm512_mask_add_epi32(inside[j], _mm512_mask_cmple_epu32_mask(k, d, w[j]),
                                        inside[j], one);
      at_lo[j] = _mm512_mask_add_epi32(at_lo[j], _mm512_mask_cmpeq_epi32_mask(k, d, zero),
                                       at_lo[j], one);
      hit |= _mm512_mask_cmplt_epu32_mask(k, _mm512_sub_epi32(d, one), between[j]);
    }
    hits[step] |= hit;
  }
  for (int j = 0; j < M; ++j) {
    counts[3 * j] += _mm512_reduce_add_epi32(below[j]);
    counts[3 * j + 1] += _mm512_reduce_add_epi32(inside[j]);
    counts[3 * j + 2] += _mm512_reduce_add_epi32(at_lo[j]);
  }
}

// Eight values' (x - shift), its square and |x| added to their lanes.
PARITY_AVX512 inline void add_half(__m256 half, __mmask8 k, __m512d shift, __m512d& sum,
                                   __m512d& sumsq, __m512d& sum_abs) {
  const __m512d x = _mm512_cvtps_pd(half);
  const __m512d d = _mm512_sub_pd(x, shift);
  sum = _mm512_mask_add_pd(sum, k, sum, d);
  sumsq = _mm512_mask_add_pd(sumsq, k, sumsq, _mm512_mul_pd(d, d));
  sum_abs = _mm512_mask_add_pd(sum_abs, k, sum_abs, _mm512_abs_pd(x));
}

}  // namespace

PARITY_AVX512 Extremes<float> scan_block(const float* v, int64_t n, double shift, Lanes& lanes,
                                         uint32_t* keys) {
  __m512d sum = _mm512_loadu_pd(lanes.sum), sumsq = _mm512_loadu_pd(lanes.sumsq),
          sum_abs = _mm512_loadu_pd(lanes.sum_abs);
  const __m512d s = _mm512_set1_pd(shift);
  constexpr float kInf = std::numeric_limits<float>::infinity();
  __m512 mn = _mm512_set1_ps(kInf), mx = _mm512_set1_ps(-kInf);
  __m512i nans = _mm512_setzero_si512();
  const __m512i one = _mm512_set1_epi32(1);
  // Elements i..i+7 to lanes 0..7, then i+8..i+15: the portable loop's order.
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = tail_mask(n - i);
    const __m512 x = _mm512_maskz_loadu_ps(k, v + i);
    add_half(_mm512_castps512_ps256(x), static_cast<__mmask8>(k), s, sum, sumsq, sum_abs);
    add_half(_mm512_extractf32x8_ps(x, 1), static_cast<__mmask8>(k >> 8), s, sum, sumsq,
             sum_abs);
    mn = _mm512_mask_min_ps(mn, k, x, mn);
    mx = _mm512_mask_max_ps(mx, k, x, mx);
    nans = _mm512_mask_add_epi32(nans, _mm512_mask_cmp_ps_mask(k, x, x, _CMP_UNORD_Q), nans, one);
    _mm512_storeu_si512(keys + i, keys_of(x));
  }
  _mm512_storeu_pd(lanes.sum, sum);
  _mm512_storeu_pd(lanes.sumsq, sumsq);
  _mm512_storeu_pd(lanes.sum_abs, sum_abs);
  alignas(64) float lo[16], hi[16];
  _mm512_store_ps(lo, mn);
  _mm512_store_ps(hi, mx);
  Extremes<float> e{kInf, -kInf, _mm512_reduce_add_epi32(nans)};
  for (int j = 0; j < 16; ++j) {
    e.min = lo[j] < e.min ? lo[j] : e.min;
    e.max = hi[j] > e.max ? hi[j] : e.max;
  }
  return e;
}

PARITY_AVX512 int64_t interval_block(const uint32_t* keys, int64_t n, const uint32_t* lo,
                                     const uint32_t* width, size_t m, int64_t* counts,
                                     bool gather, uint32_t* kept) {
  // Intervals four at a time (the counters of four fill the registers), hits OR-ed per step.
  constexpr int64_t kMaxSteps = 64;  // blocks of at most 1024 keys
  int64_t hits = 0;
  for (int64_t at = 0; at < n; at += 16 * kMaxSteps) {
    const int64_t len = std::min<int64_t>(16 * kMaxSteps, n - at);
    __mmask16 hit[kMaxSteps] = {};
    for (size_t j = 0; j < m; j += 4) {
      const uint32_t *l = lo + j, *w = width + j;
      int64_t* c = counts + 3 * j;
      switch (std::min<size_t>(4, m - j)) {
        case 1: count_intervals<1>(keys + at, len, l, w, c, hit); break;
        case 2: count_intervals<2>(keys + at, len, l, w, c, hit); break;
        case 3: count_intervals<3>(keys + at, len, l, w, c, hit); break;
        default: count_intervals<4>(keys + at, len, l, w, c, hit); break;
      }
    }
    if (!gather || m == 0) continue;
    for (int64_t i = 0, step = 0; i < len; i += 16, ++step) {
      const __m512i key = _mm512_loadu_si512(keys + at + i);
      _mm512_storeu_si512(kept + hits, _mm512_maskz_compress_epi32(hit[step], key));
      hits += __builtin_popcount(hit[step]);
    }
  }
  return hits;
}

}  // namespace parity::kernels::avx512

#endif  // __x86_64__
