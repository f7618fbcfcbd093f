// Ordering along an axis: TopK, ArgMax, ArgMin, CumSum, Unique.
//
// NaN ordering (the spec leaves it open): NaN counts as larger than every number, as in
// numpy.sort, so TopK with largest=1 puts NaNs first and ArgMax / ArgMin pick the first NaN,
// as numpy.argmax / numpy.argmin do. Equal values keep the lower index first (TopK's spec).
#include <cmath>
#include <numeric>

#include "backend/ref/ops/movement_util.h"

namespace parity::ref {
namespace {

// a < b with NaN above every number and equal to itself.
template <typename V>
inline bool less_nan_last(V a, V b) {
  if constexpr (std::is_floating_point_v<V>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

template <typename V>
inline bool equal_nan(V a, V b) {
  if constexpr (std::is_floating_point_v<V>) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  }
  return a == b;
}

// Axis geometry: the tensor seen as [outer, dim, inner].
struct AxisView {
  int64_t outer, dim, inner;
  AxisView(const Shape& shape, int64_t axis)
      : outer(dims_product(shape, 0, axis)),
        dim(shape[axis]),
        inner(dims_product(shape, axis + 1, static_cast<int64_t>(shape.size()))) {}
};

// ---------------------------------------------------------------------------------------------
// TopK

class TopK : public Kernel {
 public:
  explicit TopK(const OpContext& ctx)
      : axis_(ctx.attr_int("axis", -1)),
        largest_(ctx.attr_int("largest", 1) != 0),
        opset_(ctx.opset()) {
    if (opset_ < 10) k_ = ctx.attr_int("k");  // version 1: k is an attribute
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    int64_t k = k_;
    if (opset_ >= 10) {
      std::vector<int64_t> kv = read_int64s(input_tensor(in, 1, "K"), "input 'K'");
      if (kv.size() != 1) ctx.fail("input 'K' has {} values; it must hold one", kv.size());
      k = kv[0];
    }
    const int64_t axis = normalize_axis(axis_, x.rank());
    const AxisView v(x.shape(), axis);
    if (k < 0 || k > v.dim)
      ctx.fail("K is {} for an axis of size {}; it must be in [0, {}]", k, v.dim, v.dim);
    Shape out = x.shape();
    out[axis] = k;
    Tensor indices = uninitialized_tensor(DataType::kInt64, out);
    // Sorted output always: sorted=0 leaves the order to the implementation.
    Tensor values = dispatch<NumericTypes>(
        x.dtype(),
        [&]<typename T>() {
          Tensor y = uninitialized_tensor(x.dtype(), out);
          const T* src = x.data<T>();
          T* dst = y.data<T>();
          int64_t* idx = indices.data<int64_t>();
          parallel_for(v.outer * v.inner, grain_for(v.dim * 8), [&](int64_t b, int64_t e) {
            std::vector<int64_t> order(static_cast<size_t>(v.dim));
            for (int64_t line = b; line < e; ++line) {
              const int64_t o = line / v.inner, i = line % v.inner;
              const T* p = src + o * v.dim * v.inner + i;
              auto at = [&](int64_t j) { return widen(p[j * v.inner]); };
              std::iota(order.begin(), order.end(), 0);
              auto before = [&](int64_t a, int64_t c) {
                const auto va = at(a), vc = at(c);
                if (equal_nan(va, vc)) return a < c;
                return largest_ ? less_nan_last(vc, va) : less_nan_last(va, vc);
              };
              std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
              for (int64_t j = 0; j < k; ++j) {
                const int64_t pos = (o * k + j) * v.inner + i;
                dst[pos] = p[order[j] * v.inner];
                idx[pos] = order[j];
              }
            }
          });
          return y;
        },
        "input 'X'");
    return {values, indices};
  }

 private:
  int64_t axis_;
  bool largest_;
  int64_t opset_;
  int64_t k_ = 0;
};
// Versions 1 (k attribute), 10 (K input), 11 (largest, sorted, negative axis).
PARITY_REF_OP("", "TopK", 1, kOpsetMax, TopK);

// ---------------------------------------------------------------------------------------------
// ArgMax / ArgMin

template <bool kMax>
class ArgExtreme : public Kernel {
 public:
  explicit ArgExtreme(const OpContext& ctx)
      : axis_(ctx.attr_int("axis", 0)),
        keepdims_(ctx.attr_int("keepdims", 1) != 0),
        select_last_(ctx.opset() >= 12 && ctx.attr_int("select_last_index", 0) != 0) {}

  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "data");
    const int64_t axis = normalize_axis(axis_, x.rank());
    const AxisView v(x.shape(), axis);
    if (v.dim == 0)
      fail("failed to reduce axis {} of shape {}: the axis is empty, so it has no {}", axis,
           shape_str(x.shape()), kMax ? "maximum" : "minimum");
    Shape out = x.shape();
    if (keepdims_)
      out[axis] = 1;
    else
      out.erase(out.begin() + axis);
    Tensor y = uninitialized_tensor(DataType::kInt64, out);
    int64_t* dst = y.data<int64_t>();
    dispatch<NumericTypes>(
        x.dtype(),
        [&]<typename T>() {
          const T* src = x.data<T>();
          parallel_for(v.outer * v.inner, grain_for(v.dim), [&](int64_t b, int64_t e) {
            for (int64_t line = b; line < e; ++line) {
              const int64_t o = line / v.inner, i = line % v.inner;
              const T* p = src + o * v.dim * v.inner + i;
              int64_t best = 0;
              auto best_value = widen(p[0]);
              for (int64_t j = 1; j < v.dim; ++j) {
                const auto c = widen(p[j * v.inner]);
                // A NaN wins over numbers; between equals the first (or last) wins.
                bool better, tie;
                if (is_nan(c) || is_nan(best_value)) {
                  better = is_nan(c) && !is_nan(best_value);
                  tie = is_nan(c) && is_nan(best_value);
                } else {
                  better = kMax ? best_value < c : c < best_value;
                  tie = c == best_value;
                }
                if (better || (tie && select_last_)) {
                  best = j;
                  best_value = c;
                }
              }
              dst[line] = best;
            }
          });
        },
        "input 'data'");
    return {y};
  }

 private:
  template <typename V>
  static bool is_nan(V v) {
    if constexpr (std::is_floating_point_v<V>) return std::isnan(v);
    return false;
  }

  int64_t axis_;
  bool keepdims_, select_last_;
};
// Versions 1, 11 (negative axis), 12 (select_last_index), 13.
PARITY_REF_OP("", "ArgMax", 1, kOpsetMax, ArgExtreme<true>);
PARITY_REF_OP("", "ArgMin", 1, kOpsetMax, ArgExtreme<false>);

// ---------------------------------------------------------------------------------------------
// CumSum

class CumSum : public Kernel {
 public:
  explicit CumSum(const OpContext& ctx)
      : exclusive_(ctx.attr_int("exclusive", 0) != 0), reverse_(ctx.attr_int("reverse", 0) != 0) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "x");
    std::vector<int64_t> axis_value = read_indices(input_tensor(in, 1, "axis"), "input 'axis'");
    if (axis_value.size() != 1)
      ctx.fail("input 'axis' has {} values; it must hold one", axis_value.size());
    if (x.rank() == 0) ctx.fail("input 'x' is a scalar; CumSum needs rank 1 or more");
    const AxisView v(x.shape(), normalize_axis(axis_value[0], x.rank()));
    using CumSumTypes =
        TypeList<float, double, float16, bfloat16, int32_t, int64_t, uint32_t, uint64_t>;
    // Each running sum is kept in double (int64 / uint64 for integers) and rounded once per
    // output element.
    return {dispatch<CumSumTypes>(
        x.dtype(),
        [&]<typename T>() {
          Tensor y = uninitialized_tensor(x.dtype(), x.shape());
          const T* src = x.data<T>();
          T* dst = y.data<T>();
          parallel_for(v.outer, grain_for(v.dim * v.inner), [&](int64_t b, int64_t e) {
            std::vector<compute_t<T>> acc(static_cast<size_t>(v.inner));
            for (int64_t o = b; o < e; ++o) {
              std::fill(acc.begin(), acc.end(), compute_t<T>(0));
              for (int64_t s = 0; s < v.dim; ++s) {
                const int64_t j = reverse_ ? v.dim - 1 - s : s;
                const T* row = src + (o * v.dim + j) * v.inner;
                T* out = dst + (o * v.dim + j) * v.inner;
                for (int64_t i = 0; i < v.inner; ++i) {
                  if (exclusive_) {
                    out[i] = narrow<T>(acc[i]);
                    acc[i] += widen(row[i]);
                  } else {
                    acc[i] += widen(row[i]);
                    out[i] = narrow<T>(acc[i]);
                  }
                }
              }
            }
          });
          return y;
        },
        "input 'x'")};
  }

 private:
  bool exclusive_, reverse_;
};
// Versions 11, 14 (float16, bfloat16).
PARITY_REF_OP("", "CumSum", 11, kOpsetMax, CumSum);

// ---------------------------------------------------------------------------------------------
// Unique

class Unique : public Kernel {
 public:
  explicit Unique(const OpContext& ctx) : sorted_(ctx.attr_int("sorted", 1) != 0) {
    if (ctx.has_attr("axis")) axis_ = ctx.attr_int("axis");
  }

  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& input = input_tensor(in, 0, "X");
    // Without an axis the items are the elements of the flattened input; with one, the
    // slices along it, compared element by element in row-major order.
    const Tensor x = axis_ ? input : input.reshaped({input.numel()});
    const int64_t axis = normalize_axis(axis_.value_or(0), x.rank());
    const AxisView v(x.shape(), axis);
    const std::vector<int64_t> order = sorted_items(x, v);

    // Runs of equal items in `order` are the unique values; a run's first item is the first
    // occurrence, because the sort is stable.
    std::vector<int64_t> first, count, group_of(static_cast<size_t>(v.dim));
    dispatch_unique(x, [&]<typename T>() {
      const T* p = x.data<T>();
      for (size_t r = 0; r < order.size(); ++r) {
        if (r == 0 || !items_equal(p, v, order[r - 1], order[r])) {
          first.push_back(order[r]);
          count.push_back(0);
        }
        ++count.back();
        group_of[order[r]] = static_cast<int64_t>(first.size()) - 1;
      }
    });
    const int64_t n = static_cast<int64_t>(first.size());
    // Position of each group in the output: sorted order, or order of first occurrence.
    std::vector<int64_t> rank(static_cast<size_t>(n));
    std::iota(rank.begin(), rank.end(), 0);
    if (!sorted_) {
      std::vector<int64_t> by_first(rank);
      std::sort(by_first.begin(), by_first.end(),
                [&](int64_t a, int64_t b) { return first[a] < first[b]; });
      for (int64_t pos = 0; pos < n; ++pos) rank[by_first[pos]] = pos;
    }
    Tensor indices(DataType::kInt64, {n}), counts(DataType::kInt64, {n});
    Tensor inverse(DataType::kInt64, {v.dim});
    std::vector<int64_t> source(static_cast<size_t>(n));  // input item of each output item
    for (int64_t g = 0; g < n; ++g) {
      source[rank[g]] = first[g];
      indices.data<int64_t>()[rank[g]] = first[g];
      counts.data<int64_t>()[rank[g]] = count[g];
    }
    for (int64_t i = 0; i < v.dim; ++i) inverse.data<int64_t>()[i] = rank[group_of[i]];

    Shape out = x.shape();
    out[axis] = n;
    Tensor y = dispatch_storage(x.dtype(), [&]<typename S>() {
      Tensor t = uninitialized_tensor(x.dtype(), out);
      const S* src = static_cast<const S*>(x.raw_data());
      S* dst = static_cast<S*>(t.raw_data());
      for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t g = 0; g < n; ++g) {
          const S* from = src + (o * v.dim + source[g]) * v.inner;
          std::copy(from, from + v.inner, dst + (o * n + g) * v.inner);
        }
      return t;
    });
    return {y, indices, inverse, counts};
  }

 private:
  template <typename F>
  static void dispatch_unique(const Tensor& x, F&& f) {
    dispatch<Concat<AllTypes, TypeList<std::string>>>(x.dtype(), std::forward<F>(f), "input 'X'");
  }

  template <typename T>
  static auto value(const T& t) {
    if constexpr (std::is_same_v<T, std::string>)
      return std::string_view(t);
    else
      return widen(t);
  }

  // Lexicographic comparison of items a and b (slices along the axis).
  template <typename T>
  static int compare_items(const T* p, const AxisView& v, int64_t a, int64_t b) {
    for (int64_t o = 0; o < v.outer; ++o)
      for (int64_t i = 0; i < v.inner; ++i) {
        const auto va = value(p[(o * v.dim + a) * v.inner + i]);
        const auto vb = value(p[(o * v.dim + b) * v.inner + i]);
        if (less_nan_last(va, vb)) return -1;
        if (less_nan_last(vb, va)) return 1;
      }
    return 0;
  }
  template <typename T>
  static bool items_equal(const T* p, const AxisView& v, int64_t a, int64_t b) {
    return compare_items(p, v, a, b) == 0;
  }

  // Item numbers in ascending order of value; equal items keep their input order.
  static std::vector<int64_t> sorted_items(const Tensor& x, const AxisView& v) {
    std::vector<int64_t> order(static_cast<size_t>(v.dim));
    std::iota(order.begin(), order.end(), 0);
    dispatch_unique(x, [&]<typename T>() {
      const T* p = x.data<T>();
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return compare_items(p, v, a, b) < 0; });
    });
    return order;
  }

  bool sorted_;
  std::optional<int64_t> axis_;
};
// Version 11.
PARITY_REF_OP("", "Unique", 11, kOpsetMax, Unique);

}  // namespace
}  // namespace parity::ref
