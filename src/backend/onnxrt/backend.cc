// ONNX Runtime in the backend registry: `--onnxrt` and its option group (providers, threads,
// the library to load, the optimisation level, custom-op libraries).
#include <fmt/format.h>

#include "backend/onnxrt/departures.h"
#include "backend/onnxrt/runner.h"
#include "backend/registry.h"
#include "core/py_format.h"

namespace parity {

namespace {

OrtOptions ort_options(const BackendOptionValues& v) {
  OrtOptions o;
  o.lib_path = v.value("ort-lib", "");
  o.providers = v.list("providers", {"cpu"});
  o.provider_options = v.list("provider-option", {});
  o.intra_op_threads = static_cast<int>(v.integer("ort-threads", 0, 0, 1 << 30));
  const std::string level = v.value("ort-optimization-level", "all");
  const std::optional<GraphOptimizationLevel> parsed = graph_optimization_level_from_name(level);
  if (!parsed)
    fail_usage(
        "failed to parse --ort-optimization-level with value '{}': unknown level; valid "
        "choices are disable, basic, extended, all",
        level);
  o.graph_optimization_level = static_cast<int>(*parsed);
  o.custom_op_libs = v.list("ort-custom-op-lib", {});
  return o;
}

Backend onnxrt_backend() {
  using Kind = BackendOption::Kind;
  Backend b;
  b.name = "onnxrt";
  b.flags = "--onnxrt";
  b.help = "Run inference with ONNX Runtime";
  b.group = "ONNX-Runtime Session Creation";  // Polygraphy's group of --providers
  b.rank = 10;
  b.opens_model_file = true;
  b.options = {
      {"--providers,--execution-providers", Kind::kList,
       "ONNX Runtime execution providers in priority order; exact or case-insensitive "
       "substring match",
       "cpu"},
      {"--provider-option", Kind::kList,
       "key=value options passed to the CUDA or TensorRT provider"},
      {"--ort-lib", Kind::kValue,
       "Path of libonnxruntime.so to load (else $PARITY_ORT_LIB, the copy installed by "
       "setup.sh, then the system)"},
      {"--ort-threads", Kind::kValue, "ONNX Runtime intra-op threads (0 = default)", "0"},
      {"--ort-optimization-level",
       Kind::kValue,
       "ONNX Runtime graph optimisation level",
       "all",
       {"disable", "basic", "extended", "all"}},
      {"--ort-custom-op-lib", Kind::kList, "Custom-op libraries to register with ONNX Runtime"},
  };
  b.configure = [](const BackendOptionValues& v) { return std::any(ort_options(v)); };
  b.for_batches = [](const std::any& config) {
    OrtOptions o = std::any_cast<const OrtOptions&>(config);
    o.cpu_mem_arena = false;
    return std::any(o);
  };
  b.make_runner = [](Loader<ModelPtr> model, const std::any& config, const std::string& name) {
    return make_onnxrt_runner(std::move(model), std::any_cast<const OrtOptions&>(config), name);
  };
  b.script = [](const std::any& config) {
    const OrtOptions& o = std::any_cast<const OrtOptions&>(config);
    return RunnerScript{
        {"from parity.backend.onnxrt import OnnxrtRunner, SessionFromOnnx"},
        fmt::format("OnnxrtRunner(SessionFromOnnx(model, providers={}, provider_options={}, "
                    "lib_path={}, intra_op_threads={}, graph_optimization_level={}, "
                    "custom_op_libs={}))",
                    py_list(o.providers), py_list(o.provider_options), py_str(o.lib_path),
                    o.intra_op_threads, o.graph_optimization_level, py_list(o.custom_op_libs))};
  };
  b.known_departures = [](const ir::Model& model, const std::vector<std::string>& failing) {
    std::vector<std::string> messages;
    for (const onnxrt::Departure& d : onnxrt::known_departures(model, failing))
      messages.push_back(onnxrt::describe(d));
    return messages;
  };
  return b;
}

}  // namespace

PARITY_REGISTER_BACKEND(onnxrt_backend());

}  // namespace parity
