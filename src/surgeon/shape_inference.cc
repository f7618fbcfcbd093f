#include "surgeon/shape_inference.h"

#include <algorithm>

#include "backend/registry.h"
#include "backend/runner.h"
#include "core/error.h"
#include "core/logger.h"
#include "core/names.h"
#include "onnx/model_io.h"
#include "surgeon/types.h"

namespace parity::surgeon {

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
    if (!t) t = feed->find(name);  // a graph input
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

void override_input_shapes(::onnx::GraphProto& graph, const TensorMetadata& shapes) {
  std::vector<std::string> inputs;
  for (const auto& in : graph.input()) inputs.push_back(in.name());
  for (const auto& m : shapes)
    if (std::find(inputs.begin(), inputs.end(), m.name) == inputs.end())
      fail("failed to override the shape of input '{}': graph '{}' has no such input{}", m.name,
           graph.name(), did_you_mean(m.name, inputs));
  for (auto& in : *graph.mutable_input()) {
    const TensorMeta* m = shapes.find(in.name());
    if (!m || !m->shape) continue;
    if (!in.type().has_tensor_type())
      fail("failed to override the shape of input '{}': it is not a tensor (its type is {})",
           in.name(), type_str(in.type()));
    const auto dtype = dtype_of(in.type());
    if (!dtype)
      fail("failed to override the shape of input '{}': the model records no data type for it",
           in.name());
    *in.mutable_type() = tensor_type(*dtype, m->shape);
  }
  for (auto* list : {graph.mutable_output(), graph.mutable_value_info()})
    for (auto& v : *list)
      if (v.type().has_tensor_type()) v.mutable_type()->mutable_tensor_type()->clear_shape();
}

}  // namespace parity::surgeon
