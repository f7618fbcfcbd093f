// The float32 block kernels in AVX-512: 16 elements per step, everything a stage needs in
// registers, masks for the block's tail, and the keys between interval ends compressed out
// without a branch. Same results as the portable loops, bit for bit: the sums go to lane i % 16
// in element order (squares by FMA, as there), and extremes, counts and keys are exact.
//
// The scan is bound by the floating-point adders, the interval counts by the integer units and
// the compressions, so scan_intervals runs the two in one loop where it can (the first interval
// and the split of the upper keys), and the out-of-order core overlaps them.
#include "stats/block_kernels.h"

#include "stats/radix_select.h"

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

// Counters of M intervals, fed 16 keys a step: the keys below, in and at the low end of each
// (in 16 lanes), and with kGather the keys strictly between its ends compressed into its kept
// buffer. With kWhole (IntervalScan::whole) the keys in an interval are counted and gathered
// with one compare, and nothing is counted at its low end.
template <int M, bool kGather, bool kWhole>
struct Intervals {
  __m512i l[M], w[M], between[M], below[M], inside[M], at_lo[M];
  int64_t c[M] = {}, in[M] = {};
  uint32_t* const* kept;

  PARITY_AVX512 Intervals(const uint32_t* lo, const uint32_t* width, uint32_t* const* kept_to)
      : kept(kept_to) {
    for (int j = 0; j < M; ++j) {
      l[j] = _mm512_set1_epi32(static_cast<int32_t>(lo[j]));
      w[j] = _mm512_set1_epi32(static_cast<int32_t>(width[j]));
      between[j] = _mm512_set1_epi32(static_cast<int32_t>(width[j] >= 2 ? width[j] - 1 : 0));
      below[j] = inside[j] = at_lo[j] = _mm512_setzero_si512();
    }
  }

  PARITY_AVX512 inline void step(__m512i key, __mmask16 k) {
    const __m512i one = _mm512_set1_epi32(1);
    for (int j = 0; j < M; ++j) {
      const __m512i d = _mm512_sub_epi32(key, l[j]);
      below[j] = _mm512_mask_add_epi32(below[j], _mm512_mask_cmplt_epu32_mask(k, key, l[j]),
                                       below[j], one);
      if constexpr (kWhole) {
        const __mmask16 hit = _mm512_mask_cmple_epu32_mask(k, d, w[j]);
        if constexpr (kGather)
          _mm512_storeu_si512(kept[j] + in[j], _mm512_maskz_compress_epi32(hit, key));
        in[j] += __builtin_popcount(hit);
        continue;
      }
      inside[j] = _mm512_mask_add_epi32(inside[j], _mm512_mask_cmple_epu32_mask(k, d, w[j]),
                                        inside[j], one);
      at_lo[j] = _mm512_mask_add_epi32(
          at_lo[j], _mm512_mask_cmpeq_epi32_mask(k, d, _mm512_setzero_si512()), at_lo[j], one);
      if constexpr (kGather) {
        const __mmask16 hit = _mm512_mask_cmplt_epu32_mask(k, _mm512_sub_epi32(d, one), between[j]);
        _mm512_storeu_si512(kept[j] + c[j], _mm512_maskz_compress_epi32(hit, key));
        c[j] += __builtin_popcount(hit);
      }
    }
  }

  PARITY_AVX512 void finish(int64_t* counts, int64_t* kept_count) const {
    for (int j = 0; j < M; ++j) {
      counts[3 * j] += _mm512_reduce_add_epi32(below[j]);
      counts[3 * j + 1] += kWhole ? in[j] : _mm512_reduce_add_epi32(inside[j]);
      if (!kWhole) counts[3 * j + 2] += _mm512_reduce_add_epi32(at_lo[j]);
      if (kGather) kept_count[j] = kWhole ? in[j] : c[j];
    }
  }
};

template <int M, bool kGather, bool kWhole>
PARITY_AVX512 void count_intervals(const uint32_t* keys, int64_t n, const uint32_t* lo,
                                   const uint32_t* width, int64_t* counts, uint32_t* const* kept,
                                   int64_t* kept_count) {
  Intervals<M, kGather, kWhole> intervals(lo, width, kept);
  for (int64_t i = 0; i < n; i += 16)
    intervals.step(_mm512_loadu_si512(keys + i), tail_mask(n - i));
  intervals.finish(counts, kept_count);
}

// The keys at or above `from`, compressed in order into `out` (room for the keys fed, rounded
// up to 16).
struct Above {
  __m512i from;
  uint32_t* out;
  int64_t n = 0;

  PARITY_AVX512 Above(uint32_t key, uint32_t* to)
      : from(_mm512_set1_epi32(static_cast<int32_t>(key))), out(to) {}
  PARITY_AVX512 inline void step(__m512i key, __mmask16 k) {
    const __mmask16 above = _mm512_mask_cmpge_epu32_mask(k, key, from);
    _mm512_storeu_si512(out + n, _mm512_maskz_compress_epi32(above, key));
    n += __builtin_popcount(above);
  }
};

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

// Everything the scan keeps in registers. The extremes are taken on the keys, in the integer
// units (the floating-point adders are the busy ones): they order as the values do, and NaNs'
// keys lie beyond both infinities', so the extreme keys also tell whether there is a NaN (a
// block with one has no extremes that matter).
struct ScanState {
  Sums8 low, high;  // lanes 0-7 and 8-15
  __m512d shift;
  __m512i min, max;
};

// Sixteen values (those in k) into the state; returns their keys.
template <bool kAbs>
PARITY_AVX512 inline __m512i scan16(__m512 x, __mmask16 k, ScanState& st) {
  add8<kAbs>(_mm512_castps512_ps256(x), static_cast<__mmask8>(k), st.shift, st.low);
  add8<kAbs>(_mm512_extractf32x8_ps(x, 1), static_cast<__mmask8>(k >> 8), st.shift, st.high);
  const __m512i key = keys_of(x);
  st.min = _mm512_mask_min_epu32(st.min, k, key, st.min);
  st.max = _mm512_mask_max_epu32(st.max, k, key, st.max);
  return key;
}

// scan_block's sums and extremes; every step's keys go to step.step(key, mask).
template <bool kAbs, typename Step>
PARITY_AVX512 Extremes<float> sweep(const float* v, int64_t n, double shift, Lanes& lanes,
                                    Step& step) {
  static_assert(kLanes == 16, "one register of eight doubles per half of the lanes");
  ScanState st;
  st.low = {_mm512_loadu_pd(lanes.sum), _mm512_loadu_pd(lanes.sumsq),
            _mm512_loadu_pd(lanes.sum_abs)};
  st.high = {_mm512_loadu_pd(lanes.sum + 8), _mm512_loadu_pd(lanes.sumsq + 8),
             _mm512_loadu_pd(lanes.sum_abs + 8)};
  st.shift = _mm512_set1_pd(shift);
  st.min = _mm512_set1_epi32(-1);
  st.max = _mm512_setzero_si512();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)  // whole steps: the masks are constant
    step.step(scan16<kAbs>(_mm512_loadu_ps(v + i), 0xFFFF, st), 0xFFFF);
  if (i < n) {
    const __mmask16 k = tail_mask(n - i);
    step.step(scan16<kAbs>(_mm512_maskz_loadu_ps(k, v + i), k, st), k);
  }
  _mm512_storeu_pd(lanes.sum, st.low.sum);
  _mm512_storeu_pd(lanes.sumsq, st.low.sumsq);
  _mm512_storeu_pd(lanes.sum_abs, st.low.sum_abs);
  _mm512_storeu_pd(lanes.sum + 8, st.high.sum);
  _mm512_storeu_pd(lanes.sumsq + 8, st.high.sumsq);
  _mm512_storeu_pd(lanes.sum_abs + 8, st.high.sum_abs);
  const uint32_t lo = _mm512_reduce_min_epu32(st.min), hi = _mm512_reduce_max_epu32(st.max);
  constexpr uint32_t kMinusInf = 0x007FFFFFu, kPlusInf = 0xFF800000u;  // key_of(-inf), (+inf)
  return {static_cast<float>(radix::value_of_key(lo, true)),
          static_cast<float>(radix::value_of_key(hi, true)), lo < kMinusInf || hi > kPlusInf};
}

struct StoreKeys {
  uint32_t* keys;
  PARITY_AVX512 inline void step(__m512i key, __mmask16) {
    _mm512_storeu_si512(keys, key);
    keys += 16;
  }
};

// The first interval and, with kSplit, the keys above it for the upper intervals.
template <bool kFirst, bool kWhole, bool kSplit>
struct FirstAndAbove {
  Intervals<1, true, kWhole> first;
  Above above;
  PARITY_AVX512 inline void step(__m512i key, __mmask16 k) {
    if (kFirst) first.step(key, k);
    if (kSplit) above.step(key, k);
  }
};

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
      case 1:
        count_intervals<1, kGather, kWhole>(keys, n, l, w, c, kept, kc);
        break;
      case 2:
        count_intervals<2, kGather, kWhole>(keys, n, l, w, c, kept, kc);
        break;
      case 3:
        count_intervals<3, kGather, kWhole>(keys, n, l, w, c, kept, kc);
        break;
      default:
        count_intervals<4, kGather, kWhole>(keys, n, l, w, c, kept, kc);
        break;
    }
  }
}

PARITY_AVX512 void count_all(const uint32_t* keys, int64_t n, const IntervalScan<uint32_t>& scan) {
  if (scan.whole) {
    if (scan.kept)
      count_all<true, true>(keys, n, scan);
    else
      count_all<false, true>(keys, n, scan);
  } else {
    if (scan.kept)
      count_all<true, false>(keys, n, scan);
    else
      count_all<false, false>(keys, n, scan);
  }
}

// The intervals from `from` on, counted among the n_high keys at or above lo[from] of a block of
// n: every other key is below them.
PARITY_AVX512 void count_upper(const uint32_t* high, int64_t n_high, int64_t n, size_t from,
                               const IntervalScan<uint32_t>& scan) {
  IntervalScan<uint32_t> upper = scan;
  upper.lo += from;
  upper.width += from;
  upper.m = scan.m - from;
  upper.counts += 3 * from;
  if (scan.kept) upper.kept += from, upper.kept_count += from;
  for (size_t j = 0; j < upper.m; ++j) upper.counts[3 * j] += n - n_high;
  count_all(high, n_high, upper);
}

template <bool kAbs, bool kFirst, bool kWhole, bool kSplit>
PARITY_AVX512 Extremes<float> scan_first(const float* v, int64_t n, double shift, Lanes& lanes,
                                         const IntervalScan<uint32_t>& scan) {
  alignas(64) uint32_t high[kMaxBlock + 16], unkept[kMaxBlock + 16];
  uint32_t* first_kept[1] = {scan.kept ? scan.kept[0] : unkept};
  FirstAndAbove<kFirst, kWhole, kSplit> step{
      Intervals<1, true, kWhole>(scan.lo, scan.width, first_kept),
      Above(kSplit ? scan.lo[kFirst ? 1 : 0] : 0, high)};
  const Extremes<float> e = sweep<kAbs>(v, n, shift, lanes, step);
  int64_t first_count[1];
  if (kFirst) step.first.finish(scan.counts, scan.kept ? scan.kept_count : first_count);
  if (kSplit) count_upper(high, step.above.n, n, kFirst ? 1 : 0, scan);
  return e;
}

// scan_first for this bracket's shape (one interval below the upper ones, or none) and mode.
template <bool kAbs>
PARITY_AVX512 Extremes<float> scan_fused(const float* v, int64_t n, double shift, Lanes& lanes,
                                         const IntervalScan<uint32_t>& scan) {
  const bool first = std::min(scan.upper, scan.m) == 1, split = scan.upper < scan.m;
  if (first && split)
    return scan.whole ? scan_first<kAbs, true, true, true>(v, n, shift, lanes, scan)
                      : scan_first<kAbs, true, false, true>(v, n, shift, lanes, scan);
  if (first)
    return scan.whole ? scan_first<kAbs, true, true, false>(v, n, shift, lanes, scan)
                      : scan_first<kAbs, true, false, false>(v, n, shift, lanes, scan);
  return scan.whole ? scan_first<kAbs, false, true, true>(v, n, shift, lanes, scan)
                    : scan_first<kAbs, false, false, true>(v, n, shift, lanes, scan);
}

}  // namespace

PARITY_AVX512 Extremes<float> scan_block(const float* v, int64_t n, double shift, Lanes& lanes,
                                         uint32_t* keys, bool magnitudes) {
  StoreKeys step{keys};
  return magnitudes ? sweep<true>(v, n, shift, lanes, step)
                    : sweep<false>(v, n, shift, lanes, step);
}

PARITY_AVX512 void interval_block(const uint32_t* keys, int64_t n,
                                  const IntervalScan<uint32_t>& scan) {
  const size_t first = std::min(scan.upper, scan.m);
  IntervalScan<uint32_t> all = scan;
  all.m = first;
  count_all(keys, n, all);
  if (first == scan.m) return;
  // The upper intervals see only the keys at or above their lowest end.
  alignas(64) uint32_t high[kMaxBlock + 16];
  Above above(scan.lo[first], high);
  for (int64_t i = 0; i < n; i += 16) above.step(_mm512_loadu_si512(keys + i), tail_mask(n - i));
  count_upper(high, above.n, n, first, scan);
}

PARITY_AVX512 Extremes<float> scan_intervals(const float* v, int64_t n, double shift, Lanes& lanes,
                                             bool magnitudes, const IntervalScan<uint32_t>& scan) {
  // One loop when at most one interval lies below the upper ones (the report's median); else
  // the keys are stored and counted after.
  if (scan.m > 0 && std::min(scan.upper, scan.m) <= 1)
    return magnitudes ? scan_fused<true>(v, n, shift, lanes, scan)
                      : scan_fused<false>(v, n, shift, lanes, scan);
  alignas(64) uint32_t keys[kMaxBlock + 16];
  const Extremes<float> e = avx512::scan_block(v, n, shift, lanes, keys, magnitudes);
  if (scan.m > 0) avx512::interval_block(keys, n, scan);
  return e;
}

}  // namespace parity::kernels::avx512

#endif  // __x86_64__
