#include "onnx/loaders.h"

#include <onnx/onnx_pb.h>

#include "core/error.h"
#include "core/logger.h"

namespace parity {

Loader<ModelPtr> OnnxFromPath(std::string path, onnx_io::LoadOptions options) {
  return Loader<ModelPtr>([path = std::move(path), options = std::move(options)] {
    logger().info("Loading model: {}", path);  // Polygraphy's line, which its users grep for
    return onnx_io::load_model(path, options);
  });
}

Loader<ModelPtr> SharedModel(ModelPtr model, std::string path, bool announce) {
  return Loader<ModelPtr>([model = std::move(model), path = std::move(path), announce] {
    if (announce) logger().info("Loading model: {}", path);
    return model;
  });
}

Loader<ModelPtr> OnnxFromBytes(Loader<std::string> bytes, onnx_io::LoadOptions options) {
  return Loader<ModelPtr>([bytes = std::move(bytes), options = std::move(options)] {
    // Bytes have no folder of their own: external data is looked up in the given folder or
    // the working directory.
    return onnx_io::load_model_from_bytes(bytes(), options, ".");
  });
}

Loader<std::string> BytesFromOnnx(Loader<ModelPtr> model) {
  return Loader<std::string>(
      [model = std::move(model)] { return onnx_io::serialize_model(*model()); });
}

Loader<ModelPtr> ModifyOutputs(Loader<ModelPtr> model, std::vector<std::string> outputs,
                               bool mark_all, std::vector<std::string> exclude) {
  return Loader<ModelPtr>([model = std::move(model), outputs = std::move(outputs), mark_all,
                           exclude = std::move(exclude)] {
    return onnx_io::modify_outputs(*model(), outputs, mark_all, exclude);
  });
}

Loader<ModelPtr> InferShapes(Loader<ModelPtr> model, onnx_io::LoadOptions options, bool error_ok) {
  return Loader<ModelPtr>([model = std::move(model), options = std::move(options), error_ok] {
    const ModelPtr given = model();
    PARITY_ENFORCE(given->proto != nullptr, "a loaded ONNX model keeps its protobuf");
    auto proto = std::make_shared<onnx::ModelProto>(*given->proto);
    onnx_io::infer_shapes(*proto, error_ok);
    onnx_io::LoadOptions same = options;
    same.external_data_dir = given->external_data_dir;
    ModelPtr inferred = onnx_io::model_from_proto(proto, same, given->external_data_dir);
    inferred->path = given->path;
    return inferred;
  });
}

Loader<ModelPtr> SaveOnnx(Loader<ModelPtr> model, std::string path, onnx_io::SaveOptions options) {
  return Loader<ModelPtr>(
      [model = std::move(model), path = std::move(path), options = std::move(options)] {
        ModelPtr m = model();
        logger().info("Saving ONNX model to: {}", path);
        onnx_io::save_model(*m, path, options);
        return m;
      });
}

}  // namespace parity
