// Unary math: Abs, Neg, Reciprocal, Floor, Ceil, Round, Sqrt, Exp, Log, the trigonometric and
// hyperbolic functions, Erf, Sign, IsNaN, IsInf. Each value is computed in double (int64 for
// integers) by the C library and rounded once to the element type. Exp, Log, Erf and the
// trigonometric and hyperbolic functions of float, float16 and bfloat16 tensors go through
// SLEEF's vector functions with vector_math.h's guard, which keeps those same bits.
#include <cmath>

#include "backend/ref/ops/elementwise_util.h"
#include "backend/ref/ops/vector_math.h"

namespace parity::ref {
namespace {

// A unary op over the element types `Types`, computing `Fn{}(widen(x))`.
template <typename Fn, typename Types>
class Unary : public Kernel {
 public:
  explicit Unary(const OpContext&) {}
  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "X");
    return {dispatch<Types>(
        x.dtype(), [&]<typename T>() { return unary_elementwise<T, T>(x, Fn{}); }, "input X")};
  }
};

// A unary op whose float32/float16/bfloat16 values come from the vector function kF (guarded, so
// they equal Fn's rounded values); double and integer types compute Fn directly.
template <typename Fn, vmath::Fn kF, bool kNonNegative, typename Types = FloatTypes>
class VectorUnary : public Kernel {
 public:
  explicit VectorUnary(const OpContext&) {}
  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "X");
    return {dispatch<Types>(
        x.dtype(),
        [&]<typename T>() {
          if constexpr (std::is_same_v<T, float> || std::is_same_v<T, float16> ||
                        std::is_same_v<T, bfloat16>)
            return vmath::guarded_unary<T>(x, vmath::Apply{kF}, Fn{}, vmath::kSingleCallTol,
                                           kNonNegative);
          else
            return unary_elementwise<T, T>(x, Fn{});
        },
        "input X")};
  }
};

// Declares Name##Fn computing `expr` of the double v, and the kernel Name over FloatTypes.
#define PARITY_FLOAT_FN(Name, expr)                    \
  struct Name##Fn {                                    \
    double operator()(double v) const { return expr; } \
  };                                                   \
  using Name = Unary<Name##Fn, FloatTypes>;

PARITY_FLOAT_FN(Reciprocal, 1.0 / v)
PARITY_FLOAT_FN(Floor, std::floor(v))
PARITY_FLOAT_FN(Ceil, std::ceil(v))
// Halves go to the even neighbour (nearbyint in the default rounding mode), as the spec says.
PARITY_FLOAT_FN(Round, std::nearbyint(v))
PARITY_FLOAT_FN(Sqrt, std::sqrt(v))
#undef PARITY_FLOAT_FN

// Declares Name##Fn computing `std::fn(v)` and the kernel Name through the vector fn. kNonNegative
// where every value of the function is >= 0 (its underflow to 0 then needs no recomputing).
#define PARITY_VECTOR_FN(Name, fn, kNonNegative)             \
  struct Name##Fn {                                          \
    double operator()(double v) const { return std::fn(v); } \
  };                                                         \
  using Name = VectorUnary<Name##Fn, vmath::Fn::k##Name, kNonNegative>;

PARITY_VECTOR_FN(Exp, exp, true)
PARITY_VECTOR_FN(Log, log, false)
PARITY_VECTOR_FN(Sin, sin, false)
PARITY_VECTOR_FN(Cos, cos, false)
PARITY_VECTOR_FN(Tan, tan, false)
PARITY_VECTOR_FN(Asin, asin, false)
PARITY_VECTOR_FN(Acos, acos, true)
PARITY_VECTOR_FN(Atan, atan, false)
PARITY_VECTOR_FN(Sinh, sinh, false)
PARITY_VECTOR_FN(Cosh, cosh, true)
PARITY_VECTOR_FN(Asinh, asinh, false)
PARITY_VECTOR_FN(Acosh, acosh, true)
PARITY_VECTOR_FN(Atanh, atanh, false)
#undef PARITY_VECTOR_FN

// Versions 1 and 6 (consumed_inputs dropped), 13 (bfloat16): same semantics.
PARITY_REF_OP("", "Reciprocal", 1, kOpsetMax, Reciprocal);
PARITY_REF_OP("", "Floor", 1, kOpsetMax, Floor);
PARITY_REF_OP("", "Ceil", 1, kOpsetMax, Ceil);
PARITY_REF_OP("", "Sqrt", 1, kOpsetMax, Sqrt);
PARITY_REF_OP("", "Exp", 1, kOpsetMax, Exp);
PARITY_REF_OP("", "Log", 1, kOpsetMax, Log);
// Version 11.
PARITY_REF_OP("", "Round", 11, kOpsetMax, Round);
// Version 7.
PARITY_REF_OP("", "Sin", 7, kOpsetMax, Sin);
PARITY_REF_OP("", "Cos", 7, kOpsetMax, Cos);
PARITY_REF_OP("", "Tan", 7, kOpsetMax, Tan);
PARITY_REF_OP("", "Asin", 7, kOpsetMax, Asin);
PARITY_REF_OP("", "Acos", 7, kOpsetMax, Acos);
PARITY_REF_OP("", "Atan", 7, kOpsetMax, Atan);
// Version 9.
PARITY_REF_OP("", "Sinh", 9, kOpsetMax, Sinh);
PARITY_REF_OP("", "Cosh", 9, kOpsetMax, Cosh);
PARITY_REF_OP("", "Asinh", 9, kOpsetMax, Asinh);
PARITY_REF_OP("", "Acosh", 9, kOpsetMax, Acosh);
PARITY_REF_OP("", "Atanh", 9, kOpsetMax, Atanh);

// Integers wrap like NumPy: Abs and Neg of the most negative value give it back.
struct AbsFn {
  template <typename C>
  C operator()(C v) const {
    if constexpr (std::is_same_v<C, double>)
      return std::fabs(v);
    else if constexpr (std::is_signed_v<C>)
      return v < 0 ? static_cast<C>(0 - static_cast<uint64_t>(v)) : v;
    else
      return v;
  }
};
struct NegFn {
  template <typename C>
  C operator()(C v) const {
    if constexpr (std::is_same_v<C, double>)
      return -v;
    else
      return static_cast<C>(0 - static_cast<uint64_t>(v));
  }
};
// -1, 0 or 1 (NaN stays NaN, as NumPy's sign).
struct SignFn {
  template <typename C>
  C operator()(C v) const {
    if constexpr (std::is_same_v<C, double>)
      if (std::isnan(v)) return v;
    return v > 0 ? C(1) : (v < 0 ? static_cast<C>(-1) : C(0));
  }
};
// Erf of an integer is erf of its value, truncated back to the integer type.
struct ErfFn {
  double operator()(double v) const { return std::erf(v); }
};
using Erf = VectorUnary<ErfFn, vmath::Fn::kErf, false, NumericTypes>;

using Abs = Unary<AbsFn, NumericTypes>;
using Neg = Unary<NegFn, SignedNumericTypes>;
using Sign = Unary<SignFn, NumericTypes>;
// Versions 1, 6 (integer types), 13 (bfloat16).
PARITY_REF_OP("", "Abs", 1, kOpsetMax, Abs);
PARITY_REF_OP("", "Neg", 1, kOpsetMax, Neg);
// Versions 9, 13 (bfloat16).
PARITY_REF_OP("", "Sign", 9, kOpsetMax, Sign);
PARITY_REF_OP("", "Erf", 9, kOpsetMax, Erf);

// A predicate on floating values (float8 included), giving a bool tensor.
template <typename T, typename Pred>
Tensor classify(const Tensor& x, Pred pred) {
  Tensor y = uninitialized_tensor(DataType::kBool, x.shape());
  const T* src = x.data<T>();
  bool* dst = y.data<bool>();
  parallel_for(x.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dst[i] = pred(value_as_double(src[i]));
  });
  return y;
}

class IsNaN : public Kernel {
 public:
  explicit IsNaN(const OpContext&) {}
  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "X");
    return {dispatch<Concat<FloatTypes, Float8Types>>(
        x.dtype(),
        [&]<typename T>() { return classify<T>(x, [](double v) { return std::isnan(v); }); },
        "input X")};
  }
};
// Versions 9, 13 (bfloat16), 20 (float8).
PARITY_REF_OP("", "IsNaN", 9, kOpsetMax, IsNaN);

class IsInf : public Kernel {
 public:
  explicit IsInf(const OpContext& ctx)
      : negative_(ctx.attr_int("detect_negative", 1) != 0),
        positive_(ctx.attr_int("detect_positive", 1) != 0) {}
  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const bool neg = negative_, pos = positive_;
    return {dispatch<Concat<FloatTypes, Float8Types>>(
        x.dtype(),
        [&]<typename T>() {
          return classify<T>(x,
                             [neg, pos](double v) { return std::isinf(v) && (v > 0 ? pos : neg); });
        },
        "input X")};
  }

 private:
  bool negative_, positive_;
};
// Versions 10, 20 (float8).
PARITY_REF_OP("", "IsInf", 10, kOpsetMax, IsInf);

}  // namespace
}  // namespace parity::ref
