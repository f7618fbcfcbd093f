#include "comparator/fused_stats.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>

#include "core/thread_pool.h"

namespace parity {

namespace {

constexpr int kLanes = 8;
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
double value_of_key(uint64_t key, bool single) {
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

// The sums of one stream over one chunk, in lanes.
struct Lanes {
  double sum[kLanes] = {}, sumsq[kLanes] = {}, sum_abs[kLanes] = {};
};

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

// The smallest and largest non-NaN values of a block (as values: -0 equals +0) and its NaNs.
template <typename T>
struct Extremes {
  T min, max;
  int64_t nans;
};

template <typename T>
__attribute__((always_inline)) inline Extremes<T> extremes_body(const T* v, int64_t n) {
  // GCC vector extensions: 8 lanes, compare-and-select (x < m ? x : m skips NaN), NaN masks
  // (-1 where x != x) subtracted into counters as wide as the values.
  using Count = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  typedef T Vec __attribute__((vector_size(sizeof(T) * kLanes)));
  typedef Count CountVec __attribute__((vector_size(sizeof(T) * kLanes)));
  constexpr T kInf = std::numeric_limits<T>::infinity();
  Vec mn, mx;
  CountVec nans = {};
  for (int j = 0; j < kLanes; ++j) mn[j] = kInf, mx[j] = -kInf;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    Vec x;
    std::memcpy(&x, v + i, sizeof x);
    mn = x < mn ? x : mn;
    mx = x > mx ? x : mx;
    nans -= (x != x);
  }
  Extremes<T> e{kInf, -kInf, 0};
  for (int j = 0; j < kLanes; ++j) {
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

// The sum lanes alone (the same additions as sums_body's first lanes).
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

template <typename T>
__attribute__((always_inline)) inline void histogram_body(const T* v, int64_t n, uint32_t* h) {
  constexpr int shift = static_cast<int>(sizeof(T)) * 8 - kRadixBits;
  for (int64_t i = 0; i < n; ++i) ++h[key_of(v[i]) >> shift];
}

__attribute__((target_clones("avx2", "default"))) void sums_f32(const float* v, int64_t n,
                                                                 double shift, Lanes& l) {
  sums_body(v, n, shift, l);
}
__attribute__((target_clones("avx2", "default"))) void sums_f64(const double* v, int64_t n,
                                                                 double shift, Lanes& l) {
  sums_body(v, n, shift, l);
}
__attribute__((target_clones("avx2", "default"))) Extremes<float> extremes_f32(const float* v,
                                                                               int64_t n) {
  return extremes_body(v, n);
}
__attribute__((target_clones("avx2", "default"))) Extremes<double> extremes_f64(const double* v,
                                                                                int64_t n) {
  return extremes_body(v, n);
}
void sums(const float* v, int64_t n, double shift, Lanes& l) { sums_f32(v, n, shift, l); }
void sums(const double* v, int64_t n, double shift, Lanes& l) { sums_f64(v, n, shift, l); }
Extremes<float> extremes(const float* v, int64_t n) { return extremes_f32(v, n); }
Extremes<double> extremes(const double* v, int64_t n) { return extremes_f64(v, n); }

double lane_total(const double* lane) {
  double t = 0;
  for (int j = 0; j < kLanes; ++j) t += lane[j];
  return t;
}

// One stream's results over a chunk (sums) or over everything seen so far (the rest).
struct Partial {
  double sum = 0, sumsq = 0, sum_abs = 0;
  double min = 0, max = 0;
  int64_t argmin = -1, argmax = -1, first_nan = -1, nans = 0;
};

// Extremes and the first NaN of a block at `begin`, folded into p (the first of equal values
// wins, as NumPy's argmin and argmax).
template <typename T>
void fold_block(const T* v, int64_t begin, int64_t n, Partial& p) {
  const Extremes<T> e = extremes(v, n);
  p.nans += e.nans;
  if (e.nans > 0 && p.first_nan < 0)
    for (int64_t i = 0; i < n; ++i)
      if (v[i] != v[i]) {
        p.first_nan = begin + i;
        break;
      }
  if (e.nans == n) return;
  if (p.argmin < 0 || e.min < p.min)
    for (int64_t i = 0; i < n; ++i)
      if (v[i] == e.min) {
        p.min = static_cast<double>(v[i]), p.argmin = begin + i;
        break;
      }
  if (p.argmax < 0 || e.max > p.max)
    for (int64_t i = 0; i < n; ++i)
      if (v[i] == e.max) {
        p.max = static_cast<double>(v[i]), p.argmax = begin + i;
        break;
      }
}

void fold(const Partial& p, Partial& t) {
  t.sum += p.sum, t.sumsq += p.sumsq, t.sum_abs += p.sum_abs;
  t.nans += p.nans;
  if (p.first_nan >= 0 && t.first_nan < 0) t.first_nan = p.first_nan;
  if (p.argmin >= 0 && (t.argmin < 0 || p.min < t.min)) t.min = p.min, t.argmin = p.argmin;
  if (p.argmax >= 0 && (t.argmax < 0 || p.max > t.max)) t.max = p.max, t.argmax = p.argmax;
}

// Elements per selection-pass work item: whole chunks, few enough items that the per-item
// histograms cost little, enough for the threads.
int64_t chunks_per_slab(int64_t chunks) { return std::max<int64_t>(16, (chunks + 63) / 64); }

// Runs fn(slab_begin, slab_end, block) over slabs of whole chunks, in parallel.
template <typename Fn>
void for_each_slab(int64_t n, const Fn& fn) {
  const int64_t chunks = (n + kStatsGrain - 1) / kStatsGrain;
  const int64_t per_slab = chunks_per_slab(chunks);
  const int64_t slabs = (chunks + per_slab - 1) / per_slab;
  parallel_for(slabs, 1, [&](int64_t first, int64_t last) {
    auto block = std::make_unique<StreamBlock>();
    for (int64_t s = first; s < last; ++s)
      fn(s * per_slab * kStatsGrain, std::min(n, (s + 1) * per_slab * kStatsGrain), *block);
  });
}

// A bucket of one stream's keys that holds wanted ranks: its key prefix (the top `bits` bits)
// and how many elements have it. It is gathered when small, else refined by the next bits.
struct Node {
  int stream = 0;
  uint64_t prefix = 0;
  int bits = 0;
  int64_t count = 0;
  std::vector<std::pair<int64_t, int64_t>> ranks;  // (rank, rank within the node)
  int sub_bits = 0;                                // > 0: refine by this many bits
  std::vector<uint64_t> keys;                      // gathered
  std::vector<uint64_t> hist;                      // refined
};

struct StreamInfo {
  bool single = false;  // float32 keys (32 bits) or double keys (64)
  int key_bits = 64;
};

// Splits a refined node into the children that hold its ranks.
void split(const Node& parent, const std::vector<uint64_t>& hist, std::vector<Node>& out) {
  size_t r = 0;
  int64_t below = 0;
  for (size_t j = 0; j < hist.size() && r < parent.ranks.size(); ++j) {
    const int64_t c = static_cast<int64_t>(hist[j]);
    Node child;
    while (r < parent.ranks.size() && parent.ranks[r].second < below + c) {
      child.ranks.emplace_back(parent.ranks[r].first, parent.ranks[r].second - below);
      ++r;
    }
    if (!child.ranks.empty()) {
      child.stream = parent.stream;
      child.prefix = (parent.prefix << parent.sub_bits) | j;
      child.bits = parent.bits + parent.sub_bits;
      child.count = c;
      out.push_back(std::move(child));
    }
    below += c;
  }
}

// The keys of a block and, for each, whether it lies in one of the node intervals [lo, lo + width]
// (vectorised: the keys that matter are few).
template <typename T, typename K>
__attribute__((always_inline)) inline void candidates_body(const T* v, int64_t n, const K* lo,
                                                           const K* width, size_t nodes, K* keys,
                                                           K* hit) {
  for (int64_t i = 0; i < n; ++i) keys[i] = key_of(v[i]);
  for (int64_t i = 0; i < n; ++i) hit[i] = 0;
  for (size_t m = 0; m < nodes; ++m) {
    const K l = lo[m], w = width[m];
    for (int64_t i = 0; i < n; ++i) hit[i] |= static_cast<K>(keys[i] - l) <= w;
  }
}

__attribute__((target_clones("avx2", "default"))) void candidates_f32(
    const float* v, int64_t n, const uint32_t* lo, const uint32_t* width, size_t nodes,
    uint32_t* keys, uint32_t* hit) {
  candidates_body(v, n, lo, width, nodes, keys, hit);
}
__attribute__((target_clones("avx2", "default"))) void candidates_f64(
    const double* v, int64_t n, const uint64_t* lo, const uint64_t* width, size_t nodes,
    uint64_t* keys, uint64_t* hit) {
  candidates_body(v, n, lo, width, nodes, keys, hit);
}

// The nodes of one stream as key intervals, in the stream's key width.
template <typename K>
struct Intervals {
  std::vector<size_t> node;  // index into the pass's nodes
  std::vector<K> lo, width;
};

template <typename K>
Intervals<K> intervals_of(const std::vector<Node>& nodes, int stream) {
  constexpr int kBits = static_cast<int>(sizeof(K)) * 8;
  Intervals<K> r;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = nodes[i];
    if (node.stream != stream) continue;
    const int rest = kBits - node.bits;
    r.node.push_back(i);
    r.lo.push_back(node.bits == 0 ? 0 : static_cast<K>(node.prefix << rest));
    r.width.push_back(node.bits == 0 ? ~K{0} : static_cast<K>((K{1} << rest) - 1));
  }
  return r;
}

// Per work item: what a light pass collects before merging.
struct Collected {
  std::vector<std::vector<uint64_t>> keys, hist;
};

template <typename T, typename K>
void collect_block(const T* v, int64_t n, const Intervals<K>& iv, const std::vector<Node>& nodes,
                   Collected& out) {
  constexpr int kBits = static_cast<int>(sizeof(K)) * 8;
  alignas(64) K keys[kStatsBlock], hit[kStatsBlock];
  if constexpr (sizeof(K) == 4)
    candidates_f32(v, n, iv.lo.data(), iv.width.data(), iv.lo.size(), keys, hit);
  else
    candidates_f64(v, n, iv.lo.data(), iv.width.data(), iv.lo.size(), keys, hit);
  // The hits' positions: groups of 8 without one skipped at once (hits are few), the rest
  // without a branch per element (hits are irregular).
  alignas(64) int32_t at[kStatsBlock];
  int64_t hits = 0;
  for (int64_t g = 0; g < n; g += 8) {
    const int64_t end = std::min(n, g + 8);
    K any = 0;
    for (int64_t i = g; i < end; ++i) any |= hit[i];
    if (!any) continue;
    for (int64_t i = g; i < end; ++i) {
      at[hits] = static_cast<int32_t>(i);
      hits += hit[i] != 0;
    }
  }
  for (int64_t h = 0; h < hits; ++h) {
    const K key = keys[at[h]];
    for (size_t m = 0; m < iv.lo.size(); ++m) {
      if (static_cast<K>(key - iv.lo[m]) > iv.width[m]) continue;
      const size_t k = iv.node[m];
      const Node& node = nodes[k];
      if (node.sub_bits == 0) {
        out.keys[k].push_back(key);
      } else {
        const int rest = kBits - node.bits - node.sub_bits;
        ++out.hist[k][(key >> rest) & ((uint64_t{1} << node.sub_bits) - 1)];
      }
      break;  // the intervals do not overlap
    }
  }
}

// One light pass over the data serving every pending node: gathers the keys of small nodes and
// histograms the next bits of large ones.
void serve_nodes(const StreamSource& src, const std::vector<StreamInfo>& info,
                 std::vector<Node>& nodes) {
  const int streams = src.streams();
  std::vector<Intervals<uint32_t>> iv32(static_cast<size_t>(streams));
  std::vector<Intervals<uint64_t>> iv64(static_cast<size_t>(streams));
  for (int s = 0; s < streams; ++s) {
    if (info[static_cast<size_t>(s)].single) iv32[static_cast<size_t>(s)] = intervals_of<uint32_t>(nodes, s);
    else iv64[static_cast<size_t>(s)] = intervals_of<uint64_t>(nodes, s);
  }
  std::mutex mutex;
  for_each_slab(src.size(), [&](int64_t begin, int64_t end, StreamBlock& b) {
    Collected c;
    c.keys.resize(nodes.size());
    c.hist.resize(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i)
      if (nodes[i].sub_bits > 0) c.hist[i].assign(size_t{1} << nodes[i].sub_bits, 0);
    for (int64_t at = begin; at < end; at += kStatsBlock) {
      const int64_t n = std::min(kStatsBlock, end - at);
      src.read(at, n, b);
      for (int s = 0; s < streams; ++s) {
        const size_t si = static_cast<size_t>(s);
        if (info[si].single) {
          if (!iv32[si].lo.empty()) collect_block(b.f[s], n, iv32[si], nodes, c);
        } else if (!iv64[si].lo.empty()) {
          collect_block(b.d[s], n, iv64[si], nodes, c);
        }
      }
    }
    std::lock_guard<std::mutex> lock(mutex);
    for (size_t k = 0; k < nodes.size(); ++k) {
      nodes[k].keys.insert(nodes[k].keys.end(), c.keys[k].begin(), c.keys[k].end());
      for (size_t j = 0; j < c.hist[k].size(); ++j) nodes[k].hist[j] += c.hist[k][j];
    }
  });
}

// The keys at the wanted ranks of every stream, from the first-level histograms (empty for a
// stream selected in full from the start).
std::vector<std::map<int64_t, uint64_t>> select_ranks(
    const StreamSource& src, const std::vector<StreamInfo>& info,
    const std::vector<std::vector<int64_t>>& ranks,
    const std::vector<std::vector<uint64_t>>& first_level) {
  const int64_t n = src.size();
  // Gathered buckets stay small beside the data (1/256 of its elements each).
  const int64_t gather_limit = std::max<int64_t>(int64_t{1} << 16, n / 256);
  std::vector<std::map<int64_t, uint64_t>> found(ranks.size());
  std::vector<Node> pending;
  for (size_t s = 0; s < ranks.size(); ++s) {
    if (ranks[s].empty()) continue;
    Node root;
    root.stream = static_cast<int>(s);
    root.count = n;
    for (int64_t r : ranks[s]) root.ranks.emplace_back(r, r);
    if (first_level[s].empty()) {
      pending.push_back(std::move(root));
    } else {
      root.sub_bits = kRadixBits;
      split(root, first_level[s], pending);
    }
  }
  while (!pending.empty()) {
    std::vector<Node> work;
    for (Node& node : pending) {
      const int key_bits = info[static_cast<size_t>(node.stream)].key_bits;
      if (node.bits == key_bits) {  // one key: nothing left to select
        for (const auto& [rank, within] : node.ranks)
          found[static_cast<size_t>(node.stream)][rank] = node.prefix;
        continue;
      }
      node.sub_bits = node.count <= gather_limit ? 0 : std::min(kRadixBits, key_bits - node.bits);
      if (node.sub_bits > 0) node.hist.assign(size_t{1} << node.sub_bits, 0);
      work.push_back(std::move(node));
    }
    pending.clear();
    if (work.empty()) break;
    serve_nodes(src, info, work);
    for (Node& node : work) {
      if (node.sub_bits > 0) {
        split(node, node.hist, pending);
        continue;
      }
      // Ranks ascending: each selection leaves the next one only the part after it.
      auto from = node.keys.begin();
      for (const auto& [rank, within] : node.ranks) {
        auto at = node.keys.begin() + within;
        std::nth_element(from, at, node.keys.end());
        found[static_cast<size_t>(node.stream)][rank] = *at;
        from = at;
      }
    }
  }
  return found;
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
  // Small arrays are selected in full; larger ones start from a histogram of the fused pass.
  const int64_t gather_limit = std::max<int64_t>(int64_t{1} << 16, n / 256);
  std::vector<char> histogram(ns, 0);
  for (size_t s = 0; s < ns; ++s) histogram[s] = wants_order(s) && n > gather_limit;

  // Shifts: the first element, so that the variance does not cancel catastrophically.
  auto first = std::make_unique<StreamBlock>();
  std::vector<double> shift(ns, 0.0);
  if (n > 0) {
    src.read(0, 1, *first);
    for (size_t s = 0; s < ns; ++s) {
      const double v = info[s].single ? first->f[s][0] : first->d[s][0];
      shift[s] = std::isfinite(v) ? v : 0.0;
    }
  }

  const int64_t chunks = (n + kStatsGrain - 1) / kStatsGrain;
  std::vector<Partial> parts(static_cast<size_t>(chunks) * ns);
  std::vector<std::vector<uint64_t>> first_level(ns);
  for (size_t s = 0; s < ns; ++s)
    if (histogram[s]) first_level[s].assign(size_t{1} << kRadixBits, 0);
  FusedStats r;
  std::mutex mutex;
  for_each_slab(n, [&](int64_t begin, int64_t end, StreamBlock& b) {
    std::vector<std::vector<uint32_t>> hist(ns);
    for (size_t s = 0; s < ns; ++s)
      if (histogram[s]) hist[s].assign(size_t{1} << kRadixBits, 0);
    int64_t counts[2] = {0, 0};
    for (int64_t chunk = begin; chunk < end; chunk += kStatsGrain) {
      const int64_t chunk_end = std::min(end, chunk + kStatsGrain);
      Lanes lanes[kMaxStreams];
      Partial* p = &parts[static_cast<size_t>(chunk / kStatsGrain) * ns];
      for (int64_t at = chunk; at < chunk_end; at += kStatsBlock) {
        const int64_t m = std::min(kStatsBlock, chunk_end - at);
        src.read(at, m, b);
        src.count(b, m, counts);
        for (size_t s = 0; s < ns; ++s) {
          if (info[s].single) {
            sums(b.f[s], m, shift[s], lanes[s]);
            fold_block(b.f[s], at, m, p[s]);
            if (histogram[s]) histogram_body(b.f[s], m, hist[s].data());
          } else {
            sums(b.d[s], m, shift[s], lanes[s]);
            fold_block(b.d[s], at, m, p[s]);
            if (histogram[s]) histogram_body(b.d[s], m, hist[s].data());
          }
        }
      }
      for (size_t s = 0; s < ns; ++s) {
        p[s].sum = lane_total(lanes[s].sum);
        p[s].sumsq = lane_total(lanes[s].sumsq);
        p[s].sum_abs = lane_total(lanes[s].sum_abs);
      }
    }
    std::lock_guard<std::mutex> lock(mutex);
    r.counts[0] += counts[0];
    r.counts[1] += counts[1];
    for (size_t s = 0; s < ns; ++s)
      for (size_t j = 0; j < hist[s].size(); ++j) first_level[s][j] += hist[s][j];
  });

  // Combined in chunk order: the same bits for any number of threads.
  std::vector<std::vector<int64_t>> ranks(ns);
  std::vector<std::vector<Position>> positions(ns);
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
      st.avg_magnitude = round_to_kind(t.sum_abs / count, kind);
      st.has_nan = t.first_nan >= 0;
      if (st.has_nan) {
        st.min = st.max = NAN;
        st.argmin = st.argmax = t.first_nan;
      } else {
        st.min = t.min, st.argmin = t.argmin;
        st.max = t.max, st.argmax = t.argmax;
      }
    }
    if (!wants_order(s) || n == 0 || st.has_nan) continue;
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

  const auto keys = select_ranks(src, info, ranks, first_level);
  for (size_t s = 0; s < ns && s < requests.size(); ++s) {
    const NumKind kind = src.kind(static_cast<int>(s));
    OrderStats& o = r.order[s];
    const bool has_nan = r.basic[s].has_nan;
    size_t next = 0;
    if (requests[s].median) {
      o.median = n == 0 ? 0.0
                 : has_nan
                     ? NAN
                     : round_to_kind(
                           interpolate(positions[s][next++], n, keys[s], info[s].single, false),
                           kind);
    }
    for (double q : requests[s].quantiles) {
      double v = INFINITY;
      if (has_nan) v = NAN;
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
          const int idx =
              bins[s]->bin(single[s] ? static_cast<double>(b.f[s][i]) : b.d[s][i]);
          if (idx >= 0) ++local[s][static_cast<size_t>(idx)];
        }
      }
    }
    std::lock_guard<std::mutex> lock(mutex);
    for (size_t s = 0; s < ns; ++s)
      for (int i = 0; i < Histogram10::kBins; ++i) counts[s][static_cast<size_t>(i)] += local[s][static_cast<size_t>(i)];
  });
  return counts;
}

}  // namespace parity
