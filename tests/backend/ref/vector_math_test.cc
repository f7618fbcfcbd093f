// The vector paths of the transcendental ops (ops/vector_math.h: SLEEF, and the kernels of
// vector_math_kernels.h) against the C library's values: every op on each code path this CPU
// runs (AVX-512F, AVX2, SSE2), on the edges (zeros, denormals, infinities, NaNs with payloads,
// each function's overflow and underflow thresholds and the floats beside them) and on random
// values over the whole exponent range. Expected
// values are the spec formulas evaluated by Python at test time with glibc's functions called
// through ctypes (Python's math module raises on domain errors instead of returning NaN), in
// float64, rounded once; they must match bit for bit, NaN payloads included.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "backend/ref/ops/vector_math.h"
#include "core/thread_pool.h"
#include "ref_test_util.h"

namespace parity::testing {
namespace {

using ref::vmath::Isa;

// Python: `libm` (glibc through ctypes), the unary formulas `F` by op name, the edge inputs
// `edges` (float32 bit patterns) and `rnd` (random floats over the exponent range).
constexpr const char* kPrelude = R"(
import ctypes, math, struct
libm = ctypes.CDLL('libm.so.6')
def cfn(name):
    f = getattr(libm, name); f.restype = ctypes.c_double; f.argtypes = [ctypes.c_double]
    return f
exp, expm1, log, log1p, tanh, erf = (cfn(n) for n in
                                     ['exp', 'expm1', 'log', 'log1p', 'tanh', 'erf'])
def softplus(v):
    return v + log1p(exp(-v)) if v > 0 else log1p(exp(v))
k = math.sqrt(2.0 / math.pi)
F = {n: cfn(n.lower()) for n in ['Exp', 'Log', 'Sin', 'Cos', 'Tan', 'Asin', 'Acos', 'Atan',
                                 'Sinh', 'Cosh', 'Asinh', 'Acosh', 'Atanh', 'Tanh', 'Erf']}
F['Sigmoid'] = lambda v: 1.0 / (1.0 + exp(-v))
F['Softplus'] = softplus
F['Mish'] = lambda v: v * tanh(softplus(v))
F['Gelu'] = lambda v: 0.5 * v * (1.0 + erf(v / math.sqrt(2.0)))
F['GeluTanh'] = lambda v: 0.5 * v * (1.0 + tanh(k * (v + 0.044715 * v * v * v)))
def f32(bits):
    return np.array(bits, dtype=np.uint32).view(np.float32)
# Thresholds of float results: exp overflow/underflow (88.72, -87.34 to denormal, -103.97 to 0),
# the same in double (709.78, -708.4, -745.13), tanh/erf/sigmoid reaching +-1 in float and
# double, sinh/cosh overflow, the domain ends of asin/acos/acosh/atanh, tan near pi/2, large
# trigonometric arguments, and the float limits.
base = [0.0, 1e-45, 1e-40, 1.1754942e-38, 1.17549435e-38, 1e-30, 1e-8, 1e-4, 0.5, 1.0, 2.0,
        88.72283, 88.7228394, 89.4159851, 87.3365479, 103.972076, 104.0, 709.78, 709.7827,
        708.4, 745.13, 745.2, 710.475, 9.01092, 19.0615, 3.9192059, 5.9215, 16.6355, 36.7368,
        1.5707964, 3.1415927, 1e10, 1e22, 1e30, 3.4028235e38, 0.99999994, 1.0000001, 6.0, 20.0]
vals = []
for b in base:
    for s in (1.0, -1.0):
        x = np.float32(s * b)
        vals += [np.nextafter(x, np.float32(-np.inf)), x, np.nextafter(x, np.float32(np.inf))]
edges = np.concatenate([np.array(vals, dtype=np.float32),
                        np.array([np.inf, -np.inf], dtype=np.float32),
                        # quiet NaNs with payloads, a negative one, a signalling one
                        f32([0x7fc00000, 0x7fc12345, 0xffc00001, 0x7f812345, 0xff800001])])
bits = rng.randint(0, 2**32, size=6000, dtype=np.uint64).astype(np.uint32)
rnd = f32(bits)
# The same values mostly in the functions' interesting ranges, uniformly in [-12, 12].
rnd = np.concatenate([rnd, (rng.rand(6000) * 24 - 12).astype(np.float32)])
def ev(name, x, dtype):
    f = F[name]
    return np.array([f(float(v)) for v in x.astype(np.float64)], dtype=np.float64).astype(dtype)
)";

const char* const kOps[] = {"Exp",  "Log",     "Sin",      "Cos",   "Tan",   "Asin",    "Acos",
                            "Atan", "Sinh",    "Cosh",     "Asinh", "Acosh", "Atanh",   "Tanh",
                            "Erf",  "Sigmoid", "Softplus", "Mish",  "Gelu",  "GeluTanh"};

// Element i of a float or float16 tensor, for messages.
double element(const Tensor& t, int64_t i) {
  if (t.dtype() == DataType::kFloat16) return ref::to_double(t.data<float16>()[i]);
  return t.data<float>()[i];
}

// The node for an op name of kOps.
std::string node_of(const std::string& op) {
  if (op == "GeluTanh") return "Gelu<approximate = \"tanh\">";
  return op;
}

// The code paths this CPU runs.
std::vector<Isa> isas() {
  std::vector<Isa> v{Isa::kSse2};
  for (Isa i : {Isa::kAvx2, Isa::kAvx512})
    if (ref::vmath::cpu_supports(i)) v.push_back(i);
  return v;
}

// Restores the automatic choice of code path and the thread count.
struct IsaScope {
  ~IsaScope() {
    ref::vmath::force_isa(Isa::kAuto);
    set_num_threads(0);
  }
};

// Runs `op` on x (of `type`, `n` elements) on every code path and 1 and 2 threads, and expects
// the bytes of `expected`.
void expect_op_bits(const std::string& op, const std::string& type, const Tensor& x,
                    const Tensor& expected) {
  IsaScope scope;
  const std::string n = std::to_string(x.numel());
  const std::string text = "<ir_version: 9, opset_import: [\"\" : 20]>\n g (" + type + "[" + n +
                           "] x) => (" + type + "[" + n + "] y) { y = " + node_of(op) + "(x) }";
  TensorMap feed;
  feed.set("x", x);
  for (Isa isa : isas())
    for (int threads : {1, 2}) {
      ref::vmath::force_isa(isa);
      set_num_threads(threads);
      const Tensor y = run_text_model(text, feed).at("y");
      ASSERT_EQ(y.nbytes(), expected.nbytes());
      // Bytes, not values: NaN payloads and the sign of zero count.
      if (std::memcmp(y.raw_data(), expected.raw_data(), y.nbytes()) == 0) continue;
      const auto* a = static_cast<const uint8_t*>(y.raw_data());
      const auto* b = static_cast<const uint8_t*>(expected.raw_data());
      const size_t es = y.nbytes() / static_cast<size_t>(y.numel());
      for (int64_t i = 0; i < y.numel(); ++i)
        if (std::memcmp(a + i * es, b + i * es, es) != 0) {
          ADD_FAILURE() << op << " " << type << " on " << ref::vmath::isa_name(isa) << ", "
                        << threads << " threads: element " << i << " (input " << element(x, i)
                        << ") is " << element(y, i) << ", glibc's formula gives "
                        << element(expected, i);
          return;
        }
    }
}

TEST(VectorMath, EveryOpMatchesGlibcBitForBitOnTheEdgesOnEveryCodePath) {
  std::string body = kPrelude;
  body += "save('edges', edges); save('rnd', rnd)\n";
  body += "save('h', edges.astype(np.float16)); save('hr', rnd.astype(np.float16))\n";
  for (const char* op : kOps) {
    const std::string o = op;
    body += "save('" + o + "_edges', ev('" + o + "', edges, np.float32))\n";
    body += "save('" + o + "_rnd', ev('" + o + "', rnd, np.float32))\n";
    body += "save('" + o + "_h', ev('" + o + "', edges.astype(np.float16), np.float16))\n";
    body += "save('" + o + "_hr', ev('" + o + "', rnd.astype(np.float16), np.float16))\n";
  }
  auto np = numpy_arrays(body);
  for (const char* op : kOps) {
    const std::string o = op;
    expect_op_bits(o, "float", np.at("edges"), np.at(o + "_edges"));
    expect_op_bits(o, "float", np.at("rnd"), np.at(o + "_rnd"));
    expect_op_bits(o, "float16", np.at("h"), np.at(o + "_h"));
    expect_op_bits(o, "float16", np.at("hr"), np.at(o + "_hr"));
  }
}

// Softmax and LogSoftmax rows with -inf (masked) entries, NaN, huge and tiny logits and long
// rows, along the last axis and along a middle one; the sums run in the kernel's order.
TEST(VectorMath, SoftmaxMatchesGlibcBitForBitOnEveryCodePath) {
  auto np = numpy_arrays(std::string(kPrelude) + R"(
x = (rng.randn(6, 3, 700) * 8).astype(np.float32)
x[0, 0, :350] = -np.inf; x[0, 1, 5] = np.nan; x[0, 2, :] = 0
x[1, 0, 7] = 3e38; x[1, 1, :] = rng.randn(700).astype(np.float32) * 1e-40
x[1, 2, ::3] = -1e30; x[2, 0, :] = np.inf; x[2, 1, 0] = np.inf
def soft(x, axis, log):
    x = np.moveaxis(x.astype(np.float64), axis, -1)
    y = np.empty_like(x)
    for idx in np.ndindex(*x.shape[:-1]):
        row = [float(v) for v in x[idx]]
        m = -math.inf
        for v in row:
            if v > m or math.isnan(v):
                m = m if math.isnan(m) else v
        s = 0.0
        for v in row:
            s += exp(v - m)
        if log:
            ls = log_(s)
            y[idx] = [(v - m) - ls for v in row]
        else:
            y[idx] = [exp(v - m) / s for v in row]
    return np.moveaxis(y, -1, axis).astype(np.float32)
log_ = log
save('x', x)
save('sm', soft(x, 2, False)); save('lsm', soft(x, 2, True)); save('sm1', soft(x, 1, False))
save('lsm1', soft(x, 1, True))
)");
  IsaScope scope;
  TensorMap feed;
  feed.set("x", np.at("x"));
  for (Isa isa : isas())
    for (int threads : {1, 2}) {
      ref::vmath::force_isa(isa);
      set_num_threads(threads);
      TensorMap out = run_text_model(R"(
        <ir_version: 9, opset_import: ["" : 13]>
        g (float[6,3,700] x) => (float[6,3,700] sm, float[6,3,700] lsm, float[6,3,700] sm1,
                                 float[6,3,700] lsm1) {
          sm = Softmax<axis = -1>(x)
          lsm = LogSoftmax<axis = -1>(x)
          sm1 = Softmax<axis = 1>(x)
          lsm1 = LogSoftmax<axis = 1>(x)
        }
      )",
                                     feed);
      for (const char* n : {"sm", "lsm", "sm1", "lsm1"})
        EXPECT_TRUE(out.at(n).equals(np.at(n))) << n << " on " << ref::vmath::isa_name(isa);
    }
}

// Softmax and LogSoftmax along axis 0 of [300, 500]: one block too large to keep its exps or
// take the vector path whole, so it is cut into tiles of columns (ragged at the end) spread
// over the threads; columns with NaN, infinities and huge logits send their tiles to the
// exact path. The bits are glibc's sequential ones on every code path and thread count.
TEST(VectorMath, SoftmaxOverTheFirstAxisInTilesMatchesGlibcBitForBit) {
  auto np = numpy_arrays(std::string(kPrelude) + R"(
x = (rng.randn(300, 500) * 8).astype(np.float32)
x[:150, 0] = -np.inf; x[5, 1] = np.nan; x[:, 2] = 0; x[7, 120] = 3e38; x[:, 300] = np.inf
x[0, 499] = np.inf; x[::3, 498] = -1e30
def soft0(x, log):
    x = x.astype(np.float64)
    y = np.empty_like(x)
    for c in range(x.shape[1]):
        col = [float(v) for v in x[:, c]]
        m = -math.inf
        for v in col:
            if v > m or math.isnan(v):
                m = m if math.isnan(m) else v
        s = 0.0
        for v in col:
            s += exp(v - m)
        if log:
            ls = log_(s)
            y[:, c] = [(v - m) - ls for v in col]
        else:
            y[:, c] = [exp(v - m) / s for v in col]
    return y.astype(np.float32)
log_ = log
save('x', x); save('sm', soft0(x, False)); save('lsm', soft0(x, True))
)");
  IsaScope scope;
  TensorMap feed;
  feed.set("x", np.at("x"));
  for (Isa isa : isas())
    for (int threads : {1, 2, 4}) {
      ref::vmath::force_isa(isa);
      set_num_threads(threads);
      TensorMap out = run_text_model(R"(
        <ir_version: 9, opset_import: ["" : 13]>
        g (float[300,500] x) => (float[300,500] sm, float[300,500] lsm) {
          sm = Softmax<axis = 0>(x)
          lsm = LogSoftmax<axis = 0>(x)
        }
      )",
                                     feed);
      for (const char* n : {"sm", "lsm"})
        EXPECT_TRUE(out.at(n).equals(np.at(n)))
            << n << " on " << ref::vmath::isa_name(isa) << ", " << threads << " threads";
    }
  set_num_threads(0);
}

// Pow with an exponent tensor of X's shape and with a scalar exponent: every edge base with
// exponents at the special cases (zeros, infinities, NaN, halves, integers, the float
// overflow and underflow exponents).
TEST(VectorMath, PowMatchesGlibcBitForBitOnEveryCodePath) {
  auto np = numpy_arrays(std::string(kPrelude) + R"(
cpow = libm.pow; cpow.restype = ctypes.c_double; cpow.argtypes = [ctypes.c_double] * 2
ex = np.array([0, -0.0, 0.5, 1, 2, 3, -1, -2, 2.5, -0.5, np.inf, -np.inf, np.nan, 1e10, 126,
               127, 128, -149, -150, 1.0000001, 0.3333333], dtype=np.float32)
base = np.concatenate([edges, rnd[:2000]])
x = np.repeat(base, len(ex)); y = np.tile(ex, len(base))
def pw(a, b):
    return np.array([cpow(float(p), float(q)) for p, q in zip(a.astype(np.float64),
                                                               b.astype(np.float64))])
save('x', x); save('y', y); save('z', pw(x, y).astype(np.float32))
save('s', np.array(2.5, dtype=np.float32))
save('zs', pw(base, np.full(len(base), 2.5)).astype(np.float32))
save('b', base)
)");
  IsaScope scope;
  const std::string n = std::to_string(np.at("x").numel()), nb = std::to_string(np.at("b").numel());
  for (Isa isa : isas()) {
    ref::vmath::force_isa(isa);
    TensorMap feed;
    feed.set("x", np.at("x"));
    feed.set("y", np.at("y"));
    feed.set("b", np.at("b"));
    feed.set("s", np.at("s"));
    TensorMap out =
        run_text_model("<ir_version: 9, opset_import: [\"\" : 15]>\n g (float[" + n +
                           "] x, float[" + n + "] y, float[" + nb + "] b, float s) => (float[" + n +
                           "] z, float[" + nb + "] zs) { z = Pow(x, y)\n zs = Pow(b, s) }",
                       feed);
    EXPECT_TRUE(out.at("z").equals(np.at("z"))) << ref::vmath::isa_name(isa);
    EXPECT_TRUE(out.at("zs").equals(np.at("zs"))) << ref::vmath::isa_name(isa);
  }
}

// The guard itself: values next to a float rounding boundary are refused, others accepted,
// non-finite and tiny ones refused unless the function is non-negative.
TEST(VectorMath, RoundsAlikeRefusesValuesNearARoundingBoundary) {
  using ref::vmath::rounds_alike;
  const double mid = (1.0 + std::nextafter(1.0f, 2.0f)) / 2;  // halfway between two floats
  EXPECT_FALSE(rounds_alike<float>(mid, 0x1p-40));
  EXPECT_FALSE(rounds_alike<float>(std::nextafter(mid, 2.0), 0x1p-40));
  EXPECT_TRUE(rounds_alike<float>(1.0 + 0x1p-30, 0x1p-44));
  EXPECT_FALSE(rounds_alike<float>(std::nan(""), 0));
  EXPECT_FALSE(rounds_alike<float>(INFINITY, 0));
  EXPECT_FALSE(rounds_alike<float>(1e-310, 1e-320));
  EXPECT_TRUE(rounds_alike<float>(1e-310, 1e-320, /*nonneg=*/true));
  EXPECT_FALSE(rounds_alike<float>(-1e-310, 1e-320, /*nonneg=*/true));
  EXPECT_FALSE(rounds_alike<float>(1.0, std::nan("")));
}

// The guard's vector kernels decide exactly as the scalar guard, lane by lane, on each code
// path: every edge result (zeros of both signs, denormals of double and float, the tiny bound,
// a float midpoint and its neighbours, the float overflow boundary, infinities, NaNs) with
// each input edge (0, infinite, NaN: a bound term of factor 0 must ignore it) and each bound
// form; and one refused lane anywhere in a block refuses the block.
TEST(VectorMath, NarrowCheckedDecidesAsTheScalarGuardOnEveryCodePath) {
  using ref::vmath::LinearTol;
  const double mid = (1.0 + std::nextafter(1.0f, 2.0f)) / 2;
  const double flt_max_mid = (3.4028234663852886e38 + 0x1p128) / 2;
  std::vector<double> rs = {0.0,
                            -0.0,
                            1e-310,
                            -1e-310,
                            0x1p-1000,
                            std::nextafter(0x1p-1000, 0.0),
                            0x1p-149,
                            0x1p-150,
                            3 * 0x1p-151,
                            mid,
                            std::nextafter(mid, 0.0),
                            std::nextafter(mid, 2.0),
                            1.0,
                            -1.0,
                            1.5,
                            -2.75,
                            flt_max_mid,
                            std::nextafter(flt_max_mid, 0.0),
                            1e300,
                            -1e300,
                            INFINITY,
                            -INFINITY,
                            std::nan(""),
                            -std::nan("")};
  const double vs[] = {0.0, 1.0, -3.0, INFINITY, std::nan("")};
  const LinearTol tols[] = {ref::vmath::kSingleCallTol,
                            {0, 2 * ref::vmath::kRelTol, 0},
                            {0, ref::vmath::kRelTol, ref::vmath::kRelTol},
                            {0x1p-30, ref::vmath::kRelTol, ref::vmath::kRelTol},
                            {0, 0x1p-20, 0}};
  IsaScope scope;
  for (Isa isa : isas()) {
    ref::vmath::force_isa(isa);
    for (bool nonneg : {false, true})
      for (const LinearTol& tol : tols)
        for (double r : rs)
          for (double v : vs) {
            float y = 7;
            const bool got = ref::vmath::narrow_checked(&r, &v, tol, nonneg, &y, 1);
            const bool want = ref::vmath::rounds_alike<float>(r, tol(v, r), nonneg);
            EXPECT_EQ(got, want) << ref::vmath::isa_name(isa) << ": r " << r << ", v " << v
                                 << ", nonneg " << nonneg << ", tol " << tol.c << " + " << tol.a
                                 << " |r| + " << tol.b << " |v|";
            if (got) {
              const float f = static_cast<float>(r);
              EXPECT_EQ(ref::vmath::bits_of(y), ref::vmath::bits_of(f)) << r;
            }
          }
    for (int64_t n : {1, 7, 8, 9, 37, 256}) {
      std::vector<double> r(n), v(n, 1.0);
      for (int64_t i = 0; i < n; ++i) r[i] = 1.5 + static_cast<double>(i) * 0x1p-10;
      std::vector<float> y(n);
      ASSERT_TRUE(ref::vmath::narrow_checked(r.data(), v.data(), ref::vmath::kSingleCallTol, false,
                                             y.data(), n));
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(y[i], static_cast<float>(r[i]));
      for (int64_t p = 0; p < n; ++p) {
        std::vector<double> bad = r;
        bad[p] = mid;
        EXPECT_FALSE(ref::vmath::narrow_checked(bad.data(), v.data(), ref::vmath::kSingleCallTol,
                                                false, y.data(), n))
            << ref::vmath::isa_name(isa) << ": n " << n << ", refused lane " << p;
      }
    }
  }
}

// The softmax kernels: the maximum (NaN anywhere gives NaN), x - s, and the unordered sums
// against straightforward loops, at every length around the 8-lane width.
TEST(VectorMath, MaxShiftAndSumKernelsOnEveryCodePath) {
  IsaScope scope;
  for (Isa isa : isas()) {
    ref::vmath::force_isa(isa);
    for (int64_t n = 1; n <= 40; ++n) {
      std::vector<float> x(n);
      for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>((i * 7919) % 23) - 11.5f;
      float want = -INFINITY;
      for (float f : x) want = f > want ? f : want;
      EXPECT_EQ(ref::vmath::max_or_nan(x.data(), n), want) << ref::vmath::isa_name(isa) << n;
      std::vector<double> d(n);
      ref::vmath::widen_shift(x.data(), 0.25, d.data(), n);
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(d[i], static_cast<double>(x[i]) - 0.25);
      ref::vmath::widen(x.data(), d.data(), n);
      double exact = 0, partials = 0;
      for (int64_t i = 0; i < n; ++i) exact += d[i];  // small integers and halves: exact
      EXPECT_EQ(ref::vmath::unordered_sum(d.data(), n), exact);
      EXPECT_EQ(ref::vmath::unordered_sum(x.data(), n, &partials), exact);
      EXPECT_GE(partials, std::fabs(exact));
      for (int64_t p = 0; p < n; ++p) {
        std::vector<float> nan = x;
        nan[p] = std::nanf("");
        EXPECT_TRUE(std::isnan(ref::vmath::max_or_nan(nan.data(), n))) << n << " " << p;
      }
    }
  }
}

// The guard assumes every vector result is within a few ulps of glibc's (kRelTol is 256 ulps).
// Exp, Tanh and (on AVX-512) Erf have kernels of their own (vector_math_kernels.h): within 8
// ulps of glibc on every code path, over the range where they apply, with their out-of-range
// answers (NaN, which the guard recomputes, or exp's 0 below -708), signs and limits.
TEST(VectorMath, ExpTanhAndErfKernelsStayWithinAFewUlpsOfGlibcOnEveryCodePath) {
  IsaScope scope;
  std::vector<double> x;
  for (double v = -712; v <= 712; v += 0.0137) x.push_back(v);
  for (int e = -1074; e <= 10; ++e) x.insert(x.end(), {std::ldexp(1.0, e), -std::ldexp(1.0, e)});
  for (double v : {0.0, -0.0, 0.34657359027997264, -0.34657359027997264, 20.0, 19.999, 708.0,
                   -708.0, 0.5625, 1e-300})
    x.push_back(v);
  const size_t plain = x.size();
  x.insert(x.end(), {INFINITY, -INFINITY, std::nan("")});
  auto ulps = [](double got, double want) {
    const double a = std::fabs(want);
    return std::fabs(got - want) / (std::nextafter(a, INFINITY) - a);
  };
  for (Isa isa : isas()) {
    ref::vmath::force_isa(isa);
    const int64_t n = static_cast<int64_t>(x.size());
    std::vector<double> e(x.size()), t(x.size()), f(x.size());
    ref::vmath::apply(ref::vmath::Fn::kExp, x.data(), e.data(), n);
    ref::vmath::apply(ref::vmath::Fn::kTanh, x.data(), t.data(), n);
    ref::vmath::apply(ref::vmath::Fn::kErf, x.data(), f.data(), n);
    const char* path = ref::vmath::isa_name(isa);
    for (size_t i = 0; i < plain; ++i) {
      const double v = x[i];
      if (std::fabs(v) <= 708)
        EXPECT_LE(ulps(e[i], std::exp(v)), 8) << path << " exp(" << v << ") = " << e[i];
      else if (v < -708)
        EXPECT_EQ(e[i], 0.0) << path << " exp(" << v << ")";
      else
        EXPECT_TRUE(std::isnan(e[i])) << path << " exp(" << v << ")";
      EXPECT_LE(ulps(t[i], std::tanh(v)), 8) << path << " tanh(" << v << ") = " << t[i];
      EXPECT_EQ(std::signbit(t[i]), std::signbit(v)) << path << " tanh(" << v << ")";
      if (std::fabs(v) >= ref::vmath::kTiny) {  // where the guard takes relative bounds
        EXPECT_LE(ulps(f[i], std::erf(v)), 8) << path << " erf(" << v << ") = " << f[i];
      }
      EXPECT_EQ(std::signbit(f[i]), std::signbit(v)) << path << " erf(" << v << ")";
    }
    EXPECT_TRUE(std::isnan(e[plain]));  // exp(inf): glibc's, through the guard
    EXPECT_EQ(e[plain + 1], 0.0);
    EXPECT_TRUE(std::isnan(e[plain + 2]));
    EXPECT_EQ(t[plain], 1.0);
    EXPECT_EQ(t[plain + 1], -1.0);
    EXPECT_TRUE(std::isnan(t[plain + 2]));
    EXPECT_LE(ulps(f[plain], 1.0), 8);  // erf(inf) = 1 (the kernel's erf(6), 1 - 2^-55)
    EXPECT_LE(ulps(f[plain + 1], -1.0), 8);
    EXPECT_TRUE(std::isnan(f[plain + 2]));
  }
}

}  // namespace
}  // namespace parity::testing
