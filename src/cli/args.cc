#include "cli/args.h"

#include "cli/layerwise.h"
#include "cli/parse_util.h"
#include "cli/value_checks.h"
#include "core/logger.h"
#include "io/json.h"

namespace parity::cli {

void add_logging_args(CLI::App& app, LoggingArgs& args) {
  app.add_flag("-v,--verbose", args.verbose, "Increase logging verbosity. Specify multiple times");
  app.add_flag("-q,--quiet", args.quiet, "Decrease logging verbosity. Specify multiple times");
  app.add_option("--verbosity", args.verbosity,
                 "Logging severity: ULTRA_VERBOSE, SUPER_VERBOSE, EXTRA_VERBOSE, VERBOSE, INFO, "
                 "START, FINISH, WARNING, ERROR or CRITICAL");
  app.add_flag("--silent", args.silent, "Disable all output");
  app.add_option("--log-format", args.log_format, "Log format options: no-colors")
      ->check(CLI::IsMember({"timestamp", "line-info", "no-colors"}));
  app.add_option("--log-file", args.log_file, "Also write the log to this file");
}

Severity LoggingArgs::severity() const {
  if (silent) return static_cast<Severity>(1000);
  if (verbosity.empty()) return severity_from_count(verbose - quiet);
  auto parsed = severity_from_name(verbosity);
  if (!parsed)
    fail_usage("failed to parse --verbosity with value '{}': unknown severity; valid choices "
               "are ULTRA_VERBOSE, SUPER_VERBOSE, EXTRA_VERBOSE, VERBOSE, INFO, START, FINISH, "
               "WARNING, ERROR, CRITICAL",
               verbosity);
  return *parsed;
}

void apply_logging_args(const LoggingArgs& args) {
  Severity s = args.severity();
  logger().set_severity(s);
  for (const auto& f : args.log_format)
    if (f == "no-colors") logger().set_colors(false);
  if (!args.log_file.empty()) logger().set_log_file(args.log_file);
}

bool ModelArgs::mark_all() const {
  return onnx_outputs.size() == 2 && onnx_outputs[0] == "mark" && onnx_outputs[1] == "all";
}

onnx_io::LoadOptions ModelArgs::load_options() const {
  onnx_io::LoadOptions o;
  o.external_data_dir = external_data_dir;
  o.ignore_external_data = ignore_external_data;
  return o;
}

void add_model_args(CLI::App& app, ModelArgs& args, bool with_outputs) {
  app.add_option("model_file", args.model_file, "Path to the ONNX model")->required();
  app.add_option("--external-data-dir,--load-external-data,--ext", args.external_data_dir,
                 "Folder holding the model's external data. Defaults to the model's folder");
  app.add_flag("--ignore-external-data", args.ignore_external_data,
               "Load the model's structure only, without its external weights");
  if (!with_outputs) return;
  app.add_option("--onnx-outputs", args.onnx_outputs,
                 "Tensors to mark as outputs, or the two words 'mark all' for every tensor");
  app.add_option("--onnx-exclude-outputs", args.onnx_exclude_outputs,
                 "Tensors to unmark as outputs (combine with --onnx-outputs mark all)");
}

DataLoaderOptions DataLoaderArgs::options() const {
  DataLoaderOptions o;
  o.seed = seed;
  o.iterations = iterations;
  o.val_range = parse_val_ranges(val_range);
  o.input_metadata = parse_input_shapes("--input-shapes", input_shapes);
  return o;
}

std::unique_ptr<FeedSource> DataLoaderArgs::make_feeds() const {
  if (load_inputs.empty()) return std::make_unique<DataLoader>(options());
  std::vector<TensorMap> feeds;
  for (const auto& path : load_inputs) {
    logger().info("Loading input data from {}", path);
    for (auto& feed : io::load_inputs(path)) feeds.push_back(std::move(feed));
  }
  return std::make_unique<FeedList>(std::move(feeds));
}

void add_data_loader_args(CLI::App& app, DataLoaderArgs& args) {
  app.add_option("--seed", args.seed, "Seed for random inputs; iteration i uses seed + i")
      ->default_str("1");
  app.add_option("--iterations,--iters", args.iterations, "Number of inference iterations")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
      ->default_str("1");
  app.add_option("--val-range", args.val_range,
                 "Range of generated values, inclusive: [min,max] or <input>:[min,max]. "
                 "Defaults to [0.0,1.0]");
  app.add_option("--input-shapes,--inputs", args.input_shapes,
                 "Input shapes for dynamic dimensions: <input>:[1,3,224,224]");
  app.add_option("--load-inputs,--load-input-data", args.load_inputs,
                 "JSON files of inputs (List[Dict[str, array]]) to use instead of generating");
}

CompareFunc ComparatorArgs::compare_func() const {
  if (compare == "indices") {
    IndicesCompareOptions o;
    o.index_tolerance = parse_per_output_int("--index-tolerance", index_tolerance);
    o.fail_fast = fail_fast;
    return compare_func::indices(o);
  }
  if (compare == "distance" || compare == "quality") return metric_compare_func(*this);
  SimpleCompareOptions o;
  o.check_shapes = !no_shape_check;
  if (!atol.empty()) o.atol = parse_per_output_number("--atol", atol);
  if (!rtol.empty()) o.rtol = parse_per_output_number("--rtol", rtol);
  check_tolerances("--atol", o.atol);
  check_tolerances("--rtol", o.rtol);
  if (!check_error_stat.empty()) o.check_error_stat = parse_per_output_error_stat(check_error_stat);
  if (!error_quantile.empty()) {
    o.error_quantile = parse_per_output_number("--error-quantile", error_quantile);
    for (const auto& [name, q] : o.error_quantile.values)
      if (!(q >= 0.0 && q <= 1.0))
        fail_usage("failed to parse --error-quantile with value {}: a quantile must be within "
                   "[0, 1]",
                   q);
  }
  o.infinities_compare_equal = infinities_compare_equal;
  o.fail_fast = fail_fast;
  return compare_func::simple(o);
}

void add_comparator_args(CLI::App& app, ComparatorArgs& args) {
  app.add_option("--warm-up", args.warm_up, "Number of warm-up runs before timing inference")
      ->check(CLI::Range(0, 1 << 30));
  app.add_option("--save-inputs,--save-input-data", args.save_inputs,
                 "Save the inference inputs (JSON, Polygraphy's format)");
  app.add_option("--save-outputs,--save-results", args.save_outputs,
                 "Save the runners' results (JSON, Polygraphy's format)");
  app.add_option("--load-outputs,--load-results", args.load_outputs,
                 "Results saved earlier, compared after this command's runners");
  app.add_flag("--validate", args.validate, "Check outputs for NaNs and Infs");
  app.add_flag("--fail-fast", args.fail_fast, "Stop comparing after the first failure");
  app.add_option("--compare,--compare-func", args.compare, "Comparison function. Defaults to simple")
      ->check(CLI::IsMember({"simple", "indices", "distance", "quality"}));
  app.add_option("--atol,--abs-tol", args.atol,
                 "Absolute tolerance: <value> or <output>:<value>. Defaults to 1e-5");
  app.add_option("--rtol,--rel-tol", args.rtol,
                 "Relative tolerance: <value> or <output>:<value>. Defaults to 1e-5");
  app.add_option("--check-error-stat", args.check_error_stat,
                 "Error statistic to check: elemwise, max, mean, median or quantile, per output "
                 "as <output>:<stat>. Defaults to elemwise");
  app.add_option("--error-quantile", args.error_quantile,
                 "Quantile for --check-error-stat quantile, in [0, 1]. Defaults to 0.99");
  app.add_option("--index-tolerance", args.index_tolerance,
                 "Index tolerance for --compare indices. Defaults to 0");
  app.add_flag("--infinities-compare-equal", args.infinities_compare_equal,
               "Matching infinities compare equal (otherwise they count as NaN)");
  app.add_flag("--no-shape-check", args.no_shape_check,
               "Compare outputs whose shapes differ but hold the same number of elements");
  app.add_option("--postprocess,--postprocess-func", args.postprocess,
                 "Replace outputs before comparing: [<output>:]top-<K>[,axis=<A>]");
  add_layerwise_args(app, args);
}

OrtOptions OnnxrtArgs::options() const {
  OrtOptions o;
  o.lib_path = ort_lib;
  o.providers = providers;
  o.provider_options = provider_options;
  o.intra_op_threads = threads;
  // ONNX Runtime's GraphOptimizationLevel values.
  if (optimization_level == "disable") o.graph_optimization_level = 0;
  else if (optimization_level == "basic") o.graph_optimization_level = 1;
  else if (optimization_level == "extended") o.graph_optimization_level = 2;
  else o.graph_optimization_level = 99;
  o.custom_op_libs = custom_op_libs;
  return o;
}

void add_onnxrt_args(CLI::App& app, OnnxrtArgs& args) {
  app.add_option("--providers,--execution-providers", args.providers,
                 "ONNX Runtime execution providers in priority order; exact or case-insensitive "
                 "substring match. Defaults to cpu");
  app.add_option("--provider-option", args.provider_options,
                 "key=value options passed to the CUDA or TensorRT provider");
  app.add_option("--ort-lib", args.ort_lib,
                 "Path of libonnxruntime.so to load (else $PARITY_ORT_LIB, the copy installed "
                 "by setup.sh, then the system)");
  app.add_option("--ort-threads", args.threads, "ONNX Runtime intra-op threads (0 = default)")
      ->check(CLI::Range(0, 1 << 30));
  app.add_option("--ort-optimization-level", args.optimization_level,
                 "ONNX Runtime graph optimisation level. Defaults to all")
      ->check(CLI::IsMember({"disable", "basic", "extended", "all"}));
  app.add_option("--ort-custom-op-lib", args.custom_op_libs,
                 "Custom-op libraries to register with ONNX Runtime");
}

}  // namespace parity::cli
