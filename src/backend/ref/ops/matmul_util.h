// The matrix-product engine behind MatMul, Gemm, MatMulInteger and QLinearMatMul, built on the
// one micro-kernel of gemm_kernel.h.
//
// Exactness: every output element is the sum of its k products taken in increasing k, starting
// from zero, in double for floating types and in wrapping 64-bit integers for integer ones;
// each product and each addition rounds as if done separately (fused multiply-adds are used
// only where products are exact, see gemm_kernel.h). Blocking only changes which elements are
// computed together, never that order, and every element is computed inside one work item
// whose extent depends on the shapes alone: the bits are the same for any thread count and on
// any CPU, whichever code path the kernel takes.
//
// Speed: B is packed once into panels of kGemmNR columns (each panel k rows), before the run
// when B is a constant; A is packed likewise in panels of kGemmMR rows, once per product; a
// work item (batch, block of rows, block of column panels) lets the micro-kernel accumulate
// kGemmKc values of k at a time into a C block that stays in L2.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "backend/ref/ops/gemm_kernel.h"
#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {

// Floating values accumulate in double; integers in uint64 (two's complement wraps alike).
template <typename T>
using matmul_acc_t = std::conditional_t<is_float_like_v<T>, double, uint64_t>;

template <typename T>
inline matmul_acc_t<T> to_matmul_acc(T v) {
  if constexpr (is_float_like_v<T>)
    return to_double(v);
  else
    return static_cast<uint64_t>(static_cast<compute_t<T>>(v));
}

// `count` B matrices [k, n], packed in panels of kGemmNR columns (zero columns pad the last).
template <typename Acc>
struct PackedB {
  int64_t k = 0, n = 0, panels = 0;
  std::vector<Acc> values;
  const Acc* matrix(int64_t i) const { return values.data() + i * panels * k * kGemmNR; }
};

// Packs `count` B matrices [k, n] into b (its storage is reused when large enough); get(i, p,
// j) is element (p, j) of matrix i, as Acc.
template <typename Acc, typename Get>
void pack_b_into(PackedB<Acc>& b, int64_t count, int64_t k, int64_t n, Get get) {
  b.k = k;
  b.n = n;
  b.panels = (n + kGemmNR - 1) / kGemmNR;
  b.values.resize(static_cast<size_t>(count * b.panels * k * kGemmNR));
  parallel_for(count * b.panels, grain_for(k * kGemmNR), [&](int64_t first, int64_t last) {
    for (int64_t item = first; item < last; ++item) {
      const int64_t i = item / b.panels, j0 = (item % b.panels) * kGemmNR;
      const int64_t width = std::min(kGemmNR, n - j0);
      Acc* dst = b.values.data() + item * k * kGemmNR;
      for (int64_t p = 0; p < k; ++p, dst += kGemmNR) {
        for (int64_t j = 0; j < width; ++j) dst[j] = get(i, p, j0 + j);
        for (int64_t j = width; j < kGemmNR; ++j) dst[j] = Acc(0);
      }
    }
  });
}

template <typename Acc, typename Get>
PackedB<Acc> pack_b(int64_t count, int64_t k, int64_t n, Get get) {
  PackedB<Acc> b;
  pack_b_into(b, count, k, n, get);
  return b;
}

// The packed form of B is Acc (8 bytes) per element, twice a float32 B: a B whose packed form
// would exceed this is never packed whole. A constant one is not packed before the run, and
// every large B is packed per product in slices of columns of at most this size, each
// multiplied before the next is packed, so a model's weights are not held a second time in
// double. Slicing columns changes no element's sum (see the exactness note above).
constexpr int64_t kPackedBLimitBytes = int64_t{64} << 20;

// Bytes of `count` B matrices [k, n] packed (double, so huge shapes cannot overflow).
inline double packed_b_bytes(int64_t count, int64_t k, int64_t n) {
  const double panels = static_cast<double>((n + kGemmNR - 1) / kGemmNR);
  return static_cast<double>(count) * static_cast<double>(k) * panels * kGemmNR * 8.0;
}

// Packs `count` B matrices [k, n] (get(i, p, j) as in pack_b_into) into `buffer` in slices of
// whole panels within kPackedBLimitBytes (one panel at least), calling multiply(slice, j0) for
// each: the slice holds columns [j0, j0 + slice.n) of every matrix.
template <typename Acc, typename Get, typename Multiply>
void for_packed_b_slices(PackedB<Acc>& buffer, int64_t count, int64_t k, int64_t n, Get get,
                         Multiply multiply) {
  const double panel_bytes = packed_b_bytes(count, k, kGemmNR);
  const int64_t panels = (n + kGemmNR - 1) / kGemmNR;
  const int64_t slice_panels = std::clamp<int64_t>(
      static_cast<int64_t>(static_cast<double>(kPackedBLimitBytes) / std::max(panel_bytes, 1.0)), 1,
      std::max<int64_t>(panels, 1));
  const int64_t width = slice_panels * kGemmNR;
  for (int64_t j0 = 0; j0 < std::max<int64_t>(n, 1); j0 += width) {
    pack_b_into(buffer, count, k, std::min(width, n - j0),
                [&](int64_t i, int64_t p, int64_t j) { return get(i, p, j0 + j); });
    multiply(static_cast<const PackedB<Acc>&>(buffer), j0);
  }
}

// How the output [m, n] of one product is cut into work items: blocks of `rows` rows (a
// multiple of kGemmMR, blocks of about equal size) by blocks of `col_panels` B panels.
struct GemmTiling {
  int64_t rows = 0, row_blocks = 0, col_panels = 0, col_blocks = 0;
};

// whole_rows keeps every row's n columns in one item (for callers that store whole rows).
inline GemmTiling gemm_tiling(int64_t m, int64_t panels, bool whole_rows) {
  GemmTiling t;
  t.col_panels = whole_rows ? std::max<int64_t>(panels, 1) : std::clamp<int64_t>(panels, 1, 8);
  t.col_blocks = (panels + t.col_panels - 1) / t.col_panels;
  // At most 96 rows, fewer when whole rows would make the C block larger than 256 KiB.
  const int64_t max_rows = std::clamp<int64_t>(
      int64_t{32768} / (t.col_panels * kGemmNR) / kGemmMR * kGemmMR, kGemmMR, 16 * kGemmMR);
  t.row_blocks = std::max<int64_t>(1, (m + max_rows - 1) / max_rows);
  const int64_t even = (m + t.row_blocks - 1) / t.row_blocks;
  t.rows = std::max<int64_t>(kGemmMR, (even + kGemmMR - 1) / kGemmMR * kGemmMR);
  t.row_blocks = std::max<int64_t>(1, (m + t.rows - 1) / t.rows);
  return t;
}

// For each of `batches` output matrices [m, n]: A is get_a(t, r, p) (as Acc) and B is
// b.matrix(b_index[t]). store(t, r, j0, count, values) receives columns [j0, j0 + count) of
// row r of output t. exact_products: see gemm_kernel.h (ignored for integers).
template <typename Acc, typename GetA, typename Store>
void multiply_blocks(int64_t batches, int64_t m, const PackedB<Acc>& b,
                     const std::vector<int64_t>& b_index, GetA get_a, Store store,
                     bool exact_products, bool whole_rows = false) {
  const int64_t k = b.k, n = b.n;
  if (batches == 0 || m == 0 || n == 0) return;
  const GemmTiling tl = gemm_tiling(m, b.panels, whole_rows);
  // A, every batch, converted and packed once in panels of kGemmMR rows over the whole k (as B),
  // so the column blocks of a row block share it.
  const int64_t m_panels = (m + kGemmMR - 1) / kGemmMR, a_panel_size = k * kGemmMR;
  // Kept by the calling thread for its next product: no allocation (and no fresh pages to
  // fault in) per call once warm.
  // (Workers see their own thread_local objects: they use the caller's through this pointer.)
  thread_local std::vector<Acc> a_buffer;
  a_buffer.resize(static_cast<size_t>(batches * m_panels * a_panel_size));
  Acc* const a_packed = a_buffer.data();
  parallel_for(batches * m_panels, grain_for(a_panel_size), [&](int64_t first, int64_t last) {
    for (int64_t item = first; item < last; ++item) {
      const int64_t t = item / m_panels, r0 = item % m_panels * kGemmMR;
      Acc* panel = a_packed + item * a_panel_size;
      for (int64_t i = 0; i < kGemmMR; ++i) {
        if (r0 + i < m)
          for (int64_t p = 0; p < k; ++p) panel[p * kGemmMR + i] = get_a(t, r0 + i, p);
        else
          for (int64_t p = 0; p < k; ++p) panel[p * kGemmMR + i] = Acc(0);
      }
    }
  });
  const int64_t blocks = tl.row_blocks * tl.col_blocks, ldc = tl.col_panels * kGemmNR;
  parallel_for(batches * blocks, grain_for(tl.rows * ldc * std::max<int64_t>(k, 1)),
               [&](int64_t first, int64_t last) {
                 // Reused by every call on this thread: no allocation per product once warm.
                 thread_local std::vector<Acc> c_block;
                 c_block.resize(static_cast<size_t>(tl.rows * ldc));
                 for (int64_t item = first; item < last; ++item) {
                   const int64_t t = item / blocks, rb = item % blocks / tl.col_blocks;
                   const int64_t jp0 = item % tl.col_blocks * tl.col_panels;
                   const int64_t r0 = rb * tl.rows, rows = std::min(tl.rows, m - r0);
                   const int64_t row_panels = (rows + kGemmMR - 1) / kGemmMR;
                   const int64_t col_panels = std::min(tl.col_panels, b.panels - jp0);
                   const int64_t j0 = jp0 * kGemmNR, cols = std::min(n - j0, col_panels * kGemmNR);
                   Acc* c = c_block.data();
                   std::fill(c, c + row_panels * kGemmMR * ldc, Acc(0));
                   const Acc* am = a_packed + (t * m_panels + r0 / kGemmMR) * a_panel_size;
                   const Acc* bm = b.matrix(b_index[t]) + jp0 * k * kGemmNR;
                   for (int64_t k0 = 0; k0 < k; k0 += kGemmKc) {
                     const int64_t kc = std::min(kGemmKc, k - k0);
                     if constexpr (std::is_same_v<Acc, double>)
                       gemm_panels(kc, am + k0 * kGemmMR, a_panel_size, row_panels,
                                   bm + k0 * kGemmNR, k * kGemmNR, col_panels, c, ldc,
                                   exact_products);
                     else
                       gemm_panels(kc, am + k0 * kGemmMR, a_panel_size, row_panels,
                                   bm + k0 * kGemmNR, k * kGemmNR, col_panels, c, ldc);
                   }
                   for (int64_t r = 0; r < rows; ++r) store(t, r0 + r, j0, cols, c + r * ldc);
                 }
               });
}

// multiply_blocks for callers that take whole rows: store(t, r, row) receives the n
// accumulators of row r of output t. Products are rounded separately (exact_products off).
template <typename Acc, typename GetA, typename Store>
void multiply_packed(int64_t batches, int64_t m, const PackedB<Acc>& b,
                     const std::vector<int64_t>& b_index, GetA get_a, Store store) {
  multiply_blocks<Acc>(
      batches, m, b, b_index, get_a,
      [&](int64_t t, int64_t r, int64_t, int64_t, const Acc* row) { store(t, r, row); },
      /*exact_products=*/false, /*whole_rows=*/true);
}

// The shapes of a NumPy matmul: a 1-D A is a row [1, K], a 1-D B a column [K, 1] (those dims
// leave the output); batch dims broadcast.
struct MatMulGeometry {
  int64_t m = 0, k = 0, n = 0, batches = 0;
  Shape out_shape;
  std::vector<int64_t> a_batch, b_batch;  // per output batch: the batch index into A and B
  int64_t b_count = 0;                    // B's own number of matrices
};

// Throws (through ctx) when the shapes do not multiply.
MatMulGeometry matmul_geometry(const Shape& a, const Shape& b, RunContext& ctx);

}  // namespace parity::ref
