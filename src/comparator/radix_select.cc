#include "comparator/radix_select.h"

#include <mutex>

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
    const size_t i = static_cast<size_t>(s);
    if (info[i].single) iv32[i] = intervals_of<uint32_t>(nodes, s);
    else iv64[i] = intervals_of<uint64_t>(nodes, s);
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
