#include "cli/save_onnx_args.h"

#include "cli/parse_util.h"
#include "core/logger.h"

namespace parity::cli {

onnx_io::SaveOptions SaveOnnxArgs::options(const std::string& input_path) const {
  onnx_io::SaveOptions o;
  if (external_data_option && external_data_option->count() > 0)
    o.external_data_path = external_data_path.empty() ? "" : external_data_path.front();
  if (!size_threshold.empty())
    o.size_threshold = parse_byte_size("--external-data-size-threshold", size_threshold,
                                       /*allow_zero=*/true);
  o.all_tensors_to_one_file = !no_all_tensors_to_one_file;
  o.input_path = input_path;
  return o;
}

void SaveOnnxArgs::save(surgeon::ModelFile& model, const std::string& input_path) const {
  const onnx_io::SaveOptions o = options(input_path);
  logger().info("Saving ONNX model to: {}", output);
  surgeon::save_model_file(model, output, o);
}

void add_save_onnx_args(CLI::App& app, SaveOnnxArgs& args, bool output_required,
                        const std::string& output_flags) {
  const char* group = "ONNX Model Saving";
  CLI::Option* out =
      app.add_option(output_flags, args.output, "Path to save the ONNX model")->group(group);
  if (output_required) out->required();
  args.external_data_option =
      app.add_option("--save-external-data,--external-data-path", args.external_data_path,
                     "Whether to save weight data in external file(s). To use a non-default "
                     "path, supply the desired path as an argument. This is always a relative "
                     "path; external data is always written to the same directory as the model")
          ->expected(0, 1)
          ->group(group);
  app.add_option("--external-data-size-threshold", args.size_threshold,
                 "The size threshold, in bytes, above which tensor data will be stored in the "
                 "external file (K, M, G suffixes for KiB, MiB, GiB). Has no effect if "
                 "--save-external-data is not set. Defaults to 1024 bytes")
      ->group(group);
  app.add_flag("--no-save-all-tensors-to-one-file", args.no_all_tensors_to_one_file,
               "Do not save all tensors to a single file when saving external data. Has no "
               "effect if --save-external-data is not set")
      ->group(group);
}

}  // namespace parity::cli
