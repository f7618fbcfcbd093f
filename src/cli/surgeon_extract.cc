// `parity surgeon extract`: the subgraph between tensors (Polygraphy's `surgeon extract`).
#include <string>

#include "cli/parse_util.h"
#include "cli/surgeon.h"
#include "core/error.h"
#include "core/logger.h"
#include "surgeon/extract.h"
#include "surgeon/shape_inference.h"

namespace parity::cli {

namespace {

// Polygraphy's parse_meta: parts split off from the right, each one may be 'auto'.
std::string pop_part(std::string& token) {
  const size_t colon = token.rfind(':');
  std::string part = colon == std::string::npos ? token : token.substr(colon + 1);
  token = colon == std::string::npos ? "" : token.substr(0, colon);
  return part;
}

std::optional<DataType> parse_dtype(const std::string& flag, const std::string& token,
                                    const std::string& text) {
  if (text == "auto") return std::nullopt;
  if (auto d = dtype_from_name(text)) return d;
  fail_usage(
      "failed to parse {} with value '{}': '{}' is not a data type; valid choices are 'auto', "
      "float32, float16, bfloat16, float64, int8, int16, int32, int64, uint8, uint16, uint32, "
      "uint64, bool, string",
      flag, token, text);
}

std::vector<surgeon::TensorSpec> parse_meta(const std::string& flag,
                                            const std::vector<std::string>& tokens,
                                            bool with_shape) {
  std::vector<surgeon::TensorSpec> specs;
  for (const std::string& token : tokens) {
    std::string rest = token;
    const std::string dtype = pop_part(rest);
    const std::string shape = with_shape ? pop_part(rest) : "";
    if (rest.empty())
      fail_usage("failed to parse {} with value '{}': the format is {}, each part may be 'auto'",
                 flag, token, with_shape ? "<name>:<shape>:<dtype>" : "<name>:<dtype>");
    surgeon::TensorSpec spec{rest, parse_dtype(flag, token, dtype), std::nullopt};
    if (with_shape && shape != "auto") spec.shape = parse_dims(flag, token, shape);
    specs.push_back(std::move(spec));
  }
  return specs;
}

// Fills what the user left 'auto' (and, unless forced, the model does not record) from a run
// on generated inputs.
void fill_from_fallback(surgeon::ExtractOptions& options, const TensorMetadata& ran,
                        const TensorMetadata& missing, bool forced) {
  auto fill = [&](surgeon::TensorSpec& s, bool with_shape) {
    const TensorMeta* r = ran.find(s.name);
    if (!r || (!forced && !missing.find(s.name))) return;
    if (!s.dtype) s.dtype = r->dtype;
    if (with_shape && !s.shape) s.shape = r->shape;
    logger().verbose("Updated tensor: {} metadata to: dtype={}, shape={}", s.name,
                     s.dtype ? std::string(dtype_name(*s.dtype)) : "None",
                     s.shape ? dims_str(*s.shape) : "None");
  };
  for (auto& s : options.inputs) fill(s, true);
  for (auto& s : options.outputs) fill(s, forced);
}

}  // namespace

CLI::App* setup_surgeon_extract(CLI::App& surgeon, SurgeonExtractArgs& args) {
  CLI::App* sub = surgeon.add_subcommand(
      "extract",
      "Extract a subgraph from an ONNX model based on the specified inputs and outputs.");
  add_surgeon_model_args(*sub, args.model);
  add_fallback_data_args(*sub, args.data, "--model-input-shapes,--model-inputs",
                         "Input shapes to use when generating data to run fallback shape "
                         "inference: <name>:<shape>. Has no effect if fallback shape inference "
                         "is not run");
  sub->add_option("--inputs", args.inputs,
                  "Input metadata for subgraph (names, shapes, and data types): "
                  "<name>:<shape>:<dtype>, each part 'auto' to determine it automatically. "
                  "If omitted, uses the current model inputs");
  sub->add_option("--outputs", args.outputs,
                  "Output metadata for subgraph (names and data types): <name>:<dtype>, the "
                  "dtype 'auto' to determine it automatically. If omitted, uses the current "
                  "model outputs");
  return sub;
}

int run_surgeon_extract(const SurgeonExtractArgs& args) {
  surgeon::ExtractOptions options;
  options.inputs = parse_meta("--inputs", args.inputs, true);
  options.outputs = parse_meta("--outputs", args.outputs, false);
  const DataLoaderOptions data = args.data.options("--model-inputs");
  (void)args.model.save.options(args.model.model_file);  // malformed saving flags fail first

  surgeon::ModelFile model = args.model.load();
  // Unset lists mean the model's own inputs and outputs, whose types the model records.
  TensorMetadata missing = surgeon::missing_metadata(model.proto->graph(), options);
  if (!missing.empty() && !args.data.force_fallback) {
    logger().info(
        "Running shape inference to derive shapes and/or data types for `auto` arguments.\n"
        "To avoid this, you can specify the shapes and data types explicitly.");
    surgeon::infer_shapes(*model.proto);
    missing = surgeon::missing_metadata(model.proto->graph(), options);
  }
  if (!missing.empty() || args.data.force_fallback) {
    if (args.data.force_fallback)
      logger().info(
          "Forcing fallback shape inference. This will cause dynamic dimensions to become "
          "static.");
    else
      logger().warning(
          "Some tensor shapes or dtypes are missing in the model. Note: Tensors with missing "
          "information:\n{}\nWill run inference to determine shapes. This may cause some "
          "dynamic dimensions to become static.\nTo avoid this, please provide metadata on the "
          "command-line. ",
          missing.str());
    std::vector<std::string> names;
    for (const auto& s : options.inputs) names.push_back(s.name);
    for (const auto& s : options.outputs) names.push_back(s.name);
    const TensorMetadata ran = surgeon::fallback_shapes(model, names, data);
    fill_from_fallback(options, ran, missing, args.data.force_fallback);
  }
  surgeon::extract_subgraph(*model.proto, options);
  args.model.save_model(model);
  return 0;
}

}  // namespace parity::cli
