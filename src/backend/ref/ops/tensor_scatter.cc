// TensorScatter (opset 24): writes `update` into a copy of `past_cache` along `axis` (default
// -2, the sequence axis of a key/value cache), starting for batch b at write_indices[b]
// (0 when absent). Dims other than `axis` must match; along `axis` the update may be shorter.
// mode "linear" requires write_indices[b] + update length <= the cache length; "circular"
// wraps the positions modulo the cache length. Pure data movement: any element type.
#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {
namespace {

class TensorScatter : public Kernel {
 public:
  explicit TensorScatter(const OpContext& ctx)
      : axis_(ctx.attr_int("axis", -2)), mode_(ctx.attr_string("mode", "linear")) {
    if (mode_ != "linear" && mode_ != "circular")
      ctx.fail("attribute 'mode' is '{}'; valid: 'linear', 'circular'", mode_);
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& cache = input_tensor(in, 0, "past_cache");
    const Tensor& update = input_tensor(in, 1, "update");
    const Tensor* indices = optional_input(in, 2, "write_indices");
    check_rank(cache, 2, 64, "input past_cache");
    const int64_t rank = cache.rank();
    const int64_t axis = normalize_axis(axis_, rank);
    if (axis == 0) ctx.fail("attribute 'axis' is {}; it must not be the batch axis 0", axis_);
    const Shape& cs = cache.shape();
    const Shape& us = update.shape();
    bool compatible = update.dtype() == cache.dtype() && update.rank() == rank;
    for (int64_t d = 0; compatible && d < rank; ++d)
      compatible = d == axis ? us[d] <= cs[d] : us[d] == cs[d];
    if (!compatible)
      ctx.fail(
          "update ({} {}) does not fit past_cache ({} {}): same type, the same dims but "
          "axis {}, and no longer along it",
          dtype_name(update.dtype()), shape_str(us), dtype_name(cache.dtype()), shape_str(cs),
          axis);
    const int64_t batch = cs[0], max_len = cs[axis], len = us[axis];
    std::vector<int64_t> start(static_cast<size_t>(batch), 0);
    if (indices) {
      if (indices->dtype() != DataType::kInt64 || indices->shape() != Shape{batch})
        ctx.fail("write_indices is {} {}; it must be int64 of shape ({},)",
                 dtype_name(indices->dtype()), shape_str(indices->shape()), batch);
      start = read_int64s(*indices, "input 'write_indices'");
    }
    const bool circular = mode_ == "circular";
    for (int64_t b = 0; b < batch; ++b) {
      if (start[b] < 0 || start[b] >= std::max<int64_t>(max_len, 1) ||
          (!circular && start[b] + len > max_len))
        ctx.fail(
            "write_indices[{}] is {} for {} updates along an axis of {}; in mode '{}' it "
            "must be in [0, {}]",
            b, start[b], len, max_len, mode_, circular ? max_len - 1 : max_len - len);
    }
    Tensor out = cache.clone();
    // (outer, axis, inner) views; the batch index is outer / (product of dims 1..axis-1).
    const int64_t outer = dims_product(cs, 0, axis), inner = dims_product(cs, axis + 1, rank);
    const int64_t per_batch = batch == 0 ? 0 : outer / batch;
    dispatch_storage(
        cache.dtype(),
        [&]<typename S>() {
          const S* src = static_cast<const S*>(update.raw_data());
          S* dst = static_cast<S*>(out.raw_data());
          for (int64_t o = 0; o < outer; ++o) {
            const int64_t b = o / per_batch;
            for (int64_t s = 0; s < len; ++s) {
              const int64_t pos = circular ? (start[b] + s) % max_len : start[b] + s;
              std::copy_n(src + (o * len + s) * inner, inner, dst + (o * max_len + pos) * inner);
            }
          }
        },
        "input past_cache");
    return {std::move(out)};
  }

 private:
  int64_t axis_;
  std::string mode_;
};
// Version 24.
PARITY_REF_OP("", "TensorScatter", 24, kOpsetMax, TensorScatter);

}  // namespace
}  // namespace parity::ref
