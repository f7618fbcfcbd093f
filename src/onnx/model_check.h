// What ONNX's checker and ONNX Runtime refuse in a model's header and graph signature, checked
// when a model is loaded, so that a broken model is an error (or a warning) instead of a run
// that compares nothing or something else than the user thinks.
//
//   error    ir_version missing, 0 or negative              (checker: "ir_version not set")
//   error    ir_version above the newest IR version (11)     (checker, ONNX Runtime: unsupported)
//   error    an opset version below 1                        (ONNX Runtime: not a released opset)
//   error    a domain imported twice                         (checker: duplicate opset_import)
//   error    no opset_import for ir_version >= 3             (checker, ONNX Runtime)
//   warning  an ai.onnx opset above the newest released one  (ONNX Runtime warns likewise;
//            the newest kernels are used)
//   error    a graph input (or output) name given twice      (checker: graphs are SSA)
//   error    a top-level graph without outputs               (nothing to run or compare)
#pragma once

namespace onnx {
class ModelProto;
}

namespace parity::onnx_io {

// The newest IR version (ONNX 1.18) and ai.onnx opset (ONNX 1.19) this release knows.
inline constexpr long kNewestIrVersion = 11;
inline constexpr long kNewestOnnxOpset = 24;

// Throws Error for what is listed as an error above; logs the warnings.
void check_model_proto(const ::onnx::ModelProto& model);

}  // namespace parity::onnx_io
