// Quantized matrix products: MatMulInteger and QLinearMatMul, on the engine of matmul_util.h
// (NumPy matmul shapes with batch broadcasting). The products of zero-point-shifted integers
// are summed exactly in 64 bits.
#include <cmath>

#include "backend/ref/ops/elementwise_util.h"
#include "backend/ref/ops/matmul_util.h"

namespace parity::ref {
namespace {

using Int8Types = TypeList<int8_t, uint8_t>;
using QLinearTypes = Concat<Int8Types, Float8Types>;

// A per-tensor, per-row (of A) or per-column (of B) quantization parameter: a scale or a zero
// point. For A [..., M, K] it is a scalar, an M-vector, or a tensor [..., M, 1] (one value per
// matrix and row); for B [..., K, N] a scalar, an N-vector, or [..., 1, N].
class QuantParam {
 public:
  // `lines` is M for A, N for B; `matrices` is A's or B's own number of matrices.
  QuantParam(const Tensor* t, int64_t lines, int64_t matrices, std::string_view what,
             RunContext& ctx) {
    if (!t) return;
    values_ = dispatch<Concat<Concat<FloatTypes, Int8Types>, Float8Types>>(
        t->dtype(),
        [&]<typename T>() {
          std::vector<double> v(static_cast<size_t>(t->numel()));
          for (size_t i = 0; i < v.size(); ++i) v[i] = value_as_double(t->data<T>()[i]);
          return v;
        },
        what);
    const int64_t n = t->numel();
    if (n == 1) {
      per_line_ = per_matrix_ = false;
    } else if (n == lines && t->rank() == 1) {
      per_line_ = true, per_matrix_ = false;
    } else if (n == lines * matrices && t->rank() >= 2) {
      per_line_ = per_matrix_ = true;
    } else {
      ctx.fail(
          "{} has shape {}; it must be a scalar, a vector of {} values (one per row of A "
          "or column of B), or hold one value per matrix and row/column ({} values)",
          what, shape_str(t->shape()), lines, lines * matrices);
    }
    lines_ = lines;
  }

  // The value for matrix `matrix`, row or column `line`; 0 when absent.
  double at(int64_t matrix, int64_t line) const {
    if (values_.empty()) return 0;
    if (!per_line_) return values_[0];
    return values_[(per_matrix_ ? matrix * lines_ : 0) + line];
  }

 private:
  std::vector<double> values_;
  bool per_line_ = false, per_matrix_ = false;
  int64_t lines_ = 0;
};

// Y (int32) = (A - a_zero_point) x (B - b_zero_point), wrapping to int32.
class MatMulInteger : public Kernel {
 public:
  explicit MatMulInteger(const OpContext&) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& a = input_tensor(in, 0, "A");
    const Tensor& b = input_tensor(in, 1, "B");
    const Tensor* azp = optional_input(in, 2, "a_zero_point");
    const Tensor* bzp = optional_input(in, 3, "b_zero_point");
    if ((azp && azp->dtype() != a.dtype()) || (bzp && bzp->dtype() != b.dtype()))
      ctx.fail("a zero point's element type differs from its matrix's ({} and {})",
               dtype_name(a.dtype()), dtype_name(b.dtype()));
    const MatMulGeometry g = matmul_geometry(a.shape(), b.shape(), ctx);
    const QuantParam a_zp(azp, g.m, shape_numel(a.shape()) / std::max<int64_t>(g.m * g.k, 1),
                          "a_zero_point", ctx);
    const QuantParam b_zp(bzp, g.n, g.b_count, "b_zero_point", ctx);
    Tensor y = uninitialized_tensor(DataType::kInt32, g.out_shape);
    int32_t* dst = y.data<int32_t>();
    dispatch<Int8Types>(
        a.dtype(),
        [&]<typename TA>() {
          dispatch<Int8Types>(
              b.dtype(),
              [&]<typename TB>() {
                const TA* pa = a.data<TA>();
                const TB* pb = b.data<TB>();
                const int64_t m = g.m, k = g.k, n = g.n;
                PackedB<uint64_t> packed =
                    pack_b<uint64_t>(g.b_count, k, n, [&](int64_t i, int64_t p, int64_t j) {
                      return static_cast<uint64_t>(static_cast<int64_t>(pb[(i * k + p) * n + j]) -
                                                   static_cast<int64_t>(b_zp.at(i, j)));
                    });
                multiply_packed<uint64_t>(
                    g.batches, m, packed, g.b_batch,
                    [&](int64_t t, int64_t r, int64_t p) {
                      const int64_t ai = g.a_batch[t];
                      return static_cast<uint64_t>(static_cast<int64_t>(pa[(ai * m + r) * k + p]) -
                                                   static_cast<int64_t>(a_zp.at(ai, r)));
                    },
                    [&](int64_t t, int64_t r, const uint64_t* row) {
                      for (int64_t j = 0; j < n; ++j)
                        dst[(t * m + r) * n + j] = narrow<int32_t>(row[j]);
                    });
              },
              "input B");
        },
        "input A");
    return {std::move(y)};
  }
};
// Version 10.
PARITY_REF_OP("", "MatMulInteger", 10, kOpsetMax, MatMulInteger);

// QLinearMatMul: Y = quantize(dequantize(A) x dequantize(B)) with
// dequantize(v) = (v - zero_point) * scale and quantize(x) = saturate(round(x / y_scale) +
// y_zero_point), rounding half to even. Computed as the exact integer sum of
// (a - a_zp)(b - b_zp) times a_scale * b_scale / y_scale in double. For float8 types
// (opset 21) the values are float8 numbers, the sum is taken in double, and quantizing is the
// saturating conversion to the float8 type (no rounding to an integer first).
class QLinearMatMul : public Kernel {
 public:
  explicit QLinearMatMul(const OpContext&) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& a = input_tensor(in, 0, "a");
    const Tensor& b = input_tensor(in, 3, "b");
    const Tensor& yzp_t = input_tensor(in, 7, "y_zero_point");
    for (auto [zp, of] : {std::pair{optional_input(in, 2, "a_zero_point"), &a},
                          std::pair{optional_input(in, 5, "b_zero_point"), &b}})
      if (zp && zp->dtype() != of->dtype())
        ctx.fail("a zero point is {} but its matrix is {}; their element types must be equal",
                 dtype_name(zp->dtype()), dtype_name(of->dtype()));
    const MatMulGeometry g = matmul_geometry(a.shape(), b.shape(), ctx);
    const int64_t a_count = shape_numel(a.shape()) / std::max<int64_t>(g.m * g.k, 1);
    const QuantParam a_scale(&input_tensor(in, 1, "a_scale"), g.m, a_count, "a_scale", ctx);
    const QuantParam a_zp(optional_input(in, 2, "a_zero_point"), g.m, a_count, "a_zero_point", ctx);
    const QuantParam b_scale(&input_tensor(in, 4, "b_scale"), g.n, g.b_count, "b_scale", ctx);
    const QuantParam b_zp(optional_input(in, 5, "b_zero_point"), g.n, g.b_count, "b_zero_point",
                          ctx);
    const Tensor& ys_t = input_tensor(in, 6, "y_scale");
    if (ys_t.numel() != 1 || yzp_t.numel() != 1)
      ctx.fail(
          "y_scale and y_zero_point have shapes {} and {}; they must be scalars (one "
          "quantization for the whole output)",
          shape_str(ys_t.shape()), shape_str(yzp_t.shape()));
    const double y_scale = QuantParam(&ys_t, 1, 1, "y_scale", ctx).at(0, 0);
    const double y_zp = QuantParam(&yzp_t, 1, 1, "y_zero_point", ctx).at(0, 0);
    Tensor y = uninitialized_tensor(yzp_t.dtype(), g.out_shape);
    dispatch<QLinearTypes>(
        a.dtype(),
        [&]<typename TA>() {
          dispatch<QLinearTypes>(
              b.dtype(),
              [&]<typename TB>() {
                dispatch<QLinearTypes>(
                    yzp_t.dtype(),
                    [&]<typename TY>() {
                      multiply<TA, TB, TY>(a, b, g, a_scale, a_zp, b_scale, b_zp, y_scale, y_zp, y);
                    },
                    "y_zero_point");
              },
              "input b");
        },
        "input a");
    return {std::move(y)};
  }

 private:
  template <typename TA, typename TB, typename TY>
  static void multiply(const Tensor& a, const Tensor& b, const MatMulGeometry& g,
                       const QuantParam& a_scale, const QuantParam& a_zp, const QuantParam& b_scale,
                       const QuantParam& b_zp, double y_scale, double y_zp, Tensor& y) {
    // Integers sum exactly in (wrapping) 64 bits; float8 values in double.
    constexpr bool kExact = !is_float8_v<TA> && !is_float8_v<TB>;
    using Acc = std::conditional_t<kExact, uint64_t, double>;
    const TA* pa = a.data<TA>();
    const TB* pb = b.data<TB>();
    TY* dst = y.data<TY>();
    const int64_t m = g.m, k = g.k, n = g.n;
    auto shifted = [](double v, double zp) -> Acc {
      if constexpr (kExact)
        return static_cast<uint64_t>(static_cast<int64_t>(v) - static_cast<int64_t>(zp));
      else
        return v - zp;
    };
    PackedB<Acc> packed = pack_b<Acc>(g.b_count, k, n, [&](int64_t i, int64_t p, int64_t j) {
      return shifted(value_as_double(pb[(i * k + p) * n + j]), b_zp.at(i, j));
    });
    multiply_packed<Acc>(
        g.batches, m, packed, g.b_batch,
        [&](int64_t t, int64_t r, int64_t p) {
          const int64_t ai = g.a_batch[t];
          return shifted(value_as_double(pa[(ai * m + r) * k + p]), a_zp.at(ai, r));
        },
        [&](int64_t t, int64_t r, const Acc* row) {
          const int64_t ai = g.a_batch[t], bi = g.b_batch[t];
          for (int64_t j = 0; j < n; ++j) {
            double sum;
            if constexpr (kExact)
              sum = static_cast<double>(static_cast<int64_t>(row[j]));
            else
              sum = row[j];
            const double x = sum * (a_scale.at(ai, r) * b_scale.at(bi, j)) / y_scale;
            dst[(t * m + r) * n + j] = quantize<TY>(x, y_zp);
          }
        });
  }

  template <typename TY>
  static TY quantize(double x, double zp) {
    if constexpr (is_float8_v<TY>)
      return TY::from_double(x + zp, /*saturate=*/true);
    else
      return narrow<TY>(std::nearbyint(x) + zp);  // ties to even; narrow saturates
  }
};
// Versions 10, 21 (float8 types; float16/bfloat16 scales).
PARITY_REF_OP("", "QLinearMatMul", 10, kOpsetMax, QLinearMatMul);

}  // namespace
}  // namespace parity::ref
