// Graph preparation on the reference backend (every kernel's attribute and shape checks), then
// one run on zero-filled inputs of the declared shapes (symbolic dims as 1), under small limits
// so that a fuzzed size or trip count ends in an Error within the run's time limit.
#include "backend/ref/executor.h"
#include "core/error.h"
#include "core/limits.h"
#include "fuzz/fuzz_util.h"
#include "onnx/model_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Tighter than the parsers' limits, since this target runs the model: one input's run must
  // stay far below libFuzzer's -timeout under the sanitizers and the coverage instrumentation
  // (some hundred times slower than a release build). Every size check and kernel is still
  // reached, with less data.
  static bool ready = [] {
    parity::fuzz::use_small_limits();
    parity::ResourceLimits& l = parity::default_limits();
    l.max_tensor_elements = 1 << 16;
    l.max_memory_bytes = int64_t{64} << 20;
    l.max_run_seconds = 1;
    return true;
  }();
  (void)ready;
  try {
    auto model = parity::onnx_io::load_model_from_bytes(parity::fuzz::bytes_of(data, size), {},
                                                        parity::fuzz::external_data_folder());
    parity::ref::Executor executor(model);
    parity::TensorMap feed;
    for (const auto& in : model->graph.inputs) {
      const auto& type = in.type;
      if (type.kind != parity::ir::ValueType::Kind::kTensor || !type.elem_type) return 0;
      parity::Shape shape;
      if (type.shape)
        for (const auto& d : *type.shape) shape.push_back(d.is_fixed() ? d.value : 1);
      feed.set(in.name, parity::Tensor(*type.elem_type, shape));
    }
    executor.run(feed);
  } catch (const parity::Error&) {
  }
  return 0;
}
