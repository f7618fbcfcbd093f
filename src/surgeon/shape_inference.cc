#include "surgeon/shape_inference.h"

#include <onnx/shape_inference/implementation.h>

#include "backend/registry.h"
#include "backend/runner.h"
#include "core/error.h"
#include "core/logger.h"
#include "onnx/model_io.h"
#include "surgeon/types.h"

namespace parity::surgeon {

void infer_shapes(::onnx::ModelProto& model, bool error_ok) {
  // libonnx edits the model in place (no copy of its weights); what it may have half-written
  // is put back when it fails.
  const auto saved_info = model.graph().value_info();
  const auto saved_outputs = model.graph().output();
  try {
    ::onnx::shape_inference::InferShapes(model);
  } catch (const std::exception& e) {
    *model.mutable_graph()->mutable_value_info() = saved_info;
    *model.mutable_graph()->mutable_output() = saved_outputs;
    if (!error_ok)
      fail("failed to infer the shapes of the model: ONNX shape inference said: {}", e.what());
    logger().warning("ONNX shape inference exited with an error:\n{}", e.what());
  }
}

TensorMetadata fallback_shapes(const ModelFile& model, const std::vector<std::string>& names,
                               const DataLoaderOptions& data) {
  onnx_io::LoadOptions load;
  load.external_data_dir = model.external_data_dir;
  ModelPtr ir = onnx_io::model_from_proto(model.proto, load, model.external_data_dir);
  DataLoader loader(data);
  loader.set_input_metadata(model_input_metadata(*ir));
  const std::optional<TensorMap> feed = loader.get(0);
  PARITY_ENFORCE(feed.has_value(), "the data loader yields one feed");
  const ConfiguredBackend backend = BackendRegistry::global().configure("pluginref", {});
  TensorMap values;
  try {
    values = backend.fetch_tensors(ir, *feed, names);
  } catch (const Error& e) {
    fail(
        "failed to infer shapes by running the model on generated inputs (the fallback when "
        "ONNX shape inference cannot tell): {}; give the missing shapes and types explicitly",
        e.what());
  }
  TensorMetadata meta;
  for (const auto& name : names) {
    const Tensor* t = values.find(name);
    if (!t) fail("failed to infer the shape of '{}': the run did not produce it", name);
    meta.add(name, t->dtype(), dims_from_shape(t->shape()));
  }
  return meta;
}

void set_shapes(::onnx::GraphProto& graph, const TensorMetadata& meta) {
  for (const auto& m : meta) {
    if (!m.dtype) continue;
    const ::onnx::TypeProto type = tensor_type(*m.dtype, m.shape);
    bool placed = false;
    for (auto* list : {graph.mutable_input(), graph.mutable_output(), graph.mutable_value_info()})
      for (auto& v : *list)
        if (v.name() == m.name) {
          *v.mutable_type() = type;
          placed = true;
        }
    if (!placed) {
      auto* v = graph.add_value_info();
      v->set_name(m.name);
      *v->mutable_type() = type;
    }
  }
}

}  // namespace parity::surgeon
