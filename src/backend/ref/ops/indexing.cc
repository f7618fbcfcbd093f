// Selecting and generating by position: Compress, NonZero, OneHot, Range, EyeLike, Trilu.
#include <cmath>

#include "backend/ref/ops/movement_util.h"

namespace parity::ref {
namespace {

class Compress : public Kernel {
 public:
  explicit Compress(const OpContext& ctx) {
    if (ctx.has_attr("axis")) axis_ = ctx.attr_int("axis");
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& input = input_tensor(in, 0, "input");
    const Tensor& condition = input_tensor(in, 1, "condition");
    if (condition.dtype() != DataType::kBool || condition.rank() != 1)
      ctx.fail("input 'condition' is {} {}; it must be a 1-D bool tensor",
               dtype_name(condition.dtype()), shape_str(condition.shape()));
    // Without an axis the input is flattened first.
    const Tensor x = axis_ ? input : input.reshaped({input.numel()});
    const int64_t axis = normalize_axis(axis_.value_or(0), x.rank());
    const int64_t dim = x.shape()[axis];
    const bool* keep = condition.data<bool>();
    std::vector<int64_t> kept;  // the selected positions along the axis
    for (int64_t i = 0; i < condition.numel(); ++i) {
      if (!keep[i]) continue;
      if (i >= dim)
        ctx.fail(
            "input 'condition' selects position {} of an axis of size {}; a longer "
            "condition may only hold false beyond the axis",
            i, dim);
      kept.push_back(i);
    }
    Shape out = x.shape();
    out[axis] = static_cast<int64_t>(kept.size());
    const int64_t outer = dims_product(x.shape(), 0, axis);
    const int64_t inner = dims_product(x.shape(), axis + 1, x.rank());
    const int64_t n = out[axis];
    return {dispatch_storage(x.dtype(), [&]<typename S>() {
      Tensor y = uninitialized_tensor(x.dtype(), out);
      const S* src = static_cast<const S*>(x.raw_data());
      S* dst = static_cast<S*>(y.raw_data());
      parallel_for(outer * n, grain_for(inner), [&](int64_t b, int64_t e) {
        for (int64_t k = b; k < e; ++k) {
          const S* from = src + ((k / n) * dim + kept[k % n]) * inner;
          std::copy(from, from + inner, dst + k * inner);
        }
      });
      return y;
    })};
  }

 private:
  std::optional<int64_t> axis_;
};
// Versions 9, 11 (negative axis).
PARITY_REF_OP("", "Compress", 9, kOpsetMax, Compress);

class NonZero : public Kernel {
 public:
  explicit NonZero(const OpContext&) {}

  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "X");
    // A scalar is treated as a 1-D tensor of one element, as numpy.nonzero does.
    const Shape shape = x.rank() == 0 ? Shape{1} : x.shape();
    std::vector<int64_t> found;  // flat positions of the non-zero elements
    dispatch<AllTypes>(
        x.dtype(),
        [&]<typename T>() {
          const T* p = x.data<T>();
          for (int64_t i = 0; i < x.numel(); ++i)
            if (widen(p[i]) != compute_t<T>(0)) found.push_back(i);
        },
        "input 'X'");
    const int64_t rank = static_cast<int64_t>(shape.size()), n = static_cast<int64_t>(found.size());
    Tensor y(DataType::kInt64, {rank, n});
    int64_t* dst = y.data<int64_t>();
    for (int64_t j = 0; j < n; ++j) {
      int64_t pos = found[j];
      for (int64_t d = rank; d-- > 0;) {
        dst[d * n + j] = pos % shape[d];
        pos /= shape[d];
      }
    }
    return {y};
  }
};
// Versions 9, 13.
PARITY_REF_OP("", "NonZero", 9, kOpsetMax, NonZero);

class OneHot : public Kernel {
 public:
  explicit OneHot(const OpContext& ctx) : axis_(ctx.attr_int("axis", -1)) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& indices = input_tensor(in, 0, "indices");
    const double depth_value = read_scalar(input_tensor(in, 1, "depth"), "input 'depth'");
    const Tensor& values = input_tensor(in, 2, "values");
    if (values.numel() != 2)
      ctx.fail("input 'values' has shape {}; it must hold two values, [off_value, on_value]",
               shape_str(values.shape()));
    if (!(depth_value >= 1) || depth_value > 1e15)
      ctx.fail("input 'depth' is {}; it must be 1 or more", depth_value);
    const int64_t depth = static_cast<int64_t>(depth_value);
    const int64_t rank = indices.rank() + 1;
    const int64_t axis = normalize_axis(axis_, rank);
    Shape out = indices.shape();
    out.insert(out.begin() + axis, depth);
    // Indices are cast to integers (truncating); a value outside [-depth, depth-1] gives a
    // row of off_value, and a negative one counts from the end.
    std::vector<int64_t> idx(static_cast<size_t>(indices.numel()));
    dispatch<NumericTypes>(
        indices.dtype(),
        [&]<typename T>() {
          const T* p = indices.data<T>();
          for (size_t i = 0; i < idx.size(); ++i) {
            const double v = to_double(p[i]);
            const int64_t k =
                std::isfinite(v) && std::abs(v) <= 1e15 ? static_cast<int64_t>(v) : depth;
            idx[i] = k < -depth || k >= depth ? -1 : (k < 0 ? k + depth : k);
          }
        },
        "input 'indices'");
    const int64_t outer = dims_product(indices.shape(), 0, axis);
    const int64_t inner = dims_product(indices.shape(), axis, indices.rank());
    return {on_bytes(values, [&](const Tensor& bv) {
      return dispatch_storage(bv.dtype(), [&]<typename S>() {
        const S* v = static_cast<const S*>(bv.raw_data());
        Tensor y = uninitialized_tensor(bv.dtype(), out);
        S* dst = static_cast<S*>(y.raw_data());
        std::fill(dst, dst + y.numel(), v[0]);
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t i = 0; i < inner; ++i) {
            const int64_t k = idx[o * inner + i];
            if (k >= 0) dst[(o * depth + k) * inner + i] = v[1];
          }
        return y;
      });
    })};
  }

 private:
  int64_t axis_;
};
// Versions 9, 11 (negative axis and indices).
PARITY_REF_OP("", "OneHot", 9, kOpsetMax, OneHot);

class Range : public Kernel {
  // More elements than any machine can hold: refused before allocating.
  static constexpr int64_t kMaxElements = int64_t{1} << 40;

 public:
  explicit Range(const OpContext&) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& start = input_tensor(in, 0, "start");
    const Tensor& limit = input_tensor(in, 1, "limit");
    const Tensor& delta = input_tensor(in, 2, "delta");
    for (const Tensor* t : {&start, &limit, &delta})
      if (t->numel() != 1 || t->dtype() != start.dtype())
        ctx.fail("inputs are {} {}, {} {} and {} {}; they must be scalars of one type",
                 dtype_name(start.dtype()), shape_str(start.shape()), dtype_name(limit.dtype()),
                 shape_str(limit.shape()), dtype_name(delta.dtype()), shape_str(delta.shape()));
    using RangeTypes = TypeList<float, double, int16_t, int32_t, int64_t>;
    return {dispatch<RangeTypes>(
        start.dtype(),
        [&]<typename T>() {
          const T s = start.data<T>()[0], l = limit.data<T>()[0], d = delta.data<T>()[0];
          if (d == T(0)) ctx.fail("input 'delta' is 0; it must not be 0");
          // n = max(ceil((limit - start) / delta), 0); element i = start + i * delta, computed
          // exactly (int64 for integers, double for floats) and rounded once.
          int64_t n;
          if constexpr (std::is_integral_v<T>) {
            const __int128 span = static_cast<__int128>(l) - s, step = d;
            const __int128 q = span / step, r = span % step;
            const __int128 count = std::max<__int128>(q + (r != 0 && (r > 0) == (step > 0)), 0);
            if (count > kMaxElements)
              ctx.fail("start {}, limit {} and delta {} give more than {} elements", s, l, d,
                       kMaxElements);
            n = static_cast<int64_t>(count);
          } else {
            const double count = std::ceil((static_cast<double>(l) - s) / d);
            if (!(count <= static_cast<double>(kMaxElements)))
              ctx.fail("start {}, limit {} and delta {} give more than {} elements", s, l, d,
                       kMaxElements);
            n = count > 0 ? static_cast<int64_t>(count) : 0;
          }
          Tensor y = uninitialized_tensor(dtype_of<T>, {n});
          T* dst = y.data<T>();
          for (int64_t i = 0; i < n; ++i) {
            if constexpr (std::is_integral_v<T>)
              // In uint64, which wraps: i * delta alone can pass int64 (start -2^63, delta
              // 2^62) although start + i * delta, the element, lies within [start, limit].
              dst[i] = static_cast<T>(static_cast<int64_t>(
                  static_cast<uint64_t>(s) + static_cast<uint64_t>(i) * static_cast<uint64_t>(d)));
            else
              dst[i] = static_cast<T>(static_cast<double>(s) + static_cast<double>(i) * d);
          }
          return y;
        },
        "input 'start'")};
  }
};
// Version 11.
PARITY_REF_OP("", "Range", 11, kOpsetMax, Range);

class EyeLike : public Kernel {
 public:
  explicit EyeLike(const OpContext& ctx) : k_(ctx.attr_int("k", 0)) {
    if (ctx.has_attr("dtype")) {
      const int64_t d = ctx.attr_int("dtype");
      if (!dtype_is_valid(static_cast<int32_t>(d)))
        ctx.fail("attribute 'dtype' is {}, not an ONNX element type", d);
      dtype_ = static_cast<DataType>(d);
    }
  }

  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "input");
    check_rank(x, 2, 2, "input 'input'");
    const DataType dtype = dtype_.value_or(x.dtype());
    return {dispatch<AllTypes>(
        dtype,
        [&]<typename T>() {
          Tensor y(dtype, x.shape());  // zero-filled
          T* dst = y.data<T>();
          const int64_t rows = x.shape()[0], cols = x.shape()[1];
          // Row i's one is at column i + k, tested as k's range: i + k itself can pass int64
          // for an attribute k near 2^63.
          for (int64_t i = 0; i < rows; ++i)
            if (k_ >= -i && k_ < cols - i) dst[i * cols + i + k_] = narrow<T>(1);
          return y;
        },
        "the output")};
  }

 private:
  int64_t k_;
  std::optional<DataType> dtype_;
};
// Versions 9, 22 (types).
PARITY_REF_OP("", "EyeLike", 9, kOpsetMax, EyeLike);

class Trilu : public Kernel {
 public:
  explicit Trilu(const OpContext& ctx) : upper_(ctx.attr_int("upper", 1) != 0) {}

  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "input");
    check_rank(x, 2, std::numeric_limits<int64_t>::max(), "input 'input'");
    int64_t k = 0;
    if (const Tensor* kt = optional_input(in, 1, "k")) {
      std::vector<int64_t> kv = read_int64s(*kt, "input 'k'");
      if (kv.size() != 1)
        fail("failed to read input 'k' with shape {}: it must hold one value",
             shape_str(kt->shape()));
      k = kv[0];
    }
    const int64_t rows = x.shape()[x.rank() - 2], cols = x.shape()[x.rank() - 1];
    const int64_t matrices = dims_product(x.shape(), 0, x.rank() - 2);
    // Keeps element (i, j) when j - i >= k (upper) or j - i <= k (lower); the rest is zero.
    return {on_bytes(x, [&](const Tensor& bx) {
      return dispatch_storage(bx.dtype(), [&]<typename S>() {
        Tensor y = uninitialized_tensor(bx.dtype(), bx.shape());
        const S* src = static_cast<const S*>(bx.raw_data());
        S* dst = static_cast<S*>(y.raw_data());
        parallel_for(matrices * rows, grain_for(cols), [&](int64_t b, int64_t e) {
          for (int64_t r = b; r < e; ++r) {
            const int64_t i = r % rows;
            for (int64_t j = 0; j < cols; ++j) {
              const bool keep = upper_ ? j - i >= k : j - i <= k;
              dst[r * cols + j] = keep ? src[r * cols + j] : S{};
            }
          }
        });
        return y;
      });
    })};
  }

 private:
  bool upper_;
};
// Version 14.
PARITY_REF_OP("", "Trilu", 14, kOpsetMax, Trilu);

}  // namespace
}  // namespace parity::ref
