// The float32 block kernels in AVX-512: 16 elements per step, everything a stage needs in
// registers, masks for the block's tail, and the keys between interval ends compressed out
// without a branch. Same results as the portable loops, bit for bit: the sums go to lane i % 16
// in element order (squares by FMA, as there), and extremes, counts and keys are exact.
#include "comparator/block_kernels.h"

#include "comparator/radix_select.h"

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

constexpr int64_t kMaxBlock = 1024;  // keys per interval_block call (kStatsBlock)

PARITY_AVX512 inline __mmask16 tail_mask(int64_t left) {
  return left >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
}

// key_of for 16 floats: bits ^ ((bits >> 31, arithmetic) | sign bit), as one ternary op.
PARITY_AVX512 inline __m512i keys_of(__m512 x) {
  const __m512i bits = _mm512_castps_si512(x);
  return _mm512_ternarylogic_epi32(bits, _mm512_srai_epi32(bits, 31),
                                   _mm512_set1_epi32(static_cast<int32_t>(0x80000000u)), 0x1E);
}

// Counts, in 16 lanes, of the keys below, in and at the low end of M intervals; with kGather,
// the keys strictly between an interval's ends compressed into its kept buffer. With kWhole
// (IntervalScan::whole), the keys in an interval are counted and gathered with one compare, and
// nothing is counted at its low end.
template <int M, bool kGather, bool kWhole>
PARITY_AVX512 void count_intervals(const uint32_t* keys, int64_t n, const uint32_t* lo,
                                   const uint32_t* width, int64_t* counts,
                                   uint32_t* const* kept, int64_t* kept_count) {
  __m512i l[M], w[M], between[M], below[M], inside[M], at_lo[M];
  int64_t c[M] = {}, in[M] = {};
  const __m512i one = _mm512_set1_epi32(1), zero = _mm512_setzero_si512();
  for (int j = 0; j < M; ++j) {
    l[j] = _mm512_set1_epi32(static_cast<int32_t>(lo[j]));
    w[j] = _mm512_set1_epi32(static_cast<int32_t>(width[j]));
    between[j] = _mm512_set1_epi32(static_cast<int32_t>(width[j] >= 2 ? width[j] - 1 : 0));
    below[j] = inside[j] = at_lo[j] = zero;
  }
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = tail_mask(n - i);
    const __m512i key = _mm512_loadu_si512(keys + i);
    for (int j = 0; j < M; ++j) {
      const __m512i d = _mm512_sub_epi32(key, l[j]);
      below[j] = _mm512_mask_add_epi32(below[j], _mm512_mask_cmplt_epu32_mask(k, key, l[j]),
                                       below[j], one);
      if constexpr (kWhole) {
        const __mmask16 hit = _mm512_mask_cmple_epu32_mask(k, d, w[j]);
        in[j] += __builtin_popcount(hit);
        if constexpr (kGather)
          _mm512_storeu_si512(kept[j] + c[j], _mm512_maskz_compress_epi32(hit, key));
        c[j] = in[j];
        continue;
      }
      inside[j] = _mm512_mask_add_epi32(inside[j], _mm512_mask_cmple_epu32_mask(k, d, w[j]),
                                        inside[j], one);
      at_lo[j] = _mm512_mask_add_epi32(at_lo[j], _mm512_mask_cmpeq_epi32_mask(k, d, zero),
                                       at_lo[j], one);
      if constexpr (kGather) {
        const __mmask16 hit =
            _mm512_mask_cmplt_epu32_mask(k, _mm512_sub_epi32(d, one), between[j]);
        _mm512_storeu_si512(kept[j] + c[j], _mm512_maskz_compress_epi32(hit, key));
        c[j] += __builtin_popcount(hit);
      }
    }
  }
  for (int j = 0; j < M; ++j) {
    counts[3 * j] += _mm512_reduce_add_epi32(below[j]);
    counts[3 * j + 1] += kWhole ? in[j] : _mm512_reduce_add_epi32(inside[j]);
    if (!kWhole) counts[3 * j + 2] += _mm512_reduce_add_epi32(at_lo[j]);
    if constexpr (kGather) kept_count[j] = c[j];
  }
}

// The sums of eight values in eight lanes: (x - shift), its square (one FMA) and, with kAbs, |x|.
struct Sums8 {
  __m512d sum, sumsq, sum_abs;
};

template <bool kAbs>
PARITY_AVX512 inline void add8(__m256 half, __mmask8 k, __m512d shift, Sums8& s) {
  const __m512d x = _mm512_cvtps_pd(half);
  const __m512d d = _mm512_sub_pd(x, shift);
  s.sum = _mm512_mask_add_pd(s.sum, k, s.sum, d);
  s.sumsq = _mm512_mask3_fmadd_pd(d, d, s.sumsq, k);
  if (kAbs) s.sum_abs = _mm512_mask_add_pd(s.sum_abs, k, s.sum_abs, _mm512_abs_pd(x));
}

// Everything scan_block keeps in registers. The extremes are taken on the keys, in the integer
// units (the floating-point adders are the busy ones): they order as the values do, apart from
// NaNs, and a block with a NaN has no extremes that matter.
struct ScanState {
  Sums8 low, high;  // lanes 0-7 and 8-15
  __m512d shift;
  __m512i min, max, nans;
};

// Sixteen values (those in k) into the state; returns their keys.
template <bool kAbs>
PARITY_AVX512 inline __m512i scan16(__m512 x, __mmask16 k, ScanState& st) {
  add8<kAbs>(_mm512_castps512_ps256(x), static_cast<__mmask8>(k), st.shift, st.low);
  add8<kAbs>(_mm512_extractf32x8_ps(x, 1), static_cast<__mmask8>(k >> 8), st.shift, st.high);
  const __m512i key = keys_of(x);
  st.min = _mm512_mask_min_epu32(st.min, k, key, st.min);
  st.max = _mm512_mask_max_epu32(st.max, k, key, st.max);
  const __m512i magnitude = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7FFFFFFF));
  const __mmask16 nan = _mm512_mask_cmpgt_epi32_mask(k, magnitude, _mm512_set1_epi32(0x7F800000));
  st.nans = _mm512_mask_add_epi32(st.nans, nan, st.nans, _mm512_set1_epi32(1));
  return key;
}

template <bool kAbs>
PARITY_AVX512 Extremes<float> scan(const float* v, int64_t n, double shift, Lanes& lanes,
                                   uint32_t* keys) {
  static_assert(kLanes == 16, "one register of eight doubles per half of the lanes");
  ScanState st;
  st.low = {_mm512_loadu_pd(lanes.sum), _mm512_loadu_pd(lanes.sumsq),
            _mm512_loadu_pd(lanes.sum_abs)};
  st.high = {_mm512_loadu_pd(lanes.sum + 8), _mm512_loadu_pd(lanes.sumsq + 8),
             _mm512_loadu_pd(lanes.sum_abs + 8)};
  st.shift = _mm512_set1_pd(shift);
  st.min = _mm512_set1_epi32(-1);
  st.max = st.nans = _mm512_setzero_si512();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)  // whole steps: the masks are constant
    _mm512_storeu_si512(keys + i, scan16<kAbs>(_mm512_loadu_ps(v + i), 0xFFFF, st));
  if (i < n) {
    const __mmask16 k = tail_mask(n - i);
    _mm512_storeu_si512(keys + i, scan16<kAbs>(_mm512_maskz_loadu_ps(k, v + i), k, st));
  }
  _mm512_storeu_pd(lanes.sum, st.low.sum);
  _mm512_storeu_pd(lanes.sumsq, st.low.sumsq);
  _mm512_storeu_pd(lanes.sum_abs, st.low.sum_abs);
  _mm512_storeu_pd(lanes.sum + 8, st.high.sum);
  _mm512_storeu_pd(lanes.sumsq + 8, st.high.sumsq);
  _mm512_storeu_pd(lanes.sum_abs + 8, st.high.sum_abs);
  const uint32_t lo = _mm512_reduce_min_epu32(st.min), hi = _mm512_reduce_max_epu32(st.max);
  return {static_cast<float>(radix::value_of_key(lo, true)),
          static_cast<float>(radix::value_of_key(hi, true)), _mm512_reduce_add_epi32(st.nans)};
}

}  // namespace

PARITY_AVX512 Extremes<float> scan_block(const float* v, int64_t n, double shift, Lanes& lanes,
                                         uint32_t* keys, bool magnitudes) {
  return magnitudes ? scan<true>(v, n, shift, lanes, keys) : scan<false>(v, n, shift, lanes, keys);
}

namespace {

// interval_block's work for the intervals in `scan`, four at a time (the counters of four fill
// the registers).
template <bool kGather, bool kWhole>
PARITY_AVX512 void count_all(const uint32_t* keys, int64_t n, const IntervalScan<uint32_t>& scan) {
  for (size_t j = 0; j < scan.m; j += 4) {
    const uint32_t *l = scan.lo + j, *w = scan.width + j;
    int64_t* c = scan.counts + 3 * j;
    uint32_t* const* kept = kGather ? scan.kept + j : nullptr;
    int64_t* kc = kGather ? scan.kept_count + j : nullptr;
    switch (std::min<size_t>(4, scan.m - j)) {
      case 1: count_intervals<1, kGather, kWhole>(keys, n, l, w, c, kept, kc); break;
      case 2: count_intervals<2, kGather, kWhole>(keys, n, l, w, c, kept, kc); break;
      case 3: count_intervals<3, kGather, kWhole>(keys, n, l, w, c, kept, kc); break;
      default: count_intervals<4, kGather, kWhole>(keys, n, l, w, c, kept, kc); break;
    }
  }
}

PARITY_AVX512 void count_all(const uint32_t* keys, int64_t n, const IntervalScan<uint32_t>& scan) {
  if (scan.whole) {
    if (scan.kept) count_all<true, true>(keys, n, scan);
    else count_all<false, true>(keys, n, scan);
  } else {
    if (scan.kept) count_all<true, false>(keys, n, scan);
    else count_all<false, false>(keys, n, scan);
  }
}

// The keys at or above `from`, in order (room for n rounded up to 16).
PARITY_AVX512 int64_t keys_from(const uint32_t* keys, int64_t n, uint32_t from,
                                uint32_t* out) {
  const __m512i f = _mm512_set1_epi32(static_cast<int32_t>(from));
  int64_t kept = 0;
  for (int64_t i = 0; i < n; i += 16) {
    const __m512i key = _mm512_loadu_si512(keys + i);
    const __mmask16 k = _mm512_mask_cmpge_epu32_mask(tail_mask(n - i), key, f);
    _mm512_storeu_si512(out + kept, _mm512_maskz_compress_epi32(k, key));
    kept += __builtin_popcount(k);
  }
  return kept;
}

}  // namespace

PARITY_AVX512 void interval_block(const uint32_t* keys, int64_t n,
                                  const IntervalScan<uint32_t>& scan) {
  IntervalScan<uint32_t> all = scan;
  all.m = std::min(scan.upper, scan.m);
  count_all(keys, n, all);
  if (all.m == scan.m) return;
  // The upper intervals see only the keys at or above their lowest end; the rest are below.
  alignas(64) uint32_t high[kMaxBlock + 16];
  const int64_t n_high = keys_from(keys, n, scan.lo[all.m], high);
  IntervalScan<uint32_t> upper = scan;
  upper.lo += all.m;
  upper.width += all.m;
  upper.m = scan.m - all.m;
  upper.counts += 3 * all.m;
  if (scan.kept) upper.kept += all.m, upper.kept_count += all.m;
  for (size_t j = 0; j < upper.m; ++j) upper.counts[3 * j] += n - n_high;
  count_all(high, n_high, upper);
}

}  // namespace parity::kernels::avx512

#endif  // __x86_64__
