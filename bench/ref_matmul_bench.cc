// MatMul 512x512x512 float32 in the reference backend, beside a plain copy of its two operands
// (the memory yardstick of ref_instancenorm_bench). The product is compute-bound: 134 million
// multiply-adds in double with a fixed summation order, so the ratio to the copy says how much
// the exact kernel costs over touching the data once; the results are in bench/README.md.
//
//   build/bench/ref_matmul_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <onnx/onnx_pb.h>

#include <cstring>
#include <random>

#include "backend/ref/runner.h"
#include "core/thread_pool.h"
#include "onnx/model_io.h"

namespace parity {
namespace {

constexpr int64_t kSize = 512;

Tensor random_matrix() {
  Tensor t(DataType::kFloat32, {kSize, kSize});
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
  return t;
}

// a[512,512] x b[512,512] -> y, opset 13.
std::string matmul_model_bytes() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("matmul");
  for (const char* name : {"a", "b", "y"}) {
    onnx::ValueInfoProto* v = name[0] == 'y' ? g->add_output() : g->add_input();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int i = 0; i < 2; ++i) t->mutable_shape()->add_dim()->set_dim_value(kSize);
  }
  onnx::NodeProto* n = g->add_node();
  n->set_op_type("MatMul");
  n->set_name("matmul");
  n->add_input("a");
  n->add_input("b");
  n->add_output("y");
  return m.SerializeAsString();
}

void BM_MemcpyOperands(benchmark::State& state) {
  Tensor a = random_matrix(), b = random_matrix();
  Tensor a2(DataType::kFloat32, a.shape()), b2(DataType::kFloat32, b.shape());
  for (auto _ : state) {
    std::memcpy(a2.raw_data(), a.raw_data(), a.nbytes());
    std::memcpy(b2.raw_data(), b.raw_data(), b.nbytes());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * (a.nbytes() + b.nbytes())));
}

void BM_MatMul(benchmark::State& state) {
  set_num_threads(static_cast<int>(state.range(0)));
  auto model = onnx_io::load_model_from_bytes(matmul_model_bytes());
  PluginRefRunner runner{Loader<ModelPtr>(model)};
  RunnerActivation active(runner);
  TensorMap feed;
  feed.set("a", random_matrix());
  feed.set("b", random_matrix());
  for (auto _ : state) {
    TensorMap out = runner.infer(feed);
    benchmark::DoNotOptimize(out);
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * kSize * kSize * kSize * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
  set_num_threads(0);
}

BENCHMARK(BM_MemcpyOperands)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_MatMul)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace parity

BENCHMARK_MAIN();
