// Matrix products: MatMul (NumPy matmul semantics, batched with broadcasting) and Gemm, on the
// engine of matmul_util.h they share with the quantized products. Floating products
// accumulate in double over k in increasing order; integer products in 64-bit modular
// arithmetic, which narrowing turns into NumPy's wrapping. Each output element is computed by
// one work item, so results do not depend on the thread count. A constant B (the weights of a
// network) is widened and packed once, when the node is prepared, unless its packed form would
// exceed kPackedBLimitBytes: then, as any large B, it is packed per product in column slices
// (matmul_util.h), so the weights are not held again in double.
#include <optional>

#include "backend/ref/ops/matmul_util.h"

namespace parity::ref {

MatMulGeometry matmul_geometry(const Shape& a, const Shape& b, RunContext& ctx) {
  if (a.empty() || b.empty())
    ctx.fail("inputs have shapes {} and {}; MatMul needs rank 1 or more", shape_str(a),
             shape_str(b));
  Shape as = a, bs = b;
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  MatMulGeometry g;
  g.m = as[as.size() - 2];
  g.k = as.back();
  g.n = bs.back();
  if (bs[bs.size() - 2] != g.k)
    ctx.fail("inputs have shapes {} and {}; A's last dim must equal B's second-to-last",
             shape_str(a), shape_str(b));
  const Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  const Shape batch = broadcast_shapes({a_batch, b_batch});
  g.out_shape = batch;
  if (a.size() > 1) g.out_shape.push_back(g.m);
  if (b.size() > 1) g.out_shape.push_back(g.n);
  g.batches = shape_numel(batch);
  g.b_count = shape_numel(b_batch);
  g.a_batch.resize(g.batches);
  g.b_batch.resize(g.batches);
  Broadcast bc(batch, {a_batch, b_batch});
  bc.for_each_run(0, g.batches, [&](int64_t o, const int64_t* offs, int64_t len) {
    for (int64_t i = 0; i < len; ++i) {
      g.a_batch[o + i] = offs[0] + i * bc.step(0);
      g.b_batch[o + i] = offs[1] + i * bc.step(1);
    }
  });
  return g;
}

namespace {

using MatMulTypes = Concat<FloatTypes, IntTypes>;

// A floating B known before the run, packed for the kernel once. Used when the B given to run()
// has the same element type and shape (it is the same initializer).
struct ConstantB {
  DataType dtype;
  Shape shape;
  PackedB<double> packed;

  const PackedB<double>* match(const Tensor& b) const {
    return b.dtype() == dtype && b.shape() == shape ? &packed : nullptr;
  }
};

// B's matrices as [count, k, n] (a 1-D B is one column); `get(i, p, j)` reads as double.
// Nothing when the packed form would be larger than kPackedBLimitBytes.
template <typename Get>
std::optional<ConstantB> pack_constant_b(const Tensor& b, int64_t count, int64_t k, int64_t n,
                                         Get get) {
  if (packed_b_bytes(count, k, n) > static_cast<double>(kPackedBLimitBytes)) return std::nullopt;
  return ConstantB{b.dtype(), b.shape(), pack_b<double>(count, k, n, get)};
}

bool is_floating(DataType dtype) {
  return dtype == DataType::kFloat32 || dtype == DataType::kFloat64 ||
         dtype == DataType::kFloat16 || dtype == DataType::kBFloat16;
}

class MatMul : public Kernel {
 public:
  explicit MatMul(const OpContext& ctx) {
    const Tensor* b = ctx.constant_input(1);
    if (!b || b->rank() == 0 || !is_floating(b->dtype())) return;
    const Shape& s = b->shape();
    const int64_t k = s.size() == 1 ? s[0] : s[s.size() - 2];
    const int64_t n = s.size() == 1 ? 1 : s.back();
    const int64_t count = shape_numel(s) / std::max<int64_t>(k * n, 1);
    dispatch<FloatTypes>(b->dtype(), [&]<typename T>() {
      const T* pb = b->data<T>();
      constant_b_ = pack_constant_b(*b, count, k, n, [&](int64_t i, int64_t p, int64_t j) {
        return to_double(pb[(i * k + p) * n + j]);
      });
    });
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& a = input_tensor(in, 0, "A");
    const Tensor& b = input_tensor(in, 1, "B");
    if (a.dtype() != b.dtype())
      ctx.fail("inputs A and B have element types {} and {}; they must be equal",
               dtype_name(a.dtype()), dtype_name(b.dtype()));
    if (a.rank() == 0 || b.rank() == 0)
      ctx.fail("inputs have shapes {} and {}; MatMul needs rank 1 or more", shape_str(a.shape()),
               shape_str(b.shape()));
    return {dispatch<MatMulTypes>(
        a.dtype(), [&]<typename T>() { return multiply<T>(a, b, ctx); }, "input A")};
  }

 private:
  template <typename T>
  Tensor multiply(const Tensor& a, const Tensor& b, RunContext& ctx) const {
    using Acc = matmul_acc_t<T>;
    const MatMulGeometry g = matmul_geometry(a.shape(), b.shape(), ctx);
    const int64_t m = g.m, k = g.k, n = g.n;
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    Tensor y = uninitialized_tensor(a.dtype(), g.out_shape);
    T* dst = y.data<T>();
    // B's columns [offset, offset + packed.n) into the same columns of Y.
    const auto multiply_slice = [&](const PackedB<Acc>& packed, int64_t offset) {
      multiply_blocks<Acc>(
          g.batches, m, packed, g.b_batch,
          [&](int64_t t, int64_t r, int64_t p) {
            return to_matmul_acc(pa[(g.a_batch[t] * m + r) * k + p]);
          },
          [&](int64_t t, int64_t r, int64_t j0, int64_t count, const Acc* values) {
            T* out = dst + (t * m + r) * n + offset + j0;
            for (int64_t j = 0; j < count; ++j) out[j] = narrow<T>(values[j]);
          },
          gemm_exact_products_v<T>);
    };
    const PackedB<Acc>* packed = nullptr;
    if constexpr (std::is_same_v<Acc, double>)
      packed = constant_b_ ? constant_b_->match(b) : nullptr;
    if (packed) {
      multiply_slice(*packed, 0);
    } else {
      thread_local PackedB<Acc> packed_here;  // reused by the next product on this thread
      for_packed_b_slices(
          packed_here, g.b_count, k, n,
          [&](int64_t i, int64_t p, int64_t j) { return to_matmul_acc(pb[(i * k + p) * n + j]); },
          multiply_slice);
    }
    return y;
  }

  std::optional<ConstantB> constant_b_;
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
        trans_b_(ctx.attr_int("transB", 0) != 0) {
    const Tensor* b = ctx.constant_input(1);
    if (!b || b->rank() != 2 || !is_floating(b->dtype())) return;
    const int64_t k = trans_b_ ? b->shape()[1] : b->shape()[0];
    const int64_t n = trans_b_ ? b->shape()[0] : b->shape()[1];
    dispatch<FloatTypes>(b->dtype(), [&]<typename T>() {
      const T* pb = b->data<T>();
      const bool tb = trans_b_;
      constant_b_ = pack_constant_b(*b, 1, k, n, [&](int64_t, int64_t p, int64_t j) {
        return to_double(tb ? pb[j * k + p] : pb[p * n + j]);
      });
    });
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& a = input_tensor(in, 0, "A");
    const Tensor& b = input_tensor(in, 1, "B");
    const Tensor* c = optional_input(in, 2, "C");
    check_rank(a, 2, 2, "input A");
    check_rank(b, 2, 2, "input B");
    for (const Tensor* t : {&b, c})
      if (t && t->dtype() != a.dtype())
        ctx.fail("inputs have element types {} and {}; they must be equal", dtype_name(a.dtype()),
                 dtype_name(t->dtype()));
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
      ctx.fail(
          "A {} and B {} (transA={}, transB={}) have inner dims {} and {}; they must be "
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
    using Acc = matmul_acc_t<T>;
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    const bool ta = trans_a_, tb = trans_b_;
    const T* cp = c ? c->data<T>() : nullptr;
    Tensor y = uninitialized_tensor(a.dtype(), {m, n});
    T* dst = y.data<T>();
    // B's columns [offset, offset + packed.n) into the same columns of Y.
    const auto multiply_slice = [&](const PackedB<Acc>& packed, int64_t offset) {
      multiply_blocks<Acc>(
          1, m, packed, {0},
          [&](int64_t, int64_t r, int64_t p) {
            return to_matmul_acc(ta ? pa[p * m + r] : pa[r * k + p]);
          },
          [&](int64_t, int64_t r, int64_t j0, int64_t count, const Acc* values) {
            for (int64_t j = offset + j0; j < offset + j0 + count; ++j) {
              const T* cv = cp ? cp + r * c_row_stride + j * c_col_stride : nullptr;
              dst[r * n + j] = combine<T>(values[j - offset - j0], cv);
            }
          },
          gemm_exact_products_v<T>);
    };
    const PackedB<Acc>* packed = nullptr;
    if constexpr (std::is_same_v<Acc, double>)
      packed = constant_b_ ? constant_b_->match(b) : nullptr;
    if (packed) {
      multiply_slice(*packed, 0);
    } else {
      thread_local PackedB<Acc> packed_here;  // reused by the next product on this thread
      for_packed_b_slices(
          packed_here, 1, k, n,
          [&](int64_t, int64_t p, int64_t j) {
            return to_matmul_acc(tb ? pb[j * k + p] : pb[p * n + j]);
          },
          multiply_slice);
    }
    return y;
  }

  // alpha * s + beta * c, in double for floating types. Integers stay exact (wrapping) when
  // alpha and beta are whole numbers, as they almost always are; otherwise the double result
  // is truncated.
  template <typename T>
  T combine(matmul_acc_t<T> s, const T* c) const {
    if constexpr (is_float_like_v<T>) {
      double v = static_cast<double>(alpha_) * s;
      if (c) v += static_cast<double>(beta_) * to_double(*c);
      return narrow<T>(v);
    } else {
      const bool whole = alpha_ == std::trunc(alpha_) && beta_ == std::trunc(beta_);
      if (whole) {
        uint64_t v = static_cast<uint64_t>(static_cast<int64_t>(alpha_)) * s;
        if (c) v += static_cast<uint64_t>(static_cast<int64_t>(beta_)) * to_matmul_acc(*c);
        return narrow<T>(v);
      }
      double v = static_cast<double>(alpha_) *
                 static_cast<double>(static_cast<compute_t<T>>(static_cast<T>(s)));
      if (c) v += static_cast<double>(beta_) * to_double(*c);
      return narrow<T>(v);
    }
  }

  float alpha_, beta_;
  bool trans_a_, trans_b_;
  std::optional<ConstantB> constant_b_;
};
// Versions 1, 6 (legacy broadcast attribute), 7 (C broadcasts), 9, 11 (C optional), 13.
PARITY_REF_OP("", "Gemm", 1, kOpsetMax, Gemm);

}  // namespace
}  // namespace parity::ref
