// Hostile and broken shapes on the reference backend: sizes whose arithmetic overflows 64 bits
// are refused with a message naming the node and the values (they used to wrap to small
// buffers that kernels wrote past, or to silently wrong shapes); runaway work (a Loop trip
// count of 10^15, a pooling kernel far larger than its input, a tensor of 2^40 elements) is
// stopped by the run's limits or done in time independent of the kernel's size. Expected
// values come from NumPy restatements of ONNX's definitions.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>

#include "ref_test_util.h"

namespace parity::testing {
namespace {

using ref::Executor;
using ref::ExecutorOptions;

constexpr int64_t k2p31 = int64_t{1} << 31, k2p32 = int64_t{1} << 32, k2p62 = int64_t{1} << 62;

std::string run_error(const std::string& text, const TensorMap& feed,
                      ExecutorOptions options = {}) {
  return error_of([&] {
    Executor e(model_from_text(text), options);
    e.run(feed);
  });
}

TensorMap feed1(const std::string& name, Tensor t) {
  TensorMap f;
  f.set(name, std::move(t));
  return f;
}

bool has(const std::string& message, const std::string& words) {
  return message.find(words) != std::string::npos;
}

const char* kConstantOfShape = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (int64[N] shape) => (float[?] y) { y = ConstantOfShape(shape) }
)";

TEST(Limits, ConstantOfShapeWhoseElementCountOverflowsNamesTheNode) {
  for (const Shape& s : {Shape{k2p31, k2p31, 4}, Shape{k2p32, k2p32}, Shape{k2p62, 4}}) {
    const int64_t rank = static_cast<int64_t>(s.size());
    std::string m =
        run_error(kConstantOfShape, feed1("shape", Tensor::from_vector<int64_t>({rank}, s)));
    EXPECT_TRUE(has(m, "failed to run node 'ConstantOfShape_0' (ConstantOfShape): ")) << m;
    EXPECT_TRUE(has(m, "overflows a 64-bit integer")) << m;
  }
}

TEST(Limits, ConstantOfShapeAboveTheElementLimitIsRefusedBeforeAllocating) {
  std::string m = run_error(kConstantOfShape,
                            feed1("shape", Tensor::from_vector<int64_t>({2}, {1 << 20, 1 << 20})));
  EXPECT_TRUE(has(m,
                  "failed to run node 'ConstantOfShape_0' (ConstantOfShape): failed to create "
                  "a float32 tensor of shape (1048576, 1048576): its 1099511627776 elements "
                  "exceed the limit of 536870912 elements per tensor"))
      << m;
}

TEST(Limits, TheMemoryLimitCountsWhatTheRunHolds) {
  ExecutorOptions options;
  options.limits.max_memory_bytes = 1 << 20;
  std::string m = run_error(
      kConstantOfShape, feed1("shape", Tensor::from_vector<int64_t>({2}, {1024, 1024})), options);
  EXPECT_TRUE(has(m,
                  "(ConstantOfShape): failed to create a float32 tensor of shape (1024, 1024) "
                  "(4.00 MiB)"))
      << m;
  EXPECT_TRUE(has(m, "exceeds the memory limit of 1.00 MiB; raise it with --limit-memory")) << m;
}

TEST(Limits, ExpandToAnOverflowingShapeIsRefused) {
  std::string m = run_error(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[1] x, int64[2] shape) => (float[?, ?] y) { y = Expand(x, shape) }
    )",
                            [] {
                              TensorMap f;
                              f.set("x", Tensor::from_vector<float>({1}, {1.f}));
                              f.set("shape", Tensor::from_vector<int64_t>({2}, {k2p62, 4}));
                              return f;
                            }());
  EXPECT_TRUE(has(m, "failed to run node 'Expand_0' (Expand): ")) << m;
  EXPECT_TRUE(has(m, "overflows a 64-bit integer")) << m;
}

TEST(Limits, ConcatWhoseAxisSumOverflowsIsRefused) {
  // Empty tensors can carry any dims: 2^62 + 2^62 along axis 0 does not fit in int64.
  TensorMap f;
  f.set("a", Tensor(DataType::kFloat32, {k2p62, 0}));
  f.set("b", Tensor(DataType::kFloat32, {k2p62, 0}));
  std::string m = run_error(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[?, 0] a, float[?, 0] b) => (float[?, 0] y) { y = Concat<axis = 0>(a, b) }
    )",
                            f);
  EXPECT_TRUE(has(m,
                  "failed to run node 'Concat_0' (Concat): failed to compute the output's "
                  "concat axis: 4611686018427387904 + 4611686018427387904 overflows"))
      << m;
}

TEST(Limits, TileWhoseOutputOverflowsIsRefusedNotMisreported) {
  // (2, 3) tiled [2^31, 2^31] is (2^32, 3 * 2^31): 3 * 2^63 elements, which used to wrap.
  TensorMap f;
  f.set("x", Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
  f.set("r", Tensor::from_vector<int64_t>({2}, {k2p31, k2p31}));
  std::string m = run_error(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[2, 3] x, int64[2] r) => (float[?, ?] y) { y = Tile(x, r) }
    )",
                            f);
  EXPECT_TRUE(has(m, "failed to run node 'Tile_0' (Tile): ")) << m;
  EXPECT_TRUE(has(m, "(4294967296, 6442450944)")) << m;
  EXPECT_TRUE(has(m, "overflows a 64-bit integer")) << m;
}

TEST(Limits, SliceWithExtremeStepsMatchesNumPy) {
  // (end - start + step - 1) overflowed for a step near 2^63.
  auto np = numpy_arrays(R"(
x = rng.rand(5, 4).astype(np.float32)
save('x', x)
save('fwd', x[1::9223372036854775807, ::-9223372036854775807])
)");
  TensorMap f = feed_of(np, {"x"});
  f.set("starts", Tensor::from_vector<int64_t>({2}, {1, -1}));
  f.set("ends", Tensor::from_vector<int64_t>({2}, {INT64_MAX, INT64_MIN}));
  f.set("steps", Tensor::from_vector<int64_t>({2}, {INT64_MAX, -INT64_MAX}));
  TensorMap out = run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[5, 4] x, int64[2] starts, int64[2] ends, int64[2] steps) => (float[?, ?] y) {
        axes = Constant<value = int64[2] {0, 1}>()
        y = Slice(x, starts, ends, axes, steps)
      }
    )",
                                 f);
  EXPECT_TRUE(tensors_close(out.at("y"), np.at("fwd"), 0, 0));
}

TEST(Limits, PoolingWithAKernelFarLargerThanTheInputTakesNoTimeAndMatchesTheDefinition) {
  // Kernel, pads and stride of 10^12: the taps inside the input and the padding are counted in
  // closed form (a loop over 10^12 taps per output never ended).
  const int64_t k = 1'000'000'000'000;
  auto np = numpy_arrays(R"(
x = rng.rand(1, 1, 4).astype(np.float32)
k = 10**12
n = x.shape[2]
def windows(x, k, s, pb, pe):
    n = x.shape[2]
    out = (n + pb + pe - k) // s + 1
    return [(o * s - pb, o * s - pb + k) for o in range(out)]
ws = windows(x, k, k, k, k)
mx = [x[0, 0, max(a, 0):min(b, n)].max() if min(b, n) > max(a, 0) else -np.inf for a, b in ws]
# count_include_pad: the divisor is the taps inside [-pads_begin, n + pads_end), all of them here
avg = [x[0, 0, max(a, 0):min(b, n)].astype(np.float64).sum() / (min(b, n + k) - max(a, -k)) for a, b in ws]
save('x', x)
save('max', np.array(mx, np.float32).reshape(1, 1, -1))
save('avg', np.array(avg, np.float32).reshape(1, 1, -1))
)");
  const std::string attrs =
      fmt::format("kernel_shape = [{0}], pads = [{0}, {0}], strides = [{0}]", k);
  TensorMap out = run_text_model(fmt::format(R"(
      <ir_version: 8, opset_import: ["" : 19]>
      g (float[1, 1, 4] x) => (float[1, 1, ?] m, float[1, 1, ?] a) {{
        m = MaxPool<{0}>(x)
        a = AveragePool<{0}, count_include_pad = 1>(x)
      }}
    )",
                                             attrs),
                                 feed_of(np, {"x"}));
  EXPECT_TRUE(tensors_close(out.at("m"), np.at("max"), 0, 0));
  EXPECT_TRUE(tensors_close(out.at("a"), np.at("avg"), 1e-6, 0));
}

TEST(Limits, ConvWithPadsAndStridesWhoseLayoutOverflowsIsRefused) {
  TensorMap f;
  f.set("x", Tensor(DataType::kFloat32, {1, 1, 3, 3}));
  f.set("w", Tensor(DataType::kFloat32, {1, 1, 1, 1}));
  const int64_t big = int64_t{1} << 40;
  std::string m = run_error(fmt::format(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[1, 1, 3, 3] x, float[1, 1, 1, 1] w) => (float[?, ?, ?, ?] y) {{
        y = Conv<pads = [{0}, {0}, {0}, {0}], strides = [{0}, {0}]>(x, w)
      }}
    )",
                                        big),
                            f);
  EXPECT_TRUE(has(m,
                  "failed to run node 'Conv_0' (Conv): failed to compute the size of the "
                  "padded input: "))
      << m;
  EXPECT_TRUE(has(m, "overflows a 64-bit integer")) << m;
}

const char* kEndlessLoop = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (int64 m, bool c, float[1] v) => (float[1] out) {
    out = Loop(m, c, v) <body = body (int64 i, bool cin, float[1] vin) => (bool cout, float[1] vout) {
      cout = Identity(cin)
      vout = Identity(vin)
    }>
  }
)";

TensorMap loop_feed(int64_t trip_count) {
  TensorMap f;
  f.set("m", Tensor::scalar<int64_t>(trip_count));
  f.set("c", Tensor::scalar<bool>(true));
  f.set("v", Tensor::from_vector<float>({1}, {1.f}));
  return f;
}

TEST(Limits, ALoopWithAHugeTripCountStopsAtTheIterationLimit) {
  ExecutorOptions options;
  options.limits.max_loop_iterations = 1000;
  std::string m = run_error(kEndlessLoop, loop_feed(1'000'000'000'000'000), options);
  EXPECT_TRUE(has(m,
                  "failed to run node 'Loop_0' (Loop): stopped after 1000 iterations of a "
                  "trip count of 1000000000000000: that is the limit of iterations per Loop; "
                  "raise it with --limit-loop-iterations"))
      << m;
  // Below the limit the loop runs to its trip count.
  Executor e(model_from_text(kEndlessLoop), options);
  EXPECT_EQ(e.run(loop_feed(1000)).at("out").data<float>()[0], 1.f);
}

TEST(Limits, ARunLongerThanItsWallTimeLimitStops) {
  ExecutorOptions options;
  options.limits.max_loop_iterations = INT64_MAX;
  options.limits.max_run_seconds = 0.2;
  std::string m = run_error(kEndlessLoop, loop_feed(1'000'000'000'000'000), options);
  // The check runs before every node and every iteration: the body's node or the Loop stops.
  EXPECT_TRUE(has(m, "failed to run node 'Loop_0' (Loop): ")) << m;
  EXPECT_TRUE(has(m, "stopped after ")) << m;
  EXPECT_TRUE(has(m,
                  "the run took longer than the limit of 0.2 s per run; raise it with "
                  "--limit-run-seconds"))
      << m;
}

// One node of about 5 * 10^10 multiply-adds (tens of seconds): the limit is checked before
// every chunk of a kernel's parallel work too, not only between nodes, so it stops soon after
// the limit. The bound of 5 s is far above the limit and far below the node's own time.
TEST(Limits, ASingleLongNodeStopsSoonAfterTheWallTimeLimit) {
  ExecutorOptions options;
  options.limits.max_run_seconds = 0.2;
  const auto start = std::chrono::steady_clock::now();
  std::string m = run_error(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,1,800,800] x, float[1,1,400,400] w) => (float y) { y = Conv(x, w) }
  )",
                            [] {
                              TensorMap f;
                              f.set("x", Tensor(DataType::kFloat32, {1, 1, 800, 800}));
                              f.set("w", Tensor(DataType::kFloat32, {1, 1, 400, 400}));
                              return f;
                            }(),
                            options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(has(m, "failed to run node 'Conv_0' (Conv): stopped after ")) << m;
  EXPECT_TRUE(has(m, "the limit of 0.2 s per run")) << m;
  EXPECT_LT(seconds, 5.0);
}

// fuzz_prepare's out-of-memory: RoiAlign with sampling_ratio 33554430 listed 10^15 sampling
// points of one bin before reading any. The list is now checked against the memory limit, and
// an adaptive grid (sampling_ratio 0) from a non-finite or huge ROI is refused, not cast.
TEST(Limits, RoiAlignWithAHugeSamplingGridIsRefusedBeforeListingIt) {
  auto model = [](const std::string& ratio) {
    return "<ir_version: 8, opset_import: [\"\" : 16]>\n"
           "g (float[1,1,10,10] x, float[1,4] rois, int64[1] idx) => (float y) {\n"
           "  y = RoiAlign<output_height = 5, output_width = 5, sampling_ratio = " +
           ratio + ">(x, rois, idx)\n}";
  };
  TensorMap feed;
  feed.set("x", Tensor(DataType::kFloat32, {1, 1, 10, 10}));
  Tensor rois(DataType::kFloat32, {1, 4});
  feed.set("idx", Tensor(DataType::kInt64, {1}));
  feed.set("rois", rois);
  std::string m = run_error(model("33554430"), feed);
  EXPECT_TRUE(has(m, "failed to run node 'RoiAlign_0' (RoiAlign): ")) << m;
  EXPECT_TRUE(has(m,
                  "the 33554430 x 33554430 sampling points of one bin of ROI 0 (set by "
                  "sampling_ratio; lower it)"))
      << m;

  float* r = rois.data<float>();
  r[0] = r[1] = 0;
  r[2] = r[3] = 1e30f;
  m = run_error(model("0"), feed);
  EXPECT_TRUE(has(m, "ROI 0 has bins of height 2.0000000300949324e+29; with sampling_ratio 0"))
      << m;
}

// fuzz_prepare's timeout: RoiAlign's work was cut one ROI per chunk, so one ROI with many
// samples per bin ran far past the time limit, which is checked between chunks. It is now
// cut by (ROI, output row).
TEST(Limits, OneLongRoiAlignRegionStopsSoonAfterTheWallTimeLimit) {
  ExecutorOptions options;
  options.limits.max_run_seconds = 0.2;
  TensorMap feed;
  feed.set("x", Tensor(DataType::kFloat32, {1, 256, 64, 64}));
  Tensor rois(DataType::kFloat32, {1, 4});
  float* r = rois.data<float>();
  r[0] = r[1] = 0;
  r[2] = r[3] = 63;
  feed.set("rois", rois);
  feed.set("idx", Tensor(DataType::kInt64, {1}));
  const auto start = std::chrono::steady_clock::now();
  std::string m = run_error(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (float[1,256,64,64] x, float[1,4] rois, int64[1] idx) => (float y) {
      y = RoiAlign<output_height = 64, output_width = 64, sampling_ratio = 64>(x, rois, idx)
    }
  )",
                            feed, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(has(m, "failed to run node 'RoiAlign_0' (RoiAlign): stopped after ")) << m;
  EXPECT_LT(seconds, 5.0);
}

// fuzz_prepare: Softmax over an axis followed by an empty dim divided by zero while tiling.
TEST(Limits, SoftmaxAndLogSoftmaxOfEmptyTensorsAreEmpty) {
  TensorMap feed = feed1("x", Tensor(DataType::kFloat32, {2, 3, 0}));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3,0] x) => (float y, float z) {
      y = Softmax<axis = 1>(x)
      z = LogSoftmax<axis = 0>(x)
    }
  )",
                                 feed);
  EXPECT_EQ(out.at("y").shape(), (Shape{2, 3, 0}));
  EXPECT_EQ(out.at("z").shape(), (Shape{2, 3, 0}));
}

}  // namespace
}  // namespace parity::testing
