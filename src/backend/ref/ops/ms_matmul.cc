// ONNX Runtime's fused matrix products, domain com.microsoft (docs/ContribOperators.md of the
// onnxruntime repository): FusedMatMul (MatMul with transposes and a scale folded in) and
// MatMulNBits (MatMul with a block-quantized 2-, 4- or 8-bit B). Both run on the engine of
// matmul_util.h: sums over k in increasing order in double, products rounded separately, the
// scale (alpha, the dequantization) applied in double, one rounding to the output type.
#include <cstring>

#include "backend/ref/ops/elementwise_util.h"
#include "backend/ref/ops/matmul_util.h"

namespace parity::ref {
namespace {

// A tensor read through a permutation of its dims: logical dim d is source dim perm[d].
struct PermutedView {
  Shape shape;                   // logical shape
  std::vector<int64_t> strides;  // source element stride of each logical dim
};

// The view FusedMatMul's attributes ask for: trans_batch moves the first dim behind the batch
// dims ([d0, d1..d(r-2), d(r-1)] read as [d1..d(r-2), d0, d(r-1)]), then trans swaps the last
// two. A 1-D operand is never transposed (NumPy's matmul treats it as a vector).
PermutedView fused_view(const Shape& shape, bool trans, bool trans_batch) {
  const int64_t r = static_cast<int64_t>(shape.size());
  std::vector<int64_t> perm(static_cast<size_t>(r));
  for (int64_t d = 0; d < r; ++d) perm[d] = d;
  if (trans_batch && r > 2) {
    for (int64_t d = 0; d + 2 < r; ++d) perm[d] = d + 1;
    perm[r - 2] = 0;
  }
  if (trans && r >= 2) std::swap(perm[r - 2], perm[r - 1]);
  const Shape src_strides = strides_of(shape);
  PermutedView v;
  for (int64_t d = 0; d < r; ++d) {
    v.shape.push_back(shape[perm[d]]);
    v.strides.push_back(src_strides[perm[d]]);
  }
  return v;
}

// Source offset of element (batch index t over the view's batch dims, row, col) of a view of
// rank >= 2, or of element i of a 1-D view.
struct ViewIndexer {
  explicit ViewIndexer(const PermutedView& v) : view(v) {
    const int64_t r = static_cast<int64_t>(v.shape.size());
    batch_dims.assign(v.shape.begin(), v.shape.end() - std::min<int64_t>(r, 2));
  }
  int64_t batch_offset(int64_t t) const {
    int64_t off = 0;
    for (size_t d = batch_dims.size(); d-- > 0;) {
      off += (t % batch_dims[d]) * view.strides[d];
      t /= batch_dims[d];
    }
    return off;
  }
  const PermutedView& view;
  Shape batch_dims;
};

// FusedMatMul(A, B) = alpha * matmul(A', B'), A' and B' being A and B read with the transposes
// of attributes transA, transB (swap the last two dims) and transBatchA, transBatchB (the
// first dim moved behind the batch dims); alpha defaults to 1, the others to 0. No optional
// inputs. Batch dims broadcast as in MatMul.
class FusedMatMul : public Kernel {
 public:
  explicit FusedMatMul(const OpContext& ctx)
      : alpha_(static_cast<double>(ctx.attr_float("alpha", 1.0f))) {
    for (const char* name : {"transA", "transB", "transBatchA", "transBatchB"}) {
      const int64_t v = ctx.attr_int(name, 0);
      if (v != 0 && v != 1) ctx.fail("attribute '{}' is {}; it must be 0 or 1", name, v);
    }
    trans_a_ = ctx.attr_int("transA", 0) == 1;
    trans_b_ = ctx.attr_int("transB", 0) == 1;
    trans_batch_a_ = ctx.attr_int("transBatchA", 0) == 1;
    trans_batch_b_ = ctx.attr_int("transBatchB", 0) == 1;
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& a = input_tensor(in, 0, "A");
    const Tensor& b = input_tensor(in, 1, "B");
    check_same_dtype(a, b, ctx, "A", "B");
    if (a.rank() == 0 || b.rank() == 0)
      ctx.fail("inputs have shapes {} and {}; FusedMatMul needs rank 1 or more",
               shape_str(a.shape()), shape_str(b.shape()));
    const PermutedView va = fused_view(a.shape(), trans_a_, trans_batch_a_);
    const PermutedView vb = fused_view(b.shape(), trans_b_, trans_batch_b_);
    return {dispatch<FloatTypes>(
        a.dtype(), [&]<typename T>() { return multiply<T>(a, b, va, vb, ctx); }, "input A")};
  }

 private:
  template <typename T>
  Tensor multiply(const Tensor& a, const Tensor& b, const PermutedView& va, const PermutedView& vb,
                  RunContext& ctx) const {
    const MatMulGeometry g = matmul_geometry(va.shape, vb.shape, ctx);
    const int64_t m = g.m, k = g.k, n = g.n;
    const ViewIndexer ia(va), ib(vb);
    // Row and column strides of the views' matrices (a 1-D A is one row, a 1-D B one column).
    const int64_t ar = va.shape.size() == 1 ? 0 : va.strides[va.shape.size() - 2];
    const int64_t ac = va.strides.back();
    const int64_t br = vb.shape.size() == 1 ? vb.strides[0] : vb.strides[vb.shape.size() - 2];
    const int64_t bc = vb.shape.size() == 1 ? 0 : vb.strides.back();
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    const PackedB<double> packed =
        pack_b<double>(g.b_count, k, n, [&](int64_t i, int64_t p, int64_t j) {
          return to_double(pb[ib.batch_offset(i) + p * br + j * bc]);
        });
    std::vector<int64_t> a_base(g.a_batch.size());
    for (size_t t = 0; t < a_base.size(); ++t) a_base[t] = ia.batch_offset(g.a_batch[t]);
    Tensor y = uninitialized_tensor(a.dtype(), g.out_shape);
    T* py = y.data<T>();
    const double alpha = alpha_;
    multiply_packed<double>(
        g.batches, m, packed, g.b_batch,
        [&](int64_t t, int64_t r, int64_t p) { return to_double(pa[a_base[t] + r * ar + p * ac]); },
        [&](int64_t t, int64_t r, const double* row) {
          T* out = py + (t * m + r) * n;
          for (int64_t j = 0; j < n; ++j) out[j] = narrow<T>(alpha * row[j]);
        });
    return y;
  }

  double alpha_;
  bool trans_a_, trans_b_, trans_batch_a_, trans_batch_b_;
};
PARITY_REF_OP("com.microsoft", "FusedMatMul", 1, kOpsetMax, FusedMatMul);

// MatMulNBits(A, B, scales, zero_points?, g_idx?, bias?): Y = A x W^T (+ bias), with W [N, K]
// quantized block-wise along K. Attributes K, N, bits (2, 4 or 8; default 4), block_size (a
// power of 2, at least 16) and accuracy_level (0 to 4, a speed hint, ignored: the sums are in
// double anyway). B is uint8 [N, k_blocks, blob_size], blob_size = block_size * bits / 8, each byte
// holding 8 / bits values, the lowest bits first. scales [N * k_blocks] (or [N, k_blocks]) of
// A's type. zero_points: uint8 packed like B, ceil(k_blocks * bits / 8) bytes per row, or of
// A's type [N * k_blocks]; absent, 2^(bits-1). W[n, k] = (q - zero_point) * scale of k's block.
// g_idx (a per-k block index, deprecated) is refused; bias [N] is added to the sum.
class MatMulNBits : public Kernel {
 public:
  explicit MatMulNBits(const OpContext& ctx)
      : k_(ctx.attr_int("K")),
        n_(ctx.attr_int("N")),
        bits_(ctx.attr_int("bits", 4)),
        block_(ctx.attr_int("block_size")) {
    if (bits_ != 2 && bits_ != 4 && bits_ != 8)
      ctx.fail("attribute 'bits' is {}; it must be one of 2, 4, 8", bits_);
    if (block_ < 16 || (block_ & (block_ - 1)) != 0)
      ctx.fail("attribute 'block_size' is {}; it must be a power of 2 of at least 16", block_);
    const int64_t accuracy = ctx.attr_int("accuracy_level", 0);
    if (accuracy < 0 || accuracy > 4)
      ctx.fail("attribute 'accuracy_level' is {}; it must be 0 to 4", accuracy);
    if (k_ <= 0 || n_ <= 0)
      ctx.fail("attributes K and N are {} and {}; they must be positive", k_, n_);
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& a = input_tensor(in, 0, "A");
    const Tensor& b = input_tensor(in, 1, "B");
    const Tensor& scales = input_tensor(in, 2, "scales");
    const Tensor* zero_points = optional_input(in, 3, "zero_points");
    if (optional_input(in, 4, "g_idx"))
      ctx.fail("input g_idx is given; Parity supports MatMulNBits without it (blocks in K order)");
    const Tensor* bias = optional_input(in, 5, "bias");
    const int64_t blocks = (k_ + block_ - 1) / block_, blob = block_ * bits_ / 8;
    if (a.rank() < 1 || a.shape().back() != k_)
      ctx.fail("A has shape {}; its last dim must be K ({})", shape_str(a.shape()), k_);
    if (b.dtype() != DataType::kUInt8 || b.numel() != n_ * blocks * blob)
      ctx.fail("B is {} {}; it must be uint8 [N, k_blocks, blob_size] = [{}, {}, {}]",
               dtype_name(b.dtype()), shape_str(b.shape()), n_, blocks, blob);
    check_same_dtype(a, scales, ctx, "A", "scales");
    if (scales.numel() != n_ * blocks)
      ctx.fail("scales has shape {}; it must hold N * k_blocks = {} values",
               shape_str(scales.shape()), n_ * blocks);
    const int64_t zp_row_bytes = (blocks * bits_ + 7) / 8;
    if (zero_points) {
      const bool packed = zero_points->dtype() == DataType::kUInt8;
      if (packed ? zero_points->numel() != n_ * zp_row_bytes
                 : (zero_points->dtype() != a.dtype() || zero_points->numel() != n_ * blocks))
        ctx.fail(
            "zero_points is {} {}; it must be uint8 with {} bytes (N rows of packed "
            "values) or of A's type with N * k_blocks = {} values",
            dtype_name(zero_points->dtype()), shape_str(zero_points->shape()), n_ * zp_row_bytes,
            n_ * blocks);
    }
    if (bias) {
      check_same_dtype(a, *bias, ctx, "A", "bias");
      if (bias->numel() != n_)
        ctx.fail("bias has shape {}; it must hold N ({}) values", shape_str(bias->shape()), n_);
    }
    return {dispatch<TypeList<float, float16, bfloat16>>(
        a.dtype(), [&]<typename T>() { return multiply<T>(a, b, scales, zero_points, bias, ctx); },
        "input A")};
  }

 private:
  // Value i of a packed row of bits_-bit values.
  int64_t unpack(const uint8_t* row, int64_t i) const {
    const int64_t per_byte = 8 / bits_;
    return (row[i / per_byte] >> ((i % per_byte) * bits_)) & ((1 << bits_) - 1);
  }

  template <typename T>
  Tensor multiply(const Tensor& a, const Tensor& b, const Tensor& scales, const Tensor* zero_points,
                  const Tensor* bias, RunContext& ctx) const {
    const int64_t blocks = (k_ + block_ - 1) / block_, blob = block_ * bits_ / 8;
    const int64_t zp_row_bytes = (blocks * bits_ + 7) / 8;
    const uint8_t* pb = b.data<uint8_t>();
    const T* ps = scales.data<T>();
    const double default_zp = static_cast<double>(int64_t{1} << (bits_ - 1));
    auto zero_point = [&](int64_t n, int64_t blk) {
      if (!zero_points) return default_zp;
      if (zero_points->dtype() == DataType::kUInt8)
        return static_cast<double>(unpack(zero_points->data<uint8_t>() + n * zp_row_bytes, blk));
      return to_double(zero_points->data<T>()[n * blocks + blk]);
    };
    // B' [K, N] = W^T, dequantized in double: (q - zero point) * scale.
    const PackedB<double> packed = pack_b<double>(1, k_, n_, [&](int64_t, int64_t p, int64_t j) {
      const int64_t blk = p / block_;
      const double q = static_cast<double>(unpack(pb + (j * blocks + blk) * blob, p % block_));
      return (q - zero_point(j, blk)) * to_double(ps[j * blocks + blk]);
    });
    Shape out_shape = a.shape();
    out_shape.back() = n_;
    const int64_t m = a.numel() / k_;
    const MatMulGeometry g = matmul_geometry({m, k_}, {k_, n_}, ctx);
    Tensor y = uninitialized_tensor(a.dtype(), out_shape);
    const T* pa = a.data<T>();
    const T* pbias = bias ? bias->data<T>() : nullptr;
    T* py = y.data<T>();
    multiply_packed<double>(
        1, g.m, packed, {0},
        [&](int64_t, int64_t r, int64_t p) { return to_double(pa[r * k_ + p]); },
        [&](int64_t, int64_t r, const double* row) {
          for (int64_t j = 0; j < n_; ++j)
            py[r * n_ + j] = narrow<T>(pbias ? row[j] + to_double(pbias[j]) : row[j]);
        });
    return y;
  }

  int64_t k_, n_, bits_, block_;
};
PARITY_REF_OP("com.microsoft", "MatMulNBits", 1, kOpsetMax, MatMulNBits);

}  // namespace
}  // namespace parity::ref
