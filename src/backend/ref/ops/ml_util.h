// Shared pieces of the ai.onnx.ml kernels (ml_*.cc): the domain name, features read as rows,
// the post_transform functions of the classifiers and regressors, and float attributes that
// may also come as double tensors (`<name>_as_tensor`, ml opset 3).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "backend/ref/ops/kernel_util.h"

namespace parity::ref::ml {

inline constexpr const char* kDomain = "ai.onnx.ml";

// The numeric input types of the ML ops (float, double, int64, int32).
using MlNumericTypes = TypeList<float, double, int64_t, int32_t>;

// A feature matrix in double: rank 1 is one row of C features, rank 2 is [N, C] (ONNX
// Runtime's reading of every ML op that takes "[N, C] or [C]").
struct Rows {
  int64_t n = 0, c = 0;
  std::vector<double> values;  // row-major n x c
  const double* row(int64_t i) const { return values.data() + i * c; }
};
Rows read_rows(const Tensor& x, std::string_view what);

// post_transform: how raw scores become the Z output.
enum class PostTransform { kNone, kLogistic, kSoftmax, kSoftmaxZero, kProbit };
PostTransform read_post_transform(const OpContext& ctx);
// Applies the transform to one row of scores in place.
void apply_post_transform(PostTransform transform, double* scores, int64_t count);
double logistic(double v);
// sqrt(2) * erfinv(2p - 1), the inverse of the standard normal CDF, to double precision.
double probit(double p);

// attr `name` (floats) or `name`_as_tensor (a double or float tensor); empty when neither.
std::vector<double> attr_doubles(const OpContext& ctx, const std::string& name);

// Throws unless `values` has `expected` entries, naming the attribute.
void check_length(const OpContext& ctx, std::string_view name, size_t actual, size_t expected,
                  std::string_view rule);

}  // namespace parity::ref::ml
