// The portable block kernels: simple loops the compiler vectorises (AVX2 clones where the CPU
// has it), and the path choice.
#include "stats/block_kernels.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "stats/radix_select.h"

namespace parity::kernels {

namespace {

template <bool kAbs, typename T>
__attribute__((always_inline)) inline void sums_body(const T* v, int64_t n, double shift,
                                                     Lanes& l) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) {
      const double x = static_cast<double>(v[i + j]);
      const double d = x - shift;
      l.sum[j] += d;
      l.sumsq[j] = std::fma(d, d, l.sumsq[j]);
      if (kAbs) l.sum_abs[j] += std::fabs(x);
    }
  for (int j = 0; i < n; ++i, ++j) {
    const double x = static_cast<double>(v[i]);
    const double d = x - shift;
    l.sum[j] += d;
    l.sumsq[j] = std::fma(d, d, l.sumsq[j]);
    if (kAbs) l.sum_abs[j] += std::fabs(x);
  }
}

template <typename T>
__attribute__((always_inline)) inline Extremes<T> extremes_body(const T* v, int64_t n) {
  // GCC vector extensions: 8 lanes, compare-and-select (x < m ? x : m skips NaN), NaN masks
  // (-1 where x != x) subtracted into counters as wide as the values.
  constexpr int kWidth = 8;  // values per compare
  using Count = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  typedef T Vec __attribute__((vector_size(sizeof(T) * kWidth)));
  typedef Count CountVec __attribute__((vector_size(sizeof(T) * kWidth)));
  constexpr T kInf = std::numeric_limits<T>::infinity();
  Vec mn, mx;
  CountVec nans = {};
  for (int j = 0; j < kWidth; ++j) mn[j] = kInf, mx[j] = -kInf;
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) {
    Vec x;
    std::memcpy(&x, v + i, sizeof x);
    mn = x < mn ? x : mn;
    mx = x > mx ? x : mx;
    nans -= (x != x);
  }
  Extremes<T> e{kInf, -kInf, false};
  for (int j = 0; j < kWidth; ++j) {
    e.min = mn[j] < e.min ? mn[j] : e.min;
    e.max = mx[j] > e.max ? mx[j] : e.max;
    e.has_nan |= nans[j] != 0;
  }
  for (; i < n; ++i) {
    const T x = v[i];
    e.min = x < e.min ? x : e.min;
    e.max = x > e.max ? x : e.max;
    e.has_nan |= x != x;
  }
  return e;
}

template <typename T, typename K>
__attribute__((always_inline)) inline Extremes<T> scan_body(const T* v, int64_t n, double shift,
                                                            Lanes& l, K* keys, bool magnitudes) {
  if (magnitudes)
    sums_body<true>(v, n, shift, l);
  else
    sums_body<false>(v, n, shift, l);
  for (int64_t i = 0; i < n; ++i) keys[i] = radix::key_of(v[i]);
  return extremes_body(v, n);
}

// x86-64-v3 has FMA; elsewhere std::fma is a library call, slower but the same bits.
__attribute__((target_clones("arch=x86-64-v3", "default"))) Extremes<float> scan_f32(
    const float* v, int64_t n, double shift, Lanes& l, uint32_t* keys, bool magnitudes) {
  return scan_body(v, n, shift, l, keys, magnitudes);
}
__attribute__((target_clones("arch=x86-64-v3", "default"))) Extremes<double> scan_f64(
    const double* v, int64_t n, double shift, Lanes& l, uint64_t* keys, bool magnitudes) {
  return scan_body(v, n, shift, l, keys, magnitudes);
}

// One interval's keys below it, in it, at its low end and strictly between its ends
// (1 <= key - lo < width, as `key - lo - 1 < width - 1` in unsigned arithmetic; an interval
// narrower than 2 holds nothing strictly between), counted in the key type (a block's counts
// fit) by a loop the compiler vectorises.
struct IntervalCounts {
  int64_t below, inside, at_lo, between;
};

template <typename K>
__attribute__((always_inline)) inline IntervalCounts interval_body(const K* keys, int64_t n, K lo,
                                                                   K width) {
  const K strictly = width >= 2 ? width - 1 : 0;
  K below = 0, inside = 0, at_lo = 0, between = 0;
  for (int64_t i = 0; i < n; ++i) {
    const K d = keys[i] - lo;
    below += keys[i] < lo;
    inside += d <= width;
    at_lo += d == 0;
    between += static_cast<K>(d - 1) < strictly;
  }
  return {static_cast<int64_t>(below), static_cast<int64_t>(inside), static_cast<int64_t>(at_lo),
          static_cast<int64_t>(between)};
}

__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) IntervalCounts interval_f32(
    const uint32_t* keys, int64_t n, uint32_t lo, uint32_t width) {
  return interval_body(keys, n, lo, width);
}
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) IntervalCounts interval_f64(
    const uint64_t* keys, int64_t n, uint64_t lo, uint64_t width) {
  return interval_body(keys, n, lo, width);
}

template <typename K>
void interval_portable(const K* keys, int64_t n, const IntervalScan<K>& scan) {
  for (size_t j = 0; j < scan.m; ++j) {
    const K lo = scan.lo[j], width = scan.width[j];
    IntervalCounts c;
    if constexpr (sizeof(K) == 4)
      c = interval_f32(keys, n, lo, width);
    else
      c = interval_f64(keys, n, lo, width);
    int64_t* counts = scan.counts + 3 * j;
    counts[0] += c.below;
    counts[1] += c.inside;
    if (!scan.whole) counts[2] += c.at_lo;  // whole intervals count nothing at their low end
    if (!scan.kept) continue;
    scan.kept_count[j] = 0;
    if (!scan.whole && c.between == 0) continue;
    // Stored without a branch per key: hits are irregular. Strictly between the ends is
    // 1 <= key - lo < width; the whole interval 0 <= key - lo <= width.
    K* kept = scan.kept[j];
    int64_t count = 0;
    const K from = scan.whole ? 0 : 1, span = scan.whole ? width : (width >= 2 ? width - 2 : 0);
    const bool none = !scan.whole && width < 2;
    for (int64_t i = 0; i < n && !none; ++i) {
      kept[count] = keys[i];
      count += static_cast<K>(keys[i] - lo - from) <= span;
    }
    scan.kept_count[j] = count;
  }
}

bool cpu_has(KernelPath path) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (path == KernelPath::kAvx512)
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#endif
  return path == KernelPath::kPortable;
}

constexpr int kDetected = -1;
std::atomic<int> g_forced{kDetected};

}  // namespace

KernelPath kernel_path() {
  static const KernelPath detected =
      cpu_has(KernelPath::kAvx512) ? KernelPath::kAvx512 : KernelPath::kPortable;
  const int forced = g_forced.load(std::memory_order_relaxed);
  return forced == kDetected ? detected : static_cast<KernelPath>(forced);
}

std::vector<KernelPath> supported_kernel_paths() {
  std::vector<KernelPath> paths;
  for (KernelPath path : {KernelPath::kPortable, KernelPath::kAvx512})
    if (cpu_has(path)) paths.push_back(path);
  return paths;
}

void force_kernel_path(KernelPath path) {
  g_forced.store(static_cast<int>(path), std::memory_order_relaxed);
}
void reset_kernel_path() { g_forced.store(kDetected, std::memory_order_relaxed); }

Extremes<float> scan_block(const float* v, int64_t n, double shift, Lanes& lanes, uint32_t* keys,
                           bool magnitudes) {
#if defined(__x86_64__)
  if (kernel_path() == KernelPath::kAvx512)
    return avx512::scan_block(v, n, shift, lanes, keys, magnitudes);
#endif
  return scan_f32(v, n, shift, lanes, keys, magnitudes);
}

Extremes<double> scan_block(const double* v, int64_t n, double shift, Lanes& lanes, uint64_t* keys,
                            bool magnitudes) {
  return scan_f64(v, n, shift, lanes, keys, magnitudes);
}

void interval_block(const uint32_t* keys, int64_t n, const IntervalScan<uint32_t>& scan) {
#if defined(__x86_64__)
  if (kernel_path() == KernelPath::kAvx512) return avx512::interval_block(keys, n, scan);
#endif
  interval_portable(keys, n, scan);
}

void interval_block(const uint64_t* keys, int64_t n, const IntervalScan<uint64_t>& scan) {
  interval_portable(keys, n, scan);
}

namespace {

template <typename T, typename K>
Extremes<T> scan_then_count(const T* v, int64_t n, double shift, Lanes& lanes, bool magnitudes,
                            const IntervalScan<K>& scan) {
  alignas(64) K keys[1024 + 16];  // blocks are at most kStatsBlock long
  const Extremes<T> e = scan_block(v, n, shift, lanes, keys, magnitudes);
  if (scan.m > 0) interval_block(keys, n, scan);
  return e;
}

}  // namespace

Extremes<float> scan_intervals(const float* v, int64_t n, double shift, Lanes& lanes,
                               bool magnitudes, const IntervalScan<uint32_t>& scan) {
#if defined(__x86_64__)
  if (kernel_path() == KernelPath::kAvx512)
    return avx512::scan_intervals(v, n, shift, lanes, magnitudes, scan);
#endif
  return scan_then_count(v, n, shift, lanes, magnitudes, scan);
}

Extremes<double> scan_intervals(const double* v, int64_t n, double shift, Lanes& lanes,
                                bool magnitudes, const IntervalScan<uint64_t>& scan) {
  return scan_then_count(v, n, shift, lanes, magnitudes, scan);
}

}  // namespace parity::kernels
