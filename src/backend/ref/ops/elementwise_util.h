// Helpers shared by the elementwise op families (arithmetic, logic, activations, math):
// binary ops whose operands have different element types, ops over any number of broadcast
// inputs, the pre-opset-7 `broadcast`/`axis` attributes, and elementwise loops over a typed
// functor.
#pragma once

#include <optional>
#include <vector>

#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {

// The types of the float8 family, which few ops accept (Cast, Quantize, IsNaN/IsInf at 20).
using Float8Types = TypeList<float8e4m3fn, float8e4m3fnuz, float8e5m2, float8e5m2fnuz>;
template <typename T>
inline constexpr bool is_float8_v =
    std::is_same_v<T, float8e4m3fn> || std::is_same_v<T, float8e4m3fnuz> ||
    std::is_same_v<T, float8e5m2> || std::is_same_v<T, float8e5m2fnuz>;

// The value of any numeric element as double (float8 included).
template <typename T>
inline double value_as_double(T v) {
  if constexpr (is_float8_v<T>)
    return static_cast<double>(v.to_float());
  else
    return to_double(v);
}

// Tags for the 4-bit integer types, which have no C++ element type: two values per byte, the
// element 2k in the low nibble (read and written with int4_get/int4_set...).
struct Int4 {};
struct UInt4 {};
template <typename T>
inline constexpr bool is_4bit_v = std::is_same_v<T, Int4> || std::is_same_v<T, UInt4>;

// The DataType of an element type or 4-bit tag.
template <typename T>
constexpr DataType elem_dtype() {
  if constexpr (std::is_same_v<T, Int4>)
    return DataType::kInt4;
  else if constexpr (std::is_same_v<T, UInt4>)
    return DataType::kUInt4;
  else
    return dtype_of<T>;
}

// Like dispatch, for lists that may hold the 4-bit tags.
template <typename... Ts, typename F>
void dispatch_elem(TypeList<Ts...>, DataType dtype, F&& f, std::string_view what) {
  bool found = ((dtype == elem_dtype<Ts>() ? (f.template operator()<Ts>(), true) : false) || ...);
  if (!found) fail_unsupported_type(dtype, what, {elem_dtype<Ts>()...});
}

// Element i of a buffer of T (a 4-bit tag included) as double.
template <typename T>
inline double load_as_double(const void* data, size_t i) {
  if constexpr (std::is_same_v<T, Int4>)
    return int4_get(static_cast<const uint8_t*>(data), i);
  else if constexpr (std::is_same_v<T, UInt4>)
    return uint4_get(static_cast<const uint8_t*>(data), i);
  else
    return value_as_double(static_cast<const T*>(data)[i]);
}

// c = narrow<TOut>(op(widen(a), widen(b))) with NumPy broadcasting, for operands of different
// types (Pow's base and exponent). binary_elementwise is the faster form for equal types.
template <typename TOut, typename TA, typename TB, typename Op>
Tensor mixed_binary_elementwise(const Tensor& a, const Tensor& b, Op op) {
  Shape out_shape = broadcast_shapes({a.shape(), b.shape()});
  Tensor c = uninitialized_tensor(dtype_of<TOut>, out_shape);
  const TA* pa = a.data<TA>();
  const TB* pb = b.data<TB>();
  TOut* pc = c.data<TOut>();
  Broadcast bc(out_shape, {a.shape(), b.shape()});
  const int64_t sa = bc.step(0), sb = bc.step(1);
  parallel_for(bc.numel(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
    bc.for_each_run(begin, end, [&](int64_t o, const int64_t* in, int64_t len) {
      const TA* ra = pa + in[0];
      const TB* rb = pb + in[1];
      TOut* rc = pc + o;
      for (int64_t i = 0; i < len; ++i)
        rc[i] = narrow<TOut>(op(widen(ra[i * sa]), widen(rb[i * sb])));
    });
  });
  return c;
}

// Calls `fn(out_offset, in_offsets, steps, length)` for every run of the broadcast `bc` (any
// number of inputs), in parallel chunks whose bounds do not depend on the thread count.
template <typename F>
void for_each_broadcast_run(const Broadcast& bc, F&& fn) {
  std::vector<int64_t> steps(bc.num_inputs());
  for (size_t k = 0; k < steps.size(); ++k) steps[k] = bc.step(k);
  parallel_for(bc.numel(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
    bc.for_each_run(begin, end, [&](int64_t o, const int64_t* in, int64_t len) {
      fn(o, in, steps.data(), len);
    });
  });
}

// The `broadcast` and `axis` attributes of the binary ops before opset 7: without
// broadcast=1 the shapes must be equal; with it, B is broadcast onto A, aligned at `axis`
// (default: its trailing dims).
class LegacyBroadcast {
 public:
  // Reads the attributes when the node's opset is below `numpy_since` (7 for most ops).
  LegacyBroadcast(const OpContext& ctx, int64_t numpy_since);
  bool active() const { return active_; }
  // B seen with the shape that NumPy broadcasting of (A, B) gives the legacy meaning.
  Tensor operand(const Tensor& a, const Tensor& b, RunContext& ctx) const;

 private:
  bool active_ = false, broadcast_ = false;
  std::optional<int64_t> axis_;
};

// Input 0 and input 1 as tensors of the same element type; throws naming both types.
void check_same_dtype(const Tensor& a, const Tensor& b, RunContext& ctx, const char* name_a,
                      const char* name_b);

// Every input of a variadic op (Sum, Min...) present and of one element type.
std::vector<const Tensor*> variadic_inputs(const Inputs& in, RunContext& ctx);

}  // namespace parity::ref
