#include "stats/fused_stats.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>

#include "core/thread_pool.h"
#include "stats/block_kernels.h"
#include "stats/radix_select.h"

namespace parity {

namespace {

using kernels::Extremes;
using kernels::kLanes;
using kernels::Lanes;
using radix::for_each_slab;
using radix::key_of;
using radix::StreamInfo;
using radix::value_of_key;

// The sum lanes alone (the same additions as kernels::scan_block's sums).
template <typename T>
__attribute__((always_inline)) inline void sum_body(const T* v, int64_t n, double shift,
                                                    double* lane) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) lane[j] += static_cast<double>(v[i + j]) - shift;
  for (int j = 0; i < n; ++i, ++j) lane[j] += static_cast<double>(v[i]) - shift;
}

__attribute__((target_clones("avx2", "default"))) void sum_f32(const float* v, int64_t n,
                                                               double shift, double* lane) {
  sum_body(v, n, shift, lane);
}
__attribute__((target_clones("avx2", "default"))) void sum_f64(const double* v, int64_t n,
                                                               double shift, double* lane) {
  sum_body(v, n, shift, lane);
}

double lane_total(const double* lane) {
  double t = 0;
  for (int j = 0; j < kLanes; ++j) t += lane[j];
  return t;
}

// One stream's results over a chunk (sums) or over everything seen so far (the rest).
struct Partial {
  double sum = 0, sumsq = 0, sum_abs = 0;
  double min = 0, max = 0;
  int64_t argmin = -1, argmax = -1, first_nan = -1;
};

// The first i with v[i] == x (as values: -0 equals +0; x is in v), 16 at a time: a new extreme
// is found several times per chunk, and a scalar search for it was a pass of its own.
template <typename T>
__attribute__((always_inline)) inline int64_t first_equal_body(const T* v, int64_t n, T x) {
  // GCC vector extensions: a compare of 64 bytes, its mask tested as eight words.
  using Int = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  typedef T Vec __attribute__((vector_size(64)));
  typedef Int Mask __attribute__((vector_size(64)));
  constexpr int64_t kWidth = 64 / sizeof(T);
  const Vec xs = Vec{} + x;
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) {
    Vec a;
    std::memcpy(&a, v + i, sizeof a);
    const Mask eq = a == xs;
    uint64_t words[8];
    std::memcpy(words, &eq, sizeof words);
    if ((words[0] | words[1] | words[2] | words[3] | words[4] | words[5] | words[6] | words[7]) !=
        0)
      break;
  }
  for (; i < n; ++i)
    if (v[i] == x) return i;
  return -1;
}
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) int64_t first_equal(
    const float* v, int64_t n, float x) {
  return first_equal_body(v, n, x);
}
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) int64_t first_equal(
    const double* v, int64_t n, double x) {
  return first_equal_body(v, n, x);
}

// A block's extremes and first NaN, with their positions (the block starts at `begin`), folded
// into p (the first of equal values wins, as NumPy's argmin and argmax).
template <typename T>
void fold_block(const T* v, int64_t begin, int64_t n, const Extremes<T>& e, Partial& p) {
  if (e.has_nan && p.first_nan < 0)
    for (int64_t i = 0; i < n; ++i)
      if (v[i] != v[i]) {
        p.first_nan = begin + i;
        break;
      }
  if (e.has_nan) return;  // a NaN makes min and max NaN: the block's extremes do not matter
  // e.min and e.max are values of the block (a zero of either sign matches both).
  if (p.argmin < 0 || e.min < p.min) {
    const int64_t i = first_equal(v, n, e.min);
    if (i >= 0) p.min = static_cast<double>(v[i]), p.argmin = begin + i;
  }
  if (p.argmax < 0 || e.max > p.max) {
    const int64_t i = first_equal(v, n, e.max);
    if (i >= 0) p.max = static_cast<double>(v[i]), p.argmax = begin + i;
  }
}

void fold(const Partial& p, Partial& t) {
  t.sum += p.sum, t.sumsq += p.sumsq, t.sum_abs += p.sum_abs;
  if (p.first_nan >= 0 && t.first_nan < 0) t.first_nan = p.first_nan;
  if (p.argmin >= 0 && (t.argmin < 0 || p.min < t.min)) t.min = p.min, t.argmin = p.argmin;
  if (p.argmax >= 0 && (t.argmax < 0 || p.max > t.max)) t.max = p.max, t.argmax = p.argmax;
}

// NumPy's positions: the median averages the two middle values; quantile q (linear method) sits
// at q * (n - 1) between its floor and ceiling ranks.
struct Position {
  int64_t lo;
  double t;
};
Position position_of(double pos, int64_t n) {
  if (!(pos >= 0)) pos = 0;
  if (pos > static_cast<double>(n - 1)) pos = static_cast<double>(n - 1);
  const int64_t lo = static_cast<int64_t>(std::floor(pos));
  return {lo, pos - static_cast<double>(lo)};
}

void add_ranks(Position p, int64_t n, std::vector<int64_t>& ranks) {
  ranks.push_back(p.lo);
  if (p.t != 0 && p.lo + 1 < n) ranks.push_back(p.lo + 1);
}

double interpolate(Position p, int64_t n, const std::map<int64_t, uint64_t>& keys, bool single,
                   bool numpy_lerp) {
  const double a = value_of_key(keys.at(p.lo), single);
  if (p.t == 0 || p.lo + 1 >= n) return a;
  const double b = value_of_key(keys.at(p.lo + 1), single);
  if (!numpy_lerp) return (a + b) / 2;
  // NumPy's _lerp: computed from whichever end is nearer, so that t = 1 gives b exactly.
  const double diff = b - a;
  return p.t >= 0.5 ? b - diff * (1 - p.t) : a + diff * p.t;
}

// Where the sampled blocks start: one block of kStatsBlock at a pseudo-random place in every
// window of sample_stride blocks, so that data periodic in a power of two (the channels of
// 256x256 images, a generator's low bits) cannot line up with the sample and make it unlike
// the whole. Fixed by n alone: the same data gives the same sample and the same passes.
std::vector<int64_t> sample_starts(int64_t n) {
  const int64_t window = radix::sample_stride(n) * kStatsBlock;
  std::vector<int64_t> starts;
  uint64_t state = 0;
  for (int64_t w = 0; w < n; w += window) {
    const int64_t span = std::min(window, n - w);
    // splitmix64
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const int64_t room = span - std::min(kStatsBlock, span);
    starts.push_back(w + static_cast<int64_t>(z % static_cast<uint64_t>(room + 1)));
  }
  return starts;
}

// The keys of the sampled blocks of the streams with ranks (32-bit keys for float32 streams,
// 64-bit ones otherwise), read in parallel: each sampled block has its own place.
void read_sample(const StreamSource& src, const std::vector<StreamInfo>& info,
                 const std::vector<std::vector<int64_t>>& ranks,
                 std::vector<std::vector<uint32_t>>& sample32,
                 std::vector<std::vector<uint64_t>>& sample) {
  const size_t ns = info.size();
  const int64_t n = src.size();
  const std::vector<int64_t> starts = sample_starts(n);
  const auto blocks = static_cast<int64_t>(starts.size());
  // Every block but the last is whole.
  const int64_t last = std::min(kStatsBlock, n - starts.back());
  const auto size = static_cast<size_t>((blocks - 1) * kStatsBlock + last);
  for (size_t s = 0; s < ns; ++s) {
    if (ranks[s].empty()) continue;
    if (info[s].single)
      sample32[s].resize(size);
    else
      sample[s].resize(size);
  }
  parallel_for(blocks, 16, [&](int64_t first, int64_t end) {
    auto b = std::make_unique_for_overwrite<StreamBlock>();
    for (int64_t k = first; k < end; ++k) {
      const int64_t at = starts[static_cast<size_t>(k)], m = std::min(kStatsBlock, n - at);
      src.read(at, m, *b);
      for (size_t s = 0; s < ns; ++s) {
        if (!sample32[s].empty()) {
          uint32_t* out = sample32[s].data() + k * kStatsBlock;
          for (int64_t i = 0; i < m; ++i) out[i] = key_of(b->f[s][i]);
        } else if (!sample[s].empty()) {
          uint64_t* out = sample[s].data() + k * kStatsBlock;
          for (int64_t i = 0; i < m; ++i) out[i] = key_of(b->d[s][i]);
        }
      }
    }
  });
}

// Brackets around the ranks of every stream too large to gather whole, from a sample of one
// block in every sample_stride.
std::vector<radix::Bracket> sample_brackets(const StreamSource& src,
                                            const std::vector<StreamInfo>& info,
                                            const std::vector<std::vector<int64_t>>& ranks) {
  const size_t ns = info.size();
  const int64_t n = src.size();
  std::vector<radix::Bracket> brackets(ns);
  bool any = false;
  for (size_t s = 0; s < ns; ++s) any |= !ranks[s].empty() && n > radix::gather_limit(n);
  if (!any) return brackets;
  // 32-bit keys for float32 streams: half the memory, and their selections twice as fast.
  std::vector<std::vector<uint64_t>> sample(ns);
  std::vector<std::vector<uint32_t>> sample32(ns);
  read_sample(src, info, ranks, sample32, sample);
  parallel_for(static_cast<int64_t>(ns), 1, [&](int64_t first, int64_t last) {
    for (size_t s = static_cast<size_t>(first); s < static_cast<size_t>(last); ++s)
      if (!ranks[s].empty())
        brackets[s] = info[s].single ? radix::bracket_from_sample(sample32[s], n, ranks[s], true)
                                     : radix::bracket_from_sample(sample[s], n, ranks[s], false);
  });
  return brackets;
}

}  // namespace

double LaneSum::total() const { return lane_total(lane); }

void add_shifted(LaneSum& sum, const double* v, int64_t n, double shift) {
  sum_f64(v, n, shift, sum.lane);
}

void add_shifted(LaneSum& sum, const float* v, int64_t n, double shift) {
  sum_f32(v, n, shift, sum.lane);
}

void NumArraySource::read(int64_t begin, int64_t n, StreamBlock& block) const {
  const double* v = a_.values.data() + begin;
  if (a_.kind == NumKind::kFloat32) {
    for (int64_t i = 0; i < n; ++i) block.fbuf[0][i] = static_cast<float>(v[i]);
    block.f[0] = block.fbuf[0];
  } else {
    block.d[0] = v;
  }
}

FusedStats compute_fused_stats(const StreamSource& src,
                               const std::vector<StreamRequest>& requests) {
  const int streams = src.streams();
  const int64_t n = src.size();
  const size_t ns = static_cast<size_t>(streams);
  std::vector<StreamInfo> info(ns);
  for (int s = 0; s < streams; ++s) {
    info[static_cast<size_t>(s)].single = src.kind(s) == NumKind::kFloat32;
    info[static_cast<size_t>(s)].key_bits = info[static_cast<size_t>(s)].single ? 32 : 64;
  }
  auto wants_order = [&](size_t s) {
    return s < requests.size() && (requests[s].median || !requests[s].quantiles.empty());
  };
  // The ranks every requested median and quantile needs (NumPy's positions).
  std::vector<std::vector<int64_t>> ranks(ns);
  std::vector<std::vector<Position>> positions(ns);
  for (size_t s = 0; s < ns; ++s) {
    if (!wants_order(s) || n == 0) continue;
    if (requests[s].median) {
      positions[s].push_back(position_of(static_cast<double>(n - 1) / 2, n));
      add_ranks(positions[s].back(), n, ranks[s]);
    }
    for (double q : requests[s].quantiles) {
      positions[s].push_back(position_of(q * static_cast<double>(n - 1), n));
      add_ranks(positions[s].back(), n, ranks[s]);
    }
    std::sort(ranks[s].begin(), ranks[s].end());
    ranks[s].erase(std::unique(ranks[s].begin(), ranks[s].end()), ranks[s].end());
  }
  // Small arrays are selected in full; larger ones are bracketed from a sample, so that the
  // fused pass itself gathers the keys around the wanted ranks.
  std::vector<radix::Bracket> brackets = sample_brackets(src, info, ranks);

  // Shifts: the first element, so that the variance does not cancel catastrophically.
  auto first = std::make_unique_for_overwrite<StreamBlock>();
  std::vector<double> shift(ns, 0.0);
  if (n > 0) {
    src.read(0, 1, *first);
    for (size_t s = 0; s < ns; ++s) {
      const double v = info[s].single ? first->f[s][0] : first->d[s][0];
      shift[s] = std::isfinite(v) ? v : 0.0;
    }
  }

  // The mean magnitude of a stream without negative values is its mean (NumPy's too: abs is the
  // identity there), so only the others sum magnitudes.
  std::vector<char> magnitudes(ns);
  for (size_t s = 0; s < ns; ++s) magnitudes[s] = !src.nonnegative(static_cast<int>(s));
  const int64_t chunks = (n + kStatsGrain - 1) / kStatsGrain;
  std::vector<Partial> parts(static_cast<size_t>(chunks) * ns);
  std::vector<std::unique_ptr<radix::BracketFound>> found(ns);
  for (size_t s = 0; s < ns; ++s) found[s] = std::make_unique<radix::BracketFound>(brackets[s]);
  FusedStats r;
  std::mutex mutex;
  for_each_slab(n, [&](int64_t begin, int64_t end, StreamBlock& b) {
    std::vector<radix::BracketFound::Slab> in_brackets;
    for (size_t s = 0; s < ns; ++s) in_brackets.emplace_back(*found[s]);
    int64_t counts[2] = {0, 0};
    for (int64_t chunk = begin; chunk < end; chunk += kStatsGrain) {
      const int64_t chunk_end = std::min(end, chunk + kStatsGrain);
      Lanes lanes[kMaxStreams];
      Partial* p = &parts[static_cast<size_t>(chunk / kStatsGrain) * ns];
      for (int64_t at = chunk; at < chunk_end; at += kStatsBlock) {
        const int64_t m = std::min(kStatsBlock, chunk_end - at);
        src.read(at, m, b);
        src.count(b, m, counts);
        // The next block is fetched a part per stream, spread over this block's work.
        const int64_t part = kStatsBlock / static_cast<int64_t>(ns);
        for (size_t s = 0; s < ns; ++s) {
          if (at + m < end) src.prefetch(at + m + static_cast<int64_t>(s) * part, part);
          if (info[s].single) {
            const auto e =
                found[s]->scan(b.f[s], m, shift[s], lanes[s], magnitudes[s], in_brackets[s]);
            fold_block(b.f[s], at, m, e, p[s]);
          } else {
            const auto e =
                found[s]->scan(b.d[s], m, shift[s], lanes[s], magnitudes[s], in_brackets[s]);
            fold_block(b.d[s], at, m, e, p[s]);
          }
        }
      }
      for (size_t s = 0; s < ns; ++s) {
        p[s].sum = lane_total(lanes[s].sum);
        p[s].sumsq = lane_total(lanes[s].sumsq);
        p[s].sum_abs = lane_total(lanes[s].sum_abs);
      }
    }
    for (size_t s = 0; s < ns; ++s) found[s]->finish(in_brackets[s]);
    std::lock_guard<std::mutex> lock(mutex);
    r.counts[0] += counts[0];
    r.counts[1] += counts[1];
  });

  // Combined in chunk order: the same bits for any number of threads.
  r.basic.resize(ns);
  r.order.resize(ns);
  for (size_t s = 0; s < ns; ++s) {
    Partial t;
    for (int64_t c = 0; c < chunks; ++c) fold(parts[static_cast<size_t>(c) * ns + s], t);
    BasicStats& st = r.basic[s];
    const NumKind kind = src.kind(static_cast<int>(s));
    st.count = static_cast<size_t>(n);
    if (n > 0) {
      const double count = static_cast<double>(n);
      // Polygraphy takes the mean with a float32 accumulator (np.mean(dtype=float32)), even for
      // float64 data, which loses digits on large outputs. Parity accumulates in double and
      // rounds once to the data's own precision.
      const double mean_shifted = t.sum / count;
      st.mean = round_to_kind(shift[s] + mean_shifted, kind);
      double var = std::max(0.0, t.sumsq / count - mean_shifted * mean_shifted);
      if (!std::isfinite(t.sum)) var = NAN;  // inf - inf, as NumPy
      st.var = round_to_kind(var, kind);
      st.stddev = round_to_kind(std::sqrt(var), kind);
      st.avg_magnitude = magnitudes[s] ? round_to_kind(t.sum_abs / count, kind) : st.mean;
      st.has_nan = t.first_nan >= 0;
      if (st.has_nan) {
        st.min = st.max = NAN;
        st.argmin = st.argmax = t.first_nan;
      } else {
        st.min = t.min, st.argmin = t.argmin;
        st.max = t.max, st.argmax = t.argmax;
      }
    }
    if (st.has_nan) ranks[s].clear();  // every order statistic is NaN
  }

  // The ranks found in their brackets; the rest (a sample unlike the whole) by radix selection,
  // from a histogram of the top key bits in a pass of its own.
  std::vector<std::map<int64_t, uint64_t>> keys(ns);
  parallel_for(static_cast<int64_t>(ns), 1, [&](int64_t first, int64_t last) {
    for (size_t s = static_cast<size_t>(first); s < static_cast<size_t>(last); ++s)
      if (!brackets[s].lo.empty() && found[s]->resolve(ranks[s], keys[s])) ranks[s].clear();
  });
  found.clear();
  const auto selected =
      radix::select_ranks(src, info, ranks, std::vector<std::vector<uint64_t>>(ns));
  for (size_t s = 0; s < ns; ++s) keys[s].insert(selected[s].begin(), selected[s].end());
  for (size_t s = 0; s < ns && s < requests.size(); ++s) {
    const NumKind kind = src.kind(static_cast<int>(s));
    OrderStats& o = r.order[s];
    const bool has_nan = r.basic[s].has_nan;
    size_t next = 0;
    if (requests[s].median) {
      o.median =
          n == 0 ? 0.0
          : has_nan
              ? NAN
              : round_to_kind(interpolate(positions[s][next++], n, keys[s], info[s].single, false),
                              kind);
    }
    for (double q : requests[s].quantiles) {
      double v = INFINITY;
      if (has_nan)
        v = NAN;
      else if (n > 0)
        v = round_to_kind(interpolate(positions[s][next++], n, keys[s], info[s].single, true),
                          kind);
      o.quantiles.emplace_back(q, v);
    }
  }
  return r;
}

std::vector<std::array<int64_t, Histogram10::kBins>> stream_histograms(
    const StreamSource& src, const std::vector<const Histogram10*>& bins) {
  const size_t ns = static_cast<size_t>(src.streams());
  std::vector<std::array<int64_t, Histogram10::kBins>> counts(ns);
  std::vector<char> single(ns);
  for (size_t s = 0; s < ns; ++s) single[s] = src.kind(static_cast<int>(s)) == NumKind::kFloat32;
  std::mutex mutex;
  for_each_slab(src.size(), [&](int64_t begin, int64_t end, StreamBlock& b) {
    std::vector<std::array<int64_t, Histogram10::kBins>> local(ns);
    for (int64_t at = begin; at < end; at += kStatsBlock) {
      const int64_t m = std::min(kStatsBlock, end - at);
      src.read(at, m, b);
      for (size_t s = 0; s < ns && s < bins.size(); ++s) {
        if (!bins[s]) continue;
        for (int64_t i = 0; i < m; ++i) {
          const int idx = bins[s]->bin(single[s] ? static_cast<double>(b.f[s][i]) : b.d[s][i]);
          if (idx >= 0) ++local[s][static_cast<size_t>(idx)];
        }
      }
    }
    std::lock_guard<std::mutex> lock(mutex);
    for (size_t s = 0; s < ns; ++s)
      for (size_t i = 0; i < static_cast<size_t>(Histogram10::kBins); ++i)
        counts[s][i] += local[s][i];
  });
  return counts;
}

}  // namespace parity
