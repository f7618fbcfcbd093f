// The per-op table of bench/README.md: each op on 4 MB float32 tensors ([1024, 1024]; the
// normalizations over channels 8 MB, Resize 4 MB in, 16 MB out) through the reference backend
// and ONNX Runtime, with a memcpy of the op's first input's bytes as the yardstick, run
// back to back in one process at 1 and 2 threads. Each round times every contender (median of
// --iterations calls each); the table gives the medians over --rounds rounds of the times and
// of the per-round ratios, so a machine shared with other work still gives comparable ratios.
//
//   op_table [--rounds R] [--iterations K] [--threads 1,2] [--only Exp,Tanh,...]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "backend/onnxrt/runner.h"
#include "backend/ref/runner.h"
#include "core/logger.h"
#include "core/thread_pool.h"
#include "onnx/model_io.h"
#include "support_models.h"

using namespace parity;

namespace {

struct Op {
  const char* name;
  double (*glibc)(double);  // the old path's function, for a single function
  int opset;
  int inputs = 1;
  bool positive = false;  // input 0 in (0.05, 4) instead of (-4, 4)
  std::vector<std::pair<std::string, std::string>> string_attrs = {};
  std::vector<std::pair<std::string, int64_t>> int_attrs = {};
  std::vector<std::pair<std::string, std::vector<int64_t>>> ints_attrs = {};
  const char* label = nullptr;  // the row's name when not the op's
  // When set, the node's inputs (shapes, constant initializers) instead of `inputs` float
  // tensors of [1024, 1024]; the float graph inputs among them are fed random values.
  std::vector<bench::NodeInput> node_inputs = {};
  std::vector<std::pair<std::string, float>> float_attrs = {};
};

// The ops of the data-movement and normalization rows: inputs of their own shapes.
bench::NodeInput fed(const char* name, Shape shape) { return {name, std::move(shape)}; }
bench::NodeInput ints(const char* name, std::vector<int64_t> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return {name, {n}, std::move(values), {}, true};
}
bench::NodeInput floats(const char* name, std::vector<float> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return {name, {n}, {}, std::move(values), true};
}
// A fixed pseudo-random permutation of 0..n-1, as Gather's indices.
std::vector<int64_t> shuffled(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  std::shuffle(v.begin(), v.end(), std::mt19937(3));
  return v;
}

const std::vector<Op>& ops() {
  static const std::vector<Op> kOps = {
      {"Relu", nullptr, 14},
      {"Add", nullptr, 14, 2},
      {"Exp", [](double v) { return std::exp(v); }, 13},
      {"Log", [](double v) { return std::log(v); }, 13, 1, true},
      {"Tanh", [](double v) { return std::tanh(v); }, 13},
      {"Sigmoid", nullptr, 13},
      {"Erf", [](double v) { return std::erf(v); }, 13},
      {"Sin", [](double v) { return std::sin(v); }, 13},
      {"Cos", [](double v) { return std::cos(v); }, 13},
      {"Softplus", nullptr, 13},
      {"Mish", nullptr, 18},
      {"Gelu", nullptr, 20},
      {"Softmax", nullptr, 13},
      {"LogSoftmax", nullptr, 13},
      {"Pow", nullptr, 15, 2, true},
      {"ReduceMean", nullptr, 18, 1, false, {}, {{"keepdims", 1}}},
      {"ReduceMean",
       nullptr,
       13,
       1,
       false,
       {},
       {{"keepdims", 1}},
       {{"axes", {1}}},
       "ReduceMean axis 1"},
      {"ReduceSum",
       nullptr,
       11,
       1,
       false,
       {},
       {{"keepdims", 1}},
       {{"axes", {0}}},
       "ReduceSum axis 0"},
      {"Transpose", nullptr, 13},
      {"ReduceSum",
       nullptr,
       13,
       1,
       false,
       {},
       {{"keepdims", 1}},
       {},
       "ReduceSum axis 1 of 3",
       {fed("x0", {64, 256, 64}), ints("axes", {1})}},
      {"ReduceMean",
       nullptr,
       18,
       1,
       false,
       {},
       {{"keepdims", 1}},
       {},
       "ReduceMean axis 1 of 3",
       {fed("x0", {64, 256, 64}), ints("axes", {1})}},
      {"Softmax", nullptr, 13, 1, false, {}, {{"axis", 0}}, {}, "Softmax axis 0"},
      {"LogSoftmax", nullptr, 13, 1, false, {}, {{"axis", 0}}, {}, "LogSoftmax axis 0"},
      {"LayerNormalization",
       nullptr,
       17,
       1,
       false,
       {},
       {{"axis", -1}},
       {},
       nullptr,
       {fed("x0", {1024, 1024}), fed("x1", {1024}), fed("x2", {1024})}},
      {"InstanceNormalization",
       nullptr,
       13,
       1,
       false,
       {},
       {},
       {},
       nullptr,
       {fed("x0", {8, 64, 64, 64}), fed("x1", {64}), fed("x2", {64})}},
      {"GroupNormalization",
       nullptr,
       21,
       1,
       false,
       {},
       {{"num_groups", 8}},
       {},
       nullptr,
       {fed("x0", {8, 64, 64, 64}), fed("x1", {64}), fed("x2", {64})}},
      {"Resize",
       nullptr,
       13,
       1,
       false,
       {{"mode", "linear"}},
       {},
       {},
       "Resize linear 2x",
       {fed("x0", {1, 16, 256, 256}), bench::NodeInput{"", {}}, floats("scales", {1, 1, 2, 2})}},
      {"Resize",
       nullptr,
       13,
       1,
       false,
       {{"mode", "nearest"}},
       {},
       {},
       "Resize nearest 2x",
       {fed("x0", {1, 16, 256, 256}), bench::NodeInput{"", {}}, floats("scales", {1, 1, 2, 2})}},
      {"Gather",
       nullptr,
       13,
       1,
       false,
       {},
       {{"axis", 0}},
       {},
       "Gather axis 0",
       {fed("x0", {1024, 1024}), ints("indices", shuffled(1024))}},
      {"Gather",
       nullptr,
       13,
       1,
       false,
       {},
       {{"axis", 1}},
       {},
       "Gather axis 1",
       {fed("x0", {1024, 1024}), ints("indices", shuffled(1024))}},
      {"Slice",
       nullptr,
       13,
       1,
       false,
       {},
       {},
       {},
       "Slice step 2",
       {fed("x0", {1024, 1024}), ints("starts", {0, 1}), ints("ends", {1024, 1024}),
        ints("axes", {0, 1}), ints("steps", {1, 2})}},
      {"Slice",
       nullptr,
       13,
       1,
       false,
       {},
       {},
       {},
       "Slice steps -1 -3",
       {fed("x0", {1024, 1024}), ints("starts", {-1, -1}), ints("ends", {-1025, -1025}),
        ints("axes", {0, 1}), ints("steps", {-1, -3})}},
      {"Concat",
       nullptr,
       13,
       2,
       false,
       {},
       {{"axis", 0}},
       {},
       "Concat axis 0",
       {fed("x0", {512, 1024}), fed("x1", {512, 1024})}},
      {"Concat",
       nullptr,
       13,
       2,
       false,
       {},
       {{"axis", 1}},
       {},
       "Concat axis 1",
       {fed("x0", {1024, 512}), fed("x1", {1024, 512})}},
  };
  return kOps;
}

const Shape kShape = {1024, 1024};

Tensor random_tensor(bool positive, unsigned seed, const Shape& shape = kShape) {
  Tensor t(DataType::kFloat32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(positive ? 0.05f : -4.0f, 4.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

// The medians of the wall time and of the process's CPU time of `iterations` calls. On a
// machine shared with other work, a call longer than a scheduler slice is preempted more often
// than a short one, which inflates its wall time: the CPU time is not (at 1 thread, where
// both backends compute on the calling thread, it is the fair measure).
struct Times {
  double wall, cpu;
};
template <typename F>
Times median_ms(int iterations, F&& f) {
  std::vector<double> wall, cpu;
  for (int i = 0; i < iterations; ++i) {
    const double c0 = cpu_ms();
    auto start = std::chrono::steady_clock::now();
    f();
    wall.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
    cpu.push_back(cpu_ms() - c0);
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  return {wall[wall.size() / 2], cpu[cpu.size() / 2]};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5, iterations = 5;
  std::vector<int> thread_counts = {1, 2};
  std::string only;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--rounds")
      rounds = std::max(1, std::stoi(value));
    else if (flag == "--iterations")
      iterations = std::max(1, std::stoi(value));
    else if (flag == "--only")
      only = "," + value + ",";
    else if (flag == "--threads") {
      thread_counts.clear();
      for (size_t p = 0; p < value.size();) {
        size_t q = value.find(',', p);
        thread_counts.push_back(std::stoi(value.substr(p, q - p)));
        p = q == std::string::npos ? value.size() : q + 1;
      }
    } else {
      std::fprintf(stderr,
                   "unknown option '%s'; valid: --rounds, --iterations, --threads, "
                   "--only\n",
                   flag.c_str());
      return 2;
    }
  }
  logger().set_severity(Severity::kWarning);
  std::printf(
      "| op | threads | reference ms | ONNX Runtime ms | memcpy ms | ref / ORT | "
      "ref / ORT, CPU time | ref / memcpy | ORT / memcpy | old glibc loop / ref, CPU "
      "time |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  try {
    for (const Op& op : ops()) {
      const std::string label = op.label ? op.label : op.name;
      if (!only.empty() && only.find("," + label + ",") == std::string::npos) continue;
      auto model = onnx_io::load_model_from_bytes(
          op.node_inputs.empty()
              ? bench::single_op_model_bytes(op.name, kShape, op.opset, op.inputs, op.string_attrs,
                                             op.int_attrs, op.ints_attrs)
              : bench::node_model_bytes(op.name, op.opset, op.node_inputs, op.string_attrs,
                                        op.int_attrs, op.ints_attrs, op.float_attrs));
      TensorMap feed;
      if (op.node_inputs.empty()) {
        for (int k = 0; k < op.inputs; ++k) {
          // Pow's exponent in (-4, 4) would overflow nothing: its base is in (0.05, 4).
          feed.set("x" + std::to_string(k), random_tensor(k == 0 && op.positive, 7 + k));
        }
      } else {
        unsigned seed = 7;
        for (const bench::NodeInput& in : op.node_inputs)
          if (!in.name.empty() && !in.constant)
            feed.set(in.name, random_tensor(false, seed++, in.shape));
      }
      for (int threads : thread_counts) {
        PluginRefRunner ref(Loader<ModelPtr>(model), "ref");
        ref.set_threads(threads);
        OrtOptions options;
        options.intra_op_threads = threads;
        auto ort = make_onnxrt_runner(Loader<ModelPtr>(model), options);
        RunnerActivation ref_active(ref), ort_active(*ort);
        ref.infer(feed);  // warm-up
        ort->infer(feed);
        std::vector<double> ref_ms, ort_ms, copy_ms, ref_ort, ref_ort_cpu, ref_copy, ort_copy,
            old_ref;
        const Tensor& x0 = feed.at("x0");
        // The yardstick copies as many bytes as the op's first input has.
        std::vector<char> src(x0.nbytes(), 1), dst(x0.nbytes());
        Tensor old_y(DataType::kFloat32, kShape);
        for (int r = 0; r < rounds; ++r) {
          const Times c = median_ms(iterations, [&] {
            std::memcpy(dst.data(), src.data(), src.size());
            asm volatile("" : : "r"(dst.data()) : "memory");
          });
          const Times a = median_ms(iterations, [&] { ref.infer(feed); });
          const Times b = median_ms(iterations, [&] { ort->infer(feed); });
          ref_ms.push_back(a.wall), ort_ms.push_back(b.wall), copy_ms.push_back(c.wall);
          ref_ort.push_back(a.wall / b.wall), ref_ort_cpu.push_back(a.cpu / b.cpu);
          ref_copy.push_back(a.wall / c.wall), ort_copy.push_back(b.wall / c.wall);
          if (op.glibc && threads == 1) {
            // The old kernel's loop: glibc in double, rounded once, on one thread.
            const Times g = median_ms(iterations, [&] {
              const float* in = x0.data<float>();
              float* out = old_y.data<float>();
              const int64_t numel = x0.numel();
              for (int64_t i = 0; i < numel; ++i)
                out[i] = static_cast<float>(op.glibc(static_cast<double>(in[i])));
              asm volatile("" : : "r"(out) : "memory");
            });
            old_ref.push_back(g.cpu / a.cpu);
          }
        }
        const std::string speedup =
            old_ref.empty() ? "" : std::to_string(median(old_ref)).substr(0, 4);
        std::printf("| %s | %d | %.3f | %.3f | %.3f | %.2f | %.2f | %.1f | %.1f | %s |\n",
                    label.c_str(), threads, median(ref_ms), median(ort_ms), median(copy_ms),
                    median(ref_ort), median(ref_ort_cpu), median(ref_copy), median(ort_copy),
                    speedup.c_str());
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "op_table: %s\n", e.what());
    return 1;
  }
  return 0;
}
