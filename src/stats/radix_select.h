// Exact order statistics (the selection half of fused_stats.cc): keys that order as the values
// do, the slabs the passes run in, the sampled brackets the fused pass gathers into, and the
// radix selection (light passes narrowing key histograms to the wanted ranks) behind them.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "core/thread_pool.h"
#include "stats/block_kernels.h"
#include "stats/fused_stats.h"

namespace parity::radix {

constexpr int kRadixBits = 16;

// Order-preserving keys: the IEEE bits with the sign flipped for positive values and all bits
// flipped for negative ones order as unsigned integers as the values do (-0 before +0; NaN
// outside both infinities, never selected: a NaN makes every order statistic NaN).
inline uint32_t key_of(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b ^ (static_cast<uint32_t>(static_cast<int32_t>(b) >> 31) | 0x80000000u);
}
inline uint64_t key_of(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b ^ (static_cast<uint64_t>(static_cast<int64_t>(b) >> 63) | (uint64_t{1} << 63));
}
inline double value_of_key(uint64_t key, bool single) {
  if (single) {
    const uint32_t k = static_cast<uint32_t>(key);
    const uint32_t b = (k >> 31) ? k ^ 0x80000000u : ~k;
    float v;
    std::memcpy(&v, &b, sizeof v);
    return v;
  }
  const uint64_t b = (key >> 63) ? key ^ (uint64_t{1} << 63) : ~key;
  double v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

// Buckets up to this many elements are gathered; larger ones are refined (at most 1/256 of the
// data each, so gathered keys stay small beside it).
inline int64_t gather_limit(int64_t n) { return std::max<int64_t>(int64_t{1} << 16, n / 256); }

// Elements per selection-pass work item: whole chunks, few enough items that the per-item
// histograms cost little, enough for the threads.
inline int64_t chunks_per_slab(int64_t chunks) { return std::max<int64_t>(16, (chunks + 63) / 64); }

// Runs fn(slab_begin, slab_end, block) over slabs of whole chunks, in parallel.
template <typename Fn>
void for_each_slab(int64_t n, const Fn& fn) {
  const int64_t chunks = (n + kStatsGrain - 1) / kStatsGrain;
  const int64_t per_slab = chunks_per_slab(chunks);
  const int64_t slabs = (chunks + per_slab - 1) / per_slab;
  parallel_for(slabs, 1, [&](int64_t first, int64_t last) {
    auto block = std::make_unique_for_overwrite<StreamBlock>();
    for (int64_t s = first; s < last; ++s)
      fn(s * per_slab * kStatsGrain, std::min(n, (s + 1) * per_slab * kStatsGrain), *block);
  });
}

struct StreamInfo {
  bool single = false;  // float32 keys (32 bits) or double keys (64)
  int key_bits = 64;
};

// Sampled brackets: key intervals around a stream's wanted ranks, chosen from a strided sample
// before the fused pass, which then counts the keys below each interval, in it and at its low
// end, and gathers the keys strictly between its ends. A rank inside its interval is selected
// from the gathered keys with no further pass; a miss (a sample unlike the whole) or too many
// keys to gather falls back to select_ranks.
struct Bracket {
  std::vector<uint64_t> lo, hi;  // inclusive, ascending, disjoint
  std::vector<int64_t> room;     // per interval: most keys gathered (well above the sample's
                                 // estimate)
  size_t upper = 0;     // the first interval above 3/4 of the keys (kernels::interval_block)
  bool single = false;  // 32-bit keys (float32 values)
  // No end is repeated in the sample: every key in an interval is gathered, ends included
  // (kernels::IntervalScan::whole). Else the ends are counted, not gathered: a repeated value
  // (zeros in differences, a ReLU's output) would fill the buffers.
  bool whole = false;
};

// What a pass found in one stream's intervals, shared by the pass's threads. Counts are exact
// integers added once per slab, and gathered keys are appended at places reserved atomically in
// buffers sized from the sample (a multiset: the selection does not depend on the thread count).
class BracketFound {
 public:
  explicit BracketFound(const Bracket& b);

  // One slab's share of a pass: its counts, and the keys it gathered, staged so that they reach
  // the shared buffers in large pieces.
  class Slab {
   public:
    explicit Slab(const BracketFound& found);

   private:
    friend class BracketFound;
    std::vector<int64_t> counts;           // 3 per interval
    std::unique_ptr<uint32_t[]> staged32;  // not filled: written before read
    std::unique_ptr<uint64_t[]> staged;
    std::vector<int64_t> staged_count;
  };
  // kernels::scan_block of a block (n <= kStatsBlock), with its keys counted into the
  // intervals and those the intervals keep gathered.
  kernels::Extremes<float> scan(const float* v, int64_t n, double shift, kernels::Lanes& lanes,
                                bool magnitudes, Slab& slab);
  kernels::Extremes<double> scan(const double* v, int64_t n, double shift, kernels::Lanes& lanes,
                                 bool magnitudes, Slab& slab);
  // Adds what a slab found (thread-safe).
  void finish(Slab& slab);
  // The keys at `ranks` (reorders the gathered keys); false when a rank missed its interval or
  // an interval gathered more keys than its buffer holds, and nothing is stored then.
  bool resolve(const std::vector<int64_t>& ranks, std::map<int64_t, uint64_t>& out);

 private:
  template <typename T>
  kernels::Extremes<T> scan_values(const T* v, int64_t n, double shift, kernels::Lanes& lanes,
                                   bool magnitudes, Slab& slab);
  template <typename K>
  K* staging(Slab& slab, size_t j);
  // Moves interval j's staged keys to its buffer.
  template <typename K>
  void flush(Slab& slab, size_t j);
  template <typename K>
  K* buffer(size_t j);

  const Bracket& bracket_;
  std::vector<int64_t> counts_;  // per interval: keys below it, in it, at its low end
  // Per interval, the keys it keeps (strictly between its ends, or all for whole intervals), in
  // any order, in buffers of fixed size: keys32_ for float32 streams (32-bit keys select twice
  // as fast as 64-bit ones), keys_ otherwise.
  std::vector<std::unique_ptr<uint32_t[]>> keys32_;
  std::vector<std::unique_ptr<uint64_t[]>> keys_;
  std::unique_ptr<std::atomic<int64_t>[]> used_;
  std::atomic<bool> overflow_{false};
  std::mutex mutex_;  // counts_
};

// Blocks of kStatsBlock elements from one sampled block to the next: every 64th, sparser past
// 256 Mi elements (4096 blocks sampled), which keeps the sample's selections cheap (a denser
// sample narrows the intervals, but the fused pass's cost hardly depends on their width).
inline int64_t sample_stride(int64_t n) { return std::max<int64_t>(64, n / kStatsBlock / 4096); }

// The intervals around `ranks` (ascending) of n keys, from a sample of them (reordered).
Bracket bracket_from_sample(std::vector<uint64_t>& sample, int64_t n,
                            const std::vector<int64_t>& ranks, bool single);
Bracket bracket_from_sample(std::vector<uint32_t>& sample, int64_t n,
                            const std::vector<int64_t>& ranks, bool single);

// The keys at the wanted ranks (ascending, distinct) of every stream. first_level[s] is a
// histogram of the top kRadixBits key bits already counted, or empty: then a small stream is
// gathered whole and a large one histogrammed in a pass of its own.
std::vector<std::map<int64_t, uint64_t>> select_ranks(
    const StreamSource& src, const std::vector<StreamInfo>& info,
    const std::vector<std::vector<int64_t>>& ranks,
    const std::vector<std::vector<uint64_t>>& first_level);

}  // namespace parity::radix
