// Matrix products: MatMul (NumPy matmul semantics, batched with broadcasting) and Gemm.
// Floating products accumulate in double over k in increasing order; integer products in
// 64-bit modular arithmetic, which narrowing turns into NumPy's wrapping. Each output row is
// computed by one chunk, so results do not depend on the thread count.
#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {
namespace {

using MatMulTypes = Concat<FloatTypes, IntTypes>;

// Floating values accumulate in double; integers in uint64 (two's complement wraps alike).
template <typename T>
using acc_t = std::conditional_t<is_float_like_v<T>, double, uint64_t>;

template <typename T>
acc_t<T> to_acc(T v) {
  if constexpr (is_float_like_v<T>)
    return to_double(v);
  else
    return static_cast<uint64_t>(static_cast<compute_t<T>>(v));
}

// c[rows x n] = a[rows x k] * b[k x n], row-major. Columns go in tiles so the rows of c being
// accumulated stay in the L1 cache while b's rows stream past; each element of c still sums
// its products in increasing k.
template <typename Acc>
void matmul_rows(const Acc* a, const Acc* b, Acc* c, int64_t rows, int64_t n, int64_t k) {
  constexpr int64_t kTile = 512;
  for (int64_t i = 0; i < rows * n; ++i) c[i] = 0;
  for (int64_t j0 = 0; j0 < n; j0 += kTile) {
    const int64_t jn = std::min(kTile, n - j0);
    for (int64_t p = 0; p < k; ++p) {
      const Acc* brow = b + p * n + j0;
      for (int64_t r = 0; r < rows; ++r) {
        const Acc av = a[r * k + p];
        Acc* crow = c + r * n + j0;
        for (int64_t j = 0; j < jn; ++j) crow[j] += av * brow[j];
      }
    }
  }
}

// A tensor's values as accumulator values, optionally as the transpose of a 2-D matrix.
template <typename T>
std::vector<acc_t<T>> to_acc_matrix(const Tensor& t, bool transpose, int64_t rows,
                                    int64_t cols) {
  std::vector<acc_t<T>> out(static_cast<size_t>(t.numel()));
  const T* src = t.data<T>();
  if (!transpose) {
    parallel_for(t.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) out[i] = to_acc(src[i]);
    });
  } else {  // src is cols x rows
    parallel_for(rows, grain_for(cols), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r)
        for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = to_acc(src[c * rows + r]);
    });
  }
  return out;
}

constexpr int64_t kRowGroup = 4;

class MatMul : public Kernel {
 public:
  explicit MatMul(const OpContext&) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& a = input_tensor(in, 0, "A");
    const Tensor& b = input_tensor(in, 1, "B");
    if (a.dtype() != b.dtype())
      ctx.fail("inputs A and B have element types {} and {}; they must be equal",
               dtype_name(a.dtype()), dtype_name(b.dtype()));
    if (a.rank() == 0 || b.rank() == 0)
      ctx.fail("inputs have shapes {} and {}; MatMul needs rank 1 or more",
               shape_str(a.shape()), shape_str(b.shape()));
    return {dispatch<MatMulTypes>(
        a.dtype(), [&]<typename T>() { return multiply<T>(a, b, ctx); }, "input A")};
  }

 private:
  template <typename T>
  static Tensor multiply(const Tensor& a, const Tensor& b, RunContext& ctx) {
    // NumPy: a 1-D A is a row [1, K], a 1-D B a column [K, 1]; those dims leave the output.
    Shape as = a.shape(), bs = b.shape();
    if (as.size() == 1) as.insert(as.begin(), 1);
    if (bs.size() == 1) bs.push_back(1);
    const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
    if (bs[bs.size() - 2] != k)
      ctx.fail("inputs have shapes {} and {}; A's last dim must equal B's second-to-last",
               shape_str(a.shape()), shape_str(b.shape()));
    Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
    Shape batch = broadcast_shapes({a_batch, b_batch});
    Shape out_shape = batch;
    if (a.rank() > 1) out_shape.push_back(m);
    if (b.rank() > 1) out_shape.push_back(n);

    // The A and B matrix of each output batch.
    const int64_t batches = shape_numel(batch);
    std::vector<int64_t> a_off(batches), b_off(batches);
    Broadcast bc(batch, {a_batch, b_batch});
    bc.for_each_run(0, batches, [&](int64_t o, const int64_t* offs, int64_t len) {
      for (int64_t i = 0; i < len; ++i) {
        a_off[o + i] = (offs[0] + i * bc.step(0)) * m * k;
        b_off[o + i] = (offs[1] + i * bc.step(1)) * k * n;
      }
    });

    auto ad = to_acc_matrix<T>(a, false, 0, 0);
    auto bd = to_acc_matrix<T>(b, false, 0, 0);
    Tensor y = uninitialized_tensor(a.dtype(), out_shape);
    T* dst = y.data<T>();
    const int64_t groups = (m + kRowGroup - 1) / kRowGroup;
    parallel_for(batches * groups, grain_for(kRowGroup * n * k), [&](int64_t first, int64_t last) {
      std::vector<acc_t<T>> c(static_cast<size_t>(kRowGroup * n));
      for (int64_t item = first; item < last; ++item) {
        const int64_t bi = item / groups, r0 = (item % groups) * kRowGroup;
        const int64_t rows = std::min(kRowGroup, m - r0);
        matmul_rows(ad.data() + a_off[bi] + r0 * k, bd.data() + b_off[bi], c.data(), rows, n, k);
        T* out = dst + (bi * m + r0) * n;
        for (int64_t i = 0; i < rows * n; ++i) out[i] = narrow<T>(c[i]);
      }
    });
    return y;
  }
};
// Versions 1, 9 (integer types), 13 (bfloat16).
PARITY_REF_OP("", "MatMul", 1, kOpsetMax, MatMul);

// Gemm: Y = alpha * A' * B' + beta * C, A' = transA ? A^T : A, C broadcast to [M, N].
class Gemm : public Kernel {
 public:
  explicit Gemm(const OpContext& ctx)
      : alpha_(ctx.attr_float("alpha", 1.0f)),
        beta_(ctx.attr_float("beta", 1.0f)),
        trans_a_(ctx.attr_int("transA", 0) != 0),
        trans_b_(ctx.attr_int("transB", 0) != 0) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& a = input_tensor(in, 0, "A");
    const Tensor& b = input_tensor(in, 1, "B");
    const Tensor* c = optional_input(in, 2, "C");
    check_rank(a, 2, 2, "input A");
    check_rank(b, 2, 2, "input B");
    for (const Tensor* t : {&b, c})
      if (t && t->dtype() != a.dtype())
        ctx.fail("inputs have element types {} and {}; they must be equal",
                 dtype_name(a.dtype()), dtype_name(t->dtype()));
    return {dispatch<MatMulTypes>(
        a.dtype(), [&]<typename T>() { return gemm<T>(a, b, c, ctx); }, "input A")};
  }

 private:
  template <typename T>
  Tensor gemm(const Tensor& a, const Tensor& b, const Tensor* c, RunContext& ctx) const {
    const int64_t m = trans_a_ ? a.shape()[1] : a.shape()[0];
    const int64_t k = trans_a_ ? a.shape()[0] : a.shape()[1];
    const int64_t kb = trans_b_ ? b.shape()[1] : b.shape()[0];
    const int64_t n = trans_b_ ? b.shape()[0] : b.shape()[1];
    if (k != kb)
      ctx.fail("A {} and B {} (transA={}, transB={}) have inner dims {} and {}; they must be "
               "equal",
               shape_str(a.shape()), shape_str(b.shape()), int(trans_a_), int(trans_b_), k, kb);
    // C broadcasts one way, to [M, N]: each of its (right-aligned) dims is 1 or the target.
    int64_t c_row_stride = 0, c_col_stride = 0;
    if (c) {
      Shape cs = c->shape();
      if (cs.size() > 2) ctx.fail("C has shape {}; its rank must be at most 2", shape_str(cs));
      cs.insert(cs.begin(), 2 - cs.size(), 1);
      if ((cs[0] != 1 && cs[0] != m) || (cs[1] != 1 && cs[1] != n))
        ctx.fail("C of shape {} does not broadcast to the output shape ({}, {})",
                 shape_str(c->shape()), m, n);
      c_col_stride = cs[1] == 1 ? 0 : 1;
      c_row_stride = cs[0] == 1 ? 0 : cs[1];
    }
    auto ad = to_acc_matrix<T>(a, trans_a_, m, k);
    auto bd = to_acc_matrix<T>(b, trans_b_, k, n);
    const T* cp = c ? c->data<T>() : nullptr;
    Tensor y = uninitialized_tensor(a.dtype(), {m, n});
    T* dst = y.data<T>();
    const int64_t groups = (m + kRowGroup - 1) / kRowGroup;
    parallel_for(groups, grain_for(kRowGroup * n * k), [&](int64_t first, int64_t last) {
      std::vector<acc_t<T>> acc(static_cast<size_t>(kRowGroup * n));
      for (int64_t g = first; g < last; ++g) {
        const int64_t r0 = g * kRowGroup, rows = std::min(kRowGroup, m - r0);
        matmul_rows(ad.data() + r0 * k, bd.data(), acc.data(), rows, n, k);
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t j = 0; j < n; ++j) {
            const acc_t<T> s = acc[r * n + j];
            const T* cv = cp ? cp + (r0 + r) * c_row_stride + j * c_col_stride : nullptr;
            dst[(r0 + r) * n + j] = combine<T>(s, cv);
          }
      }
    });
    return y;
  }

  // alpha * s + beta * c, in double for floating types. Integers stay exact (wrapping) when
  // alpha and beta are whole numbers, as they almost always are; otherwise the double result
  // is truncated.
  template <typename T>
  T combine(acc_t<T> s, const T* c) const {
    if constexpr (is_float_like_v<T>) {
      double v = static_cast<double>(alpha_) * s;
      if (c) v += static_cast<double>(beta_) * to_double(*c);
      return narrow<T>(v);
    } else {
      const bool whole = alpha_ == std::trunc(alpha_) && beta_ == std::trunc(beta_);
      if (whole) {
        uint64_t v = static_cast<uint64_t>(static_cast<int64_t>(alpha_)) * s;
        if (c) v += static_cast<uint64_t>(static_cast<int64_t>(beta_)) * to_acc(*c);
        return narrow<T>(v);
      }
      double v = static_cast<double>(alpha_) * static_cast<double>(static_cast<compute_t<T>>(
                                                   static_cast<T>(s)));
      if (c) v += static_cast<double>(beta_) * to_double(*c);
      return narrow<T>(v);
    }
  }

  float alpha_, beta_;
  bool trans_a_, trans_b_;
};
// Versions 1, 6 (legacy broadcast attribute), 7 (C broadcasts), 9, 11 (C optional), 13.
PARITY_REF_OP("", "Gemm", 1, kOpsetMax, Gemm);

}  // namespace
}  // namespace parity::ref
