// The one blocked matrix-product micro-kernel of the reference backend, shared by MatMul, Gemm,
// the quantized products (matmul_util.h) and Conv (im2col).
//
// Operands arrive packed in panels: A in panels of kGemmMR rows, B in panels of kGemmNR columns,
// each panel k-major (a_panel[p * kGemmMR + i], b_panel[p * kGemmNR + j]); zero rows and columns
// pad the last panels. The kernel adds kc products to every element of a C block held in memory
// (row stride ldc), taking them in increasing k, one element at a time, so an element that
// starts at zero and is fed its k blocks in order gets exactly the sequential sum
// ((a0 b0 + a1 b1) + a2 b2) + ... whatever the blocking, the tile shape, the vector width or
// the thread that computes it.
//
// Rounding: with exact_products (both factors are float32, float16 or bfloat16 values widened
// to double: 24 + 24 significant bits fit in double's 53) each product is exact, so a fused
// multiply-add rounds exactly as a multiply followed by an add, and the vector paths use FMA.
// Without it (double inputs, float8 minus zero points, ...) every path multiplies and adds
// separately, each rounded. Integers (uint64, wrapping) are exact either way. The portable C++
// path always multiplies and adds separately; it gives the same bits as the vector paths.
#pragma once

#include <cstdint>
#include <vector>

namespace parity::ref {

constexpr int64_t kGemmMR = 8;    // rows of A (and C) per panel and register tile
constexpr int64_t kGemmNR = 16;   // columns of B (and C) per panel and register tile
constexpr int64_t kGemmKc = 256;  // k per block: C tiles are loaded and stored once per block

// The code path the kernel takes on this CPU.
enum class GemmPath { kPortable, kAvx2Fma, kAvx512 };

// Detected once: AVX-512F, else AVX2 + FMA, else portable. PARITY_REF_FORCE_SCALAR=1 in the
// environment (read once) selects the portable path.
GemmPath gemm_path();
// The paths this CPU can take, the portable one included.
std::vector<GemmPath> supported_gemm_paths();
// For tests comparing the paths: every later call takes `path` (one of supported_gemm_paths()),
// until reset_gemm_path() returns to the detected one.
void force_gemm_path(GemmPath path);
void reset_gemm_path();

// C[row_panels * kGemmMR, col_panels * kGemmNR] += A x B over kc values of k, where A's panel
// i starts at a + i * a_panel_stride and B's panel j at b + j * b_panel_stride.
void gemm_panels(int64_t kc, const double* a, int64_t a_panel_stride, int64_t row_panels,
                 const double* b, int64_t b_panel_stride, int64_t col_panels, double* c,
                 int64_t ldc, bool exact_products);
void gemm_panels(int64_t kc, const uint64_t* a, int64_t a_panel_stride, int64_t row_panels,
                 const uint64_t* b, int64_t b_panel_stride, int64_t col_panels, uint64_t* c,
                 int64_t ldc);

// As gemm_panels for B read in place: B's panel j starts at b + j * kGemmNR (kGemmNR
// consecutive columns) and its row p at b_rows[p] from there (a convolution's input, whose
// rows for successive k are input channels and kernel taps apart).
void gemm_rows(int64_t kc, const double* a, int64_t a_panel_stride, int64_t row_panels,
               const double* b, const int64_t* b_rows, int64_t col_panels, double* c, int64_t ldc,
               bool exact_products);

// y[j] += sum_p x[p] * b[p * ldb + j] for j < n, over p < k in increasing order, every product
// and every addition rounded separately (never fused), vectorized along j: each y[j] gets the
// sequential sum ((y + x0 b0j) + x1 b1j) + ... on every code path. For a matrix-vector product
// whose vector is not made of widened float values (a recurrent layer's state), one row at a
// time, where a GEMM tile would waste all but one of its rows.
void gemv_unfused(int64_t k, const double* x, const double* b, int64_t ldb, int64_t n, double* y);

// Whether products of two T values (widened to double) are exact, so FMA may be used.
template <typename T>
inline constexpr bool gemm_exact_products_v = sizeof(T) <= 4;

}  // namespace parity::ref
