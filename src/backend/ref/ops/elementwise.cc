// Elementwise arithmetic with NumPy broadcasting: Add, Sub, Mul, Div, Pow, Mod, and the
// variadic Sum, Mean, Min, Max.
// Floating values are combined in double and rounded once (for +, -, *, / on float32 this is
// exactly IEEE float arithmetic); integers in 64 bits, wrapping like NumPy when narrowed.
#include <limits>

#include "backend/ref/ops/elementwise_util.h"
#include "backend/ref/ops/vector_math.h"

namespace parity::ref {

LegacyBroadcast::LegacyBroadcast(const OpContext& ctx, int64_t numpy_since) {
  if (ctx.opset() >= numpy_since) return;
  active_ = true;
  broadcast_ = ctx.attr_int("broadcast", 0) != 0;
  if (ctx.has_attr("axis")) axis_ = ctx.attr_int("axis");
}

Tensor LegacyBroadcast::operand(const Tensor& a, const Tensor& b, RunContext& ctx) const {
  if (!broadcast_) {
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

void check_same_dtype(const Tensor& a, const Tensor& b, RunContext& ctx, const char* name_a,
                      const char* name_b) {
  if (a.dtype() != b.dtype())
    ctx.fail("inputs {} and {} have element types {} and {}; they must be equal", name_a, name_b,
             dtype_name(a.dtype()), dtype_name(b.dtype()));
}

std::vector<const Tensor*> variadic_inputs(const Inputs& in, RunContext& ctx) {
  std::vector<const Tensor*> tensors;
  for (size_t i = 0; i < in.size(); ++i) {
    const Tensor& t = input_tensor(in, i, "data_" + std::to_string(i));
    if (!tensors.empty() && t.dtype() != tensors[0]->dtype())
      ctx.fail("input #{} has element type {} and input #0 {}; all inputs must have one type", i,
               dtype_name(t.dtype()), dtype_name(tensors[0]->dtype()));
    tensors.push_back(&t);
  }
  if (tensors.empty()) ctx.fail("it has no inputs; it needs at least one");
  return tensors;
}

namespace {

enum class Arith { kAdd, kSub, kMul, kDiv };

// Integer math in uint64 wraps modulo 2^64, which is what narrowing to the type keeps.
template <typename C>
C wrap_add(C a, C b) {
  return static_cast<C>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
template <typename C>
C wrap_sub(C a, C b) {
  return static_cast<C>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
template <typename C>
C wrap_mul(C a, C b) {
  return static_cast<C>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

template <typename T>
Tensor arith(Arith op, const Tensor& a, const Tensor& b) {
  using C = compute_t<T>;
  if constexpr (std::is_same_v<C, double>) {
    switch (op) {
      case Arith::kAdd:
        return binary_elementwise<T, T>(a, b, [](C x, C y) { return x + y; });
      case Arith::kSub:
        return binary_elementwise<T, T>(a, b, [](C x, C y) { return x - y; });
      case Arith::kMul:
        return binary_elementwise<T, T>(a, b, [](C x, C y) { return x * y; });
      case Arith::kDiv:
        return binary_elementwise<T, T>(a, b, [](C x, C y) { return x / y; });
    }
  } else {
    switch (op) {
      case Arith::kAdd:
        return binary_elementwise<T, T>(a, b, wrap_add<C>);
      case Arith::kSub:
        return binary_elementwise<T, T>(a, b, wrap_sub<C>);
      case Arith::kMul:
        return binary_elementwise<T, T>(a, b, wrap_mul<C>);
      case Arith::kDiv:
        // Truncates toward zero, as the spec's reference (NumPy true division cast back to the
        // integer type) and ONNX Runtime do; the one overflowing case wraps.
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
  explicit Binary(const OpContext& ctx) : legacy_(ctx, 7) {
    if (ctx.num_inputs() != 2) ctx.fail("it has {} inputs; it must have 2", ctx.num_inputs());
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& a = input_tensor(in, 0, "A");
    Tensor b = input_tensor(in, 1, "B");
    check_same_dtype(a, b, ctx, "A", "B");
    if (legacy_.active()) b = legacy_.operand(a, b, ctx);
    return {dispatch<NumericTypes>(
        a.dtype(), [&]<typename T>() { return arith<T>(kOp, a, b); }, "input A")};
  }

 private:
  LegacyBroadcast legacy_;
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

// base^exponent for integers by squaring, wrapping like NumPy. A negative exponent gives the
// truncated value of 1 / base^|exponent|: 1 for base 1, ±1 for base -1, else 0.
template <typename E>
int64_t integer_power(int64_t base, E exponent) {
  if constexpr (std::is_signed_v<E>) {
    if (exponent < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exponent % 2 == 0) ? 1 : -1;
      return 0;
    }
  }
  uint64_t result = 1, factor = static_cast<uint64_t>(base);
  for (uint64_t e = static_cast<uint64_t>(exponent); e != 0; e >>= 1) {
    if (e & 1) result *= factor;
    factor *= factor;
  }
  return static_cast<int64_t>(result);
}

using PowBaseTypes = TypeList<float, double, float16, bfloat16, int32_t, int64_t>;

// Pow of float/float16/bfloat16 base and exponent of one type, the exponent of X's shape or a
// scalar (the common forms): SLEEF's pow over blocks, guarded (vector_math.h) to keep
// glibc's bits. Returns false, doing nothing, for any other form.
template <typename T>
bool vector_pow(const Tensor& x, const Tensor& y, Tensor& out) {
  if constexpr (std::is_same_v<T, double> || !std::is_floating_point_v<compute_t<T>>) {
    return false;
  } else {
    if (y.dtype() != x.dtype() || (y.shape() != x.shape() && y.numel() != 1) ||
        broadcast_shapes({x.shape(), y.shape()}) != x.shape())
      return false;
    out = uninitialized_tensor(x.dtype(), x.shape());
    const T* xs = x.data<T>();
    const T* ys = y.data<T>();
    const bool scalar = y.shape() != x.shape();
    T* dst = out.data<T>();
    parallel_for(x.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
      double base[vmath::kBlock], expo[vmath::kBlock], r[vmath::kBlock];
      for (int64_t s = b; s < e; s += vmath::kBlock) {
        const int64_t len = std::min(vmath::kBlock, e - s);
        for (int64_t i = 0; i < len; ++i) {
          base[i] = to_double(xs[s + i]);
          expo[i] = to_double(ys[scalar ? 0 : s + i]);
        }
        vmath::apply_pow(base, expo, r, len);
        for (int64_t i = 0; i < len; ++i)
          dst[s + i] = vmath::rounds_alike<T>(r[i], vmath::kRelTol * std::fabs(r[i]))
                           ? narrow<T>(r[i])
                           : narrow<T>(std::pow(base[i], expo[i]));
      }
    });
    return true;
  }
}

class Pow : public Kernel {
 public:
  explicit Pow(const OpContext& ctx) : legacy_(ctx, 7) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    Tensor y = input_tensor(in, 1, "Y");
    if (legacy_.active()) {
      check_same_dtype(x, y, ctx, "X", "Y");  // one type T before opset 12
      y = legacy_.operand(x, y, ctx);
    }
    return {dispatch<PowBaseTypes>(
        x.dtype(),
        [&]<typename T>() {
          if (Tensor out; !legacy_.active() && vector_pow<T>(x, y, out)) return out;
          return dispatch<NumericTypes>(
              y.dtype(),
              [&]<typename E>() {
                // The result has the base's type; an integer base with an integer exponent
                // stays in integers (exact beyond 2^53), anything else is pow() in double.
                return mixed_binary_elementwise<T, T, E>(x, y, [](auto b, auto e) {
                  if constexpr (std::is_integral_v<decltype(b)> && std::is_integral_v<decltype(e)>)
                    return integer_power(b, e);
                  else
                    return std::pow(static_cast<double>(b), static_cast<double>(e));
                });
              },
              "input Y");
        },
        "input X")};
  }

 private:
  LegacyBroadcast legacy_;
};
// Versions 1, 7 (NumPy broadcasting), 12 (exponent of another type), 13, 15 (bfloat16).
PARITY_REF_OP("", "Pow", 1, kOpsetMax, Pow);

class Mod : public Kernel {
 public:
  explicit Mod(const OpContext& ctx) : fmod_(ctx.attr_int("fmod", 0) != 0) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& a = input_tensor(in, 0, "A");
    const Tensor& b = input_tensor(in, 1, "B");
    check_same_dtype(a, b, ctx, "A", "B");
    return {dispatch<NumericTypes>(
        a.dtype(),
        [&]<typename T>() {
          using C = compute_t<T>;
          if constexpr (std::is_same_v<C, double>) {
            if (!fmod_)
              ctx.fail(
                  "attribute 'fmod' is 0 for floating input type {}; the spec requires "
                  "fmod=1 for floating types",
                  dtype_name(a.dtype()));
            return binary_elementwise<T, T>(a, b, [](C x, C y) { return std::fmod(x, y); });
          } else {
            // fmod=1: the remainder has the dividend's sign (C's %); fmod=0: the divisor's
            // sign, as NumPy's mod.
            const bool c_style = fmod_;
            return binary_elementwise<T, T>(a, b, [c_style](C x, C y) -> C {
              if (y == 0) fail("integer modulo by zero; the divisor B must have no zeros");
              if constexpr (std::is_signed_v<C>)
                if (y == -1) return 0;  // avoids INT64_MIN % -1, which traps
              C r = x % y;
              if constexpr (std::is_signed_v<C>)
                if (!c_style && r != 0 && ((r < 0) != (y < 0))) r += y;
              return r;
            });
          }
        },
        "input A")};
  }

 private:
  bool fmod_;
};
// Versions 10, 13 (bfloat16).
PARITY_REF_OP("", "Mod", 10, kOpsetMax, Mod);

// Sum, Mean, Min, Max over any number of inputs broadcast together. Sum and Mean accumulate
// every input in double (int64 for integers) and round once; Min and Max propagate NaN, as
// the spec's reference (NumPy's minimum/maximum) does.
enum class Variadic { kSum, kMean, kMin, kMax };

template <Variadic kOp, typename T>
Tensor variadic(const std::vector<const Tensor*>& inputs) {
  using C = compute_t<T>;
  constexpr bool kFloat = std::is_same_v<C, double>;
  std::vector<Shape> shapes;
  for (const Tensor* t : inputs) shapes.push_back(t->shape());
  Shape out_shape = broadcast_shapes(shapes);
  Tensor y = uninitialized_tensor(dtype_of<T>, out_shape);
  T* dst = y.data<T>();
  std::vector<const T*> src;
  for (const Tensor* t : inputs) src.push_back(t->data<T>());
  const double count = static_cast<double>(inputs.size());
  Broadcast bc(out_shape, shapes);
  for_each_broadcast_run(bc,
                         [&](int64_t o, const int64_t* offs, const int64_t* steps, int64_t len) {
                           for (int64_t i = 0; i < len; ++i) {
                             C acc = widen(src[0][offs[0] + i * steps[0]]);
                             for (size_t k = 1; k < src.size(); ++k) {
                               const C v = widen(src[k][offs[k] + i * steps[k]]);
                               if constexpr (kOp == Variadic::kSum || kOp == Variadic::kMean) {
                                 acc += v;
                               } else if constexpr (kOp == Variadic::kMin) {
                                 if (v < acc) acc = v;
                                 if constexpr (kFloat)
                                   if (std::isnan(v)) acc = v;
                               } else {
                                 if (v > acc) acc = v;
                                 if constexpr (kFloat)
                                   if (std::isnan(v)) acc = v;
                               }
                             }
                             if constexpr (kOp == Variadic::kMean) acc /= count;
                             dst[o + i] = narrow<T>(acc);
                           }
                         });
  return y;
}

template <Variadic kOp, typename Types>
class VariadicOp : public Kernel {
 public:
  explicit VariadicOp(const OpContext&) {}
  Outputs run(const Inputs& in, RunContext& ctx) override {
    std::vector<const Tensor*> inputs = variadic_inputs(in, ctx);
    return {dispatch<Types>(
        inputs[0]->dtype(), [&]<typename T>() { return variadic<kOp, T>(inputs); }, "the inputs")};
  }
};
using Sum = VariadicOp<Variadic::kSum, FloatTypes>;
using Mean = VariadicOp<Variadic::kMean, FloatTypes>;
using Min = VariadicOp<Variadic::kMin, NumericTypes>;
using Max = VariadicOp<Variadic::kMax, NumericTypes>;
// Versions 1, 6, 8 (NumPy broadcasting; before it the shapes were equal, which broadcasting
// accepts unchanged), 12 (Min/Max take integers), 13 (bfloat16).
PARITY_REF_OP("", "Sum", 1, kOpsetMax, Sum);
PARITY_REF_OP("", "Mean", 1, kOpsetMax, Mean);
PARITY_REF_OP("", "Min", 1, kOpsetMax, Min);
PARITY_REF_OP("", "Max", 1, kOpsetMax, Max);

}  // namespace
}  // namespace parity::ref
