#include "cli/model_args.h"

#include <filesystem>

namespace parity::cli {

bool ModelArgs::mark_all() const {
  return onnx_outputs.size() == 2 && onnx_outputs[0] == "mark" && onnx_outputs[1] == "all";
}

onnx_io::LoadOptions ModelArgs::load_options() const {
  onnx_io::LoadOptions o;
  o.external_data_dir = external_data_dir;
  o.ignore_external_data = ignore_external_data;
  return o;
}

std::string ModelArgs::path() const {
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(model_file, ec);
  return ec ? model_file : absolute.string();
}

Loader<ModelPtr> ModelArgs::loader(bool marked) const {
  Loader<ModelPtr> model = OnnxFromPath(path(), load_options());
  if (!marked || !marks_outputs()) return model;
  std::vector<std::string> names = mark_all() ? std::vector<std::string>{} : onnx_outputs;
  return ModifyOutputs(model, names, mark_all(), onnx_exclude_outputs);
}

void add_model_args(CLI::App& app, ModelArgs& args, bool with_outputs, bool required) {
  CLI::Option* model = app.add_option("model_file", args.model_file, "Path to the ONNX model");
  if (required) model->required();
  app.add_option("--external-data-dir,--load-external-data,--ext", args.external_data_dir,
                 "Folder holding the model's external data. Defaults to the model's folder")
      ->group("Model");
  app.add_flag("--ignore-external-data", args.ignore_external_data,
               "Load the model's structure only, without its external weights")
      ->group("Model");
  if (!with_outputs) return;
  app.add_option("--onnx-outputs", args.onnx_outputs,
                 "Tensors to mark as outputs, or the two words 'mark all' for every tensor")
      ->group("Model");
  app.add_option("--onnx-exclude-outputs", args.onnx_exclude_outputs,
                 "Tensors to unmark as outputs (combine with --onnx-outputs mark all)")
      ->group("Model");
}

}  // namespace parity::cli
