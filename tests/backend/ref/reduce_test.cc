// Reduce* kernels where the ONNX node tests do not reach: axes as an input at opset 18,
// noop_with_empty_axes, reductions over empty sets, integer wrapping and truncation, NaN and
// bool, float16/bfloat16, and the same bits on any thread count. Expected values come from
// NumPy at test time.
#include <cstring>

#include <gtest/gtest.h>

#include "backend/ref/ops/vector_math.h"
#include "core/thread_pool.h"
#include "ref_test_util.h"

namespace parity::testing {
namespace {

// The ten reductions, as ONNX op names and NumPy formulas over float64 (`a` is an axis tuple).
constexpr const char* kNumpyReductions = R"(
def lse(x, a, k):
    m = np.max(x, axis=a, keepdims=True)
    r = m + np.log(np.sum(np.exp(x - m), axis=a, keepdims=True))
    return r if k else np.squeeze(r, axis=a)
R = {
  'ReduceSum': lambda x, a, k: np.sum(x, axis=a, keepdims=k),
  'ReduceMean': lambda x, a, k: np.mean(x, axis=a, keepdims=k),
  'ReduceMax': lambda x, a, k: np.max(x, axis=a, keepdims=k),
  'ReduceMin': lambda x, a, k: np.min(x, axis=a, keepdims=k),
  'ReduceProd': lambda x, a, k: np.prod(x, axis=a, keepdims=k),
  'ReduceL1': lambda x, a, k: np.sum(np.abs(x), axis=a, keepdims=k),
  'ReduceL2': lambda x, a, k: np.sqrt(np.sum(x * x, axis=a, keepdims=k)),
  'ReduceLogSum': lambda x, a, k: np.log(np.sum(x, axis=a, keepdims=k)),
  'ReduceLogSumExp': lse,
  'ReduceSumSquare': lambda x, a, k: np.sum(x * x, axis=a, keepdims=k),
}
)";

const std::vector<std::string> kOps = {
    "ReduceSum", "ReduceMean", "ReduceMax",    "ReduceMin",       "ReduceProd",
    "ReduceL1",  "ReduceL2",   "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"};

TEST(ReduceKernels, TakeAxesAsAnInputAtOpset18) {
  auto np = numpy_arrays(std::string(kNumpyReductions) + R"(
x = rng.rand(3, 4, 5).astype(np.float32) + 0.5
save('x', x)
save('axes', np.array([2, -3], np.int64))
X = x.astype(np.float64)
for name, f in R.items():
    save(name + '_k', f(X, (0, 2), True).astype(np.float32))
    save(name + '_d', f(X, (0, 2), False).astype(np.float32))
)");
  for (const std::string& op : kOps) {
    TensorMap out = run_text_model(fmt::format(R"(
      <ir_version: 8, opset_import: ["" : 18]>
      g (float[3,4,5] x, int64[2] axes) => (float k, float d) {{
        k = {0}(x, axes)
        d = {0}<keepdims = 0>(x, axes)
      }}
    )",
                                               op),
                                   feed_of(np, {"x", "axes"}));
    EXPECT_TRUE(tensors_close(out.at("k"), np.at(op + "_k"), 1e-6, 1e-7)) << op;
    EXPECT_TRUE(tensors_close(out.at("d"), np.at(op + "_d"), 1e-6, 1e-7)) << op;
  }
}

TEST(ReduceKernels, AxesAttributeBeforeOpset18AndReduceSumInputFrom13) {
  auto np = numpy_arrays(std::string(kNumpyReductions) + R"(
x = rng.rand(2, 3, 4).astype(np.float32) + 0.5
save('x', x); save('axes', np.array([1], np.int64))
X = x.astype(np.float64)
save('l2', R['ReduceL2'](X, (1,), True).astype(np.float32))
save('sum', R['ReduceSum'](X, (1,), False).astype(np.float32))
save('all', R['ReduceMean'](X, None, True).astype(np.float32))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3,4] x, int64[1] axes) => (float l2, float sum, float all) {
      l2 = ReduceL2<axes = [-2]>(x)
      sum = ReduceSum<keepdims = 0>(x, axes)
      all = ReduceMean(x)
    }
  )",
                                 feed_of(np, {"x", "axes"}));
  for (const char* n : {"l2", "sum", "all"})
    EXPECT_TRUE(tensors_close(out.at(n), np.at(n), 1e-6, 1e-7)) << n;
}

TEST(ReduceKernels, EmptyAxesReduceEverythingOrNothingWithNoop) {
  // With noop_with_empty_axes each element is reduced alone: ReduceSumSquare squares,
  // ReduceL1 takes |x|, ReduceSum passes x through (ONNX's reference implementation).
  auto np = numpy_arrays(R"(
x = (rng.randn(3, 4) * 2).astype(np.float32)
save('x', x); save('axes', np.zeros(0, np.int64))
X = x.astype(np.float64)
save('sq', np.square(X).astype(np.float32)); save('l1', np.abs(X).astype(np.float32))
save('same', x); save('everything', np.sum(X, keepdims=True).astype(np.float32))
save('everything_sq', np.sum(X * X).astype(np.float32).reshape(1))  # saved 1-D, checked 0-D
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[3,4] x, int64[0] axes)
      => (float sq, float l1, float same, float everything, float everything_sq) {
      sq = ReduceSumSquare<noop_with_empty_axes = 1>(x, axes)
      l1 = ReduceL1<noop_with_empty_axes = 1>(x)
      same = ReduceMax<noop_with_empty_axes = 1>(x, axes)
      everything = ReduceSum(x, axes)
      everything_sq = ReduceSumSquare<keepdims = 0>(x)
    }
  )",
                                 feed_of(np, {"x", "axes"}));
  for (const char* n : {"sq", "l1", "same", "everything"})
    EXPECT_TRUE(tensors_close(out.at(n), np.at(n), 1e-6, 0)) << n;
  EXPECT_EQ(out.at("everything_sq").shape(), Shape{});
  EXPECT_TRUE(
      tensors_close(out.at("everything_sq").reshaped({1}), np.at("everything_sq"), 1e-6, 0));
}

TEST(ReduceKernels, EmptySetsGiveTheSpecifiedIdentities) {
  // NumPy's identities of the ufuncs (with -inf/+inf as the initial maximum/minimum, which the
  // specification prescribes and NumPy's max refuses to guess).
  auto np = numpy_arrays(R"(
x = np.zeros((2, 0, 3), np.float32)
save('x', x)
save('sum', np.add.reduce(x, axis=1)); save('prod', np.multiply.reduce(x, axis=1))
save('max', np.maximum.reduce(x, axis=1, initial=-np.inf))
save('min', np.minimum.reduce(x, axis=1, initial=np.inf))
with np.errstate(all='ignore'):
    save('mean', np.mean(x, axis=1)); save('logsum', np.log(np.add.reduce(x, axis=1)))
    save('lse', np.log(np.add.reduce(np.exp(x), axis=1)))
save('l2', np.sqrt(np.add.reduce(x * x, axis=1)))
i = np.zeros((0, 4), np.int32); save('i', i)
save('imax', np.maximum.reduce(i, axis=0, initial=np.iinfo(np.int32).min))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 7, opset_import: ["" : 12]>
    g (float[2,0,3] x, int32[0,4] i)
      => (float sum, float prod, float max, float min, float mean, float logsum, float lse,
          float l2, int32 imax) {
      sum = ReduceSum<axes = [1], keepdims = 0>(x)
      prod = ReduceProd<axes = [1], keepdims = 0>(x)
      max = ReduceMax<axes = [1], keepdims = 0>(x)
      min = ReduceMin<axes = [1], keepdims = 0>(x)
      mean = ReduceMean<axes = [1], keepdims = 0>(x)
      logsum = ReduceLogSum<axes = [1], keepdims = 0>(x)
      lse = ReduceLogSumExp<axes = [1], keepdims = 0>(x)
      l2 = ReduceL2<axes = [1], keepdims = 0>(x)
      imax = ReduceMax<axes = [0], keepdims = 0>(i)
    }
  )",
                                 feed_of(np, {"x", "i"}));
  for (const char* n : {"sum", "prod", "max", "min", "mean", "logsum", "lse", "l2", "imax"})
    EXPECT_TRUE(tensors_identical(out.at(n), np.at(n))) << n;
}

// Sums and products wrap like NumPy's in the input type; the mean is the exact mean truncated
// toward zero (NumPy's mean with dtype=int32 would wrap its sum first: not a mean).
TEST(ReduceKernels, IntegersWrapAndMeansTruncate) {
  auto np = numpy_arrays(R"(
x = rng.randint(-2**31, 2**31 - 1, size=(4, 6), dtype=np.int64).astype(np.int32)
save('x', x)
save('sum', np.sum(x, axis=1, dtype=np.int32)); save('prod', np.prod(x, axis=0, dtype=np.int32))
save('sq', np.sum(x * x, axis=1, dtype=np.int32))
s = np.sum(x.astype(np.int64), axis=1)  # exact; the mean truncates toward zero
save('mean', (np.sign(s) * (np.abs(s) // 6)).astype(np.int32))
u = rng.randint(0, 2**32, size=(5, 3), dtype=np.uint64).astype(np.uint32)
save('u', u); save('umin', np.min(u, axis=0)); save('usum', np.sum(u, axis=0, dtype=np.uint32))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (int32[4,6] x, uint32[5,3] u)
      => (int32 sum, int32 prod, int32 sq, int32 mean, uint32 umin, uint32 usum) {
      one = Constant<value = int64[1] {1}>()
      zero = Constant<value = int64[1] {0}>()
      sum = ReduceSum<keepdims = 0>(x, one)
      prod = ReduceProd<axes = [0], keepdims = 0>(x)
      sq = ReduceSumSquare<axes = [1], keepdims = 0>(x)
      mean = ReduceMean<axes = [1], keepdims = 0>(x)
      umin = ReduceMin<axes = [0], keepdims = 0>(u)
      usum = ReduceSum<keepdims = 0>(u, zero)
    }
  )",
                                 feed_of(np, {"x", "u"}));
  for (const char* n : {"sum", "prod", "sq", "mean", "umin", "usum"})
    EXPECT_TRUE(tensors_identical(out.at(n), np.at(n))) << n;
}

TEST(ReduceKernels, MaxPropagatesNaNAndBoolReducesAtOpset20) {
  auto np = numpy_arrays(R"(
x = rng.randn(3, 5).astype(np.float32); x[1, 2] = np.nan
save('x', x); save('max', np.max(x, axis=1)); save('min', np.min(x, axis=1))
b = rng.rand(4, 3) > 0.5; b[0] = False; b[1] = True
save('b', b); save('any', np.any(b, axis=1)); save('all', np.all(b, axis=1))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 20]>
    g (float[3,5] x, bool[4,3] b) => (float max, float min, bool any, bool all) {
      one = Constant<value = int64[1] {1}>()
      max = ReduceMax<keepdims = 0>(x, one)
      min = ReduceMin<keepdims = 0>(x, one)
      any = ReduceMax<keepdims = 0>(b, one)
      all = ReduceMin<keepdims = 0>(b, one)
    }
  )",
                                 feed_of(np, {"x", "b"}));
  for (const char* n : {"max", "min", "any", "all"})
    EXPECT_TRUE(tensors_identical(out.at(n), np.at(n))) << n;
}

// A uint16 array from NumPy holding bfloat16 bits, as a bfloat16 tensor.
Tensor as_bfloat16(const Tensor& bits) {
  Tensor t(DataType::kBFloat16, bits.shape());
  std::memcpy(t.raw_data(), bits.raw_data(), bits.nbytes());
  return t;
}

TEST(ReduceKernels, HalfPrecisionInputsRoundOnceFromDouble) {
  // float16: the float64 result rounded by NumPy must match exactly. bfloat16 (which NumPy
  // lacks): inputs are float32 values with 8-bit mantissas, and the float64 result is rounded
  // to bfloat16 bits in NumPy (ties to even), through float32 only where that is exact.
  auto np = numpy_arrays(R"(
h = (rng.randn(6, 40) * 4).astype(np.float16)
save('h', h); H = h.astype(np.float64)
save('hsum', np.sum(H, axis=1).astype(np.float16))
save('hmean', np.mean(H, axis=1).astype(np.float16))
save('hl2', np.sqrt(np.sum(H * H, axis=1)).astype(np.float16))
def to_bf16_bits(v):
    # round float64 to bfloat16 (nearest, ties to even) without double rounding
    v = np.asarray(v, np.float64)
    f = v.astype(np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    lo = (u >> 16) << 16; hi = lo + (1 << 16)
    flo = lo.astype(np.uint32).view(np.float32).astype(np.float64)
    fhi = hi.astype(np.uint32).view(np.float32).astype(np.float64)
    dlo, dhi = np.abs(v - flo), np.abs(fhi - v)
    pick_hi = (dhi < dlo) | ((dhi == dlo) & (((lo >> 16) & 1) == 1))
    return np.where(pick_hi, hi >> 16, lo >> 16).astype(np.uint16)
b32 = ((rng.randn(5, 30) * 3).astype(np.float32).view(np.uint32) & 0xFFFF0000).view(np.float32)
save('b', (b32.view(np.uint32) >> 16).astype(np.uint16))
B = b32.astype(np.float64)
save('bsum', to_bf16_bits(np.sum(B, axis=1)))
save('bmean', to_bf16_bits(np.mean(B, axis=1)))
)");
  TensorMap feed;
  feed.set("h", np.at("h"));
  feed.set("b", as_bfloat16(np.at("b")));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (float16[6,40] h, bfloat16[5,30] b)
      => (float16 hsum, float16 hmean, float16 hl2, bfloat16 bsum, bfloat16 bmean) {
      one = Constant<value = int64[1] {1}>()
      hsum = ReduceSum<keepdims = 0>(h, one)
      hmean = ReduceMean<keepdims = 0>(h, one)
      hl2 = ReduceL2<keepdims = 0>(h, one)
      bsum = ReduceSum<keepdims = 0>(b, one)
      bmean = ReduceMean<keepdims = 0>(b, one)
    }
  )",
                                 feed);
  for (const char* n : {"hsum", "hmean", "hl2"})
    EXPECT_TRUE(tensors_identical(out.at(n), np.at(n))) << n;
  for (const char* n : {"bsum", "bmean"})
    EXPECT_TRUE(tensors_identical(out.at(n), as_bfloat16(np.at(n)))) << n;
}

TEST(ReduceKernels, ReduceSumGivesTheSameBitsOnAnyThreadCount) {
  auto np = numpy_arrays(R"(
save('x', rng.randn(64, 300, 40).astype(np.float32))
)");
  auto run = [&](const char* axes) {
    return run_text_model(
               fmt::format(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[64,300,40] x) => (float y) {{
        axes = Constant<value = int64[{}] {{{}}}>()
        y = ReduceSum<keepdims = 0>(x, axes)
      }}
    )",
                           std::string(axes).find(',') == std::string::npos ? 1 : 2, axes),
               feed_of(np, {"x"}))
        .at("y");
  };
  for (const char* axes : {"1", "0, 2", "2"}) {
    set_num_threads(1);
    Tensor one = run(axes);
    set_num_threads(4);
    Tensor four = run(axes);
    set_num_threads(0);
    EXPECT_TRUE(tensors_identical(four, one)) << axes;
  }
}

// ReduceSum and ReduceMean of float rows take a guarded fast sum (reduce.cc, guarded_sum); the
// bits must stay those of the sequential double sum, rounded once, computed here by Python's
// float loop (NumPy's pairwise sum is another order). Rows: random ones longer than a chunk,
// a full reduction split over chunks, a sum at a float midpoint where the exact sum lies
// above it but the sequential one does not, cancellation, NaN, infinities, denormals, negative
// zeros, float overflow, and the shortest row the fast path takes (64) and one below it.
TEST(ReduceKernels, FloatSumsAndMeansKeepTheSequentialDoubleSumBits) {
  auto np = numpy_arrays(R"(
def seq(rows, mean):
    out = []
    for row in rows.reshape(-1, rows.shape[-1]):
        s = 0.0
        for v in row.astype(np.float64).tolist():
            s += v
        out.append(s / len(row) if mean else s)
    with np.errstate(over='ignore'):
        return np.array(out, dtype=np.float64).astype(np.float32).reshape(rows.shape[:-1])
big = (rng.randn(5, 70000) * 100 + 3).astype(np.float32)
flat = (rng.rand(300000) * 8 - 4).astype(np.float32)
e = np.zeros((10, 1030), dtype=np.float32)
e[0, 0] = 1; e[0, 1] = 2.0**-24; e[0, 2:] = 2.0**-60
e[1, :3] = [1e30, 1, -1e30]; e[1, 3:] = rng.randn(1027)
e[2] = rng.randn(1030); e[2, 500] = np.nan
e[3] = rng.randn(1030); e[3, 7] = np.inf
e[4, 1] = np.inf; e[4, 9] = -np.inf
e[5] = 1e-45; e[5, ::2] = -1e-45 * 3
e[6] = -0.0
e[7] = 3e38
e[8] = rng.rand(1030).astype(np.float32) * 2.0**-20 + 1
e[9] = rng.randn(1030) * 1e-3; e[9, 0] = 2.0**20
s64 = rng.randn(3, 64).astype(np.float32); s63 = rng.randn(3, 63).astype(np.float32)
for name, x in [('big', big), ('flat', flat[None]), ('e', e), ('s64', s64), ('s63', s63)]:
    save(name, x); save(name + '_sum', seq(x, False)); save(name + '_mean', seq(x, True))
save('flat1', flat)
)");
  ref::vmath::Isa isas[] = {ref::vmath::Isa::kSse2, ref::vmath::Isa::kAvx2,
                            ref::vmath::Isa::kAvx512};
  for (ref::vmath::Isa isa : isas) {
    if (!ref::vmath::cpu_supports(isa)) continue;
    ref::vmath::force_isa(isa);
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      for (const char* name : {"big", "e", "s64", "s63"}) {
        const Tensor& x = np.at(name);
        const std::string shape = fmt::format("{},{}", x.shape()[0], x.shape()[1]);
        TensorMap feed;
        feed.set("x", x);
        TensorMap out = run_text_model(fmt::format(R"(
          <ir_version: 9, opset_import: ["" : 18]>
          g (float[{0}] x) => (float[{1}] s, float[{1}] m) {{
            axes = Constant<value = int64[1] {{-1}}>()
            s = ReduceSum<keepdims = 0>(x, axes)
            m = ReduceMean<keepdims = 0>(x, axes)
          }}
        )",
                                                   shape, x.shape()[0]),
                                       feed);
        EXPECT_TRUE(tensors_identical(out.at("s"), np.at(std::string(name) + "_sum")))
            << name << " on " << ref::vmath::isa_name(isa) << ", " << threads << " threads";
        EXPECT_TRUE(tensors_identical(out.at("m"), np.at(std::string(name) + "_mean")))
            << name << " on " << ref::vmath::isa_name(isa) << ", " << threads << " threads";
      }
      // The full reduction (no axes: every axis), split over chunks and threads.
      TensorMap feed;
      feed.set("x", np.at("flat1"));
      TensorMap out = run_text_model(R"(
        <ir_version: 9, opset_import: ["" : 18]>
        g (float[300000] x) => (float s, float m) {
          s = ReduceSum<keepdims = 0>(x)
          m = ReduceMean<keepdims = 0>(x)
        }
      )",
                                     feed);
      EXPECT_TRUE(tensors_identical(out.at("s"), np.at("flat_sum").reshaped(Shape{})))
          << ref::vmath::isa_name(isa) << ", " << threads << " threads";
      EXPECT_TRUE(tensors_identical(out.at("m"), np.at("flat_mean").reshaped(Shape{})))
          << ref::vmath::isa_name(isa) << ", " << threads << " threads";
    }
  }
  ref::vmath::force_isa(ref::vmath::Isa::kAuto);
  set_num_threads(0);
}

// Reductions over leading axes (the kept dims contiguous) accumulate row by row in blocks of
// outputs (reduce.cc, column_reduce); each output must combine its inputs in the same order as
// before, so every kind gives the bits of the same reduction over the transposed input's last
// axis, and ReduceSum the bits of Python's sequential double sum. NaNs, infinities and
// integers included; 1 and 2 threads.
TEST(ReduceKernels, LeadingAxisReductionsKeepEachOutputsOrder) {
  auto np = numpy_arrays(R"(
x = (rng.randn(37, 300) * 50).astype(np.float32)
x[3, 7] = np.nan; x[5, 8] = np.inf; x[6, 8] = -np.inf; x[:, 9] = 2.0**-24; x[0, 9] = 1
s = np.zeros(300)
for k in range(37):
    s = s + x[k].astype(np.float64)
save('x', x); save('xd', x.astype(np.float64) * 3.5); save('xi', (x[:, 10:] * 7).astype(np.int32))
save('s', s.astype(np.float32))
)");
  const std::pair<const char*, const char*> inputs[] = {
      {"x", "float"}, {"xd", "double"}, {"xi", "int32"}};
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (const auto& [name, type] : inputs) {
      const Tensor& x = np.at(name);
      const int64_t rows = x.shape()[0], cols = x.shape()[1];
      for (const std::string& op : kOps) {
        if (std::string(type) == "int32" &&
            (op == "ReduceL2" || op == "ReduceLogSum" || op == "ReduceLogSumExp"))
          continue;  // float-only kinds
        TensorMap feed;
        feed.set("x", x);
        TensorMap out = run_text_model(fmt::format(R"(
          <ir_version: 8, opset_import: ["" : 11]>
          g ({0}[{1},{2}] x) => ({0}[{2}] a, {0}[{2}] b) {{
            t = Transpose(x)
            a = {3}<axes = [0], keepdims = 0>(x)
            b = {3}<axes = [1], keepdims = 0>(t)
          }}
        )",
                                                   type, rows, cols, op),
                                       feed);
        EXPECT_TRUE(tensors_identical(out.at("a"), out.at("b")))
            << op << " of " << type << ", " << threads << " threads";
        if (op == "ReduceSum" && std::string(name) == "x") {
          EXPECT_TRUE(tensors_identical(out.at("a"), np.at("s")));
        }
      }
    }
  }
  set_num_threads(0);
}

// Reduced dims in the middle (kept dims before and after, a kept dim of length 1 among the
// reduced ones): the blocked path over each leading index must give, for every kind, the bits
// of the same reduction over the trailing axes of the transposed input (the row path: each
// output's elements in the same order).
TEST(ReduceKernels, MiddleAxisReductionsKeepEachOutputsOrder) {
  auto np = numpy_arrays(R"(
x = (rng.randn(5, 6, 1, 7, 300) * 50).astype(np.float32)
x[1, 2, 0, 3, 7] = np.nan; x[2, 0, 0, 1, 8] = np.inf; x[2, 1, 0, 1, 8] = -np.inf
x[:, :, 0, :, 9] = 2.0**-24; x[0, 0, 0, 0, 9] = 1
save('x', x); save('xd', x.astype(np.float64) * 3.5); save('xi', (x[..., 10:] * 7).astype(np.int32))
)");
  const std::pair<const char*, const char*> inputs[] = {
      {"x", "float"}, {"xd", "double"}, {"xi", "int32"}};
  for (int threads : {1, 2, 4}) {
    set_num_threads(threads);
    for (const auto& [name, type] : inputs) {
      const Tensor& x = np.at(name);
      for (const std::string& op : kOps) {
        if (std::string(type) == "int32" &&
            (op == "ReduceL2" || op == "ReduceLogSum" || op == "ReduceLogSumExp"))
          continue;  // float-only kinds
        TensorMap feed;
        feed.set("x", x);
        TensorMap out = run_text_model(fmt::format(R"(
          <ir_version: 8, opset_import: ["" : 11]>
          g ({0}[5,6,1,7,{1}] x) => ({0} a, {0} b, {0} c, {0} d) {{
            a = {2}<axes = [1, 3], keepdims = 0>(x)
            t = Transpose<perm = [0, 2, 4, 1, 3]>(x)
            b = {2}<axes = [3, 4], keepdims = 0>(t)
            c = {2}<axes = [3], keepdims = 1>(x)
            u = Transpose<perm = [0, 1, 2, 4, 3]>(x)
            d0 = {2}<axes = [4], keepdims = 1>(u)
            d = Transpose<perm = [0, 1, 2, 4, 3]>(d0)
          }}
        )",
                                                   type, x.shape()[4], op),
                                       feed);
        EXPECT_TRUE(tensors_identical(out.at("a"), out.at("b")))
            << op << " of " << type << " over axes 1, 3, " << threads << " threads";
        EXPECT_TRUE(tensors_identical(out.at("c"), out.at("d")))
            << op << " of " << type << " over axis 3, " << threads << " threads";
      }
    }
  }
  set_num_threads(0);
}

TEST(ReduceKernels, RefuseBadAxesAndTypesNamingTheNode) {
  auto np = numpy_arrays("save('x', np.ones((2, 3), np.float32))\n");
  std::string e = error_of([&] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[2,3] x) => (float y) {
        y = ReduceMean<axes = [2]>(x)
      }
    )",
                   feed_of(np, {"x"}));
  });
  EXPECT_NE(e.find("ReduceMean"), std::string::npos) << e;
  EXPECT_NE(e.find("axes"), std::string::npos) << e;
  e = error_of([&] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[2,3] x) => (float y) {
        y = ReduceProd<axes = [0, 0]>(x)
      }
    )",
                   feed_of(np, {"x"}));
  });
  EXPECT_NE(e.find("ReduceProd"), std::string::npos) << e;
  e = error_of([&] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 18]>
      g (float[2,3] x) => (float y) {
        y = ReduceMax<axes = [0]>(x)
      }
    )",
                   feed_of(np, {"x"}));
  });
  EXPECT_NE(e.find("an input from opset 18"), std::string::npos) << e;
}

}  // namespace
}  // namespace parity::testing
