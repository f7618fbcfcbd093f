// Reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
// ReduceLogSum, ReduceLogSumExp, ReduceSumSquare.
//
// Each output element combines its input elements in row-major order of the reduced axes, in
// one chunk of parallel_for, so the bits do not depend on the thread count. Floating values
// accumulate in double and round once; integers accumulate in 64 bits and wrap like NumPy's
// sums when narrowed.
//
// Axes come from the `axes` attribute, or from the optional second input (ReduceSum from opset
// 13, the others from 18). With no axes, every axis is reduced, unless noop_with_empty_axes is
// set: then nothing is reduced and each output element is the reduction of its one input
// element (so ReduceSumSquare squares and ReduceL1 takes absolute values, as ONNX's reference
// implementation does; for Sum, Mean, Max and Min that is the input itself).
//
// Reducing an empty set of values gives the ONNX specification's identities: 0 for sums and
// norms, 1 for products, -inf (or the type's lowest value) for Max, +inf (or its highest) for
// Min, -inf for LogSum and LogSumExp; a mean of nothing is 0/0 = NaN (0 for integers).
#include <cmath>
#include <limits>

#include "backend/ref/ops/kernel_util.h"
#include "backend/ref/ops/vector_math.h"

namespace parity::ref {
namespace {

// Rows at least this long try guarded_sum first.
constexpr int64_t kGuardedSumMin = 64;
// guarded_sum's chunks: the unit of its split over threads, fixed so the bound is too.
constexpr int64_t kSumChunk = int64_t{1} << 15;

// float(S / divisor) for the sum S of x[0..n) accumulated in double in order (S = ((0 + x0) +
// x1) + ...: ReduceSum's and ReduceMean's value), computed without that order's serial chain:
// a sum F in 8 interleaved lanes per chunk of kSumChunk, the chunks added in order. Both F and S
// are within a bound of the exact sum X: each addition errs by at most u |its result| (u =
// 2^-53), so |F - X| <= u P with P the sum of |F's running sums| (unordered_sum's partials,
// and the chunks' running total), and |S - X| <= u sum_k |S_k| over S's running sums, where
// S_k (prefix k) is within u n max|S_k| of exact prefix k, itself at most |the chunk's start
// offset| + the lanes' |running sums| at the two steps around k (hence 16 times partials for
// the 8 prefixes per step). So |F - S| <= tol below; when float((F - tol) / divisor) and
// float((F + tol) / divisor) are the same float, S's value is that float too, since rounding
// and division are monotone. False (and `out` untouched) when they differ, or F or tol is not
// finite.
bool guarded_sum(const float* x, int64_t n, double divisor, bool split, float& out) {
  const int64_t chunks = (n + kSumChunk - 1) / kSumChunk;
  // Short rows (the common case: one chunk) keep their chunk results on the stack.
  constexpr int64_t kOnStack = 8;
  double stack_sums[kOnStack], stack_partials[kOnStack];
  std::vector<double> heap_sums, heap_partials;
  double* sums = stack_sums;
  double* partials = stack_partials;
  if (chunks > kOnStack) {
    heap_sums.resize(chunks), heap_partials.resize(chunks);
    sums = heap_sums.data(), partials = heap_partials.data();
  }
  auto run = [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const int64_t start = c * kSumChunk;
      sums[c] = vmath::unordered_sum(x + start, std::min(kSumChunk, n - start), &partials[c]);
    }
  };
  if (split)
    parallel_for(chunks, 1, run);
  else
    run(0, chunks);
  constexpr double u = 0x1p-53;
  double f = 0, p = 0, q = 0;
  for (int64_t c = 0; c < chunks; ++c) {
    const double len = static_cast<double>(std::min(kSumChunk, n - c * kSumChunk));
    q += len * std::fabs(f) + 16 * partials[c];
    f += sums[c];
    p += partials[c] + std::fabs(f);
  }
  const double fast_error = u * p;
  q += static_cast<double>(n) * fast_error;
  // n u < 2^-11 for any n here, so max|S_k| and sum_k |S_k| exceed their exact counterparts
  // by less than the factor (1 + 2^-10).
  const double seq_error = u * (1 + 0x1p-10) * q;
  // Doubled, and widened by 2u |F|, to cover the roundings of computing tol and F -+ tol.
  const double tol = 2 * (fast_error + seq_error) + 2 * u * std::fabs(f);
  const double lo = (f - tol) / divisor, hi = (f + tol) / divisor;
  if (!std::isfinite(lo) || !std::isfinite(hi)) return false;
  const float flo = static_cast<float>(lo), fhi = static_cast<float>(hi);
  if (vmath::bits_of(flo) != vmath::bits_of(fhi)) return false;
  out = flo;
  return true;
}

// True when the inputs of each output element are one run of consecutive elements (every
// reduced dim longer than 1 comes after every kept one), so output o reduces x[o n, (o + 1) n).
bool rows_contiguous(const Shape& shape, const std::vector<int64_t>& axes) {
  std::vector<bool> reduced(shape.size(), axes.empty());
  for (int64_t a : axes) reduced[a] = true;
  bool seen_reduced = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (reduced[d])
      seen_reduced = true;
    else if (seen_reduced)
      return false;
  }
  return true;
}

// For the layout "kept dims, one run of reduced dims, kept dims" (dims of length 1 anywhere):
// output o = p inner + i then reduces x[(p count + k) inner + i] for k = 0, 1, ..., count - 1,
// in that order, which is reduce()'s order. Returns inner, the product of the kept dims after
// the run (the number of outputs when every kept dim comes first), or 0 when the reduced
// dims longer than 1 are not one run.
int64_t inner_after_reduced_run(const Shape& shape, const std::vector<int64_t>& axes) {
  std::vector<bool> reduced(shape.size(), axes.empty());
  for (int64_t a : axes) reduced[a] = true;
  int first = -1, last = -1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (reduced[d] && shape[d] > 1) {
      if (first < 0) first = static_cast<int>(d);
      last = static_cast<int>(d);
    }
  int64_t inner = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    const bool inside = static_cast<int>(d) > first && static_cast<int>(d) < last;
    if (inside && !reduced[d] && shape[d] > 1) return 0;
    if (static_cast<int>(d) > last) inner *= shape[d];
  }
  return inner;
}

// Outputs per block of column_reduce: their accumulators stay in L1 while the rows stream by.
constexpr int64_t kColumnBlock = 256;

// reduce() for the layouts of inner_after_reduced_run (inner > 1): each block of consecutive
// outputs with the same p accumulates row by row (k), reading the input in its own order
// instead of one strided column per output. Every output still combines its inputs in the
// same sequence, so the bits are reduce()'s; a chunk of outputs splits at p's boundaries only
// into blocks, never into parts of one output.
template <typename T, typename Acc, typename Combine, typename Finish>
Tensor column_reduce(const Tensor& x, const Reduction& r, int64_t inner, Acc init, Combine combine,
                     Finish finish) {
  Tensor y = uninitialized_tensor(x.dtype(), r.out_shape());
  const T* src = x.data<T>();
  T* dst = y.data<T>();
  const int64_t m = r.num_outputs(), count = r.count();
  parallel_for(m, std::max(kColumnBlock, grain_for(count)), [&](int64_t b, int64_t e) {
    Acc acc[kColumnBlock];
    for (int64_t o0 = b; o0 < e;) {
      const int64_t p = o0 / inner, i0 = o0 % inner;
      const int64_t len = std::min({kColumnBlock, e - o0, inner - i0});
      std::fill(acc, acc + len, init);
      const T* slab = src + p * count * inner + i0;
      for (int64_t k = 0; k < count; ++k) {
        const T* row = slab + k * inner;
        for (int64_t i = 0; i < len; ++i) acc[i] = combine(acc[i], widen(row[i]));
      }
      for (int64_t i = 0; i < len; ++i) dst[o0 + i] = narrow<T>(finish(acc[i], count));
      o0 += len;
    }
  });
  return y;
}

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

using ReduceTypes = Concat<FloatTypes, TypeList<int32_t, int64_t, uint32_t, uint64_t>>;
// ReduceMax and ReduceMin also take 8-bit integers (opset 12) and bool (opset 20).
using ReduceMinMaxTypes = Concat<ReduceTypes, TypeList<int8_t, uint8_t, bool>>;

// How one kind of reduction starts, combines a value and finishes, for element type T. Floating
// types accumulate in double; integers in uint64 (two's complement, so signed sums wrap alike);
// bool only in Max/Min.
template <ReduceKind K, typename T>
struct ReduceOp {
  static constexpr bool kFloat = is_float_like_v<T>;
  using Acc = std::conditional_t<kFloat, double,
                                 std::conditional_t<std::is_same_v<T, bool>, bool, uint64_t>>;
  using Wide = compute_t<T>;  // what widen() gives

  static Acc init() {
    if constexpr (K == ReduceKind::kProd) return Acc(1);
    if constexpr (K == ReduceKind::kMax) {
      if constexpr (kFloat)
        return -std::numeric_limits<double>::infinity();
      else if constexpr (std::is_same_v<T, bool>)
        return false;
      else
        return static_cast<Acc>(static_cast<Wide>(std::numeric_limits<T>::lowest()));
    }
    if constexpr (K == ReduceKind::kMin) {
      if constexpr (kFloat)
        return std::numeric_limits<double>::infinity();
      else if constexpr (std::is_same_v<T, bool>)
        return true;
      else
        return static_cast<Acc>(static_cast<Wide>(std::numeric_limits<T>::max()));
    }
    return Acc(0);
  }

  static Acc combine(Acc acc, Wide v) {
    if constexpr (K == ReduceKind::kMax || K == ReduceKind::kMin) {
      if constexpr (std::is_same_v<T, bool>) {
        return K == ReduceKind::kMax ? (acc || v) : (acc && v);
      } else if constexpr (kFloat) {
        // NaN propagates, as in NumPy's maximum.reduce (the specification does not say).
        if (std::isnan(acc)) return acc;
        return (std::isnan(v) || (K == ReduceKind::kMax ? v > acc : v < acc)) ? v : acc;
      } else {
        const Wide a = static_cast<Wide>(acc);
        return static_cast<Acc>(K == ReduceKind::kMax ? std::max(a, v) : std::min(a, v));
      }
    } else if constexpr (K == ReduceKind::kProd) {
      return acc * static_cast<Acc>(v);
    } else if constexpr (K == ReduceKind::kL1) {
      if constexpr (std::is_unsigned_v<Wide>)
        return acc + v;
      else
        return v < 0 ? acc - static_cast<Acc>(v) : acc + static_cast<Acc>(v);
    } else if constexpr (K == ReduceKind::kL2 || K == ReduceKind::kSumSquare) {
      return acc + static_cast<Acc>(v) * static_cast<Acc>(v);
    } else {  // Sum, Mean, LogSum
      return acc + static_cast<Acc>(v);
    }
  }

  // The accumulator as the value it stands for: double, or the signed/unsigned integer.
  static auto value(Acc acc) {
    if constexpr (kFloat || std::is_same_v<T, bool>)
      return acc;
    else
      return static_cast<Wide>(acc);
  }

  // The result before rounding to T: double for floating types, else an integer (or bool).
  static auto finish(Acc acc, int64_t count) {
    if constexpr (K == ReduceKind::kMean) {
      if constexpr (kFloat) return acc / static_cast<double>(count);
      // NumPy's integer mean: true division, truncated by the cast back to the integer type.
      else
        return count == 0 ? Wide(0) : value(acc) / static_cast<Wide>(count);
    } else if constexpr (K == ReduceKind::kL2) {
      return std::sqrt(static_cast<double>(value(acc)));
    } else if constexpr (K == ReduceKind::kLogSum) {
      return std::log(static_cast<double>(value(acc)));
    } else {
      return value(acc);
    }
  }
};

// The axes of a reduction: the attribute (older opsets) or the optional input (newer ones).
class AxesSpec {
 public:
  AxesSpec(const OpContext& ctx, int64_t input_since)
      : from_input_(ctx.opset() >= input_since),
        noop_with_empty_axes_(from_input_ && ctx.attr_int("noop_with_empty_axes", 0) != 0) {
    if (!from_input_) {
      axes_ = ctx.attr_ints("axes", {});
    } else if (ctx.has_attr("axes")) {
      ctx.fail(
          "it has an 'axes' attribute, which opset {} does not define; axes are an input "
          "from opset {} on",
          ctx.opset(), input_since);
    } else if (ctx.has_input(1)) {
      if (const Tensor* t = ctx.constant_input(1)) axes_ = read_int64s(*t, "input 'axes'");
    } else {
      axes_ = std::vector<int64_t>{};
    }
  }

  std::vector<int64_t> get(const Inputs& in) const {
    if (axes_) return *axes_;
    const Tensor* t = optional_input(in, 1, "axes");
    return t ? read_int64s(*t, "input 'axes'") : std::vector<int64_t>{};
  }
  bool noop_with_empty_axes() const { return noop_with_empty_axes_; }

 private:
  bool from_input_;
  bool noop_with_empty_axes_;
  std::optional<std::vector<int64_t>> axes_;  // known before running
};

template <ReduceKind K>
class Reduce : public Kernel {
 public:
  explicit Reduce(const OpContext& ctx)
      : axes_(ctx, K == ReduceKind::kSum ? 13 : 18), keepdims_(ctx.attr_int("keepdims", 1) != 0) {}

  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "data");
    std::vector<int64_t> axes = normalize_axes(axes_.get(in), x.rank(), "axes");
    const bool noop = axes.empty() && axes_.noop_with_empty_axes();
    auto go = [&]<typename T>() { return noop ? each_alone<T>(x) : reduce_axes<T>(x, axes); };
    if constexpr (K == ReduceKind::kMax || K == ReduceKind::kMin)
      return {dispatch<ReduceMinMaxTypes>(x.dtype(), go, "input 'data'")};
    else
      return {dispatch<ReduceTypes>(x.dtype(), go, "input 'data'")};
  }

 private:
  template <typename T>
  Tensor reduce_axes(const Tensor& x, const std::vector<int64_t>& axes) const {
    Reduction r(x.shape(), axes, keepdims_);
    if constexpr (K == ReduceKind::kLogSumExp) {
      return log_sum_exp<T>(x, r);
    } else {
      if constexpr ((K == ReduceKind::kSum || K == ReduceKind::kMean) && std::is_same_v<T, float>) {
        if (r.count() >= kGuardedSumMin && rows_contiguous(x.shape(), axes))
          return guarded_sums(x, r);
      }
      using Op = ReduceOp<K, T>;
      const int64_t inner = inner_after_reduced_run(x.shape(), axes);
      if (r.num_outputs() > 1 && inner > 1)
        return column_reduce<T>(
            x, r, inner, Op::init(), [](auto acc, auto v) { return Op::combine(acc, v); },
            [](typename Op::Acc acc, int64_t n) { return Op::finish(acc, n); });
      return reduce<T, T>(x, r, Op::init(), &Op::combine,
                          [](typename Op::Acc acc, int64_t n) { return Op::finish(acc, n); });
    }
  }

  // ReduceSum and ReduceMean of float rows (rows_contiguous): each output through guarded_sum,
  // or, where that cannot prove the float, the sequential double sum that defines it (reduce's
  // order).
  static Tensor guarded_sums(const Tensor& x, const Reduction& r) {
    Tensor y = uninitialized_tensor(x.dtype(), r.out_shape());
    const float* src = x.data<float>();
    float* dst = y.data<float>();
    const int64_t n = r.count();
    const double divisor = K == ReduceKind::kMean ? static_cast<double>(n) : 1.0;
    auto one = [&](int64_t o, bool split) {
      const float* row = src + o * n;  // rows_contiguous
      if (guarded_sum(row, n, divisor, split, dst[o])) return;
      double acc = 0;
      for (int64_t i = 0; i < n; ++i) acc += static_cast<double>(row[i]);
      dst[o] = static_cast<float>(acc / divisor);
    };
    // One output (a full reduction) splits its row over the threads instead.
    if (r.num_outputs() == 1) {
      one(0, true);
    } else {
      parallel_for(r.num_outputs(), grain_for(n), [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) one(o, false);
      });
    }
    return y;
  }

  // log(sum(exp(x))) computed as m + log(sum(exp(x - m))) with m the maximum, so large values
  // do not overflow; in double for every type.
  template <typename T>
  static Tensor log_sum_exp(const Tensor& x, const Reduction& r) {
    Tensor y = uninitialized_tensor(x.dtype(), r.out_shape());
    const T* src = x.data<T>();
    T* dst = y.data<T>();
    parallel_for(r.num_outputs(), grain_for(2 * r.count()), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        double m = -std::numeric_limits<double>::infinity();
        r.for_each_input(o, [&](int64_t off) { m = std::max(m, to_double(src[off])); });
        if (!std::isfinite(m)) {  // empty, all -inf, or +inf somewhere: the plain formula holds
          double s = 0;
          r.for_each_input(o, [&](int64_t off) { s += std::exp(to_double(src[off])); });
          dst[o] = narrow<T>(std::log(s));
          continue;
        }
        double s = 0;
        r.for_each_input(o, [&](int64_t off) { s += std::exp(to_double(src[off]) - m); });
        dst[o] = narrow<T>(m + std::log(s));
      }
    });
    return y;
  }

  // noop_with_empty_axes: every element is reduced on its own.
  template <typename T>
  static Tensor each_alone(const Tensor& x) {
    Tensor y = uninitialized_tensor(x.dtype(), x.shape());
    const T* src = x.data<T>();
    T* dst = y.data<T>();
    parallel_for(x.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        if constexpr (K == ReduceKind::kLogSumExp) {
          dst[i] = narrow<T>(std::log(std::exp(to_double(src[i]))));
        } else {
          using Op = ReduceOp<K, T>;
          dst[i] = narrow<T>(Op::finish(Op::combine(Op::init(), widen(src[i])), 1));
        }
      }
    });
    return y;
  }

  AxesSpec axes_;
  bool keepdims_;
};

// Versions: 1, 11 (negative axes), 13 (ReduceSum: axes input; others: bfloat16), 18 (axes
// input), 20 (ReduceMax/Min: bool). The attribute/input switch is read from the opset.
PARITY_REF_OP("", "ReduceSum", 1, kOpsetMax, Reduce<ReduceKind::kSum>);
PARITY_REF_OP("", "ReduceMean", 1, kOpsetMax, Reduce<ReduceKind::kMean>);
PARITY_REF_OP("", "ReduceMax", 1, kOpsetMax, Reduce<ReduceKind::kMax>);
PARITY_REF_OP("", "ReduceMin", 1, kOpsetMax, Reduce<ReduceKind::kMin>);
PARITY_REF_OP("", "ReduceProd", 1, kOpsetMax, Reduce<ReduceKind::kProd>);
PARITY_REF_OP("", "ReduceL1", 1, kOpsetMax, Reduce<ReduceKind::kL1>);
PARITY_REF_OP("", "ReduceL2", 1, kOpsetMax, Reduce<ReduceKind::kL2>);
PARITY_REF_OP("", "ReduceLogSum", 1, kOpsetMax, Reduce<ReduceKind::kLogSum>);
PARITY_REF_OP("", "ReduceLogSumExp", 1, kOpsetMax, Reduce<ReduceKind::kLogSumExp>);
PARITY_REF_OP("", "ReduceSumSquare", 1, kOpsetMax, Reduce<ReduceKind::kSumSquare>);

}  // namespace
}  // namespace parity::ref
