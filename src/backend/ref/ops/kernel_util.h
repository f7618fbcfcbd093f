// The toolkit for writing reference kernels.
//
// Exactness rules every kernel follows: floating math is done in double and rounded once to
// the output type; integer math is done in int64 (uint64 for unsigned types) and wraps like
// NumPy when narrowed; the work is split with parallel_for so that every output element is
// computed by one chunk in a fixed order, which gives the same bits on any number of threads.
//
//   dispatch<FloatTypes>(x.dtype(), [&]<typename T>() { ... T ... }, "input 'X'");
//   Tensor y = unary_elementwise<T, T>(x, [](double v) { return v > 0 ? v : 0.0; });
//   Tensor z = binary_elementwise<T, T>(a, b, [](auto p, auto q) { return p + q; });
//   int64_t axis = normalize_axis(ctx.attr_int("axis", 1), rank);
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "backend/ref/kernel.h"
#include "core/tensor.h"
#include "core/thread_pool.h"

namespace parity::ref {

// ---------------------------------------------------------------------------------------------
// Element types and dispatch

template <typename... Ts>
struct TypeList {};
template <typename A, typename B>
struct TypeConcat;
template <typename... A, typename... B>
struct TypeConcat<TypeList<A...>, TypeList<B...>> {
  using type = TypeList<A..., B...>;
};
template <typename A, typename B>
using Concat = typename TypeConcat<A, B>::type;

using FloatTypes = TypeList<float, double, float16, bfloat16>;
using SignedIntTypes = TypeList<int8_t, int16_t, int32_t, int64_t>;
using UnsignedIntTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
using IntTypes = Concat<SignedIntTypes, UnsignedIntTypes>;
using NumericTypes = Concat<FloatTypes, IntTypes>;
using SignedNumericTypes = Concat<FloatTypes, SignedIntTypes>;
using AllTypes = Concat<NumericTypes, TypeList<bool>>;  // every fixed-size type but float8/int4

// Throws Error "element type <t> of <what> is not supported; supported types: [...]".
[[noreturn]] void fail_unsupported_type(DataType dtype, std::string_view what,
                                        const std::vector<DataType>& supported);

template <typename... Ts, typename F>
decltype(auto) dispatch_in(TypeList<Ts...>, DataType dtype, F&& f, std::string_view what) {
  using First = std::tuple_element_t<0, std::tuple<Ts...>>;
  using R = decltype(f.template operator()<First>());
  if constexpr (std::is_void_v<R>) {
    bool found = ((dtype == dtype_of<Ts> ? (f.template operator()<Ts>(), true) : false) || ...);
    if (!found) fail_unsupported_type(dtype, what, {dtype_of<Ts>...});
  } else {
    std::optional<R> r;
    bool found =
        ((dtype == dtype_of<Ts> ? (r.emplace(f.template operator()<Ts>()), true) : false) || ...);
    if (!found) fail_unsupported_type(dtype, what, {dtype_of<Ts>...});
    return R(std::move(*r));
  }
}

// Calls f.template operator()<T>() — write f as `[&]<typename T>() { ... }` — with the C++
// type of `dtype` when it is in List; otherwise throws the error above, naming `what`.
template <typename List, typename F>
decltype(auto) dispatch(DataType dtype, F&& f, std::string_view what = "the input") {
  return dispatch_in(List{}, dtype, std::forward<F>(f), what);
}

// For kernels that only move elements (Transpose, Concat, Gather...): calls
// f.template operator()<S>() with a storage type of the element's size (uint8_t, uint16_t,
// uint32_t, uint64_t, Bytes16, or std::string for strings); read t.raw_data() as S. Sub-byte
// types (int4, uint4) are refused with the error above.
struct Bytes16 {
  uint64_t lo, hi;
};
template <typename F>
decltype(auto) dispatch_storage(DataType dtype, F&& f, std::string_view what = "the input") {
  if (dtype == DataType::kString) return f.template operator()<std::string>();
  switch (dtype_bits(dtype)) {
    case 8:
      return f.template operator()<uint8_t>();
    case 16:
      return f.template operator()<uint16_t>();
    case 32:
      return f.template operator()<uint32_t>();
    case 64:
      return f.template operator()<uint64_t>();
    case 128:
      return f.template operator()<Bytes16>();
    default:
      fail_unsupported_type(dtype, what, {});
  }
}

// ---------------------------------------------------------------------------------------------
// Conversions: widen to the type math is done in, narrow back rounding once.

template <typename T>
inline constexpr bool is_float_like_v =
    std::is_floating_point_v<T> || std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

// double for floating types, int64/uint64 for integers, bool for bool.
template <typename T>
using compute_t = std::conditional_t<
    is_float_like_v<T>, double,
    std::conditional_t<std::is_same_v<T, bool>, bool,
                       std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>>;

template <typename T>
inline compute_t<T> widen(T v) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>)
    return static_cast<double>(v.to_float());
  else
    return static_cast<compute_t<T>>(v);
}

template <typename T>
inline double to_double(T v) {
  return static_cast<double>(widen(v));
}

// Every element of `t` as double, in order; an element type outside Types is an error naming
// `what` ("input cos_cache").
template <typename Types = FloatTypes>
std::vector<double> read_doubles(const Tensor& t, std::string_view what) {
  return dispatch<Types>(
      t.dtype(),
      [&]<typename T>() {
        std::vector<double> v(static_cast<size_t>(t.numel()));
        const T* p = t.data<T>();
        for (size_t i = 0; i < v.size(); ++i) v[i] = to_double(p[i]);
        return v;
      },
      what);
}

// Converts a computed value to T, rounding once: floating types round to nearest even;
// integers from integers wrap (two's complement, as NumPy's astype); integers from floating
// values truncate toward zero, saturate at T's range, and NaN gives 0.
template <typename T, typename V>
inline T narrow(V v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != V(0);
  } else if constexpr (std::is_same_v<T, float16>) {
    return float16::from_double(static_cast<double>(v));
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    return bfloat16::from_double(static_cast<double>(v));
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else if constexpr (std::is_floating_point_v<V>) {
    if (std::isnan(v)) return T(0);
    if (v <= static_cast<V>(std::numeric_limits<T>::lowest()))
      return std::numeric_limits<T>::lowest();
    if (v >= static_cast<V>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

// ---------------------------------------------------------------------------------------------
// Inputs and tensors

// Input i as a tensor; throws "input '<name>' is required but absent" (or "is a sequence").
const Tensor& input_tensor(const Inputs& inputs, size_t i, std::string_view name);
// Input i as a tensor, or nullptr when absent (an empty name or an empty optional).
const Tensor* optional_input(const Inputs& inputs, size_t i, std::string_view name);

// The values of an integer tensor (any integer type) as int64, e.g. a shape or axes input.
std::vector<int64_t> read_int64s(const Tensor& t, std::string_view what);
// One value of a numeric tensor as double (t must hold exactly one element).
double read_scalar(const Tensor& t, std::string_view what);

// A tensor whose buffer is not zero-filled, for kernels that write every element (saves a
// pass over memory). String tensors are constructed normally.
Tensor uninitialized_tensor(DataType dtype, Shape shape);

// ---------------------------------------------------------------------------------------------
// Shapes and axes

Shape strides_of(const Shape& shape);  // row-major element strides
// Product of dims [begin, end).
int64_t dims_product(const Shape& shape, int64_t begin, int64_t end);
// An axis in [-rank, rank) as a value in [0, rank); throws naming `what` otherwise.
int64_t normalize_axis(int64_t axis, int64_t rank, std::string_view what = "axis");
// Every axis normalised; throws on a repeated axis. Keeps the given order.
std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t rank,
                                    std::string_view what = "axes");
// Throws unless the tensor's rank is in [lo, hi].
void check_rank(const Tensor& t, int64_t lo, int64_t hi, std::string_view what);

// ---------------------------------------------------------------------------------------------
// NumPy broadcasting

// The broadcast shape; throws "failed to broadcast shapes (2, 3) and (4,) ...".
Shape broadcast_shapes(const std::vector<Shape>& shapes);

// Maps the elements of an output to the elements of inputs broadcast to it. Adjacent dims
// that broadcast alike are merged, so the innermost runs are as long as possible; for each
// run, an input either advances with the output (step 1) or repeats one element (step 0).
class Broadcast {
 public:
  Broadcast(const Shape& out, const std::vector<Shape>& inputs);

  int64_t numel() const { return numel_; }
  size_t num_inputs() const { return steps_.size(); }
  int64_t step(size_t k) const { return steps_[k]; }  // 0 or 1 within a run

  // Calls fn(out_offset, in_offsets, length) for each run inside the output range
  // [begin, end); in_offsets[k] is input k's offset at the run's first element.
  template <typename F>
  void for_each_run(int64_t begin, int64_t end, F&& fn) const {
    std::vector<int64_t> offsets(steps_.size());
    int64_t pos = begin;
    while (pos < end) {
      int64_t row = pos / inner_, col = pos % inner_;
      int64_t len = std::min(inner_ - col, end - pos);
      row_offsets(row, offsets.data());
      for (size_t k = 0; k < steps_.size(); ++k) offsets[k] += col * steps_[k];
      fn(pos, static_cast<const int64_t*>(offsets.data()), len);
      pos += len;
    }
  }

 private:
  void row_offsets(int64_t row, int64_t* offsets) const;

  int64_t numel_ = 0;
  int64_t inner_ = 1;                          // length of the innermost merged dim
  std::vector<int64_t> outer_;                 // merged outer dims
  std::vector<std::vector<int64_t>> strides_;  // per input, per outer dim
  std::vector<int64_t> steps_;                 // per input, along the innermost dim
};

// Elements per parallel chunk for cheap per-element work.
constexpr int64_t kElementwiseGrain = int64_t{1} << 15;

// Work per chunk (in multiply-adds) for heavier kernels; grain_for turns it into items.
constexpr int64_t kWorkPerChunk = int64_t{1} << 16;
inline int64_t grain_for(int64_t work_per_item) {
  return std::max<int64_t>(1, kWorkPerChunk / std::max<int64_t>(work_per_item, 1));
}

// y[i] = narrow<TOut>(op(widen(x[i]))). op takes compute_t<TIn>.
template <typename TOut, typename TIn, typename Op>
Tensor unary_elementwise(const Tensor& x, Op op) {
  Tensor y = uninitialized_tensor(dtype_of<TOut>, x.shape());
  const TIn* src = x.data<TIn>();
  TOut* dst = y.data<TOut>();
  parallel_for(x.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dst[i] = narrow<TOut>(op(widen(src[i])));
  });
  return y;
}

// c = narrow<TOut>(op(widen(a), widen(b))) with NumPy broadcasting.
template <typename TOut, typename TIn, typename Op>
Tensor binary_elementwise(const Tensor& a, const Tensor& b, Op op) {
  Shape out_shape = broadcast_shapes({a.shape(), b.shape()});
  Tensor c = uninitialized_tensor(dtype_of<TOut>, out_shape);
  const TIn* pa = a.data<TIn>();
  const TIn* pb = b.data<TIn>();
  TOut* pc = c.data<TOut>();
  Broadcast bc(out_shape, {a.shape(), b.shape()});
  const int64_t sa = bc.step(0), sb = bc.step(1);
  parallel_for(bc.numel(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
    bc.for_each_run(begin, end, [&](int64_t o, const int64_t* in, int64_t len) {
      const TIn* ra = pa + in[0];
      const TIn* rb = pb + in[1];
      TOut* rc = pc + o;
      // Separate loops for the common step patterns let the compiler vectorise each.
      if (sa == 1 && sb == 1) {
        for (int64_t i = 0; i < len; ++i) rc[i] = narrow<TOut>(op(widen(ra[i]), widen(rb[i])));
      } else if (sa == 1) {
        const auto vb = widen(rb[0]);
        for (int64_t i = 0; i < len; ++i) rc[i] = narrow<TOut>(op(widen(ra[i]), vb));
      } else if (sb == 1) {
        const auto va = widen(ra[0]);
        for (int64_t i = 0; i < len; ++i) rc[i] = narrow<TOut>(op(va, widen(rb[i])));
      } else {
        const TOut v = narrow<TOut>(op(widen(ra[0]), widen(rb[0])));
        for (int64_t i = 0; i < len; ++i) rc[i] = v;
      }
    });
  });
  return c;
}

// ---------------------------------------------------------------------------------------------
// Reductions

// Reduction of a tensor over a set of axes: the output shape, and for each output element
// the input offsets to combine, visited in row-major order of the reduced axes.
class Reduction {
 public:
  // `axes` normalised (normalize_axes); empty means every axis.
  Reduction(const Shape& in, std::vector<int64_t> axes, bool keepdims);

  const Shape& out_shape() const { return out_shape_; }
  int64_t num_outputs() const { return num_outputs_; }
  int64_t count() const { return count_; }  // input elements per output element

  // Calls fn(offset) for every input element of output element `out_index`, in order.
  template <typename F>
  void for_each_input(int64_t out_index, F&& fn) const {
    int64_t base = 0;
    for (size_t d = kept_sizes_.size(); d-- > 0;) {
      base += (out_index % kept_sizes_[d]) * kept_strides_[d];
      out_index /= kept_sizes_[d];
    }
    if (count_ == 0) return;
    const size_t nr = red_sizes_.size();
    if (nr == 0) {
      fn(base);
      return;
    }
    std::vector<int64_t> idx(nr, 0);
    const int64_t inner_size = red_sizes_[nr - 1], inner_stride = red_strides_[nr - 1];
    for (;;) {
      int64_t off = base;
      for (size_t d = 0; d + 1 < nr; ++d) off += idx[d] * red_strides_[d];
      for (int64_t i = 0; i < inner_size; ++i) fn(off + i * inner_stride);
      // Advance the odometer over the outer reduced dims.
      int64_t d = static_cast<int64_t>(nr) - 2;
      for (; d >= 0; --d) {
        if (++idx[d] < red_sizes_[d]) break;
        idx[d] = 0;
      }
      if (d < 0) return;
    }
  }

 private:
  Shape out_shape_;
  int64_t num_outputs_ = 1, count_ = 1;
  std::vector<int64_t> kept_sizes_, kept_strides_;  // merged kept dims (input strides)
  std::vector<int64_t> red_sizes_, red_strides_;    // merged reduced dims
};

// out[o] = narrow<TOut>(finish(acc, count)) where acc = combine(...combine(init, x0)..., xn)
// over the inputs of output o (in order), all in compute_t<TIn>... as chosen by Acc.
template <typename TOut, typename TIn, typename Acc, typename Combine, typename Finish>
Tensor reduce(const Tensor& x, const Reduction& r, Acc init, Combine combine, Finish finish) {
  Tensor y = uninitialized_tensor(dtype_of<TOut>, r.out_shape());
  const TIn* src = x.data<TIn>();
  TOut* dst = y.data<TOut>();
  parallel_for(r.num_outputs(), grain_for(r.count()), [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) {
      Acc acc = init;
      r.for_each_input(o, [&](int64_t off) { acc = combine(acc, widen(src[off])); });
      dst[o] = narrow<TOut>(finish(acc, r.count()));
    }
  });
  return y;
}

// ---------------------------------------------------------------------------------------------
// Sliding windows (Conv, pooling): pads, strides, dilations and output sizes per ONNX.

enum class AutoPad { kNotSet, kValid, kSameUpper, kSameLower };

struct WindowAttrs {
  // Each empty when the attribute is absent; window_geometry fills in the defaults (strides
  // and dilations 1, pads 0) once the number of spatial dims is known.
  std::vector<int64_t> strides, dilations, pads;  // pads: [begin..., end...]
  AutoPad auto_pad = AutoPad::kNotSet;
  bool ceil_mode = false;
};

struct WindowGeometry {
  std::vector<int64_t> in, out, kernel, strides, dilations, pad_begin, pad_end;
};

// Reads auto_pad, strides, dilations, pads (and ceil_mode when `with_ceil_mode`), checking
// their values.
WindowAttrs read_window_attrs(const OpContext& ctx, bool with_ceil_mode);
// Output sizes and effective pads of a window of size `kernel` sliding over `in_spatial`;
// checks the attribute lengths against the number of spatial dims. With ceil_mode, a last
// window that would start in the end padding is dropped (ONNX's rule, as PyTorch's).
WindowGeometry window_geometry(const WindowAttrs& attrs, const Shape& in_spatial,
                               const std::vector<int64_t>& kernel);
// The same geometry with leading dims of size 1 (stride and dilation 1, no padding) added up
// to `dims` spatial dims (none when it has as many already).
WindowGeometry window_lifted(const WindowGeometry& g, size_t dims);
// The same geometry with leading dims of size 1 added up to 3 spatial dims, so one 3-D loop
// serves 1-D, 2-D and 3-D windows. Throws for more than 3 spatial dims.
WindowGeometry window_as_3d(const WindowGeometry& g);

}  // namespace parity::ref
