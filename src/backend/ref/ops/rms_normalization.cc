// RMSNormalization (opset 23): each block of X over the dims from `axis` on is divided by its
// root mean square, Y = X / sqrt(mean(X^2) + epsilon) * scale, with scale broadcast to the
// normalised dims. Computed in double and rounded once; stash_type (the precision of the
// computation) is checked but double is at least as precise as any type it can name.
#include <cmath>

#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {
namespace {

class RMSNormalization : public Kernel {
 public:
  explicit RMSNormalization(const OpContext& ctx)
      : axis_(ctx.attr_int("axis", -1)),
        epsilon_(static_cast<double>(ctx.attr_float("epsilon", 1e-5f))) {
    const int64_t stash = ctx.attr_int("stash_type", 1);
    if (stash != 1 && stash != 10 && stash != 11 && stash != 16)
      ctx.fail(
          "attribute 'stash_type' is {}; valid: 1 (float), 10 (float16), 11 (double), "
          "16 (bfloat16)",
          stash);
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const Tensor& scale = input_tensor(in, 1, "scale");
    check_rank(x, 1, 64, "input X");
    const int64_t axis = normalize_axis(axis_, x.rank());
    const Shape norm_shape(x.shape().begin() + axis, x.shape().end());
    // scale broadcast to the normalised dims (its rank at most theirs).
    Shape target = broadcast_shapes({norm_shape, scale.shape()});
    if (target != norm_shape)
      ctx.fail("scale {} does not broadcast to the normalised dims {} of X {}",
               shape_str(scale.shape()), shape_str(norm_shape), shape_str(x.shape()));
    const int64_t size = shape_numel(norm_shape);
    std::vector<double> gamma(static_cast<size_t>(size));
    dispatch<FloatTypes>(
        scale.dtype(),
        [&]<typename S>() {
          const S* p = scale.data<S>();
          Broadcast bc(norm_shape, {scale.shape()});
          bc.for_each_run(0, size, [&](int64_t o, const int64_t* off, int64_t len) {
            for (int64_t i = 0; i < len; ++i) gamma[o + i] = to_double(p[off[0] + i * bc.step(0)]);
          });
        },
        "input scale");
    return {dispatch<FloatTypes>(
        x.dtype(),
        [&]<typename T>() {
          Tensor y = uninitialized_tensor(x.dtype(), x.shape());
          const T* src = x.data<T>();
          T* dst = y.data<T>();
          const int64_t rows = size == 0 ? 0 : x.numel() / size;
          parallel_for(rows, grain_for(2 * size), [&](int64_t b, int64_t e) {
            for (int64_t r = b; r < e; ++r) {
              const T* xr = src + r * size;
              double sq = 0;
              for (int64_t i = 0; i < size; ++i) sq += to_double(xr[i]) * to_double(xr[i]);
              const double inv = 1.0 / std::sqrt(sq / static_cast<double>(size) + epsilon_);
              for (int64_t i = 0; i < size; ++i)
                dst[r * size + i] = narrow<T>(to_double(xr[i]) * inv * gamma[i]);
            }
          });
          return y;
        },
        "input X")};
  }

 private:
  int64_t axis_;
  double epsilon_;
};
// Version 23.
PARITY_REF_OP("", "RMSNormalization", 23, kOpsetMax, RMSNormalization);

}  // namespace
}  // namespace parity::ref
