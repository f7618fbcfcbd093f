// `parity convert`: ONNX to ONNX, optionally with every float tensor that can be in float16
// (surgeon/fp16.h), written through the model tools' one writer.
#include <memory>

#include "cli/model_args.h"
#include "cli/save_onnx_args.h"
#include "cli/tool_command.h"
#include "core/error.h"
#include "core/logger.h"
#include "surgeon/fp16.h"
#include "surgeon/model_file.h"

namespace parity::cli {

namespace {

struct ConvertArgs {
  LoggingArgs logging;
  ModelArgs model;
  SaveOnnxArgs save;  // -o and the external data flags
  std::string convert_to;
  bool fp_to_fp16 = false;
};

int run_convert(const ConvertArgs& args) {
  if (!args.convert_to.empty() && args.convert_to != "onnx")
    fail_usage(
        "failed to parse --convert-to with value '{}': Parity converts ONNX models to ONNX only; "
        "valid choices are: onnx",
        args.convert_to);
  (void)args.save.options(args.model.model_file);  // malformed saving flags fail first
  surgeon::ModelFile model = args.model.load_proto();
  if (args.fp_to_fp16) {
    surgeon::Fp16Options options;
    options.external_data_dir = model.external_data_dir;
    surgeon::convert_to_fp16(*model.proto, options);
  }
  args.save.save(model, args.model.model_file);
  return 0;
}

}  // namespace

void setup_convert(CLI::App& app, ToolCommands& commands) {
  auto args = std::make_shared<ConvertArgs>();
  CLI::App* sub = app.add_subcommand("convert", "Convert ONNX models to other ONNX models.");
  add_logging_args(*sub, args->logging);
  add_model_args(*sub, args->model, /*with_outputs=*/false);
  add_save_onnx_args(*sub, args->save);
  sub->add_option("--convert-to", args->convert_to, "The type of model to convert to (only onnx)");
  sub->add_flag("--fp-to-fp16", args->fp_to_fp16,
                "Convert all floating point tensors in an ONNX model to 16-bit precision, keeping "
                "in float32 what must stay there (with Casts)")
      ->group("ONNX Model Loading");
  commands.push_back({sub, &args->logging, false, [args] { return run_convert(*args); }});
}

}  // namespace parity::cli
