// `parity surgeon`: the options every surgeon subcommand shares, and the dispatch.
#include "cli/surgeon.h"

#include <filesystem>

#include "cli/model_args.h"
#include "cli/parse_util.h"
#include "core/logger.h"

namespace parity::cli {

std::string SurgeonModelArgs::path() const {
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(model_file, ec);
  return ec ? model_file : absolute.string();
}

surgeon::ModelFile SurgeonModelArgs::load(bool show_summary) const {
  surgeon::ModelFile model =
      load_model_proto(model_file, path(), names_model_script(model_file), external_data_dir);
  if (show_summary) show_original(model);
  return model;
}

void SurgeonModelArgs::show_original(const surgeon::ModelFile& model) {
  logger().info("Original Model:\n{}\n", surgeon::model_summary(*model.proto));
}

void SurgeonModelArgs::save_model(surgeon::ModelFile& model) const {
  save.save(model, model_file);
  logger().info("New Model:\n{}\n", surgeon::model_summary(*model.proto));
}

void add_surgeon_model_args(CLI::App& app, SurgeonModelArgs& args) {
  add_logging_args(app, args.logging);
  app.add_option("model_file", args.model_file,
                 "Path to the model, or a Python script (script.py[:func], default function "
                 "load_model) whose function returns an onnx.ModelProto")
      ->required();
  app.add_option("--external-data-dir,--load-external-data,--ext", args.external_data_dir,
                 "Path to a directory containing external data for the model. Generally, this "
                 "is only required if the external data is not stored in the model directory")
      ->group("ONNX Model Loading");
  add_save_onnx_args(app, args.save);
}

DataLoaderOptions FallbackDataArgs::options(const std::string& shapes_flag) const {
  DataLoaderOptions o;
  o.seed = seed;
  o.val_range = parse_val_ranges(val_range);
  o.input_metadata = parse_input_shapes(shapes_flag, input_shapes);
  return o;
}

void add_fallback_data_args(CLI::App& app, FallbackDataArgs& args, const std::string& shapes_flags,
                            const std::string& shapes_help) {
  app.add_option(shapes_flags, args.input_shapes, shapes_help)->group("Model");
  app.add_option("--seed", args.seed, "Seed to use for random inputs")->group("Data Loader");
  app.add_option("--val-range", args.val_range,
                 "Range of values to generate in the data loader: [min,max] or "
                 "<input_name>:[min,max]")
      ->group("Data Loader");
  app.add_flag("--force-fallback-shape-inference", args.force_fallback,
               "Determine the metadata of tensors by running the model on the reference backend "
               "instead of trusting ONNX shape inference. This makes dynamic dimensions static")
      ->group("ONNX Shape Inference");
  app.add_flag("--no-onnxruntime-shape-inference", args.no_onnxruntime_shape_inference,
               "Accepted for Polygraphy's command lines: Parity always uses ONNX's own shape "
               "inference (libonnx), never ONNX Runtime's")
      ->group("ONNX Shape Inference");
}

const LoggingArgs* SurgeonArgs::logging() const {
  if (extract_app && extract_app->parsed()) return &extract.model.logging;
  if (sanitize_app && sanitize_app->parsed()) return &sanitize.model.logging;
  if (insert_app && insert_app->parsed()) return &insert.model.logging;
  return nullptr;
}

bool SurgeonArgs::framed() const {
  return (extract_app && extract_app->parsed()) || (sanitize_app && sanitize_app->parsed());
}

CLI::App* setup_surgeon(CLI::App& app, SurgeonArgs& args) {
  CLI::App* surgeon = app.add_subcommand("surgeon", "Modify ONNX models.");
  surgeon->require_subcommand(1);
  args.extract_app = setup_surgeon_extract(*surgeon, args.extract);
  args.sanitize_app = setup_surgeon_sanitize(*surgeon, args.sanitize);
  args.insert_app = setup_surgeon_insert(*surgeon, args.insert);
  return surgeon;
}

int run_surgeon(const SurgeonArgs& args) {
  if (args.extract_app->parsed()) return run_surgeon_extract(args.extract);
  if (args.insert_app->parsed()) return run_surgeon_insert(args.insert);
  return run_surgeon_sanitize(args.sanitize);
}

}  // namespace parity::cli
