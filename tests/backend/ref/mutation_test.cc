// Random byte changes of a model with If and Loop bodies (and Conv, Pad, Slice, Expand and
// Tile inside them): every mutant must load and run, or fail with parity::Error. A crash, a
// sanitizer report, another exception or a hang (stopped by the run's limits) fails the test.
// The mutations are seeded, so a failure reproduces.
#include <gtest/gtest.h>

#include <random>

#include "onnx/model_io.h"
#include "ref_test_util.h"

namespace parity::testing {
namespace {

const char* kControlFlowModel = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[1, 1, 4, 4] x, bool c, int64 m) => (float[?, ?, ?, ?] y, float[?, ?, ?, ?] z) {
    w = Constant<value = float[1, 1, 3, 3] {1, 0, -1, 2, 0, -2, 1, 0, -1}>()
    y = If(c) <
      then_branch = then_g () => (float[?, ?, ?, ?] t) {
        t = Conv<pads = [1, 1, 1, 1], strides = [1, 1]>(x, w)
      },
      else_branch = else_g () => (float[?, ?, ?, ?] e) {
        p = Constant<value = int64[8] {0, 0, 1, 1, 0, 0, 1, 1}>()
        e = Pad(x, p)
      }
    >
    z = Loop(m, c, x) <body = body (int64 i, bool cin, float[?, ?, ?, ?] v) => (bool cout, float[?, ?, ?, ?] vout) {
      cout = Identity(cin)
      starts = Constant<value = int64[2] {0, 0}>()
      ends = Constant<value = int64[2] {4, 4}>()
      axes = Constant<value = int64[2] {2, 3}>()
      s = Slice(v, starts, ends, axes)
      shape = Constant<value = int64[4] {1, 1, 4, 4}>()
      ex = Expand(s, shape)
      reps = Constant<value = int64[4] {1, 1, 1, 1}>()
      vout = Tile(ex, reps)
    }>
  }
)";

// Zero-filled inputs of the declared types, each dim at most 8 (symbolic dims as 1).
TensorMap feed_for(const ir::Model& model) {
  TensorMap feed;
  for (const auto& in : model.graph.inputs) {
    if (in.type.kind != ir::ValueType::Kind::kTensor || !in.type.elem_type) continue;
    Shape shape;
    if (in.type.shape)
      for (const auto& d : *in.type.shape)
        shape.push_back(d.is_fixed() ? std::min<int64_t>(d.value, 8) : 1);
    Tensor t(*in.type.elem_type, shape);
    if (t.dtype() == DataType::kInt64 && t.numel() > 0) t.data<int64_t>()[0] = 3;  // trip count
    if (t.dtype() == DataType::kBool && t.numel() > 0) t.data<bool>()[0] = true;
    feed.set(in.name, t);
  }
  return feed;
}

TEST(Mutation, ControlFlowModelsWithRandomByteChangesFailCleanly) {
  const std::string original = model_bytes_from_text(kControlFlowModel);
  {  // The unmutated model runs.
    auto model = onnx_io::load_model_from_bytes(original, {}, ".");
    ref::Executor e(model);
    EXPECT_EQ(e.run(feed_for(*model)).size(), 2u);
  }
  ref::ExecutorOptions options;
  options.limits.max_tensor_elements = 1 << 16;
  options.limits.max_memory_bytes = 64 << 20;
  options.limits.max_loop_iterations = 100;
  options.limits.max_run_seconds = 2;
  int loaded = 0, ran = 0;
  for (uint32_t seed = 0; seed < 5000; ++seed) {
    std::mt19937 rng(seed);
    std::string bytes = original;
    const int changes = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < changes; ++k) {
      const size_t at = rng() % bytes.size();
      bytes[at] =
          rng() % 2 ? static_cast<char>(rng()) : static_cast<char>(bytes[at] ^ (1 << (rng() % 8)));
    }
    try {
      auto model = onnx_io::load_model_from_bytes(bytes, {}, ".");
      ++loaded;
      ref::Executor e(model, options);
      e.run(feed_for(*model));
      ++ran;
    } catch (const InternalError& e) {
      ADD_FAILURE() << "seed " << seed << ": an internal error (a bug in Parity): " << e.what();
    } catch (const Error&) {
      // The expected answer to a broken model.
    } catch (const std::exception& e) {
      ADD_FAILURE() << "seed " << seed << ": an exception that is not parity::Error: " << e.what();
    }
  }
  // Some mutants must get past the loader, or the test exercises nothing but protobuf.
  EXPECT_GT(loaded, 500);
  RecordProperty("loaded", loaded);
  RecordProperty("ran", ran);
}

}  // namespace
}  // namespace parity::testing
