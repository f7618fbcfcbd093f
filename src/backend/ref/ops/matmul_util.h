// The matrix-product engine behind MatMul, Gemm, MatMulInteger and QLinearMatMul.
//
// Exactness: every output element is the sum of its k products taken in increasing k, each
// product and each addition rounded separately (no fused multiply-add), starting from zero,
// in double for floating types and in wrapping 64-bit integers for integer ones. Blocking only
// changes which elements are computed together, never that order, and every element is
// computed inside one parallel chunk: the bits are the same for any thread count and on any
// CPU, the AVX2 code path included.
//
// Speed: B is packed once into panels of kPanel columns (each panel k rows of kPanel values);
// A is converted a block of rows at a time; a micro-kernel keeps a kMicroRows x kPanel tile of
// accumulators in vector registers while it walks k. A panel is reused by every row of the
// block while it sits in the L1/L2 cache, and a block of A stays in L2 while the panels pass.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {

constexpr int64_t kPanel = 8;      // columns of B per packed panel
constexpr int64_t kMicroRows = 4;  // rows of A per micro-kernel tile

// c[r * ldc + j] = sum_p a[r * k + p] * panel[p * kPanel + j] for r < rows, j < kPanel.
void panel_product(const double* a, int64_t rows, int64_t k, const double* panel, double* c,
                   int64_t ldc);
void panel_product(const uint64_t* a, int64_t rows, int64_t k, const uint64_t* panel,
                   uint64_t* c, int64_t ldc);

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

// `count` B matrices [k, n], packed.
template <typename Acc>
struct PackedB {
  int64_t k = 0, n = 0, panels = 0;
  std::vector<Acc> values;
  const Acc* matrix(int64_t i) const { return values.data() + i * panels * k * kPanel; }
};

// get(i, p, j) is element (p, j) of matrix i, as Acc.
template <typename Acc, typename Get>
PackedB<Acc> pack_b(int64_t count, int64_t k, int64_t n, Get get) {
  PackedB<Acc> b;
  b.k = k;
  b.n = n;
  b.panels = (n + kPanel - 1) / kPanel;
  b.values.assign(static_cast<size_t>(count * b.panels * k * kPanel), Acc(0));
  parallel_for(count * b.panels, grain_for(k * kPanel), [&](int64_t first, int64_t last) {
    for (int64_t item = first; item < last; ++item) {
      const int64_t i = item / b.panels, j0 = (item % b.panels) * kPanel;
      const int64_t width = std::min(kPanel, n - j0);
      Acc* dst = b.values.data() + item * k * kPanel;
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < width; ++j) dst[p * kPanel + j] = get(i, p, j0 + j);
    }
  });
  return b;
}

// Rows of A per parallel item: a block of about 128 KiB, a multiple of kMicroRows.
inline int64_t matmul_block_rows(int64_t k) {
  const int64_t rows = (int64_t{16384} / std::max<int64_t>(k, 1)) / kMicroRows * kMicroRows;
  return std::clamp<int64_t>(rows, kMicroRows, 128);
}

// For each of `batches` output matrices [m, n]: A is get_a(t, r, p) (as Acc) and B is
// b.matrix(b_index[t]). store(t, r, row) receives row r of output t as n accumulators.
template <typename Acc, typename GetA, typename Store>
void multiply_packed(int64_t batches, int64_t m, const PackedB<Acc>& b,
                     const std::vector<int64_t>& b_index, GetA get_a, Store store) {
  const int64_t k = b.k, ldc = b.panels * kPanel;
  const int64_t block = matmul_block_rows(k);
  const int64_t blocks = (m + block - 1) / block;
  parallel_for(batches * blocks, grain_for(block * ldc * std::max<int64_t>(k, 1)),
               [&](int64_t first, int64_t last) {
    std::vector<Acc> a(static_cast<size_t>(block * k)), c(static_cast<size_t>(block * ldc));
    for (int64_t item = first; item < last; ++item) {
      const int64_t t = item / blocks, r0 = (item % blocks) * block;
      const int64_t rows = std::min(block, m - r0);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t p = 0; p < k; ++p) a[r * k + p] = get_a(t, r0 + r, p);
      const Acc* bm = b.matrix(b_index[t]);
      for (int64_t jp = 0; jp < b.panels; ++jp)
        panel_product(a.data(), rows, k, bm + jp * k * kPanel, c.data() + jp * kPanel, ldc);
      for (int64_t r = 0; r < rows; ++r) store(t, r0 + r, c.data() + r * ldc);
    }
  });
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
