// The per-block kernels of the fused statistics pass (fused_stats.cc, radix_select.cc): the sums,
// extremes and order-preserving keys of one block of one stream, and the counts and gathered keys
// of the sampled key intervals. Two implementations of the float32 kernels, chosen once: loops
// the compiler vectorises (every CPU) and AVX-512 intrinsics that do each block in one sweep per
// stage. Both give the same bits: sums in the same lanes and order, counts and keys exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace parity::kernels {

// Sums run in this many lanes: element i of a chunk goes to lane i % kLanes, added in element
// order, so that every path and thread count gives the same bits (two AVX-512 registers of
// doubles per sum, which keeps their additions off one dependency chain).
constexpr int kLanes = 16;

// The sums of one stream over one chunk.
struct Lanes {
  double sum[kLanes] = {}, sumsq[kLanes] = {}, sum_abs[kLanes] = {};
};

// Whether a block holds a NaN and, when it does not, its smallest and largest values (as values:
// -0 equals +0; either may stand for a zero).
template <typename T>
struct Extremes {
  T min, max;
  bool has_nan;
};

enum class KernelPath { kPortable, kAvx512 };

// Detected once: AVX-512 (F, BW, DQ, VL) where the CPU has it, else portable.
KernelPath kernel_path();
// The paths this CPU can take, the portable one first.
std::vector<KernelPath> supported_kernel_paths();
// For tests comparing the paths: later calls take `path` until reset_kernel_path().
void force_kernel_path(KernelPath path);
void reset_kernel_path();

// Adds (v - shift), (v - shift)^2 (fused multiply-add) and, with `magnitudes`, |v| of a block
// (n >= 1) to the lanes (the block starts at a multiple of kLanes within its chunk), returns its
// extremes, and writes every element's key (radix::key_of) to keys (room for n rounded up to 16).
Extremes<float> scan_block(const float* v, int64_t n, double shift, Lanes& lanes, uint32_t* keys,
                           bool magnitudes);
Extremes<double> scan_block(const double* v, int64_t n, double shift, Lanes& lanes, uint64_t* keys,
                            bool magnitudes);

// The keys of a block (n <= 1024) against key intervals [lo, lo + width] (at most kMaxIntervals,
// ascending, disjoint). For each interval j, adds to counts[3j..3j+2] how many keys lie below it,
// in it, and at its low end; unless kept is null, writes the keys strictly between its ends to
// kept[j] (room for n rounded up to 16), in any order, and their number to kept_count[j]. Intervals
// from `upper` on lie high in the keys' order (the upper quantiles): a kernel may look for them
// among the keys at or above lo[upper] only, a hint that changes no result. With `whole`, every key
// in an interval is gathered, ends included, and only the counts below and in it are kept (at its
// low end: 0): cheaper, for intervals whose ends are not repeated values.
constexpr size_t kMaxIntervals = 16;
template <typename K>
struct IntervalScan {
  const K* lo;
  const K* width;
  size_t m;
  size_t upper;
  int64_t* counts;
  K* const* kept;  // null: nothing gathered
  int64_t* kept_count;
  bool whole = false;
};
void interval_block(const uint32_t* keys, int64_t n, const IntervalScan<uint32_t>& scan);
void interval_block(const uint64_t* keys, int64_t n, const IntervalScan<uint64_t>& scan);

// scan_block and interval_block of the block's keys in one call (one sweep where the kernel can;
// the keys are not kept). With scan.m == 0 only the scan.
Extremes<float> scan_intervals(const float* v, int64_t n, double shift, Lanes& lanes,
                               bool magnitudes, const IntervalScan<uint32_t>& scan);
Extremes<double> scan_intervals(const double* v, int64_t n, double shift, Lanes& lanes,
                                bool magnitudes, const IntervalScan<uint64_t>& scan);

// The AVX-512 float32 kernels (block_kernels_avx512.cc, x86-64 only); called when kernel_path()
// says so.
namespace avx512 {
Extremes<float> scan_block(const float* v, int64_t n, double shift, Lanes& lanes, uint32_t* keys,
                           bool magnitudes);
void interval_block(const uint32_t* keys, int64_t n, const IntervalScan<uint32_t>& scan);
Extremes<float> scan_intervals(const float* v, int64_t n, double shift, Lanes& lanes,
                               bool magnitudes, const IntervalScan<uint32_t>& scan);
}  // namespace avx512

}  // namespace parity::kernels
