// Indices from data and ordering: out-of-range indices are errors naming the node, TopK's ties
// keep the lower index first, ArgMax/ArgMin pick NaN as NumPy does, scatter reductions, and
// every kernel gives the same bits on 1 and 4 threads. Expected values come from NumPy.
#include <gtest/gtest.h>

#include "core/thread_pool.h"
#include "ref_test_util.h"

namespace parity::testing {
namespace {

// Runs a one-node graph `body` over x (float[3,4]) and returns the error message.
std::string error_running(const std::string& body, const std::string& constants = "") {
  TensorMap feed;
  feed.set("x", Tensor(DataType::kFloat32, {3, 4}));
  return error_of([&] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 18]>
      g (float[3,4] x) => (float y) )" +
                       constants + " { " + body + " }",
                   feed);
  });
}

TEST(IndexKernels, OutOfRangeIndicesAreErrorsNamingTheNode) {
  struct Case {
    const char* op;
    std::string constants, body, expected;
  };
  const std::vector<Case> cases = {
      {"Gather", "<int64[2] i = {1, 4}>", "y = Gather<axis = 1>(x, i)",
       "index 4 (element 1 of input 'indices'): it is out of range for an axis of size 4; "
       "indices must be in [-4, 3]"},
      {"Gather", "<int32[1] i = {-4}>", "y = Gather(x, i)",
       "index -4 (element 0 of input 'indices'): it is out of range for an axis of size 3"},
      {"GatherElements", "<int64[1,2] i = {0, -5}>", "y = GatherElements<axis = 1>(x, i)",
       "index -5 (element 1 of input 'indices')"},
      {"GatherND", "<int64[1,2] i = {2, 4}>", "y = GatherND(x, i)",
       "index 4 (element 1 of input 'indices'): it is out of range for an axis of size 4"},
      {"ScatterElements", "<int64[1,1] i = {3}, float[1,1] u = {1.0}>",
       "y = ScatterElements(x, i, u)", "index 3 (element 0 of input 'indices')"},
      {"ScatterND", "<int64[1,1] i = {-4}, float[1,4] u = {1.0, 2.0, 3.0, 4.0}>",
       "y = ScatterND(x, i, u)", "index -4 (element 0 of input 'indices')"},
      {"ReverseSequence", "<int64[3] n = {1, 5, 2}>",
       "y = ReverseSequence<batch_axis = 0, time_axis = 1>(x, n)",
       "sequence_lens[1] is 5; lengths must be in [0, 4]"},
      {"Compress", "<bool[5] c = {0, 0, 0, 0, 1}>", "y = Compress<axis = 0>(x, c)",
       "selects position 4 of an axis of size 3"},
      {"Slice", "<int64[1] s = {0}, int64[1] e = {2}, int64[1] a = {0}, int64[1] st = {0}>",
       "y = Slice(x, s, e, a, st)", "steps [0] has a 0; steps must not be 0"},
      {"Squeeze", "<int64[1] a = {1}>", "y = Squeeze(x, a)",
       "axis 1 of the input of shape (3, 4) has size 4; only axes of size 1 can be squeezed"},
      {"Expand", "<int64[2] s = {2, 4}>", "y = Expand(x, s)", "failed to broadcast shapes"},
      {"Tile", "<int64[1] r = {2}>", "y = Tile(x, r)",
       "repeats [2] has 1 values; the input of shape (3, 4) needs 2"},
  };
  for (const Case& c : cases) {
    const std::string message = error_running(c.body, c.constants);
    EXPECT_NE(message.find(std::string("failed to run node '")), std::string::npos) << message;
    EXPECT_NE(message.find(std::string("(") + c.op + "): "), std::string::npos) << message;
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.op << ": " << message;
  }
}

TEST(IndexKernels, TopKKeepsTheLowerIndexFirstAmongEqualValues) {
  auto np = numpy_arrays(R"(
x = rng.randint(0, 3, size=(4, 9)).astype(np.float32); save('x', x)
big = np.argsort(-x, axis=1, kind='stable')[:, :5]
small = np.argsort(x, axis=0, kind='stable')[:3, :]
save('vl', np.take_along_axis(x, big, 1)); save('il', big.astype(np.int64))
save('vs', np.take_along_axis(x, small, 0)); save('is', small.astype(np.int64))
)");
  TensorMap feed;
  feed.set("x", np.at("x"));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 11]>
    g (float[4,9] x) => (float vl, int64 il, float vs, int64 is)
      <int64[1] k5 = {5}, int64[1] k3 = {3}> {
      vl, il = TopK(x, k5)
      vs, is = TopK<axis = 0, largest = 0>(x, k3)
    }
  )",
                                 feed);
  for (const char* n : {"vl", "il", "vs", "is"})
    EXPECT_TRUE(tensors_identical(out.at(n), np.at(n))) << n;
}

TEST(IndexKernels, ArgMaxAndArgMinPickNaNAndTiesAsNumPy) {
  auto np = numpy_arrays(R"(
x = rng.randint(0, 3, size=(5, 6)).astype(np.float32)
x[1, 2] = np.nan; x[1, 4] = np.nan; x[3, 0] = np.nan
save('x', x)
save('amax', np.argmax(x, axis=1).astype(np.int64))
save('amin', np.argmin(x, axis=0).astype(np.int64)[None, :])
last = lambda f, a, axis: a.shape[axis] - 1 - f(np.flip(a, axis), axis=axis)
save('lmax', last(np.argmax, x, 1).astype(np.int64))
save('lmin', last(np.argmin, x, 0).astype(np.int64)[None, :])
)");
  TensorMap feed;
  feed.set("x", np.at("x"));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[5,6] x) => (int64 amax, int64 amin, int64 lmax, int64 lmin) {
      amax = ArgMax<axis = 1, keepdims = 0>(x)
      amin = ArgMin<axis = 0>(x)
      lmax = ArgMax<axis = -1, keepdims = 0, select_last_index = 1>(x)
      lmin = ArgMin<select_last_index = 1>(x)
    }
  )",
                                 feed);
  for (const char* n : {"amax", "amin", "lmax", "lmin"})
    EXPECT_TRUE(tensors_identical(out.at(n), np.at(n))) << n;
}

TEST(IndexKernels, ScatterReductionsOfOpset18ApplyInIndexOrder) {
  auto np = numpy_arrays(R"(
x = rng.randn(4, 3).astype(np.float32); save('x', x)
i = np.array([[1, 0, 3], [1, 2, 1], [0, 0, 3]], dtype=np.int64); save('i', i)
u = rng.randn(3, 3).astype(np.float32); save('u', u)
for name, f in [('add', np.add), ('mul', np.multiply), ('max', np.maximum), ('min', np.minimum)]:
    y = x.astype(np.float64)
    for r in range(3):
        for c in range(3): y[i[r, c], c] = f(y[i[r, c], c], u[r, c]).astype(np.float32)
    save(name, y.astype(np.float32))
ni = np.array([[2], [0], [2]], dtype=np.int64); save('ni', ni)
y = x.copy()
for r in range(3): y[ni[r, 0]] = np.maximum(y[ni[r, 0]], u[r])
save('ndmax', y)
)");
  TensorMap feed;
  for (const char* n : {"x", "i", "u", "ni"}) feed.set(n, np.at(n));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[4,3] x, int64[3,3] i, float[3,3] u, int64[3,1] ni)
      => (float add, float mul, float max, float min, float ndmax) {
      add = ScatterElements<reduction = "add">(x, i, u)
      mul = ScatterElements<reduction = "mul">(x, i, u)
      max = ScatterElements<reduction = "max">(x, i, u)
      min = ScatterElements<reduction = "min">(x, i, u)
      ndmax = ScatterND<reduction = "max">(x, ni, u)
    }
  )",
                                 feed);
  for (const char* n : {"add", "mul", "max", "min", "ndmax"})
    EXPECT_TRUE(tensors_identical(out.at(n), np.at(n))) << n;
}

// Range's elements lie within [start, limit], but i * delta alone can pass int64: start -2^63,
// delta 2^62 (3 * 2^62 overflowed, undefined; the wrapped sum is the exact element).
TEST(IndexKernels, RangeOverTheWholeInt64LineIsExact) {
  auto np = numpy_arrays(R"(
save('start', np.array(-2**63, np.int64)); save('limit', np.array(2**63 - 1, np.int64))
save('delta', np.array(2**62, np.int64))
save('y', np.array([-2**63 + i * 2**62 for i in range(4)], np.int64))
save('down', np.array([2**63 - 1 - i * 2**62 for i in range(4)], np.int64))
save('neg', np.array(-2**62, np.int64))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (int64 start, int64 limit, int64 delta, int64 neg) => (int64 y, int64 down) {
      y = Range(start, limit, delta)
      down = Range(limit, start, neg)
    }
  )",
                                 feed_of(np, {"start", "limit", "delta", "neg"}));
  EXPECT_TRUE(tensors_identical(out.at("y"), np.at("y")));
  EXPECT_TRUE(tensors_identical(out.at("down"), np.at("down")));
}

// EyeLike's diagonal at every offset NumPy's eye takes, and at k = ±(2^63 - 1), where i + k
// overflowed (undefined; the sanitized suite catches it): no diagonal at all.
TEST(IndexKernels, EyeLikeAtEveryOffsetAndAtTheEndsOfInt64) {
  auto np = numpy_arrays(R"(
for k in range(-4, 6): save(f'eye{k + 4}', np.eye(3, 5, k=k, dtype=np.float32))
)");
  TensorMap feed;
  feed.set("x", Tensor(DataType::kFloat32, {3, 5}));
  auto eye = [&](int64_t k) {
    return run_text_model(fmt::format(R"(
      <ir_version: 8, opset_import: ["" : 9]>
      g (float[3,5] x) => (float y) {{ y = EyeLike<k = {}>(x) }}
    )",
                                      k),
                          feed)
        .at("y");
  };
  for (int64_t k = -4; k < 6; ++k)
    EXPECT_TRUE(tensors_identical(eye(k), np.at(fmt::format("eye{}", k + 4)))) << k;
  const Tensor zeros(DataType::kFloat32, {3, 5});
  EXPECT_TRUE(tensors_identical(eye(std::numeric_limits<int64_t>::max()), zeros));
  EXPECT_TRUE(tensors_identical(eye(-std::numeric_limits<int64_t>::max()), zeros));
}

TEST(IndexKernels, EveryMoverGivesTheSameBitsOnOneAndFourThreads) {
  auto np = numpy_arrays(R"(
save('x', rng.randn(16, 64, 48).astype(np.float32))
save('i', rng.randint(-48, 48, size=(16, 64, 20)).astype(np.int64))
)");
  TensorMap feed;
  feed.set("x", np.at("x"));
  feed.set("i", np.at("i"));
  const std::string text = R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[16,64,48] x, int64[16,64,20] i)
      => (float t, float s, float p, float g, float ge, float tl, float e, float tv, int64 ti,
          float cs, int64 am, float tri, float d2s, float sp0, float sp1, float c)
      <int64[3] st = {1, 60, -1}, int64[3] en = {16, 2, 0}, int64[3] ax = {0, 1, 2},
       int64[3] sp = {2, -3, -1}, int64[6] pads = {1, 2, 3, 0, 5, 2}, int64[3] reps = {2, 1, 2},
       int64[4] es = {2, 16, 64, 48}, int64[1] k = {7}, int64 axis = {1},
       int64[4] s4 = {16, 64, 4, 12}, int64[2] halves = {20, 44}> {
      t = Transpose<perm = [2, 0, 1]>(x)
      s = Slice(x, st, en, ax, sp)
      p = Pad<mode = "reflect">(x, pads)
      g = Gather<axis = 2>(x, i)
      ge = GatherElements<axis = 2>(x, i)
      tl = Tile(x, reps)
      e = Expand(x, es)
      tv, ti = TopK(x, k)
      cs = CumSum<reverse = 1>(x, axis)
      am = ArgMax<axis = 1>(x)
      tri = Trilu(x)
      x4 = Reshape(x, s4)
      d2s = DepthToSpace<blocksize = 2>(x4)
      sp0, sp1 = Split<axis = 1>(x, halves)
      c = Concat<axis = 2>(x, x)
    }
  )";
  set_num_threads(1);
  TensorMap one = run_text_model(text, feed);
  set_num_threads(4);
  TensorMap four = run_text_model(text, feed);
  set_num_threads(0);
  for (const auto& [name, tensor] : one)
    EXPECT_TRUE(tensors_identical(four.at(name), tensor)) << name;
}

}  // namespace
}  // namespace parity::testing
