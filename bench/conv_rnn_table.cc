// ConvTranspose and the recurrent layers (issue #14) through the reference backend and ONNX
// Runtime side by side in one process, at 1 and 2 threads: one-node models with constant
// weights, CPU time and wall time (medians of --iterations calls, then the median over
// --rounds rounds of each and of the per-round ratios). For ConvTranspose the old direct
// kernel (conv_transpose_direct, kept for non-finite weights) is timed beside the new GEMM
// path, on one thread, and its result is checked to have the same bits.
//
//   conv_rnn_table [--rounds R] [--iterations K] [--threads 1,2] [--only LSTM,GRU,...]
#include <onnx/defs/parser.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "backend/onnxrt/runner.h"
#include "backend/ref/ops/conv_transpose.h"
#include "backend/ref/runner.h"
#include "core/logger.h"
#include "core/thread_pool.h"
#include "onnx/model_io.h"

using namespace parity;

namespace {

struct Case {
  const char* name;
  std::string text;                 // ONNX text; every input but x becomes a constant
  std::vector<std::string> consts;  // the inputs made initializers (random values)
  Shape x_shape;
  ref::ConvTransposeShape geometry = {};  // ConvTranspose only: for the old kernel
};

std::vector<Case> cases() {
  auto conv_t = [](const char* name, Shape x, Shape w, std::string attrs,
                   ref::ConvTransposeShape g) {
    auto dims = [](const Shape& s) {
      std::string r;
      for (int64_t d : s) r += (r.empty() ? "" : ",") + std::to_string(d);
      return r;
    };
    std::string text = "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[" + dims(x) +
                       "] x, float[" + dims(w) + "] w) => (float y) { y = ConvTranspose<" + attrs +
                       ">(x, w) }";
    return Case{name, text, {"w"}, x, g};
  };
  auto recurrent = [](const char* name, const char* op, int gates, int64_t seq, int64_t batch,
                      int64_t input, int64_t hidden) {
    auto s = [](int64_t v) { return std::to_string(v); };
    std::string text = "<ir_version: 8, opset_import: [\"\" : 14]>\ng (float[" + s(seq) + "," +
                       s(batch) + "," + s(input) + "] x, float[1," + s(gates * hidden) + "," +
                       s(input) + "] w, float[1," + s(gates * hidden) + "," + s(hidden) +
                       "] r, float[1," + s(2 * gates * hidden) + "] b) => (float y) { y = " + op +
                       "<hidden_size = " + s(hidden) + ">(x, w, r, b) }";
    return Case{name, text, {"w", "r", "b"}, {seq, batch, input}};
  };
  auto geom = [](Shape in, Shape k, Shape s, Shape p, Shape op) {
    ref::ConvTransposeShape g;
    g.g.in = in, g.g.kernel = k, g.g.strides = s, g.g.dilations = Shape(in.size(), 1);
    g.g.pad_begin = p, g.g.pad_end = p;
    for (size_t d = 0; d < in.size(); ++d)
      g.g.out.push_back(s[d] * (in[d] - 1) + op[d] + k[d] - 2 * p[d]);
    return g;
  };
  return {
      conv_t("ConvTranspose 4x4/2 64->32 on 28x28", {1, 64, 28, 28}, {64, 32, 4, 4},
             "strides = [2, 2], pads = [1, 1, 1, 1]",
             geom({28, 28}, {4, 4}, {2, 2}, {1, 1}, {0, 0})),
      conv_t("ConvTranspose 3x3/1 64->64 on 28x28", {1, 64, 28, 28}, {64, 64, 3, 3},
             "pads = [1, 1, 1, 1]", geom({28, 28}, {3, 3}, {1, 1}, {1, 1}, {0, 0})),
      conv_t("ConvTranspose 3x3x3/2 16->16 on 8x16x16", {1, 16, 8, 16, 16}, {16, 16, 3, 3, 3},
             "strides = [2, 2, 2], pads = [1, 1, 1, 1, 1, 1], output_padding = [1, 1, 1]",
             geom({8, 16, 16}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1})),
      recurrent("LSTM seq 32, batch 1, 64 -> 128", "LSTM", 4, 32, 1, 64, 128),
      recurrent("GRU seq 32, batch 1, 64 -> 128", "GRU", 3, 32, 1, 64, 128),
      recurrent("RNN seq 32, batch 1, 64 -> 128", "RNN", 1, 32, 1, 64, 128),
      recurrent("LSTM seq 32, batch 8, 64 -> 128", "LSTM", 4, 32, 8, 64, 128),
  };
}

Tensor random_tensor(const Shape& shape, unsigned seed) {
  Tensor t(DataType::kFloat32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

// The case's model with its weights as initializers; `weights` receives them.
std::string model_bytes(const Case& c, TensorMap& weights) {
  ::onnx::ModelProto proto;
  auto status = ::onnx::OnnxParser::Parse(proto, c.text.c_str());
  if (!status.IsOK()) fail("bad benchmark model: {}", status.ErrorMessage());
  auto* graph = proto.mutable_graph();
  unsigned seed = 11;
  for (int i = graph->input_size() - 1; i >= 0; --i) {
    const auto& input = graph->input(i);
    if (std::find(c.consts.begin(), c.consts.end(), input.name()) == c.consts.end()) continue;
    Shape shape;
    for (const auto& d : input.type().tensor_type().shape().dim()) shape.push_back(d.dim_value());
    Tensor t = random_tensor(shape, seed++);
    auto* init = graph->add_initializer();
    init->set_name(input.name());
    init->set_data_type(::onnx::TensorProto::FLOAT);
    for (int64_t d : shape) init->add_dims(d);
    init->set_raw_data(t.raw_data(), t.nbytes());
    weights.set(input.name(), t);
    graph->mutable_input()->DeleteSubrange(i, 1);
  }
  std::string bytes;
  proto.SerializeToString(&bytes);
  return bytes;
}

double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

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
                   "unknown option '%s'; valid: --rounds, --iterations, --threads, --only\n",
                   flag.c_str());
      return 2;
    }
  }
  logger().set_severity(Severity::kWarning);
  std::printf(
      "| case | threads | reference ms | ONNX Runtime ms | ref / ORT | ref / ORT, CPU time | "
      "old kernel / ref, CPU time |\n|---|---:|---:|---:|---:|---:|---:|\n");
  try {
    for (const Case& c : cases()) {
      const std::string op = std::string(c.name).substr(0, std::string(c.name).find(' '));
      if (!only.empty() && only.find("," + op + ",") == std::string::npos) continue;
      TensorMap weights;
      auto model = onnx_io::load_model_from_bytes(model_bytes(c, weights));
      TensorMap feed;
      feed.set("x", random_tensor(c.x_shape, 7));
      for (int threads : thread_counts) {
        PluginRefRunner ref(Loader<ModelPtr>(model), "ref");
        ref.set_threads(threads);
        OrtOptions options;
        options.intra_op_threads = threads;
        auto ort = make_onnxrt_runner(Loader<ModelPtr>(model), options);
        RunnerActivation ref_active(ref), ort_active(*ort);
        const Tensor y = ref.infer(feed).at("y");  // also the warm-up
        ort->infer(feed);
        const bool transpose = op == "ConvTranspose";
        if (transpose && threads == 1) {
          const Tensor old =
              ref::conv_transpose_direct(feed.at("x"), weights.at("w"), nullptr, c.geometry);
          if (!old.equals(y)) fail("{}: the old kernel's bits differ from the new path's", c.name);
        }
        std::vector<double> ref_ms, ort_ms, ref_ort, ref_ort_cpu, old_ref;
        for (int r = 0; r < rounds; ++r) {
          const Times a = median_ms(iterations, [&] { ref.infer(feed); });
          const Times b = median_ms(iterations, [&] { ort->infer(feed); });
          ref_ms.push_back(a.wall), ort_ms.push_back(b.wall);
          ref_ort.push_back(a.wall / b.wall), ref_ort_cpu.push_back(a.cpu / b.cpu);
          if (transpose && threads == 1) {
            // The pool has one thread here (ref.infer set it).
            const Times o = median_ms(iterations, [&] {
              ref::conv_transpose_direct(feed.at("x"), weights.at("w"), nullptr, c.geometry);
            });
            old_ref.push_back(o.cpu / a.cpu);
          }
        }
        char old_text[32] = "";
        if (!old_ref.empty()) std::snprintf(old_text, sizeof old_text, "%.2f", median(old_ref));
        std::printf("| %s | %d | %.3f | %.3f | %.2f | %.2f | %s |\n", c.name, threads,
                    median(ref_ms), median(ort_ms), median(ref_ort), median(ref_ort_cpu), old_text);
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "conv_rnn_table: %s\n", e.what());
    return 1;
  }
  return 0;
}
