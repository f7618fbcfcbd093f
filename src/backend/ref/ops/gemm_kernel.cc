// The micro-kernel of gemm_kernel.h in three forms giving the same bits: portable C++, AVX2 +
// FMA (x86-64-v3) and AVX-512F, chosen once at run time. Each keeps a tile of C in registers
// (AVX-512: the whole kGemmMR x kGemmNR, 16 vectors; AVX2: a quarter) while it walks kc values of
// k; one B panel block is used by every row panel of A before the next (L1/L2 reuse).
//
// The separate multiply-and-add forms are compiled with fp-contract=off: GCC would otherwise
// fuse a multiply followed by an add into an FMA where the target has one, and that changes the
// bits when products are not exact (double inputs).
#include "backend/ref/ops/gemm_kernel.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace parity::ref {

namespace {

// Where row p of a B panel starts, relative to the panel: packed panels hold their rows one
// after the other; panels read in place (a convolution's input) list them in a table.
struct PackedRows {
  int64_t operator()(int64_t p) const { return p * kGemmNR; }
};
struct TableRows {
  const int64_t* offsets;
  int64_t operator()(int64_t p) const { return offsets[p]; }
};

// c[i * ldc + j] += sum_p a[p * kGemmMR + i] * b[rows(p) + j], products and sums rounded one by
// one.
template <typename Acc, typename Rows>
__attribute__((optimize("fp-contract=off"))) void portable_tile(int64_t kc, const Acc* a,
                                                                const Acc* b, Rows rows, Acc* c,
                                                                int64_t ldc) {
  Acc acc[kGemmMR][kGemmNR];
  for (int64_t i = 0; i < kGemmMR; ++i)
    for (int64_t j = 0; j < kGemmNR; ++j) acc[i][j] = c[i * ldc + j];
  for (int64_t p = 0; p < kc; ++p) {
    const Acc* bp = b + rows(p);
    for (int64_t i = 0; i < kGemmMR; ++i) {
      const Acc av = a[p * kGemmMR + i];
      for (int64_t j = 0; j < kGemmNR; ++j) acc[i][j] += av * bp[j];
    }
  }
  for (int64_t i = 0; i < kGemmMR; ++i)
    for (int64_t j = 0; j < kGemmNR; ++j) c[i * ldc + j] = acc[i][j];
}

template <typename Acc, typename Rows>
void portable_panels(int64_t kc, const Acc* a, int64_t a_stride, int64_t row_panels, const Acc* b,
                     int64_t b_stride, Rows rows, int64_t col_panels, Acc* c, int64_t ldc) {
  for (int64_t jp = 0; jp < col_panels; ++jp)
    for (int64_t ip = 0; ip < row_panels; ++ip)
      portable_tile(kc, a + ip * a_stride, b + jp * b_stride, rows,
                    c + ip * kGemmMR * ldc + jp * kGemmNR, ldc);
}

#if defined(__x86_64__)

// AVX-512F: a row of the tile is two vectors of 8; 16 accumulators.
template <bool kFused, typename Rows>
__attribute__((target("avx512f"), optimize("fp-contract=off"), always_inline)) inline void
avx512_tile(int64_t kc, const double* a, const double* b, Rows rows, double* c, int64_t ldc) {
  __m512d acc[kGemmMR][2];
  for (int64_t i = 0; i < kGemmMR; ++i) {
    acc[i][0] = _mm512_loadu_pd(c + i * ldc);
    acc[i][1] = _mm512_loadu_pd(c + i * ldc + 8);
  }
  for (int64_t p = 0; p < kc; ++p) {
    const __m512d b0 = _mm512_loadu_pd(b + rows(p));
    const __m512d b1 = _mm512_loadu_pd(b + rows(p) + 8);
    for (int64_t i = 0; i < kGemmMR; ++i) {
      const __m512d av = _mm512_set1_pd(a[p * kGemmMR + i]);
      if constexpr (kFused) {
        acc[i][0] = _mm512_fmadd_pd(av, b0, acc[i][0]);
        acc[i][1] = _mm512_fmadd_pd(av, b1, acc[i][1]);
      } else {
        acc[i][0] = _mm512_add_pd(acc[i][0], _mm512_mul_pd(av, b0));
        acc[i][1] = _mm512_add_pd(acc[i][1], _mm512_mul_pd(av, b1));
      }
    }
  }
  for (int64_t i = 0; i < kGemmMR; ++i) {
    _mm512_storeu_pd(c + i * ldc, acc[i][0]);
    _mm512_storeu_pd(c + i * ldc + 8, acc[i][1]);
  }
}

template <bool kFused, typename Rows>
__attribute__((target("avx512f"), optimize("fp-contract=off"))) void avx512_panels(
    int64_t kc, const double* a, int64_t a_stride, int64_t row_panels, const double* b,
    int64_t b_stride, Rows rows, int64_t col_panels, double* c, int64_t ldc) {
  for (int64_t jp = 0; jp < col_panels; ++jp)
    for (int64_t ip = 0; ip < row_panels; ++ip)
      avx512_tile<kFused>(kc, a + ip * a_stride, b + jp * b_stride, rows,
                          c + ip * kGemmMR * ldc + jp * kGemmNR, ldc);
}

// AVX2 + FMA: 16 registers hold a quarter of the tile, kAvx2Rows rows x 8 columns (8
// accumulators); the quarters walk k one after the other, which changes nothing per element.
constexpr int64_t kAvx2Rows = 4;
static_assert(kGemmMR % kAvx2Rows == 0 && kGemmNR % 8 == 0);

template <bool kFused, typename Rows>
__attribute__((target("avx2,fma"), optimize("fp-contract=off"), always_inline)) inline void
avx2_quarter_tile(int64_t kc, const double* a, const double* b, Rows rows, double* c, int64_t ldc) {
  __m256d acc[kAvx2Rows][2];
  for (int64_t i = 0; i < kAvx2Rows; ++i) {
    acc[i][0] = _mm256_loadu_pd(c + i * ldc);
    acc[i][1] = _mm256_loadu_pd(c + i * ldc + 4);
  }
  for (int64_t p = 0; p < kc; ++p) {
    const __m256d b0 = _mm256_loadu_pd(b + rows(p));
    const __m256d b1 = _mm256_loadu_pd(b + rows(p) + 4);
    for (int64_t i = 0; i < kAvx2Rows; ++i) {
      const __m256d av = _mm256_broadcast_sd(a + p * kGemmMR + i);
      if constexpr (kFused) {
        acc[i][0] = _mm256_fmadd_pd(av, b0, acc[i][0]);
        acc[i][1] = _mm256_fmadd_pd(av, b1, acc[i][1]);
      } else {
        acc[i][0] = _mm256_add_pd(acc[i][0], _mm256_mul_pd(av, b0));
        acc[i][1] = _mm256_add_pd(acc[i][1], _mm256_mul_pd(av, b1));
      }
    }
  }
  for (int64_t i = 0; i < kAvx2Rows; ++i) {
    _mm256_storeu_pd(c + i * ldc, acc[i][0]);
    _mm256_storeu_pd(c + i * ldc + 4, acc[i][1]);
  }
}

template <bool kFused, typename Rows>
__attribute__((target("avx2,fma"), optimize("fp-contract=off"))) void avx2_panels(
    int64_t kc, const double* a, int64_t a_stride, int64_t row_panels, const double* b,
    int64_t b_stride, Rows rows, int64_t col_panels, double* c, int64_t ldc) {
  for (int64_t jp = 0; jp < col_panels; ++jp)
    for (int64_t ip = 0; ip < row_panels; ++ip)
      for (int64_t i0 = 0; i0 < kGemmMR; i0 += kAvx2Rows)
        for (int64_t j0 = 0; j0 < kGemmNR; j0 += 8)
          avx2_quarter_tile<kFused>(kc, a + ip * a_stride + i0, b + jp * b_stride + j0, rows,
                                    c + (ip * kGemmMR + i0) * ldc + jp * kGemmNR + j0, ldc);
}

// The matrix-vector product, kLanes doubles per vector and kVectors accumulators per block of
// columns (enough independent additions to hide their latency).
__attribute__((target("avx512f"), optimize("fp-contract=off"))) void avx512_gemv(
    int64_t k, const double* x, const double* b, int64_t ldb, int64_t n, double* y) {
  constexpr int64_t kVectors = 8, kWide = kVectors * 8;
  int64_t j = 0;
  for (; j + kWide <= n; j += kWide) {
    __m512d acc[kVectors];
    for (int64_t v = 0; v < kVectors; ++v) acc[v] = _mm512_loadu_pd(y + j + 8 * v);
    for (int64_t p = 0; p < k; ++p) {
      const __m512d xv = _mm512_set1_pd(x[p]);
      const double* row = b + p * ldb + j;
      for (int64_t v = 0; v < kVectors; ++v)
        acc[v] = _mm512_add_pd(acc[v], _mm512_mul_pd(xv, _mm512_loadu_pd(row + 8 * v)));
    }
    for (int64_t v = 0; v < kVectors; ++v) _mm512_storeu_pd(y + j + 8 * v, acc[v]);
  }
  for (; j + 8 <= n; j += 8) {
    __m512d acc = _mm512_loadu_pd(y + j);
    for (int64_t p = 0; p < k; ++p)
      acc =
          _mm512_add_pd(acc, _mm512_mul_pd(_mm512_set1_pd(x[p]), _mm512_loadu_pd(b + p * ldb + j)));
    _mm512_storeu_pd(y + j, acc);
  }
  for (; j < n; ++j) {
    double acc = y[j];
    for (int64_t p = 0; p < k; ++p) acc += x[p] * b[p * ldb + j];
    y[j] = acc;
  }
}

__attribute__((target("avx2,fma"), optimize("fp-contract=off"))) void avx2_gemv(
    int64_t k, const double* x, const double* b, int64_t ldb, int64_t n, double* y) {
  constexpr int64_t kVectors = 8, kWide = kVectors * 4;
  int64_t j = 0;
  for (; j + kWide <= n; j += kWide) {
    __m256d acc[kVectors];
    for (int64_t v = 0; v < kVectors; ++v) acc[v] = _mm256_loadu_pd(y + j + 4 * v);
    for (int64_t p = 0; p < k; ++p) {
      const __m256d xv = _mm256_broadcast_sd(x + p);
      const double* row = b + p * ldb + j;
      for (int64_t v = 0; v < kVectors; ++v)
        acc[v] = _mm256_add_pd(acc[v], _mm256_mul_pd(xv, _mm256_loadu_pd(row + 4 * v)));
    }
    for (int64_t v = 0; v < kVectors; ++v) _mm256_storeu_pd(y + j + 4 * v, acc[v]);
  }
  for (; j + 4 <= n; j += 4) {
    __m256d acc = _mm256_loadu_pd(y + j);
    for (int64_t p = 0; p < k; ++p)
      acc = _mm256_add_pd(
          acc, _mm256_mul_pd(_mm256_broadcast_sd(x + p), _mm256_loadu_pd(b + p * ldb + j)));
    _mm256_storeu_pd(y + j, acc);
  }
  for (; j < n; ++j) {
    double acc = y[j];
    for (int64_t p = 0; p < k; ++p) acc += x[p] * b[p * ldb + j];
    y[j] = acc;
  }
}

#endif  // __x86_64__

__attribute__((optimize("fp-contract=off"))) void portable_gemv(int64_t k, const double* x,
                                                                const double* b, int64_t ldb,
                                                                int64_t n, double* y) {
  for (int64_t p = 0; p < k; ++p) {
    const double xv = x[p];
    const double* row = b + p * ldb;
    for (int64_t j = 0; j < n; ++j) y[j] += xv * row[j];
  }
}

bool cpu_has(GemmPath path) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (path == GemmPath::kAvx512) return __builtin_cpu_supports("avx512f");
  if (path == GemmPath::kAvx2Fma)
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
  return path == GemmPath::kPortable;
}

GemmPath detect_path() {
  const char* force = std::getenv("PARITY_REF_FORCE_SCALAR");
  if (force && std::strcmp(force, "1") == 0) return GemmPath::kPortable;
  for (GemmPath path : {GemmPath::kAvx512, GemmPath::kAvx2Fma})
    if (cpu_has(path)) return path;
  return GemmPath::kPortable;
}

constexpr int kDetected = -1;
std::atomic<int> g_forced{kDetected};

}  // namespace

GemmPath gemm_path() {
  static const GemmPath detected = detect_path();
  const int forced = g_forced.load(std::memory_order_relaxed);
  return forced == kDetected ? detected : static_cast<GemmPath>(forced);
}

std::vector<GemmPath> supported_gemm_paths() {
  std::vector<GemmPath> paths;
  for (GemmPath path : {GemmPath::kPortable, GemmPath::kAvx2Fma, GemmPath::kAvx512})
    if (cpu_has(path)) paths.push_back(path);
  return paths;
}

void force_gemm_path(GemmPath path) {
  if (!cpu_has(path)) path = GemmPath::kPortable;  // never run instructions the CPU lacks
  g_forced.store(static_cast<int>(path));
}

void reset_gemm_path() { g_forced.store(kDetected); }

namespace {

template <typename Rows>
void double_panels(int64_t kc, const double* a, int64_t a_stride, int64_t row_panels,
                   const double* b, int64_t b_stride, Rows rows, int64_t col_panels, double* c,
                   int64_t ldc, bool exact_products) {
  switch (gemm_path()) {
#if defined(__x86_64__)
    case GemmPath::kAvx512:
      return exact_products ? avx512_panels<true>(kc, a, a_stride, row_panels, b, b_stride, rows,
                                                  col_panels, c, ldc)
                            : avx512_panels<false>(kc, a, a_stride, row_panels, b, b_stride, rows,
                                                   col_panels, c, ldc);
    case GemmPath::kAvx2Fma:
      return exact_products ? avx2_panels<true>(kc, a, a_stride, row_panels, b, b_stride, rows,
                                                col_panels, c, ldc)
                            : avx2_panels<false>(kc, a, a_stride, row_panels, b, b_stride, rows,
                                                 col_panels, c, ldc);
#endif
    default:
      return portable_panels(kc, a, a_stride, row_panels, b, b_stride, rows, col_panels, c, ldc);
  }
}

}  // namespace

void gemm_panels(int64_t kc, const double* a, int64_t a_stride, int64_t row_panels, const double* b,
                 int64_t b_stride, int64_t col_panels, double* c, int64_t ldc,
                 bool exact_products) {
  double_panels(kc, a, a_stride, row_panels, b, b_stride, PackedRows{}, col_panels, c, ldc,
                exact_products);
}

void gemm_rows(int64_t kc, const double* a, int64_t a_stride, int64_t row_panels, const double* b,
               const int64_t* b_rows, int64_t col_panels, double* c, int64_t ldc,
               bool exact_products) {
  double_panels(kc, a, a_stride, row_panels, b, kGemmNR, TableRows{b_rows}, col_panels, c, ldc,
                exact_products);
}

void gemv_unfused(int64_t k, const double* x, const double* b, int64_t ldb, int64_t n, double* y) {
  switch (gemm_path()) {
#if defined(__x86_64__)
    case GemmPath::kAvx512:
      return avx512_gemv(k, x, b, ldb, n, y);
    case GemmPath::kAvx2Fma:
      return avx2_gemv(k, x, b, ldb, n, y);
#endif
    default:
      return portable_gemv(k, x, b, ldb, n, y);
  }
}

void gemm_panels(int64_t kc, const uint64_t* a, int64_t a_stride, int64_t row_panels,
                 const uint64_t* b, int64_t b_stride, int64_t col_panels, uint64_t* c,
                 int64_t ldc) {
  portable_panels(kc, a, a_stride, row_panels, b, b_stride, PackedRows{}, col_panels, c, ldc);
}

}  // namespace parity::ref
