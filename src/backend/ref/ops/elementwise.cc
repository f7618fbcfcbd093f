// Elementwise arithmetic with NumPy broadcasting: Add, Sub, Mul, Div, and Relu.
// Floating values are combined in double and rounded once (for +, -, *, / on float32 this is
// exactly IEEE float arithmetic); integers in 64 bits, wrapping like NumPy when narrowed.
#include <limits>

#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {
namespace {

enum class Arith { kAdd, kSub, kMul, kDiv };

// Integer math in uint64 wraps modulo 2^64, which is what narrowing to the type keeps.
template <typename C>
C wrap_add(C a, C b) { return static_cast<C>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
template <typename C>
C wrap_sub(C a, C b) { return static_cast<C>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
template <typename C>
C wrap_mul(C a, C b) { return static_cast<C>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }

template <typename T>
Tensor arith(Arith op, const Tensor& a, const Tensor& b) {
  using C = compute_t<T>;
  if constexpr (std::is_same_v<C, double>) {
    switch (op) {
      case Arith::kAdd: return binary_elementwise<T, T>(a, b, [](C x, C y) { return x + y; });
      case Arith::kSub: return binary_elementwise<T, T>(a, b, [](C x, C y) { return x - y; });
      case Arith::kMul: return binary_elementwise<T, T>(a, b, [](C x, C y) { return x * y; });
      case Arith::kDiv: return binary_elementwise<T, T>(a, b, [](C x, C y) { return x / y; });
    }
  } else {
    switch (op) {
      case Arith::kAdd: return binary_elementwise<T, T>(a, b, wrap_add<C>);
      case Arith::kSub: return binary_elementwise<T, T>(a, b, wrap_sub<C>);
      case Arith::kMul: return binary_elementwise<T, T>(a, b, wrap_mul<C>);
      case Arith::kDiv:
        // Truncates toward zero, as ONNX Runtime does; the one overflowing case wraps.
        return binary_elementwise<T, T>(a, b, [](C x, C y) -> C {
          if (y == 0) fail("integer division by zero; the divisor B must have no zeros");
          if constexpr (std::is_signed_v<C>)
            if (y == -1) return wrap_sub<C>(0, x);
          return x / y;
        });
    }
  }
  return {};
}

template <Arith kOp>
class Binary : public Kernel {
 public:
  explicit Binary(const OpContext& ctx) {
    if (ctx.num_inputs() != 2) ctx.fail("it has {} inputs; it must have 2", ctx.num_inputs());
    // Opsets 1-6 broadcast only when asked (broadcast=1), B onto A, optionally from `axis`.
    if (ctx.opset() < 7) {
      legacy_ = true;
      legacy_broadcast_ = ctx.attr_int("broadcast", 0) != 0;
      if (ctx.has_attr("axis")) axis_ = ctx.attr_int("axis");
    }
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& a = input_tensor(in, 0, "A");
    Tensor b = input_tensor(in, 1, "B");
    if (a.dtype() != b.dtype())
      ctx.fail("inputs A and B have element types {} and {}; they must be equal",
               dtype_name(a.dtype()), dtype_name(b.dtype()));
    if (legacy_) b = legacy_operand(a, b, ctx);
    return {dispatch<NumericTypes>(
        a.dtype(), [&]<typename T>() { return arith<T>(kOp, a, b); }, "input A")};
  }

 private:
  Tensor legacy_operand(const Tensor& a, const Tensor& b, RunContext& ctx) const {
    if (!legacy_broadcast_) {
      if (a.shape() != b.shape())
        ctx.fail("inputs have shapes {} and {}; without broadcast=1 they must be equal",
                 shape_str(a.shape()), shape_str(b.shape()));
      return b;
    }
    if (b.rank() > a.rank())
      ctx.fail("B has shape {}, of higher rank than A's {}", shape_str(b.shape()),
               shape_str(a.shape()));
    Shape aligned = b.shape();
    if (axis_) {
      int64_t axis = normalize_axis(*axis_, a.rank());
      if (axis + b.rank() > a.rank())
        ctx.fail("B of shape {} does not fit A of shape {} from axis {}", shape_str(b.shape()),
                 shape_str(a.shape()), axis);
      aligned.insert(aligned.begin(), axis, 1);
      aligned.resize(a.rank(), 1);
    }
    Tensor view = b.reshaped(aligned);
    if (broadcast_shapes({a.shape(), aligned}) != a.shape())
      ctx.fail("B of shape {} does not broadcast to A's shape {}", shape_str(b.shape()),
               shape_str(a.shape()));
    return view;
  }

  bool legacy_ = false, legacy_broadcast_ = false;
  std::optional<int64_t> axis_;
};

using Add = Binary<Arith::kAdd>;
using Sub = Binary<Arith::kSub>;
using Mul = Binary<Arith::kMul>;
using Div = Binary<Arith::kDiv>;
// Versions 1, 6 (legacy broadcast attribute), 7 (NumPy broadcasting), 13, 14 (more types).
PARITY_REF_OP("", "Add", 1, kOpsetMax, Add);
PARITY_REF_OP("", "Sub", 1, kOpsetMax, Sub);
PARITY_REF_OP("", "Mul", 1, kOpsetMax, Mul);
PARITY_REF_OP("", "Div", 1, kOpsetMax, Div);

class Relu : public Kernel {
 public:
  explicit Relu(const OpContext&) {}
  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "X");
    // `v < 0 ? 0 : v` keeps NaN and -0.0 as NumPy's maximum(x, 0) does.
    return {dispatch<SignedNumericTypes>(
        x.dtype(),
        [&]<typename T>() {
          return unary_elementwise<T, T>(x, [](auto v) { return v < 0 ? decltype(v)(0) : v; });
        },
        "input X")};
  }
};
// Versions 1, 6, 13, 14 (signed integer types).
PARITY_REF_OP("", "Relu", 1, kOpsetMax, Relu);

}  // namespace
}  // namespace parity::ref
