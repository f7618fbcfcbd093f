// Helpers for the ONNX Runtime tests. They run against the real library, found the way Parity
// finds it (PARITY_ORT_LIB, then the copy scripts/install-onnxruntime.sh put under deps/), so
// `PARITY_ORT_LIB=.../libonnxruntime.so.1.17.0 test_backend_onnxrt` runs the suite on 1.17.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include <onnx/onnx_pb.h>

#include "backend/onnxrt/library.h"
#include "backend/onnxrt/runner.h"
#include "core/error.h"
#include "support/onnx_text.h"

namespace parity::testing {

// The process's ONNX Runtime. A missing library fails the test with the install command.
inline const OrtRuntime& ort_runtime() {
  try {
    return OrtRuntime::get();
  } catch (const Error& e) {
    throw Error(
        fmt::format("{}\nThe ONNX Runtime tests need the real library: run "
                    "scripts/install-onnxruntime.sh 1.30.0 deps/onnxruntime-1.30.0",
                    e.what()));
  }
}

// The minor version of the loaded library (30 for 1.30.0).
inline int ort_minor_version() {
  int major = 0, minor = 0;
  std::sscanf(ort_runtime().library().version().c_str(), "%d.%d", &major, &minor);
  return minor;
}

// A model whose graph inputs and outputs get element type `elem_type`, which ONNX 1.12's text
// parser may not know (float8, int4): the text is written with `placeholder` types and the
// numbers are patched in the protobuf (elem_type is a plain int32 field).
inline std::string retyped_model_bytes(const std::string& text, int elem_type, bool inputs = true,
                                       bool outputs = true) {
  ::onnx::ModelProto proto = model_proto_from_text(text);
  auto* graph = proto.mutable_graph();
  if (inputs)
    for (auto& v : *graph->mutable_input())
      v.mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
  if (outputs)
    for (auto& v : *graph->mutable_output())
      v.mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
  std::string bytes;
  proto.SerializeToString(&bytes);
  return bytes;
}

// An activated runner over a serialized model.
inline std::unique_ptr<OnnxrtRunner> bytes_runner(const std::string& bytes,
                                                  OrtOptions options = {}) {
  ort_runtime();
  auto runner = std::make_unique<OnnxrtRunner>(SessionFromOnnxBytes(bytes, std::move(options)));
  runner->activate();
  return runner;
}

}  // namespace parity::testing
