#include "stats/radix_select.h"

#include "stats/block_kernels.h"

#include <cmath>
#include <mutex>
#include <type_traits>

namespace parity::radix {

namespace {

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

__attribute__((target_clones("avx2", "default"))) void candidates_f32(const float* v, int64_t n,
                                                                      const uint32_t* lo,
                                                                      const uint32_t* width,
                                                                      size_t nodes, uint32_t* keys,
                                                                      uint32_t* hit) {
  candidates_body(v, n, lo, width, nodes, keys, hit);
}
__attribute__((target_clones("avx2", "default"))) void candidates_f64(const double* v, int64_t n,
                                                                      const uint64_t* lo,
                                                                      const uint64_t* width,
                                                                      size_t nodes, uint64_t* keys,
                                                                      uint64_t* hit) {
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
    const size_t i = static_cast<size_t>(s);
    if (info[i].single)
      iv32[i] = intervals_of<uint32_t>(nodes, s);
    else
      iv64[i] = intervals_of<uint64_t>(nodes, s);
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

}  // namespace

std::vector<std::map<int64_t, uint64_t>> select_ranks(
    const StreamSource& src, const std::vector<StreamInfo>& info,
    const std::vector<std::vector<int64_t>>& ranks,
    const std::vector<std::vector<uint64_t>>& first_level) {
  const int64_t n = src.size();
  const int64_t limit = gather_limit(n);
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
      node.sub_bits = node.count <= limit ? 0 : std::min(kRadixBits, key_bits - node.bits);
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

}  // namespace parity::radix

namespace parity::radix {

namespace {

// Ranges longer than this are narrowed by a histogram of key digits before nth_element.
constexpr int64_t kSelectSmall = 4096;
constexpr int kDigitBits = 11;

template <typename K>
void select_positions(K* keys, const std::vector<int64_t>& positions, int64_t begin, int64_t end,
                      std::map<int64_t, uint64_t>& at);

// select_positions for a long range: a histogram of the next kDigitBits bits of (key - min)
// gives each wanted position its bucket; the keys of those buckets are moved to the places
// their buckets take in sorted order, and each bucket is selected from on its own. Two passes
// over the range instead of nth_element's several per position.
// The smallest and largest of n keys (n >= 1); vectorised where the CPU has unsigned min/max.
template <typename K>
__attribute__((always_inline)) inline std::pair<K, K> key_range_body(const K* v, int64_t n) {
  K lo = v[0], hi = v[0];
  for (int64_t i = 0; i < n; ++i) {
    lo = v[i] < lo ? v[i] : lo;
    hi = v[i] > hi ? v[i] : hi;
  }
  return {lo, hi};
}
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
std::pair<uint32_t, uint32_t>
key_range(const uint32_t* v, int64_t n) {
  return key_range_body(v, n);
}
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
std::pair<uint64_t, uint64_t>
key_range(const uint64_t* v, int64_t n) {
  return key_range_body(v, n);
}

template <typename K>
void select_by_digits(K* keys, const std::vector<int64_t>& positions, int64_t begin, int64_t end,
                      std::map<int64_t, uint64_t>& at) {
  const K* v = keys;
  const auto [lo, hi] = key_range(v + begin, end - begin);
  if (lo == hi) {
    for (const int64_t p : positions) at[p] = lo;
    return;
  }
  const int width_bits = 64 - __builtin_clzll(static_cast<uint64_t>(hi - lo));
  const int shift = std::max(0, width_bits - kDigitBits);
  const size_t bins = static_cast<size_t>((hi - lo) >> shift) + 1;  // 2 .. 2^kDigitBits
  // Counted in two interleaved halves: neighbours often share a bucket, and a counter
  // incremented back to back waits for its own store.
  std::vector<int64_t> halves(2 * bins, 0);
  int64_t i = begin;
  for (; i + 1 < end; i += 2) {
    ++halves[2 * static_cast<size_t>((v[i] - lo) >> shift)];
    ++halves[2 * static_cast<size_t>((v[i + 1] - lo) >> shift) + 1];
  }
  if (i < end) ++halves[2 * static_cast<size_t>((v[i] - lo) >> shift)];
  std::vector<int64_t> start(bins + 1, 0);
  for (size_t b = 0; b < bins; ++b) start[b + 1] = start[b] + halves[2 * b] + halves[2 * b + 1];
  // The wanted buckets, in order, each with its positions.
  std::vector<int32_t> slot(bins, -1);
  std::vector<size_t> wanted;
  std::vector<std::vector<int64_t>> mine;
  for (const int64_t p : positions) {
    const size_t b = static_cast<size_t>(std::upper_bound(start.begin(), start.end(), p - begin) -
                                         start.begin() - 1);
    if (slot[b] < 0) {
      slot[b] = static_cast<int32_t>(wanted.size());
      wanted.push_back(b);
      mine.emplace_back();
    }
    mine[static_cast<size_t>(slot[b])].push_back(p);
  }
  std::vector<int64_t> next;
  int64_t total = 0;
  for (const size_t b : wanted) {
    next.push_back(total);
    total += start[b + 1] - start[b];
  }
  // The wanted buckets' keys, stored without a branch per key, then put in bucket order.
  std::vector<uint8_t> is_wanted(bins, 0);
  for (const size_t b : wanted) is_wanted[b] = 1;
  std::vector<K> mixed(static_cast<size_t>(total) + 1);
  int64_t count = 0;
  for (i = begin; i < end; ++i) {
    mixed[static_cast<size_t>(count)] = v[i];
    count += is_wanted[static_cast<size_t>((v[i] - lo) >> shift)];
  }
  std::vector<K> gathered;
  if (wanted.size() == 1) {
    gathered.swap(mixed);
  } else {
    gathered.resize(static_cast<size_t>(total));
    for (int64_t k = 0; k < total; ++k) {
      const K key = mixed[static_cast<size_t>(k)];
      const int32_t s = slot[static_cast<size_t>((key - lo) >> shift)];
      gathered[static_cast<size_t>(next[static_cast<size_t>(s)]++)] = key;
    }
  }
  // Each bucket is selected from in `gathered`, so that `keys` keeps its values (reordered only).
  int64_t from = 0;
  for (size_t w = 0; w < wanted.size(); ++w) {
    const int64_t first = begin + start[wanted[w]], count = start[wanted[w] + 1] - start[wanted[w]];
    std::vector<int64_t> local;  // positions within gathered
    for (const int64_t p : mine[w]) local.push_back(p - first + from);
    std::map<int64_t, uint64_t> found;
    select_positions(gathered.data(), local, from, from + count, found);
    for (const auto& [p, key] : found) at[p - from + first] = key;
    from += count;
  }
}

// The keys at `positions` (ascending, distinct, within [begin, end)) of `keys` in sorted order,
// when [begin, end) already holds the keys of those positions. Long ranges are narrowed by
// digits; short ones by nth_element at the middle position, then each half on its own side (a
// sweep from the left would rescan the right end for every position). Adds them to `at`.
template <typename K>
void select_positions(K* keys, const std::vector<int64_t>& positions, int64_t begin, int64_t end,
                      std::map<int64_t, uint64_t>& at) {
  if (positions.empty()) return;
  if (end - begin > kSelectSmall) return select_by_digits(keys, positions, begin, end, at);
  const auto select = [&](const auto& self, size_t first, size_t last, int64_t from,
                          int64_t to) -> void {
    if (first >= last) return;
    const size_t mid = first + (last - first) / 2;
    K* const it = keys + positions[mid];
    std::nth_element(keys + from, it, keys + to);
    at[positions[mid]] = *it;
    self(self, first, mid, from, positions[mid]);
    self(self, mid + 1, last, positions[mid] + 1, to);
  };
  select(select, 0, positions.size(), begin, end);
}

template <typename K>
std::map<int64_t, uint64_t> select_positions(std::vector<K>& keys,
                                             const std::vector<int64_t>& positions) {
  std::map<int64_t, uint64_t> at;
  select_positions(keys.data(), positions, 0, static_cast<int64_t>(keys.size()), at);
  return at;
}

}  // namespace

// How many keys equal `key`, vectorised where the CPU allows.
template <typename K>
__attribute__((always_inline)) inline int64_t count_equal_body(const K* v, int64_t n, K key) {
  using Count = std::conditional_t<sizeof(K) == 4, uint32_t, uint64_t>;  // as wide as the keys
  int64_t c = 0;
  for (int64_t at = 0; at < n; at += int64_t{1} << 30) {
    Count part = 0;
    for (int64_t i = at; i < std::min(n, at + (int64_t{1} << 30)); ++i) part += v[i] == key;
    c += static_cast<int64_t>(part);
  }
  return c;
}
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) int64_t count_equal(
    const uint32_t* v, int64_t n, uint32_t key) {
  return count_equal_body(v, n, key);
}
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) int64_t count_equal(
    const uint64_t* v, int64_t n, uint64_t key) {
  return count_equal_body(v, n, key);
}

template <typename K>
Bracket bracket_from_sample_of(std::vector<K>& sample, int64_t n, const std::vector<int64_t>& ranks,
                               bool single) {
  Bracket b;
  const int64_t m = static_cast<int64_t>(sample.size());
  if (m == 0 || ranks.empty() || ranks.size() > kernels::kMaxIntervals) return b;
  // The extreme keys are NaNs', never selected (a NaN makes every order statistic NaN).
  const uint64_t max_key = single ? uint64_t{0xfffffffe} : ~uint64_t{0} - 1;
  // Rank r sits near sample position r * m / n, give or take sqrt(m * q * (1 - q)) for a random
  // sample at q = r / n; the margin is four times that.
  std::vector<std::pair<int64_t, int64_t>> spans;  // sample positions; -1 and m: open ends
  std::vector<int64_t> wanted;
  for (int64_t r : ranks) {
    const double q = (static_cast<double>(r) + 0.5) / static_cast<double>(n);
    const double p = q * static_cast<double>(m) - 0.5;
    const int64_t margin =
        static_cast<int64_t>(4 * std::sqrt(static_cast<double>(m) * q * (1 - q))) + 16;
    int64_t lo = static_cast<int64_t>(std::floor(p)) - margin;
    int64_t hi = static_cast<int64_t>(std::ceil(p)) + margin;
    lo = lo < 0 ? -1 : lo;
    hi = hi >= m ? m : hi;
    if (!spans.empty() && lo <= spans.back().second)  // overlapping
      spans.back().second = std::max(spans.back().second, hi);
    else
      spans.emplace_back(lo, hi);
  }
  for (const auto& [lo, hi] : spans) {
    if (lo >= 0) wanted.push_back(lo);
    if (hi < m) wanted.push_back(hi);
  }
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  const std::map<int64_t, uint64_t> at = select_positions(sample, wanted);
  b.upper = kernels::kMaxIntervals;
  // Room for twice the keys the sample puts in an interval, and more for small ones; a pass that
  // finds more (a sample unlike the whole) falls back to radix selection.
  const int64_t most = std::min(n, 8 * gather_limit(n));
  const auto room = [&](int64_t lo_pos, int64_t hi_pos) {
    const double share = static_cast<double>(hi_pos - lo_pos + 1) / static_cast<double>(m);
    return std::min(most, static_cast<int64_t>(2 * share * static_cast<double>(n)) + 4096);
  };
  for (const auto& [lo_pos, hi_pos] : spans) {
    const uint64_t lo = lo_pos < 0 ? 0 : at.at(lo_pos);
    const uint64_t hi = hi_pos >= m ? max_key : at.at(hi_pos);
    if (!b.lo.empty() && lo <= b.hi.back()) {
      b.hi.back() = std::max(b.hi.back(), hi);
      b.room.back() = std::min(most, b.room.back() + room(lo_pos, hi_pos));
    } else {
      b.room.push_back(room(lo_pos, hi_pos));
      // Intervals above 3/4 of the sample: counted among the keys at or above them only.
      if (4 * lo_pos >= 3 * m) b.upper = std::min(b.upper, b.lo.size());
      b.lo.push_back(lo);
      b.hi.push_back(hi);
    }
  }
  b.single = single;
  b.whole = true;
  for (size_t j = 0; j < b.lo.size() && b.whole; ++j)
    for (const uint64_t end : {b.lo[j], b.hi[j]})
      b.whole = b.whole && count_equal(sample.data(), m, static_cast<K>(end)) <= 1;
  return b;
}

Bracket bracket_from_sample(std::vector<uint64_t>& sample, int64_t n,
                            const std::vector<int64_t>& ranks, bool single) {
  return bracket_from_sample_of(sample, n, ranks, single);
}

Bracket bracket_from_sample(std::vector<uint32_t>& sample, int64_t n,
                            const std::vector<int64_t>& ranks, bool single) {
  return bracket_from_sample_of(sample, n, ranks, single);
}

BracketFound::BracketFound(const Bracket& b)
    : bracket_(b),
      counts_(3 * b.lo.size(), 0),
      keys32_(b.single ? b.lo.size() : 0),
      keys_(b.single ? 0 : b.lo.size()),
      used_(new std::atomic<int64_t>[b.lo.size()]) {
  for (size_t j = 0; j < b.lo.size(); ++j) {
    used_[j] = 0;
    // Not filled: only the pages written are touched.
    const size_t room = static_cast<size_t>(b.room[j]);
    if (b.single)
      keys32_[j].reset(new uint32_t[room]);
    else
      keys_[j].reset(new uint64_t[room]);
  }
}

template <typename K>
K* BracketFound::buffer(size_t j) {
  if constexpr (sizeof(K) == 4)
    return keys32_[j].get();
  else
    return keys_[j].get();
}

// Keys staged per interval before they move to the shared buffer; room for one more block.
constexpr int64_t kStaged = 4096;
constexpr int64_t kStageRoom = kStaged + kStatsBlock + 16;

BracketFound::Slab::Slab(const BracketFound& found)
    : counts(found.counts_.size(), 0), staged_count(found.bracket_.lo.size(), 0) {
  const size_t room = found.bracket_.lo.size() * static_cast<size_t>(kStageRoom);
  if (found.bracket_.single)
    staged32.reset(new uint32_t[room]);
  else
    staged.reset(new uint64_t[room]);
}

template <typename K>
K* BracketFound::staging(Slab& slab, size_t j) {
  K* base;
  if constexpr (sizeof(K) == 4)
    base = slab.staged32.get();
  else
    base = slab.staged.get();
  return base + j * static_cast<size_t>(kStageRoom);
}

template <typename K>
void BracketFound::flush(Slab& slab, size_t j) {
  const int64_t count = slab.staged_count[j];
  slab.staged_count[j] = 0;
  if (count == 0 || overflow_.load(std::memory_order_relaxed)) return;
  const int64_t at = used_[j].fetch_add(count, std::memory_order_relaxed);
  if (at + count > bracket_.room[j]) {
    overflow_ = true;  // resolve() fails: the ranks are selected otherwise
    return;
  }
  std::memcpy(buffer<K>(j) + at, staging<K>(slab, j), static_cast<size_t>(count) * sizeof(K));
}

template <typename T>
kernels::Extremes<T> BracketFound::scan_values(const T* v, int64_t n, double shift,
                                               kernels::Lanes& lanes, bool magnitudes, Slab& slab) {
  using K = decltype(key_of(T{}));
  const Bracket& b = bracket_;
  const size_t m = b.lo.size();
  // Only the keys strictly between the ends are gathered, unless the intervals are whole: the
  // ends are counted (outputs and their differences repeat values often, and a repeated end
  // would fill the gathered keys).
  K lo[kernels::kMaxIntervals], width[kernels::kMaxIntervals];
  for (size_t j = 0; j < m; ++j) {
    lo[j] = static_cast<K>(b.lo[j]);
    width[j] = static_cast<K>(b.hi[j] - b.lo[j]);
  }
  const bool gather = !overflow_.load(std::memory_order_relaxed);
  K* kept[kernels::kMaxIntervals];
  int64_t kept_count[kernels::kMaxIntervals];
  for (size_t j = 0; j < m; ++j) kept[j] = staging<K>(slab, j) + slab.staged_count[j];
  const kernels::Extremes<T> e = kernels::scan_intervals(
      v, n, shift, lanes, magnitudes,
      {lo, width, m, b.upper, slab.counts.data(), gather ? kept : nullptr, kept_count, b.whole});
  if (!gather) return e;
  for (size_t j = 0; j < m; ++j) {
    slab.staged_count[j] += kept_count[j];
    if (slab.staged_count[j] >= kStaged) flush<K>(slab, j);
  }
  return e;
}

kernels::Extremes<float> BracketFound::scan(const float* v, int64_t n, double shift,
                                            kernels::Lanes& lanes, bool magnitudes, Slab& slab) {
  return scan_values(v, n, shift, lanes, magnitudes, slab);
}

kernels::Extremes<double> BracketFound::scan(const double* v, int64_t n, double shift,
                                             kernels::Lanes& lanes, bool magnitudes, Slab& slab) {
  return scan_values(v, n, shift, lanes, magnitudes, slab);
}

void BracketFound::finish(Slab& slab) {
  for (size_t j = 0; j < bracket_.lo.size(); ++j) {
    if (bracket_.single)
      flush<uint32_t>(slab, j);
    else
      flush<uint64_t>(slab, j);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t j = 0; j < counts_.size(); ++j) counts_[j] += slab.counts[j];
}

bool BracketFound::resolve(const std::vector<int64_t>& ranks, std::map<int64_t, uint64_t>& out) {
  if (overflow_) return false;
  // In key order an interval is: its low end repeated, the gathered keys between the ends, its
  // high end repeated.
  const Bracket& b = bracket_;
  const size_t m = b.lo.size();
  std::map<int64_t, uint64_t> got;
  std::vector<std::vector<int64_t>> positions(m), rank_at(m);  // among an interval's gathered
  size_t j = 0;
  for (int64_t r : ranks) {
    while (j < m && r >= counts_[3 * j] + counts_[3 * j + 1]) ++j;
    if (j == m || r < counts_[3 * j]) return false;
    // Whole intervals gathered every key in them: at_lo is 0 and nothing is left at the high end.
    const int64_t within = r - counts_[3 * j], at_lo = counts_[3 * j + 2];
    if (within < at_lo) {
      got[r] = b.lo[j];
    } else if (within >= at_lo + used_[j]) {
      got[r] = b.hi[j];
    } else {
      positions[j].push_back(within - at_lo);
      rank_at[j].push_back(r);
    }
  }
  for (j = 0; j < m; ++j) {
    if (positions[j].empty()) continue;
    std::map<int64_t, uint64_t> at;
    if (b.single)
      select_positions(keys32_[j].get(), positions[j], 0, used_[j].load(), at);
    else
      select_positions(keys_[j].get(), positions[j], 0, used_[j].load(), at);
    for (size_t i = 0; i < positions[j].size(); ++i) got[rank_at[j][i]] = at.at(positions[j][i]);
  }
  out = std::move(got);
  return true;
}

}  // namespace parity::radix
