// Every statistic Polygraphy prints about an array (mean, std-dev, var, min/max and where,
// avg-magnitude, median and quantiles), for up to four arrays at once, without storing them:
// the arrays are streams computed a block at a time (both outputs and their differences, never
// materialised), read in one fused pass plus a few light selection passes.
//
// Order statistics are exact, found by radix selection on order-preserving integer keys of the
// values (uint32 for float32 kinds, uint64 otherwise): a strided sample taken before the fused
// pass brackets each wanted rank with a key interval; the fused pass counts the keys below each
// interval and gathers those inside (the per-block kernels are in block_kernels.h), and a digit
// histogram and nth_element on them give the rank. A rank the sample
// misplaced falls back to radix selection (a histogram of the top 16 key bits, then gathering or
// refining the buckets that hold it). Nothing depends on the thread count: sums run in 16 lanes
// per 64 Ki-element chunk, combined in chunk order; counts and gathered keys do not depend on
// order.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "stats/array_stats.h"
#include "stats/block_kernels.h"

namespace parity {

constexpr int64_t kStatsGrain = int64_t{1} << 16;  // elements per chunk of the ordered sums
constexpr int64_t kStatsBlock = 1024;              // elements per block within a chunk
constexpr int kMaxStreams = 4;

// Elements [begin, begin + n) of every stream, n <= kStatsBlock. A kFloat32 stream's values are
// at f[s], every other kind's at d[s]; sources point them at their own memory or at the buffers.
struct StreamBlock {
  const float* f[kMaxStreams] = {};
  const double* d[kMaxStreams] = {};
  alignas(64) float fbuf[kMaxStreams][kStatsBlock];
  alignas(64) double dbuf[kMaxStreams][kStatsBlock];
  alignas(64) double x[kStatsBlock];  // scratch for sources
  alignas(64) double y[kStatsBlock];
  alignas(64) float fx[kStatsBlock];
  alignas(64) float fy[kStatsBlock];
  int64_t counted[2] = {0, 0};  // what a source counts while reading, for its count()
};

class StreamSource {
 public:
  virtual ~StreamSource() = default;
  virtual int64_t size() const = 0;
  virtual int streams() const = 0;
  virtual NumKind kind(int stream) const = 0;
  // Called from several threads at once, each with its own block.
  virtual void read(int64_t begin, int64_t n, StreamBlock& block) const = 0;
  // A hint that read(begin, n) comes soon: sources reading memory ask for it to be fetched, so
  // that it arrives while the current block is being worked on.
  virtual void prefetch(int64_t begin, int64_t n) const {}
  // True when a stream never holds a negative value (NaN aside): differences.
  virtual bool nonnegative(int stream) const { return false; }
  // Order-free counts over a block, summed over the fused pass (e.g. elements beyond both
  // tolerances): adds to counts[0] and counts[1].
  virtual void count(const StreamBlock& block, int64_t n, int64_t* counts) const {}
};

// One array as a stream.
class NumArraySource : public StreamSource {
 public:
  explicit NumArraySource(const NumArray& a) : a_(a) {}
  int64_t size() const override { return static_cast<int64_t>(a_.size()); }
  int streams() const override { return 1; }
  NumKind kind(int) const override { return a_.kind; }
  void read(int64_t begin, int64_t n, StreamBlock& block) const override;

 private:
  const NumArray& a_;
};

// What to compute beyond BasicStats for one stream.
struct StreamRequest {
  bool median = false;
  std::vector<double> quantiles;
};

struct FusedStats {
  std::vector<BasicStats> basic;  // per stream
  std::vector<OrderStats> order;  // per stream: the requested median and quantiles
  int64_t counts[2] = {0, 0};     // StreamSource::count over all blocks
};

FusedStats compute_fused_stats(const StreamSource& source,
                               const std::vector<StreamRequest>& requests);

// The 10-bin histogram counts of every stream that has bins (null: skipped), in one pass.
std::vector<std::array<int64_t, Histogram10::kBins>> stream_histograms(
    const StreamSource& source, const std::vector<const Histogram10*>& bins);

// Sums of (v - shift) in 16 lanes, lane = position in the chunk mod 16 (blocks start at multiples
// of kStatsBlock within their chunk), added up lane by lane: the order of every mean the
// comparator prints, so the same values give the same bits on every path and thread count.
struct LaneSum {
  double lane[kernels::kLanes] = {};
  double total() const;
};
void add_shifted(LaneSum& sum, const double* v, int64_t n, double shift);
void add_shifted(LaneSum& sum, const float* v, int64_t n, double shift);

}  // namespace parity
