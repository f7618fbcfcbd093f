// `parity surgeon sanitize`: fold constants, override input shapes, clean up and sort
// (Polygraphy's `surgeon sanitize`), folding on the reference backend.
#include <charconv>
#include <map>
#include <string>

#include "cli/parse_util.h"
#include "cli/surgeon.h"
#include "core/error.h"
#include "core/logger.h"
#include "surgeon/fold.h"
#include "surgeon/graph.h"
#include "surgeon/shape_inference.h"
#include "surgeon/types.h"
#include "surgeon/upper_bound.h"

namespace parity::cli {

namespace {

surgeon::FoldOptions fold_options(const SurgeonSanitizeArgs& args) {
  surgeon::FoldOptions o;
  if (!args.num_passes.empty()) {
    if (args.num_passes.front() < 1)
      fail_usage("failed to parse --num-passes with value '{}': the count must be at least 1",
                 args.num_passes.front());
    o.num_passes = args.num_passes.front();
  }
  o.fold_shapes = !args.no_fold_shapes;
  o.shape_inference = !args.no_per_pass_shape_inference && !args.no_shape_inference;
  if (!args.fold_size_threshold.empty())
    o.size_threshold = parse_byte_size("--fold-size-threshold", args.fold_size_threshold);
  if (args.partitioning == "basic") o.partitioning = surgeon::Partitioning::kBasic;
  if (args.partitioning == "recursive") o.partitioning = surgeon::Partitioning::kRecursive;
  return o;
}

// Polygraphy warns about each folding flag given without --fold-constants.
void warn_unused_fold_flags(const SurgeonSanitizeArgs& args) {
  if (args.fold_constants) return;
  const std::pair<const char*, bool> flags[] = {
      {"num-const-fold-passes", !args.num_passes.empty()},
      {"partitioning", !args.partitioning.empty()},
      {"fold-shapes", args.no_fold_shapes},
      {"per-pass-shape-inference", args.no_per_pass_shape_inference},
      {"fold-size-threshold", !args.fold_size_threshold.empty()}};
  for (const auto& [name, given] : flags)
    if (given)
      logger().warning(
          "Argument: '--{}' will be ignored since constant folding is not enabled.\nThis "
          "argument is only valid when the `--fold-constants` option is provided.",
          name);
}

// --set-unbounded-dds-upper-bound: "<bound>" for every unbounded tensor, "<tensor>:<bound>".
std::map<std::string, int64_t> upper_bounds(const std::vector<std::string>& tokens) {
  std::map<std::string, int64_t> bounds;
  for (const auto& token : tokens) {
    const auto [name, text] = split_last_colon(token);
    int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value < 0)
      fail_usage(
          "failed to parse --set-unbounded-dds-upper-bound with value '{}': the bound must be a "
          "non-negative integer, given as <bound> or <tensor>:<bound>",
          token);
    bounds[name] = value;
  }
  return bounds;
}

}  // namespace

CLI::App* setup_surgeon_sanitize(CLI::App& surgeon, SurgeonSanitizeArgs& args) {
  CLI::App* sub = surgeon.add_subcommand(
      "sanitize", "Clean up, optimize, and/or change input shapes in an ONNX model.");
  add_surgeon_model_args(*sub, args.model);
  add_fallback_data_args(*sub, args.data, "--override-input-shapes,--override-inputs",
                         "Override input shapes in the model for the given inputs: "
                         "<name>:<shape>, e.g. image:[1,3,224,224] or x:['batch',1,2,2]");
  sub->add_flag("--no-shape-inference", args.no_shape_inference,
                "Disable ONNX shape inference when loading the model")
      ->group("ONNX Shape Inference");
  sub->add_option("--set-unbounded-dds-upper-bound", args.upper_bounds,
                  "Set upper bounds for tensors with unbounded DDS (data-dependent shapes): "
                  "<tensor>:<bound> or a bare <bound> for every such tensor")
      ->group("ONNX Model Loading");
  const char* fold = "Constant Folding";
  sub->add_flag("--fold-constants", args.fold_constants,
                "Fold constants in the graph by computing subgraphs whose values are not "
                "dependent on runtime inputs (evaluated on the reference backend)")
      ->group(fold);
  sub->add_option("--num-passes,--num-const-fold-passes", args.num_passes,
                  "The number of constant folding passes to run. If not specified, passes run "
                  "until one folds nothing")
      ->expected(1)
      ->group(fold);
  sub->add_option("--partitioning", args.partitioning,
                  "Controls how to partition the graph during constant folding: 'basic': "
                  "failures in one part do not affect other parts, 'recursive': in addition, "
                  "partition partitions where needed")
      ->check(CLI::IsMember({"basic", "recursive"}))
      ->group(fold);
  sub->add_flag("--no-fold-shapes", args.no_fold_shapes,
                "Disable folding Shape nodes and subgraphs that operate on shapes")
      ->group(fold);
  sub->add_flag("--no-per-pass-shape-inference", args.no_per_pass_shape_inference,
                "Disable shape inference between passes of constant folding")
      ->group(fold);
  sub->add_option("--fold-size-threshold", args.fold_size_threshold,
                  "The maximum per-tensor size, in bytes, for which to apply constant folding "
                  "(K, M, G suffixes for KiB, MiB, GiB)")
      ->group(fold);
  sub->add_flag("--cleanup", args.cleanup,
                "Run dead layer removal on the graph. This is generally not required if other "
                "options are set");
  sub->add_flag("--toposort", args.toposort, "Topologically sort nodes in the graph");
  return sub;
}

int run_surgeon_sanitize(const SurgeonSanitizeArgs& args) {
  // Every flag is parsed before any work, so a malformed value fails at once.
  const surgeon::FoldOptions fold = fold_options(args);
  const TensorMetadata overrides =
      parse_input_shapes("--override-input-shapes", args.data.input_shapes);
  const DataLoaderOptions data = args.data.options("--override-input-shapes");
  (void)args.model.save.options(args.model.model_file);
  warn_unused_fold_flags(args);
  const std::map<std::string, int64_t> bounds = upper_bounds(args.upper_bounds);

  // As Polygraphy's loader: shapes inferred and upper bounds set before the model is shown.
  surgeon::ModelFile model = args.model.load(/*show_summary=*/false);
  ::onnx::GraphProto& graph = *model.proto->mutable_graph();
  const bool shape_inference = !args.no_shape_inference && !args.data.force_fallback;
  if (shape_inference) surgeon::infer_shapes(*model.proto);
  if (!bounds.empty()) {
    const auto applied = surgeon::set_upper_bounds(graph, bounds);
    std::vector<std::string> parts;
    for (const auto& [name, bound] : applied) parts.push_back(fmt::format("'{}': {}", name, bound));
    logger().info("Set tensor upper bounds: {{{}}}", fmt::join(parts, ", "));
  }
  SurgeonModelArgs::show_original(model);
  if (!overrides.empty()) {
    surgeon::override_input_shapes(graph, overrides);
    TensorMetadata now;
    for (const auto& in : graph.input())
      now.add(in.name(), surgeon::dtype_of(in.type()), surgeon::dims_of(in.type()));
    logger().info("Overriding input shapes to:\n{}", now.str());
  }
  if (args.data.force_fallback) {
    std::vector<std::string> names;
    for (const auto& node : graph.node())
      for (const auto& out : node.output())
        if (!out.empty()) names.push_back(out);
    surgeon::set_shapes(graph, surgeon::fallback_shapes(model, names, data));
  }
  if (args.cleanup) surgeon::cleanup(graph);
  if (args.toposort) surgeon::toposort(graph);
  if (!overrides.empty() && shape_inference) surgeon::infer_shapes(*model.proto);
  if (args.fold_constants) surgeon::fold_constants(model, fold);
  args.model.save_model(model);
  return 0;
}

}  // namespace parity::cli
