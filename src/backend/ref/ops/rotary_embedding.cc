// RotaryEmbedding (opset 23): rotates pairs of each head's first rotary_embedding_dim values
// (all of the head when 0) by the angles whose cosines and sines the caches hold:
//   real = cos * x1 - sin * x2,  imag = sin * x1 + cos * x2
// where (x1, x2) are the two halves of the rotated part, or its even and odd elements when
// `interleaved`. X is 4-D (batch, heads, seq, head_size) or 3-D (batch, seq, heads * head_size)
// with num_heads given. With position_ids (batch, seq) the caches are (max_position, dim / 2)
// tables indexed by position; without, they are (batch, seq, dim / 2). In double, rounded once.
#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {
namespace {

class RotaryEmbedding : public Kernel {
 public:
  explicit RotaryEmbedding(const OpContext& ctx)
      : interleaved_(ctx.attr_int("interleaved", 0)),
        num_heads_(ctx.attr_int("num_heads", 0)),
        rotary_dim_(ctx.attr_int("rotary_embedding_dim", 0)) {
    if (interleaved_ != 0 && interleaved_ != 1)
      ctx.fail("attribute 'interleaved' is {}; it must be 0 or 1", interleaved_);
    if (num_heads_ < 0) ctx.fail("attribute 'num_heads' is {}; it must be >= 0", num_heads_);
    if (rotary_dim_ < 0)
      ctx.fail("attribute 'rotary_embedding_dim' is {}; it must be >= 0", rotary_dim_);
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const Tensor& cos_cache = input_tensor(in, 1, "cos_cache");
    const Tensor& sin_cache = input_tensor(in, 2, "sin_cache");
    const Tensor* position_ids = optional_input(in, 3, "position_ids");
    if (x.rank() != 3 && x.rank() != 4)
      ctx.fail(
          "input X {} must be 3-D (batch, seq, hidden) or 4-D (batch, heads, seq, "
          "head_size)",
          shape_str(x.shape()));
    const Shape& s = x.shape();
    const int64_t batch = s[0];
    int64_t heads, seq, head_size;
    if (x.rank() == 4) {
      heads = s[1], seq = s[2], head_size = s[3];
    } else {
      if (num_heads_ == 0 || s[2] % num_heads_ != 0)
        ctx.fail(
            "3-D input X {} needs attribute num_heads dividing its hidden size {} "
            "(num_heads is {})",
            shape_str(s), s[2], num_heads_);
      heads = num_heads_, seq = s[1], head_size = s[2] / num_heads_;
    }
    const int64_t dim = rotary_dim_ == 0 ? head_size : rotary_dim_;
    if (dim > head_size || dim % 2 != 0)
      ctx.fail("rotary_embedding_dim is {}; it must be even and at most the head size {}", dim,
               head_size);
    const int64_t half = dim / 2;
    if (cos_cache.shape() != sin_cache.shape() || cos_cache.dtype() != x.dtype() ||
        sin_cache.dtype() != x.dtype())
      ctx.fail("cos_cache ({} {}) and sin_cache ({} {}) must have one shape and X's type {}",
               dtype_name(cos_cache.dtype()), shape_str(cos_cache.shape()),
               dtype_name(sin_cache.dtype()), shape_str(sin_cache.shape()), dtype_name(x.dtype()));
    // For each (batch, position in the sequence), the row of the caches to use.
    std::vector<int64_t> cache_row(static_cast<size_t>(batch * seq));
    if (position_ids) {
      std::vector<int64_t> ids = read_int64s(*position_ids, "input 'position_ids'");
      if (position_ids->shape() != Shape{batch, seq})
        ctx.fail("position_ids {} must be (batch {}, seq {})", shape_str(position_ids->shape()),
                 batch, seq);
      if (cos_cache.rank() != 2 || cos_cache.shape()[1] != half)
        ctx.fail("with position_ids the caches {} must be (max_position, {})",
                 shape_str(cos_cache.shape()), half);
      for (size_t i = 0; i < ids.size(); ++i) {
        if (ids[i] < 0 || ids[i] >= cos_cache.shape()[0])
          ctx.fail("position_ids[{}] is {}; it must be in [0, {})", i, ids[i],
                   cos_cache.shape()[0]);
        cache_row[i] = ids[i];
      }
    } else {
      if (cos_cache.shape() != Shape{batch, seq, half})
        ctx.fail("without position_ids the caches {} must be (batch {}, seq {}, {})",
                 shape_str(cos_cache.shape()), batch, seq, half);
      for (size_t i = 0; i < cache_row.size(); ++i) cache_row[i] = static_cast<int64_t>(i);
    }
    const std::vector<double> cosv = read_doubles(cos_cache, "input cos_cache");
    const std::vector<double> sinv = read_doubles(sin_cache, "input sin_cache");
    const bool four_d = x.rank() == 4;
    return {dispatch<FloatTypes>(
        x.dtype(),
        [&]<typename T>() {
          Tensor y = uninitialized_tensor(x.dtype(), s);
          const T* src = x.data<T>();
          T* dst = y.data<T>();
          parallel_for(batch * seq * heads, grain_for(head_size), [&](int64_t b0, int64_t e0) {
            for (int64_t r = b0; r < e0; ++r) {
              const int64_t h = r % heads, i = (r / heads) % seq, b = r / (heads * seq);
              const int64_t base = four_d ? ((b * heads + h) * seq + i) * head_size
                                          : ((b * seq + i) * heads + h) * head_size;
              const double* c = cosv.data() + cache_row[b * seq + i] * half;
              const double* sn = sinv.data() + cache_row[b * seq + i] * half;
              for (int64_t k = 0; k < half; ++k) {
                const int64_t p1 = interleaved_ ? 2 * k : k;
                const int64_t p2 = interleaved_ ? 2 * k + 1 : k + half;
                const double x1 = to_double(src[base + p1]), x2 = to_double(src[base + p2]);
                dst[base + p1] = narrow<T>(c[k] * x1 - sn[k] * x2);
                dst[base + p2] = narrow<T>(sn[k] * x1 + c[k] * x2);
              }
              for (int64_t k = dim; k < head_size; ++k) dst[base + k] = src[base + k];
            }
          });
          return y;
        },
        "input X")};
  }

 private:
  int64_t interleaved_, num_heads_, rotary_dim_;
};
// Version 23.
PARITY_REF_OP("", "RotaryEmbedding", 23, kOpsetMax, RotaryEmbedding);

}  // namespace
}  // namespace parity::ref
