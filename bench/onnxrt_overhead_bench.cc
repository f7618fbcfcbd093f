// Parity's overhead over ONNX Runtime itself: the time OnnxrtRunner::infer takes per call
// minus the time spent inside ONNX Runtime's Run (last_inference_time()), on a small and a
// large model, and the time to create a session. Models are generated here.
//
//   build-*/bench/onnxrt_overhead_bench
//
// Counters: run_us = inside Run, overhead_us = infer() - Run, overhead_pct = of infer().
#include <benchmark/benchmark.h>

#include <chrono>
#include <random>

#include <onnx/defs/parser.h>
#include <onnx/onnx_pb.h>

#include "backend/onnxrt/runner.h"
#include "core/error.h"
#include "core/logger.h"

namespace parity {
namespace {

// Small: one Add on 16 floats. Large: four 512x512 MatMul+Relu layers on a 64x512 batch
// (about 134 MFLOP), weights as random initializers.
constexpr int kBatch = 64, kWidth = 512, kLayers = 4;

std::string small_model() {
  ::onnx::ModelProto proto;
  auto status = ::onnx::OnnxParser::Parse(proto, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    small (float[1,16] x, float[1,16] b) => (float[1,16] y) { y = Add(x, b) }
  )");
  if (!status.IsOK()) fail("failed to build the small model: {}", status.ErrorMessage());
  return proto.SerializeAsString();
}

std::string large_model() {
  std::string body;
  for (int i = 0; i < kLayers; ++i)
    body += fmt::format("m{0} = MatMul({1}, w{0})\n h{0} = Relu(m{0})\n", i,
                        i == 0 ? "x" : fmt::format("h{}", i - 1));
  body += fmt::format("y = Identity(h{})\n", kLayers - 1);
  ::onnx::ModelProto proto;
  auto status = ::onnx::OnnxParser::Parse(proto, fmt::format(R"(
        <ir_version: 8, opset_import: ["" : 17]>
        large (float[{0},{1}] x) => (float[{0},{1}] y) {{ {2} }}
      )",
                                                             kBatch, kWidth, body)
                                                     .c_str());
  if (!status.IsOK()) fail("failed to build the large model: {}", status.ErrorMessage());
  std::mt19937 rng(42);
  std::normal_distribution<float> normal(0.0f, 1.0f / 22.6f);  // ~ 1/sqrt(512): stable scale
  std::vector<float> w(kWidth * kWidth);
  for (int i = 0; i < kLayers; ++i) {
    for (float& v : w) v = normal(rng);
    auto* t = proto.mutable_graph()->add_initializer();
    t->set_name(fmt::format("w{}", i));
    t->set_data_type(::onnx::TensorProto::FLOAT);
    t->add_dims(kWidth);
    t->add_dims(kWidth);
    t->set_raw_data(w.data(), w.size() * sizeof(float));
  }
  return proto.SerializeAsString();
}

TensorMap feed_for(bool large) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  auto random = [&](Shape shape) {
    Tensor t(DataType::kFloat32, std::move(shape));
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = uniform(rng);
    return t;
  };
  TensorMap feed;
  if (large) {
    feed.set("x", random({kBatch, kWidth}));
  } else {
    feed.set("x", random({1, 16}));
    feed.set("b", random({1, 16}));
  }
  return feed;
}

OrtOptions one_thread() {
  logger().set_severity(Severity::kWarning);  // no "Creating session" line per session
  OrtOptions options;
  options.intra_op_threads = 1;  // steadier figures on a shared machine
  return options;
}

void BM_Infer(benchmark::State& state) {
  bool large = state.range(0) != 0;
  OnnxrtRunner runner(SessionFromOnnxBytes(large ? large_model() : small_model(), one_thread()));
  RunnerActivation active(runner);
  TensorMap feed = feed_for(large);
  for (int i = 0; i < 10; ++i) runner.infer(feed);  // warm up ONNX Runtime's arena

  double total = 0, in_run = 0;
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    TensorMap out = runner.infer(feed);
    auto end = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(out);
    total += std::chrono::duration<double>(end - start).count();
    in_run += *runner.last_inference_time();
  }
  double n = static_cast<double>(state.iterations());
  state.counters["run_us"] = in_run / n * 1e6;
  state.counters["overhead_us"] = (total - in_run) / n * 1e6;
  state.counters["overhead_pct"] = total > 0 ? (total - in_run) / total * 100 : 0;
  state.SetLabel(large ? "large (4x MatMul 64x512x512)" : "small (Add, 16 floats)");
}
BENCHMARK(BM_Infer)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

void BM_SessionCreate(benchmark::State& state) {
  bool large = state.range(0) != 0;
  std::string bytes = large ? large_model() : small_model();
  OrtRuntime::get();  // library and environment once per process, as in Parity
  for (auto _ : state) {
    OrtSessionPtr session = SessionFromOnnxBytes(bytes, one_thread())();
    benchmark::DoNotOptimize(session);
  }
  state.SetLabel(large ? "large (4 MiB of weights)" : "small");
}
BENCHMARK(BM_SessionCreate)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace parity

BENCHMARK_MAIN();
