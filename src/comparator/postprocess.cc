// PostprocessFunc.top_k (Polygraphy's comparator/postprocess.py): replaces an output with the
// indices of its k largest values along an axis.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "comparator/comparator.h"
#include "core/error.h"
#include "core/numeric.h"

namespace parity {

Tensor postprocess_func::top_k_indices(const Tensor& t, int64_t k, int64_t axis) {
  const int64_t rank = t.rank();
  if (rank == 0)
    fail("failed to take the top-{} of a scalar output: top-K needs at least one dimension", k);
  if (axis < -rank || axis >= rank)
    fail(
        "failed to take the top-{} along axis {} of an output of shape {}: the axis must be in "
        "[{}, {}]",
        k, axis, shape_str(t.shape()), -rank, rank - 1);
  if (k < 0) fail("failed to take the top-{} of an output: k must not be negative", k);
  if (axis < 0) axis += rank;

  const Shape& shape = t.shape();
  const int64_t len = shape[static_cast<size_t>(axis)];
  const int64_t kept = std::min(k, len);
  int64_t outer = 1, inner = 1;
  for (int64_t a = 0; a < axis; ++a) outer *= shape[static_cast<size_t>(a)];
  for (int64_t a = axis + 1; a < rank; ++a) inner *= shape[static_cast<size_t>(a)];

  Shape out_shape = shape;
  out_shape[static_cast<size_t>(axis)] = kept;
  Tensor out(DataType::kInt64, out_shape);
  int64_t* dst = out.data<int64_t>();
  const std::vector<double> values = tensor_to_doubles(t);

  // Polygraphy sorts -x with a stable argsort, so equal values keep their order (the lower
  // index first) and NaNs come last. Parity sorts x descending directly, which is the same
  // except for unsigned integers, where NumPy's -x wraps around and ranks 0 first.
  std::vector<int64_t> order(static_cast<size_t>(len));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const double* base = values.data() + o * len * inner + i;
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        const double x = base[a * inner], y = base[b * inner];
        if (std::isnan(y)) return !std::isnan(x);
        return x > y;
      });
      for (int64_t j = 0; j < kept; ++j)
        dst[(o * kept + j) * inner + i] = order[static_cast<size_t>(j)];
    }
  return out;
}

PostprocessFunc postprocess_func::top_k(TopKOptions options) {
  return [options](IterationResult& result) {
    for (auto& [name, output] : result.outputs) {
      auto it = options.k.values.find(name);
      if (it == options.k.values.end()) it = options.k.values.find("");
      if (it == options.k.values.end()) continue;
      const auto [k, axis] = it->second;
      if (k == 0) continue;  // Polygraphy leaves an output alone when its k is falsy
      output = top_k_indices(output, k, axis);
    }
  };
}

}  // namespace parity
