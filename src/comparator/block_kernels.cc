// The portable block kernels: simple loops the compiler vectorises (AVX2 clones where the CPU
// has it), and the path choice.
#include "comparator/block_kernels.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "comparator/radix_select.h"

namespace parity::kernels {

namespace {

template <typename T>
__attribute__((always_inline)) inline void sums_body(const T* v, int64_t n, double shift,
                                                     Lanes& l) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) {
      const double x = static_cast<double>(v[i + j]);
      const double d = x - shift;
      l.sum[j] += d;
      l.sumsq[j] += d * d;
      l.sum_abs[j] += std::fabs(x);
    }
  for (int j = 0; i < n; ++i, ++j) {
    const double x = static_cast<double>(v[i]);
    const double d = x - shift;
    l.sum[j] += d;
    l.sumsq[j] += d * d;
    l.sum_abs[j] += std::fabs(x);
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
  Extremes<T> e{kInf, -kInf, 0};
  for (int j = 0; j < kWidth; ++j) {
    e.min = mn[j] < e.min ? mn[j] : e.min;
    e.max = mx[j] > e.max ? mx[j] : e.max;
    e.nans += nans[j];
  }
  for (; i < n; ++i) {
    const T x = v[i];
    e.min = x < e.min ? x : e.min;
    e.max = x > e.max ? x : e.max;
    e.nans += x != x;
  }
  return e;
}

template <typename T, typename K>
__attribute__((always_inline)) inline Extremes<T> scan_body(const T* v, int64_t n, double shift,
                                                            Lanes& l, K* keys) {
  sums_body(v, n, shift, l);
  for (int64_t i = 0; i < n; ++i) keys[i] = radix::key_of(v[i]);
  return extremes_body(v, n);
}

__attribute__((target_clones("avx2", "default"))) Extremes<float> scan_f32(
    const float* v, int64_t n, double shift, Lanes& l, uint32_t* keys) {
  return scan_body(v, n, shift, l, keys);
}
__attribute__((target_clones("avx2", "default"))) Extremes<double> scan_f64(
    const double* v, int64_t n, double shift, Lanes& l, uint64_t* keys) {
  return scan_body(v, n, shift, l, keys);
}

// Per interval, the keys below it, in it and at its low end (counted in the key type: a block's
// counts fit); per key, whether it lies strictly between the ends of an interval
// (1 <= key - lo < width, as `key - lo - 1 < width - 1` in unsigned arithmetic; an interval
// narrower than 2 holds nothing strictly between).
template <typename K>
__attribute__((always_inline)) inline void interval_body(const K* keys, int64_t n, const K* lo,
                                                         const K* width, size_t m, K* hit,
                                                         int64_t* counts) {
  for (int64_t i = 0; i < n; ++i) hit[i] = 0;
  for (size_t j = 0; j < m; ++j) {
    const K l = lo[j], w = width[j], between = w >= 2 ? w - 1 : 0;
    K below = 0, inside = 0, at_lo = 0;
    for (int64_t i = 0; i < n; ++i) {
      const K d = keys[i] - l;
      below += keys[i] < l;
      inside += d <= w;
      at_lo += d == 0;
      hit[i] |= static_cast<K>(d - 1) < between;
    }
    counts[3 * j] += static_cast<int64_t>(below);
    counts[3 * j + 1] += static_cast<int64_t>(inside);
    counts[3 * j + 2] += static_cast<int64_t>(at_lo);
  }
}

__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) void interval_f32(
    const uint32_t* keys, int64_t n, const uint32_t* lo, const uint32_t* width, size_t m,
    uint32_t* hit, int64_t* counts) {
  interval_body(keys, n, lo, width, m, hit, counts);
}
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) void interval_f64(
    const uint64_t* keys, int64_t n, const uint64_t* lo, const uint64_t* width, size_t m,
    uint64_t* hit, int64_t* counts) {
  interval_body(keys, n, lo, width, m, hit, counts);
}

// The keys flagged in hit, in order: groups without a flag skipped at once (hits are few), the
// rest stored without a branch per key (hits are irregular).
template <typename K>
int64_t keep_hits(const K* keys, const K* hit, int64_t n, K* kept) {
  int64_t hits = 0;
  constexpr int64_t kGroup = 64 / sizeof(K);  // one cache line of flags, read as 8 words
  int64_t at = 0;
  for (; at + kGroup <= n; at += kGroup) {
    uint64_t words[8];
    std::memcpy(words, hit + at, sizeof words);
    if ((words[0] | words[1] | words[2] | words[3] | words[4] | words[5] | words[6] |
         words[7]) == 0)
      continue;
    for (int64_t i = at; i < at + kGroup; ++i) {
      kept[hits] = keys[i];
      hits += hit[i] != 0;
    }
  }
  for (int64_t i = at; i < n; ++i) {
    kept[hits] = keys[i];
    hits += hit[i] != 0;
  }
  return hits;
}

template <typename K>
int64_t interval_portable(const K* keys, int64_t n, const K* lo, const K* width, size_t m,
                          int64_t* counts, bool gather, K* kept) {
  alignas(64) K hit[1024];
  int64_t hits = 0;
  for (int64_t at = 0; at < n; at += 1024) {  // blocks are at most this long; keeps hit bounded
    const int64_t len = std::min<int64_t>(1024, n - at);
    if constexpr (sizeof(K) == 4) interval_f32(keys + at, len, lo, width, m, hit, counts);
    else interval_f64(keys + at, len, lo, width, m, hit, counts);
    if (gather) hits += keep_hits(keys + at, hit, len, kept + hits);
  }
  return hits;
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

Extremes<float> scan_block(const float* v, int64_t n, double shift, Lanes& lanes,
                           uint32_t* keys) {
#if defined(__x86_64__)
  if (kernel_path() == KernelPath::kAvx512) return avx512::scan_block(v, n, shift, lanes, keys);
#endif
  return scan_f32(v, n, shift, lanes, keys);
}

Extremes<double> scan_block(const double* v, int64_t n, double shift, Lanes& lanes,
                            uint64_t* keys) {
  return scan_f64(v, n, shift, lanes, keys);
}

int64_t interval_block(const uint32_t* keys, int64_t n, const uint32_t* lo,
                       const uint32_t* width, size_t m, size_t upper, int64_t* counts,
                       bool gather, uint32_t* kept) {
#if defined(__x86_64__)
  if (kernel_path() == KernelPath::kAvx512)
    return avx512::interval_block(keys, n, lo, width, m, upper, counts, gather, kept);
#endif
  return interval_portable(keys, n, lo, width, m, counts, gather, kept);
}

int64_t interval_block(const uint64_t* keys, int64_t n, const uint64_t* lo,
                       const uint64_t* width, size_t m, size_t upper, int64_t* counts,
                       bool gather, uint64_t* kept) {
  return interval_portable(keys, n, lo, width, m, counts, gather, kept);
}

}  // namespace parity::kernels
