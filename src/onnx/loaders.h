// ONNX loaders (Polygraphy's backend/onnx/loader.py names).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/loader.h"
#include "onnx/model_io.h"
#include "onnx/save_model.h"

namespace parity {

using ModelPtr = std::shared_ptr<ir::Model>;

Loader<ModelPtr> OnnxFromPath(std::string path, onnx_io::LoadOptions options = {});
// A model already loaded from `path`, shared by several runners: each call prints Polygraphy's
// "Loading model: <path>" line (when `announce`) and returns the same model, so that the line
// follows each runner's "Activating" line as it does in Polygraphy, where every runner loads.
Loader<ModelPtr> SharedModel(ModelPtr model, std::string path, bool announce);
Loader<ModelPtr> OnnxFromBytes(Loader<std::string> bytes, onnx_io::LoadOptions options = {});
Loader<std::string> BytesFromOnnx(Loader<ModelPtr> model);
Loader<ModelPtr> ModifyOutputs(Loader<ModelPtr> model, std::vector<std::string> outputs,
                               bool mark_all, std::vector<std::string> exclude = {});
// Runs ONNX's shape inference on a copy of the model (Polygraphy's InferShapes): the model
// given is left as it was; `options` are those it was loaded with (its IR is rebuilt). A failure
// of inference is a warning with `error_ok`, else an Error.
Loader<ModelPtr> InferShapes(Loader<ModelPtr> model, onnx_io::LoadOptions options = {},
                             bool error_ok = true);
// Saves the model and passes it on, unchanged (Polygraphy's SaveOnnx), logging "Saving ONNX
// model to: <path>".
Loader<ModelPtr> SaveOnnx(Loader<ModelPtr> model, std::string path,
                          onnx_io::SaveOptions options = {});
// The graph the reference backend runs (the model itself: Parity's IR is already a graph).
inline Loader<ModelPtr> GraphFromOnnx(Loader<ModelPtr> model) { return model; }

}  // namespace parity
