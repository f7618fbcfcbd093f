// Logic, bits and comparisons with NumPy broadcasting: And, Or, Xor, Not, BitwiseAnd/Or/Xor/
// Not, BitShift, Equal, Greater, Less, GreaterOrEqual, LessOrEqual, and Where.
#include "backend/ref/ops/elementwise_util.h"

namespace parity::ref {
namespace {

enum class Logic { kAnd, kOr, kXor };

template <Logic kOp>
struct LogicFn {
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (kOp == Logic::kAnd)
      return a & b;
    else if constexpr (kOp == Logic::kOr)
      return a | b;
    else
      return a ^ b;
  }
};

// And/Or/Xor on bools (`Types` = bool) or BitwiseAnd/Or/Xor on integers (bool & bool is the
// logical operation, so one functor serves both).
template <Logic kOp, typename Types>
class LogicOp : public Kernel {
 public:
  explicit LogicOp(const OpContext& ctx) : legacy_(ctx, 7) {}
  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& a = input_tensor(in, 0, "A");
    Tensor b = input_tensor(in, 1, "B");
    check_same_dtype(a, b, ctx, "A", "B");
    if (legacy_.active()) b = legacy_.operand(a, b, ctx);
    return {dispatch<Types>(
        a.dtype(), [&]<typename T>() { return binary_elementwise<T, T>(a, b, LogicFn<kOp>{}); },
        "input A")};
  }

 private:
  LegacyBroadcast legacy_;
};
using Bools = TypeList<bool>;
using And = LogicOp<Logic::kAnd, Bools>;
using Or = LogicOp<Logic::kOr, Bools>;
using Xor = LogicOp<Logic::kXor, Bools>;
using BitwiseAnd = LogicOp<Logic::kAnd, IntTypes>;
using BitwiseOr = LogicOp<Logic::kOr, IntTypes>;
using BitwiseXor = LogicOp<Logic::kXor, IntTypes>;
// Versions 1 (legacy broadcast attribute), 7 (NumPy broadcasting).
PARITY_REF_OP("", "And", 1, kOpsetMax, And);
PARITY_REF_OP("", "Or", 1, kOpsetMax, Or);
PARITY_REF_OP("", "Xor", 1, kOpsetMax, Xor);
// Version 18.
PARITY_REF_OP("", "BitwiseAnd", 18, kOpsetMax, BitwiseAnd);
PARITY_REF_OP("", "BitwiseOr", 18, kOpsetMax, BitwiseOr);
PARITY_REF_OP("", "BitwiseXor", 18, kOpsetMax, BitwiseXor);

// Not on bools, BitwiseNot on integers.
template <typename Types>
class NotOp : public Kernel {
 public:
  explicit NotOp(const OpContext&) {}
  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "X");
    return {dispatch<Types>(
        x.dtype(),
        [&]<typename T>() {
          return unary_elementwise<T, T>(x, [](auto v) {
            if constexpr (std::is_same_v<decltype(v), bool>)
              return !v;
            else
              return ~v;
          });
        },
        "input X")};
  }
};
using Not = NotOp<Bools>;
using BitwiseNot = NotOp<IntTypes>;
PARITY_REF_OP("", "Not", 1, kOpsetMax, Not);                 // version 1
PARITY_REF_OP("", "BitwiseNot", 18, kOpsetMax, BitwiseNot);  // version 18

// BitShift on unsigned integers; shifting by the type's width or more gives 0, as NumPy's
// left_shift/right_shift do (C leaves it undefined).
class BitShift : public Kernel {
 public:
  explicit BitShift(const OpContext& ctx) {
    std::string direction = ctx.attr_string("direction");
    if (direction == "LEFT")
      left_ = true;
    else if (direction != "RIGHT")
      ctx.fail("attribute 'direction' is '{}'; it must be one of LEFT, RIGHT", direction);
  }
  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const Tensor& y = input_tensor(in, 1, "Y");
    check_same_dtype(x, y, ctx, "X", "Y");
    const bool left = left_;
    return {dispatch<UnsignedIntTypes>(
        x.dtype(),
        [&]<typename T>() {
          constexpr uint64_t kBits = sizeof(T) * 8;
          return binary_elementwise<T, T>(x, y, [left](uint64_t v, uint64_t s) -> uint64_t {
            if (s >= kBits) return 0;
            return left ? v << s : v >> s;  // narrowing drops the bits shifted past the type
          });
        },
        "input X")};
  }

 private:
  bool left_ = false;
};
PARITY_REF_OP("", "BitShift", 11, kOpsetMax, BitShift);  // version 11

enum class Compare { kEqual, kGreater, kLess, kGreaterOrEqual, kLessOrEqual };

template <Compare kOp>
struct CompareFn {
  template <typename C>
  bool operator()(C a, C b) const {
    if constexpr (kOp == Compare::kEqual)
      return a == b;
    else if constexpr (kOp == Compare::kGreater)
      return a > b;
    else if constexpr (kOp == Compare::kLess)
      return a < b;
    else if constexpr (kOp == Compare::kGreaterOrEqual)
      return a >= b;
    else
      return a <= b;
  }
};

// Equal of strings (opset 19), by value.
Tensor strings_equal(const Tensor& a, const Tensor& b) {
  Shape out_shape = broadcast_shapes({a.shape(), b.shape()});
  Tensor c = uninitialized_tensor(DataType::kBool, out_shape);
  const std::string* pa = a.data<std::string>();
  const std::string* pb = b.data<std::string>();
  bool* pc = c.data<bool>();
  Broadcast bc(out_shape, {a.shape(), b.shape()});
  for_each_broadcast_run(bc, [&](int64_t o, const int64_t* in, const int64_t* steps, int64_t len) {
    for (int64_t i = 0; i < len; ++i)
      pc[o + i] = pa[in[0] + i * steps[0]] == pb[in[1] + i * steps[1]];
  });
  return c;
}

template <Compare kOp, typename Types>
class CompareOp : public Kernel {
 public:
  explicit CompareOp(const OpContext& ctx) : legacy_(ctx, 7) {}
  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& a = input_tensor(in, 0, "A");
    Tensor b = input_tensor(in, 1, "B");
    check_same_dtype(a, b, ctx, "A", "B");
    if (legacy_.active()) b = legacy_.operand(a, b, ctx);
    if constexpr (kOp == Compare::kEqual)
      if (a.dtype() == DataType::kString) return {strings_equal(a, b)};
    return {dispatch<Types>(
        a.dtype(),
        [&]<typename T>() { return binary_elementwise<bool, T>(a, b, CompareFn<kOp>{}); },
        kOp == Compare::kEqual ? "input A (or string)" : "input A")};
  }

 private:
  LegacyBroadcast legacy_;
};
using Equal = CompareOp<Compare::kEqual, AllTypes>;
using Greater = CompareOp<Compare::kGreater, NumericTypes>;
using Less = CompareOp<Compare::kLess, NumericTypes>;
using GreaterOrEqual = CompareOp<Compare::kGreaterOrEqual, NumericTypes>;
using LessOrEqual = CompareOp<Compare::kLessOrEqual, NumericTypes>;
// Versions 1 (legacy broadcast attribute), 7, 9/11 (more types), 13 (bfloat16), 19 (Equal of
// strings).
PARITY_REF_OP("", "Equal", 1, kOpsetMax, Equal);
PARITY_REF_OP("", "Greater", 1, kOpsetMax, Greater);
PARITY_REF_OP("", "Less", 1, kOpsetMax, Less);
// Versions 12, 16 (bfloat16).
PARITY_REF_OP("", "GreaterOrEqual", 12, kOpsetMax, GreaterOrEqual);
PARITY_REF_OP("", "LessOrEqual", 12, kOpsetMax, LessOrEqual);

// Where(condition, X, Y): X where the condition holds, else Y, the three broadcast together.
// Elements are moved by size, so every type (strings too) is served.
class Where : public Kernel {
 public:
  explicit Where(const OpContext&) {}
  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& cond = input_tensor(in, 0, "condition");
    const Tensor& x = input_tensor(in, 1, "X");
    const Tensor& y = input_tensor(in, 2, "Y");
    if (cond.dtype() != DataType::kBool)
      ctx.fail("input 'condition' has element type {}; it must be bool", dtype_name(cond.dtype()));
    check_same_dtype(x, y, ctx, "X", "Y");
    Shape out_shape = broadcast_shapes({cond.shape(), x.shape(), y.shape()});
    Broadcast bc(out_shape, {cond.shape(), x.shape(), y.shape()});
    return {dispatch_storage(
        x.dtype(),
        [&]<typename S>() {
          Tensor out = uninitialized_tensor(x.dtype(), out_shape);
          const bool* pc = cond.data<bool>();
          const S* px = static_cast<const S*>(x.raw_data());
          const S* py = static_cast<const S*>(y.raw_data());
          S* po = static_cast<S*>(out.raw_data());
          for_each_broadcast_run(bc, [&](int64_t o, const int64_t* off, const int64_t* st,
                                         int64_t len) {
            for (int64_t i = 0; i < len; ++i)
              po[o + i] = pc[off[0] + i * st[0]] ? px[off[1] + i * st[1]] : py[off[2] + i * st[2]];
          });
          return out;
        },
        "input X")};
  }
};
// Versions 9, 16 (bfloat16).
PARITY_REF_OP("", "Where", 9, kOpsetMax, Where);

}  // namespace
}  // namespace parity::ref
