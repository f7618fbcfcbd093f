// Softmax and LogSoftmax, in double: y = exp(x - max) / sum(exp(x - max)), and
// log y = (x - max) - log(sum(exp(x - max))).
//
// Before opset 13 the input is seen as a 2-D matrix [prod(dims before axis), prod(the rest)]
// and each row is normalised (axis defaults to 1); from opset 13 the normalisation runs along
// the one axis (default -1).
#include <cmath>
#include <limits>

#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {
namespace {

template <bool kLog, bool kCoerce2d>
class Softmax : public Kernel {
 public:
  explicit Softmax(const OpContext& ctx) : axis_(ctx.attr_int("axis", kCoerce2d ? 1 : -1)) {}

  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "input");
    const int64_t rank = x.rank();
    // A scalar is a single element along an implied axis.
    const int64_t axis = rank == 0 ? 0 : normalize_axis(axis_, rank);
    const int64_t outer = dims_product(x.shape(), 0, axis);
    const int64_t n = kCoerce2d ? dims_product(x.shape(), axis, rank)
                                : (rank == 0 ? 1 : x.shape()[axis]);
    const int64_t inner = kCoerce2d ? 1 : dims_product(x.shape(), axis + 1, rank);
    return {dispatch<FloatTypes>(
        x.dtype(), [&]<typename T>() { return normalize<T>(x, outer, n, inner); }, "input")};
  }

 private:
  template <typename T>
  static Tensor normalize(const Tensor& x, int64_t outer, int64_t n, int64_t inner) {
    Tensor y = uninitialized_tensor(x.dtype(), x.shape());
    const T* src = x.data<T>();
    T* dst = y.data<T>();
    parallel_for(outer, grain_for(3 * n * inner), [&](int64_t b, int64_t e) {
      // The `inner` columns of one outer block are done together, along contiguous rows.
      std::vector<double> max(inner), sum(inner);
      for (int64_t o = b; o < e; ++o) {
        const T* xs = src + o * n * inner;
        T* ys = dst + o * n * inner;
        std::fill(max.begin(), max.end(), -std::numeric_limits<double>::infinity());
        std::fill(sum.begin(), sum.end(), 0.0);
        for (int64_t k = 0; k < n; ++k)
          for (int64_t i = 0; i < inner; ++i) {
            const double v = to_double(xs[k * inner + i]);
            if (v > max[i] || std::isnan(v)) max[i] = std::isnan(max[i]) ? max[i] : v;
          }
        for (int64_t k = 0; k < n; ++k)
          for (int64_t i = 0; i < inner; ++i)
            sum[i] += std::exp(to_double(xs[k * inner + i]) - max[i]);
        if constexpr (kLog) {
          for (int64_t i = 0; i < inner; ++i) sum[i] = std::log(sum[i]);
          for (int64_t k = 0; k < n; ++k)
            for (int64_t i = 0; i < inner; ++i)
              ys[k * inner + i] = narrow<T>((to_double(xs[k * inner + i]) - max[i]) - sum[i]);
        } else {
          for (int64_t k = 0; k < n; ++k)
            for (int64_t i = 0; i < inner; ++i)
              ys[k * inner + i] = narrow<T>(std::exp(to_double(xs[k * inner + i]) - max[i]) / sum[i]);
        }
      }
    });
    return y;
  }

  int64_t axis_;
};

using SoftmaxV1 = Softmax<false, true>;
using SoftmaxV13 = Softmax<false, false>;
using LogSoftmaxV1 = Softmax<true, true>;
using LogSoftmaxV13 = Softmax<true, false>;
// Versions 1, 11 (coerced to 2-D), 13 (one axis).
PARITY_REF_OP("", "Softmax", 1, 12, SoftmaxV1);
PARITY_REF_OP("", "Softmax", 13, kOpsetMax, SoftmaxV13);
PARITY_REF_OP("", "LogSoftmax", 1, 12, LogSoftmaxV1);
PARITY_REF_OP("", "LogSoftmax", 13, kOpsetMax, LogSoftmaxV13);

}  // namespace
}  // namespace parity::ref
