// The Python script of a `parity run` (--gen-script). It mirrors run_command step by step: load the
// model once, build the runners in command-line order, feed them from the same data loader,
// save/load results, post-process, compare, validate. Values are parsed with the CLI's own
// parsers and written as Python literals, so the script means exactly what the flags mean.
#include "cli/gen_script.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "cli/app.h"
#include "cli/parse_util.h"
#include "cli/scripts.h"
#include "core/logger.h"
#include "core/py_format.h"
#include "io/json.h"

namespace parity::cli {

namespace {

// Comparator.run's use_subprocess / subprocess_timeout arguments, when asked for.
std::string subprocess_arguments(const ComparatorOptions& cmp) {
  if (!cmp.use_subprocess) return "";
  std::string out = ", use_subprocess=True";
  if (cmp.subprocess_timeout) out += ", subprocess_timeout=" + py_float(*cmp.subprocess_timeout);
  return out;
}

// A per-output value as Polygraphy's API takes it: a dict with "" as the default.
template <typename T, typename F>
std::string py_per_output(const PerOutput<T>& values, F&& literal) {
  std::vector<std::string> items;
  for (const auto& [name, v] : values.values)
    items.push_back(fmt::format("{}: {}", py_str(name), literal(v)));
  return fmt::format("{{{}}}", fmt::join(items, ", "));
}

std::string py_dims(const DimList& dims) {
  std::vector<std::string> items;
  for (const Dim& d : dims)
    items.push_back(d.is_fixed()      ? std::to_string(d.value)
                    : d.is_symbolic() ? py_str(d.param)
                                      : std::string("None"));
  return fmt::format("[{}]", fmt::join(items, ", "));
}

// The severity the command's logging flags select, as a number for the script.
int logging_severity(const LoggingArgs& args) { return static_cast<int>(args.severity()); }

}  // namespace

std::string data_loader_code(const DataLoaderArgs& data, const std::string& script) {
  if (!script.empty()) {
    ScriptRef ref = parse_script_ref(script, "load_data");
    return fmt::format("    data_loader = invoke_from_script({}, {})\n", py_str(ref.path),
                       py_str(ref.function));
  }
  if (!data.load_inputs.empty()) {
    std::string code = "    data_loader = []\n";
    for (const auto& path : data.load_inputs)
      code +=
          fmt::format("    data_loader += load_json({}, description='input data')\n", py_str(path));
    return code;
  }
  DataLoaderOptions o = data.options();
  std::vector<std::string> args{fmt::format("seed={}", o.seed),
                                fmt::format("iterations={}", o.iterations)};
  if (!o.val_range.empty()) {
    std::vector<std::string> items;
    auto end = [](const std::optional<double>& v) { return v ? py_float(*v) : "None"; };
    for (const auto& [name, r] : o.val_range)
      items.push_back(fmt::format("{}: ({}, {})", py_str(name), end(r.min), end(r.max)));
    args.push_back(fmt::format("val_range={{{}}}", fmt::join(items, ", ")));
  }
  std::string code;
  if (!o.input_metadata.empty()) {
    code += "    input_metadata = TensorMetadata()\n";
    for (const TensorMeta& m : o.input_metadata)
      code += fmt::format("    input_metadata.add({}, {}, {})\n", py_str(m.name),
                          m.dtype ? py_str(dtype_name(*m.dtype)) : "None",
                          m.shape ? py_dims(*m.shape) : "None");
    args.push_back("input_metadata=input_metadata");
  }
  return code + fmt::format("    data_loader = DataLoader({})\n", fmt::join(args, ", "));
}

std::string compare_func_code(const RunArgs& args, const ComparatorOptions& cmp) {
  if (!args.compare_func_script.empty()) {
    ScriptRef ref = parse_script_ref(args.compare_func_script, "compare_outputs");
    return fmt::format("InvokeFromScript({}, {})", py_str(ref.path), py_str(ref.function));
  }
  auto number = [](double v) { return py_float(v); };
  if (cmp.compare == "indices")
    return fmt::format(
        "CompareFunc.indices(index_tolerance={}, fail_fast={})",
        py_per_output(cmp.indices.index_tolerance, [](int64_t v) { return std::to_string(v); }),
        py_bool(cmp.fail_fast));
  if (cmp.compare == "distance") {
    const DistanceCompareOptions d = cmp.distance();
    return fmt::format(
        "CompareFunc.distance_metrics(l2_tolerance={}, "
        "cosine_similarity_threshold={}, check_shapes={}, fail_fast={})",
        py_per_output(d.l2_tolerance, number), py_per_output(d.cosine_similarity_threshold, number),
        py_bool(d.check_shapes), py_bool(d.fail_fast));
  }
  if (cmp.compare == "quality") {
    const QualityCompareOptions q = cmp.quality();
    return fmt::format(
        "CompareFunc.quality_metrics(psnr_tolerance={}, snr_tolerance={}, "
        "check_shapes={}, fail_fast={})",
        py_per_output(q.psnr_tolerance, number), py_per_output(q.snr_tolerance, number),
        py_bool(q.check_shapes), py_bool(q.fail_fast));
  }
  // Only what the command gave, so the script reads like the command.
  const SimpleCompareOptions o = cmp.simple();
  const ComparatorArgs& given = args.comparator;
  std::vector<std::string> kw{fmt::format("check_shapes={}", py_bool(o.check_shapes))};
  if (!given.rtol.empty()) kw.push_back("rtol=" + py_per_output(o.rtol, number));
  if (!given.atol.empty()) kw.push_back("atol=" + py_per_output(o.atol, number));
  if (!given.check_error_stat.empty())
    kw.push_back("check_error_stat=" + py_per_output(o.check_error_stat, [](ErrorStat s) {
                   return py_str(error_stat_name(s));
                 }));
  if (!given.error_quantile.empty())
    kw.push_back("error_quantile=" + py_per_output(o.error_quantile, number));
  kw.push_back(fmt::format("infinities_compare_equal={}", py_bool(o.infinities_compare_equal)));
  if (!o.plots.save_heatmaps.empty())
    kw.push_back("save_heatmaps=" + py_str(o.plots.save_heatmaps));
  if (o.plots.show_heatmaps) kw.push_back("show_heatmaps=True");
  if (!o.plots.save_error_metrics_plot.empty())
    kw.push_back("save_error_metrics_plot=" + py_str(o.plots.save_error_metrics_plot));
  if (o.plots.show_error_metrics_plot) kw.push_back("show_error_metrics_plot=True");
  kw.push_back(fmt::format("fail_fast={}", py_bool(o.fail_fast)));
  return fmt::format("CompareFunc.simple({})", fmt::join(kw, ", "));
}

RunnerScripts runner_scripts_of(const std::vector<ConfiguredBackend>& backends,
                                const std::string& what, const std::string& instead) {
  RunnerScripts out;
  std::vector<std::string> imports;
  for (const ConfiguredBackend& b : backends) {
    if (!b.backend->script)
      fail_usage("failed to {} for backend '{}': it has no Python form; {}", what, b.backend->name,
                 instead);
    out.runners.push_back(b.backend->script(b.config));
    for (const auto& line : out.runners.back().imports)
      if (std::find(imports.begin(), imports.end(), line) == imports.end()) {
        imports.push_back(line);
        out.import_lines += line + "\n";
      }
  }
  return out;
}

std::string script_main_block() {
  return fmt::format(
      "def report_status(status):\n"
      "    # `parity run` passes only on a verdict this script wrote: one that ended\n"
      "    # early (os._exit, sys.exit in a data loader) writes none.\n"
      "    path = os.environ.get('{}')\n"
      "    if path:\n"
      "        with open(path, 'w') as f:\n"
      "            f.write(str(status))\n"
      "    return status\n\n\n"
      "if __name__ == '__main__':\n"
      "    # Errors end the run as they end `parity run`: reported once, status 1 (2\n"
      "    # for a usage error).\n"
      "    try:\n"
      "        sys.exit(report_status(main()))\n"
      "    except parity.ParityUsageError as err:\n"
      "        G_LOGGER.log(str(err), G_LOGGER.CRITICAL)\n"
      "        sys.exit(report_status(2))\n"
      "    except parity.ParityException as err:\n"
      "        G_LOGGER.log(str(err), G_LOGGER.CRITICAL)\n"
      "        sys.exit(report_status(1))\n",
      kVerdictFileVariable);
}

std::string save_onnx_code(const RunArgs& args) {
  if (args.save_onnx.output.empty()) return "";
  const onnx_io::SaveOptions save = args.save_onnx.options(args.model.path());
  return fmt::format(
      "    load_model = SaveOnnx(load_model, path={}, external_data_path={}, size_threshold={}, "
      "all_tensors_to_one_file={})\n",
      py_str(args.save_onnx.output),
      save.external_data_path ? py_str(*save.external_data_path) : "None", save.size_threshold,
      py_bool(save.all_tensors_to_one_file));
}

std::string generate_run_script(const RunArgs& args, const ComparatorOptions& cmp,
                                const std::vector<ConfiguredBackend>& backends,
                                const std::string& command) {
  const int severity = logging_severity(args.logging);
  const RunnerScripts scripts =
      runner_scripts_of(backends, "write a script", "run the command without --gen-script");
  const std::vector<RunnerScript>& runner_scripts = scripts.runners;

  std::string s;
  auto out = std::back_inserter(s);
  fmt::format_to(out,
                 "#!/usr/bin/env python3\n"
                 "# Generated by parity {} from the command:\n"
                 "#   {}\n"
                 "# Running it does what the command does and exits with the same status:\n"
                 "# 0 when everything passed, 1 when a comparison or validation failed.\n"
                 "import os\n"
                 "import sys\n\n"
                 "import parity\n"
                 "from parity.backend.common import InvokeFromScript, ModelFromScript, "
                 "invoke_from_script\n"
                 "from parity.backend.onnx import InferShapes, ModifyOutputs, OnnxFromPath, "
                 "SaveOnnx\n"
                 "{}"
                 "from parity.comparator import (Comparator, CompareFunc, DataLoader, "
                 "PostprocessFunc,\n"
                 "                               RunResults, TensorMetadata)\n"
                 "from parity.constants import MARK_ALL\n"
                 "from parity.json import load_json, save_json\n"
                 "from parity.logger import G_LOGGER\n\n\n"
                 "def main():\n",
                 PARITY_VERSION, command, scripts.import_lines);
  if (severity != static_cast<int>(Severity::kInfo))
    fmt::format_to(out, "    G_LOGGER.severity = {}\n", severity);
  for (const auto& f : args.logging.log_format)
    if (f == "no-colors") fmt::format_to(out, "    G_LOGGER.colors = False\n");
  if (!args.logging.log_file.empty())
    fmt::format_to(out, "    G_LOGGER.log_file = {}\n", py_str(args.logging.log_file));
  for (const auto& plugin : args.plugins)
    fmt::format_to(out, "    parity.load_plugin({})\n", py_str(plugin));

  if (args.model.is_script()) {
    const ScriptRef script = args.model.script();
    fmt::format_to(out, "\n    # Loaders\n    load_model = ModelFromScript({}, name={})\n",
                   py_str(script.path), py_str(script.function));
  } else {
    fmt::format_to(out,
                   "\n    # Loaders\n    load_model = OnnxFromPath({}, external_data_dir={}, "
                   "ignore_external_data={})\n",
                   py_str(args.model.model_file), py_str(args.model.external_data_dir),
                   py_bool(args.model.ignore_external_data));
  }
  if (args.model.shape_inference) fmt::format_to(out, "    load_model = InferShapes(load_model)\n");
  if (!args.model.onnx_outputs.empty() || !args.model.onnx_exclude_outputs.empty()) {
    std::string outputs = args.model.mark_all()             ? "MARK_ALL"
                          : args.model.onnx_outputs.empty() ? "None"
                                                            : py_list(args.model.onnx_outputs);
    fmt::format_to(out,
                   "    load_model = ModifyOutputs(load_model, outputs={}, "
                   "exclude_outputs={})\n",
                   outputs, py_list(args.model.onnx_exclude_outputs));
  }
  fmt::format_to(out, "{}", save_onnx_code(args));
  fmt::format_to(out, "\n    # Data loader\n{}",
                 data_loader_code(args.data, args.data_loader_script));

  // Each runner is given the loader, as in Polygraphy's scripts: it loads the model when it is
  // activated ("Loading model: ..." after its "Activating" line), through Parity's C++ loader
  // (no Python copy of the weights).
  fmt::format_to(out, "\n    # Runners: each loads the model when it is activated\n");
  if (runner_scripts.empty()) {
    fmt::format_to(out, "    runners = []\n");
  } else {
    fmt::format_to(out, "    model = load_model\n    runners = [\n");
    for (const RunnerScript& r : runner_scripts) fmt::format_to(out, "        {},\n", r.expression);
    fmt::format_to(out, "    ]\n");
  }

  fmt::format_to(out,
                 "\n    # Runner execution\n    results = Comparator.run(runners, "
                 "data_loader=data_loader, warm_up={}{}, save_inputs_path={}{})\n",
                 cmp.warm_up, subprocess_arguments(cmp),
                 cmp.save_inputs.empty() ? "None" : py_str(cmp.save_inputs),
                 args.data.strict_inputs ? ", strict_inputs=True" : "");
  if (!cmp.save_outputs.empty())
    fmt::format_to(out, "    save_json(results, {}, description='inference results')\n",
                   py_str(cmp.save_outputs));
  for (const auto& path : cmp.load_outputs)
    fmt::format_to(out, "    results.extend(load_json({}, description='inference results'))\n",
                   py_str(path));
  if (cmp.top_k)
    fmt::format_to(out, "    Comparator.postprocess(results, PostprocessFunc.top_k({}))\n",
                   py_per_output(cmp.top_k->k, [](const std::pair<int64_t, int64_t>& ka) {
                     return fmt::format("({}, {})", ka.first, ka.second);
                   }));

  // The verdict as `parity run` makes it (comparator/verdict.h): passing needs a comparison
  // that compared something, or one runner that ran an iteration.
  fmt::format_to(out,
                 "\n    # Comparison: nothing passes without a comparison that ran\n"
                 "    if len(results) > 1:\n"
                 "        compare_func = {}\n"
                 "        accuracy = Comparator.compare_accuracy(results, fail_fast={}, "
                 "compare_func=compare_func)\n"
                 "        compared = any(len(outputs) for _, iterations in accuracy.items()\n"
                 "                       for outputs in iterations)\n"
                 "        if not compared:\n"
                 "            G_LOGGER.error('Compared nothing: the results hold no "
                 "iteration with an output to compare')\n"
                 "        success = compared and bool(accuracy)\n"
                 "    elif len(results) == 1 and runners:\n"
                 "        success = len(results[0][1]) > 0\n"
                 "        if not success:\n"
                 "            G_LOGGER.error('Ran nothing: the data loader gave no input')\n"
                 "    else:\n"
                 "        G_LOGGER.error('Compared nothing: there were no two sets of "
                 "results to compare')\n"
                 "        success = False\n",
                 compare_func_code(args, cmp), py_bool(cmp.fail_fast));
  if (cmp.validate)
    fmt::format_to(out,
                   "    success = Comparator.validate(results, check_inf=True, "
                   "check_nan=True) and success\n");
  fmt::format_to(out, "    return 0 if success else 1\n\n\n");
  fmt::format_to(out, "{}", script_main_block());
  return s;
}

int write_run_script(const RunArgs& args, const ComparatorOptions& cmp,
                     const std::vector<ConfiguredBackend>& backends) {
  std::string script = generate_run_script(args, cmp, backends, invoked_command());
  if (args.gen_script == "-") {
    std::fwrite(script.data(), 1, script.size(), stdout);
    std::fflush(stdout);
    return 0;
  }
  io::write_file(args.gen_script, script);
  logger().info("Writing script to: {}", args.gen_script);
  return 0;
}

}  // namespace parity::cli
