#include "cli/model_args.h"

#include <filesystem>
#include <memory>

#include "core/error.h"
#include "core/logger.h"
#include "core/names.h"
#include "onnx/model_io.h"

namespace parity::cli {

namespace fs = std::filesystem;

namespace {

constexpr char kDefaultModelFunction[] = "load_model";

// Polygraphy's --model-type choices that need TensorFlow, TensorRT or Caffe.
const std::vector<std::string> kOtherPolygraphyTypes = {
    "frozen", "keras", "ckpt", "engine", "uff", "trt-network-script", "caffe"};
const std::vector<std::string> kModelTypes = {"onnx", "onnx-script"};

// Runs the script's function in Python (python -m parity._model_script), which writes the
// model it returns as an ONNX file `out`.
void write_script_model(const ScriptRef& script, const std::string& out) {
  if (!fs::is_regular_file(script.path))
    fail_usage(
        "failed to load the model from script '{}': no such file; give script.py[:func] with "
        "--model-type onnx-script",
        script.path);
  logger().info("Loading model: {} (function {})", script.path, script.function);
  const int status = run_python({"-m", "parity._model_script", script.path, script.function, out});
  if (status != 0 || !fs::is_regular_file(out))
    fail(
        "failed to load the model from script '{}' with function '{}': the script failed "
        "(exit status {}, message above); its function must take no arguments and return an "
        "onnx.ModelProto or a Parity model",
        script.path, script.function, status);
}

// The script's model written in a temporary folder, and loaded from there.
ModelPtr load_model_from_script(const ScriptRef& script, const onnx_io::LoadOptions& options) {
  auto folder = std::make_unique<TempPath>(make_temp_dir("parity-model"));
  const std::string out = (fs::path(folder->path) / "model.onnx").string();
  write_script_model(script, out);
  onnx_io::LoadOptions beside = options;
  beside.external_data_dir.clear();  // the script's model has its data beside the file
  ModelPtr model = onnx_io::load_model(out, beside);
  if (!fs::exists(out + ".data")) {
    model->path = script.path;  // what the model is, for messages; the folder goes now
    return model;
  }
  // A model of 2 GiB or more came with its tensors in model.onnx.data, which backends (ONNX
  // Runtime) read beside the model's path: the folder stays until the command exits.
  static std::vector<std::unique_ptr<TempPath>> kept_folders;
  kept_folders.push_back(std::move(folder));
  return model;
}

}  // namespace

bool ModelArgs::mark_all() const {
  return onnx_outputs.size() == 2 && onnx_outputs[0] == "mark" && onnx_outputs[1] == "all";
}

onnx_io::LoadOptions ModelArgs::load_options() const {
  onnx_io::LoadOptions o;
  o.external_data_dir = external_data_dir;
  o.ignore_external_data = ignore_external_data;
  return o;
}

std::string ModelArgs::type() const {
  if (model_type.empty()) return names_model_script(model_file) ? "onnx-script" : "onnx";
  if (std::find(kModelTypes.begin(), kModelTypes.end(), model_type) != kModelTypes.end())
    return model_type;
  if (std::find(kOtherPolygraphyTypes.begin(), kOtherPolygraphyTypes.end(), model_type) !=
      kOtherPolygraphyTypes.end())
    fail_usage(
        "failed to use --model-type with value '{}': Parity runs ONNX models, without "
        "TensorFlow or TensorRT; valid choices are onnx, onnx-script",
        model_type);
  fail_usage("failed to use --model-type with value '{}': unknown model type{}", model_type,
             did_you_mean(model_type, kModelTypes));
}

ScriptRef ModelArgs::script() const { return parse_script_ref(model_file, kDefaultModelFunction); }

bool names_model_script(const std::string& model_file) {
  return fs::path(parse_script_ref(model_file, "").path).extension() == ".py";
}

surgeon::ModelFile load_model_proto(const std::string& model_file, const std::string& path,
                                    bool script, const std::string& external_data_dir) {
  if (!script) {
    logger().info("Loading model: {}", path);
    return surgeon::load_model_file(model_file, external_data_dir);
  }
  return surgeon::load_model_file(script_model_file(model_file));
}

surgeon::ModelFile ModelArgs::load_proto() const {
  return load_model_proto(model_file, path(), is_script(), external_data_dir);
}

std::string script_model_file(const std::string& model_file) {
  ScriptRef ref = parse_script_ref(model_file, kDefaultModelFunction);
  std::error_code ec;
  const fs::path absolute = fs::absolute(ref.path, ec);
  if (!ec) ref.path = absolute.lexically_normal().string();
  // The folder (with the external data of a model of 2 GiB or more beside the file) stays
  // until the command exits: the tools read the weights from there.
  static std::vector<std::unique_ptr<TempPath>> kept_folders;
  kept_folders.push_back(std::make_unique<TempPath>(make_temp_dir("parity-model")));
  const std::string out = (fs::path(kept_folders.back()->path) / "model.onnx").string();
  write_script_model(ref, out);
  return out;
}

std::string ModelArgs::path() const {
  const std::string file = is_script() ? script().path : model_file;
  std::error_code ec;
  // Python's os.path.abspath, as Polygraphy prints the path: absolute and lexically normal
  // ("a/../m.onnx" is "m.onnx"), no trailing separator.
  const fs::path absolute = fs::absolute(file, ec);
  if (ec) return file;
  std::string normal = absolute.lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal;
}

Loader<ModelPtr> ModelArgs::loader(bool marked_outputs) const {
  Loader<ModelPtr> model;
  if (is_script()) {
    model =
        Loader<ModelPtr>([script = ScriptRef{path(), script().function}, options = load_options()] {
          return load_model_from_script(script, options);
        });
  } else {
    model = OnnxFromPath(path(), load_options());
  }
  if (shape_inference) model = InferShapes(model, load_options());
  return marked_outputs ? marked(model) : model;
}

Loader<ModelPtr> ModelArgs::marked(Loader<ModelPtr> model) const {
  if (!marks_outputs()) return model;
  std::vector<std::string> names = mark_all() ? std::vector<std::string>{} : onnx_outputs;
  return ModifyOutputs(model, names, mark_all(), onnx_exclude_outputs);
}

Loader<ModelPtr> ModelArgs::shared_loader() const {
  if (is_script()) return loader();  // a script's line names its function, printed as it runs
  Loader<ModelPtr> model = [path = path(), options = load_options()] {
    return onnx_io::load_model(path, options);
  };
  if (shape_inference) model = InferShapes(model, load_options());
  return marked(model);
}

Loader<ModelPtr> ModelArgs::loader_for(ModelPtr shared, bool backend_opens_model_file) const {
  const bool modified = marks_outputs() || shape_inference;
  const bool announce = !is_script() && !(backend_opens_model_file && !modified);
  return SharedModel(std::move(shared), path(), announce);
}

void add_model_args(CLI::App& app, ModelArgs& args, bool with_outputs, bool required) {
  CLI::Option* model = app.add_option(
      "model_file", args.model_file,
      "Path to the ONNX model, or a Python script (script.py[:func], default function "
      "load_model) whose function returns an onnx.ModelProto");
  if (required) model->required();
  app.add_option("--model-type", args.model_type,
                 "The type of the model: 'onnx': ONNX model; 'onnx-script': a Python script "
                 "whose function (default load_model; give another after a colon: "
                 "script.py:my_func) takes no arguments and returns an onnx.ModelProto or a "
                 "Parity model. Default: guessed from the extension (.py is a script)")
      ->group("Model");
  app.add_option("--external-data-dir,--load-external-data,--ext", args.external_data_dir,
                 "Folder holding the model's external data. Defaults to the model's folder")
      ->group("ONNX Model Loading");
  app.add_flag("--ignore-external-data", args.ignore_external_data,
               "Load the model's structure only, without its external weights")
      ->group("ONNX Model Loading");
  if (!with_outputs) return;
  app.add_option("--onnx-outputs", args.onnx_outputs,
                 "Tensors to mark as outputs, or the two words 'mark all' for every tensor")
      ->group("ONNX Model Loading");
  app.add_option("--onnx-exclude-outputs", args.onnx_exclude_outputs,
                 "Tensors to unmark as outputs (combine with --onnx-outputs mark all)")
      ->group("ONNX Model Loading");
}

}  // namespace parity::cli
