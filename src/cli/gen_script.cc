// The Python script of a `parity run` (--gen-script). It mirrors run_run step by step: load the
// model once, build the runners in command-line order, feed them from the same data loader,
// save/load results, post-process, compare, validate. Values are parsed with the CLI's own
// parsers and written as Python literals, so the script means exactly what the flags mean.
#include "cli/gen_script.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "cli/layerwise.h"
#include "cli/parse_util.h"
#include "cli/scripts.h"
#include "core/logger.h"
#include "io/json.h"

namespace parity::cli {

namespace {

// A Python string literal.
std::string py_str(std::string_view s) {
  std::string out = "'";
  for (unsigned char c : s) {
    if (c == '\\' || c == '\'') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "'";
}

// A Python float literal that reads back as the same double.
std::string py_float(double v) {
  if (std::isnan(v)) return "float('nan')";
  if (std::isinf(v)) return v > 0 ? "float('inf')" : "float('-inf')";
  std::string s = fmt::format("{}", v);  // shortest round-trip form
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string py_list(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const auto& s : items) quoted.push_back(py_str(s));
  return fmt::format("[{}]", fmt::join(quoted, ", "));
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
    items.push_back(d.is_fixed() ? std::to_string(d.value)
                    : d.is_symbolic() ? py_str(d.param)
                                      : std::string("None"));
  return fmt::format("[{}]", fmt::join(items, ", "));
}

std::string py_bool(bool b) { return b ? "True" : "False"; }

// The severity the command's logging flags select, as a number for the script.
int logging_severity(const LoggingArgs& args) { return static_cast<int>(args.severity()); }

std::string data_loader_code(const DataLoaderArgs& data, const std::string& script) {
  if (!script.empty()) {
    ScriptRef ref = parse_script_ref(script, "load_data");
    return fmt::format("    data_loader = invoke_from_script({}, {})\n", py_str(ref.path),
                       py_str(ref.function));
  }
  if (!data.load_inputs.empty()) {
    std::string code = "    data_loader = []\n";
    for (const auto& path : data.load_inputs)
      code += fmt::format("    data_loader += load_json({}, description='input data')\n",
                          py_str(path));
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

std::string compare_func_code(const RunArgs& args) {
  const ComparatorArgs& cmp = args.comparator;
  if (!args.compare_func_script.empty()) {
    ScriptRef ref = parse_script_ref(args.compare_func_script, "compare_outputs");
    return fmt::format("InvokeFromScript({}, {})", py_str(ref.path), py_str(ref.function));
  }
  if (cmp.compare == "indices") {
    auto tolerance = parse_per_output_int("--index-tolerance", cmp.index_tolerance);
    return fmt::format("CompareFunc.indices(index_tolerance={}, fail_fast={})",
                       py_per_output(tolerance, [](int64_t v) { return std::to_string(v); }),
                       py_bool(cmp.fail_fast));
  }
  std::vector<std::string> kw{fmt::format("check_shapes={}", py_bool(!cmp.no_shape_check))};
  auto number = [](double v) { return py_float(v); };
  if (cmp.compare == "distance" || cmp.compare == "quality") {
    const TensorCompareOptions o = tensor_compare_options(cmp);
    const bool distance = cmp.compare == "distance";
    return fmt::format(
        "CompareFunc.{}({}={}, {}={}, check_shapes={}, fail_fast={})",
        distance ? "distance_metrics" : "quality_metrics",
        distance ? "l2_tolerance" : "psnr_tolerance",
        py_per_output(distance ? o.l2_tolerance : o.psnr_tolerance, number),
        distance ? "cosine_similarity_threshold" : "snr_tolerance",
        py_per_output(distance ? o.cosine_similarity_threshold : o.snr_tolerance, number),
        py_bool(o.check_shapes), py_bool(cmp.fail_fast));
  }
  if (!cmp.rtol.empty())
    kw.push_back("rtol=" + py_per_output(parse_per_output_number("--rtol", cmp.rtol), number));
  if (!cmp.atol.empty())
    kw.push_back("atol=" + py_per_output(parse_per_output_number("--atol", cmp.atol), number));
  if (!cmp.check_error_stat.empty())
    kw.push_back("check_error_stat=" +
                 py_per_output(parse_per_output_error_stat(cmp.check_error_stat),
                               [](ErrorStat s) { return py_str(error_stat_name(s)); }));
  if (!cmp.error_quantile.empty())
    kw.push_back("error_quantile=" +
                 py_per_output(parse_per_output_number("--error-quantile", cmp.error_quantile),
                               number));
  kw.push_back(fmt::format("infinities_compare_equal={}", py_bool(cmp.infinities_compare_equal)));
  kw.push_back(fmt::format("fail_fast={}", py_bool(cmp.fail_fast)));
  return fmt::format("CompareFunc.simple({})", fmt::join(kw, ", "));
}

std::string runner_code(RunnerKind kind, const OrtOptions& ort, int ref_threads) {
  if (kind == RunnerKind::kPluginRef)
    return ref_threads > 0
               ? fmt::format("        PluginRefRunner(model, threads={}),\n", ref_threads)
               : "        PluginRefRunner(model),\n";
  return fmt::format(
      "        OnnxrtRunner(SessionFromOnnx(model, providers={}, provider_options={}, "
      "lib_path={}, intra_op_threads={}, graph_optimization_level={}, custom_op_libs={})),\n",
      py_list(ort.providers), py_list(ort.provider_options), py_str(ort.lib_path),
      ort.intra_op_threads, ort.graph_optimization_level, py_list(ort.custom_op_libs));
}

}  // namespace

std::string this_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> words;
  for (size_t start = 0; start < raw.size();) {
    size_t end = raw.find('\0', start);
    if (end == std::string::npos) end = raw.size();
    words.push_back(raw.substr(start, end - start));
    start = end + 1;
  }
  std::string line = fmt::format("{}", fmt::join(words, " "));
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';  // it goes into a one-line comment
  return line;
}

std::string generate_run_script(const RunArgs& args, const std::string& command) {
  const ComparatorArgs& cmp = args.comparator;
  // Parse every value first, exactly as run_run does, so bad flags fail here too.
  (void)cmp.compare_func();
  std::optional<TopKOptions> top_k;
  if (!cmp.postprocess.empty()) top_k = parse_top_k(cmp.postprocess);
  const OrtOptions ort = args.onnxrt.options();
  const int severity = logging_severity(args.logging);

  std::string s;
  auto out = std::back_inserter(s);
  fmt::format_to(out,
                 "#!/usr/bin/env python3\n"
                 "# Generated by parity {} from the command:\n"
                 "#   {}\n"
                 "# Running it does what the command does and exits with the same status:\n"
                 "# 0 when everything passed, 1 when a comparison or validation failed.\n"
                 "import sys\n\n"
                 "import parity\n"
                 "from parity.backend.common import InvokeFromScript, invoke_from_script\n"
                 "from parity.backend.onnx import ModifyOutputs, OnnxFromPath\n"
                 "from parity.backend.onnxrt import OnnxrtRunner, SessionFromOnnx\n"
                 "from parity.backend.pluginref import PluginRefRunner\n"
                 "from parity.comparator import (Comparator, CompareFunc, DataLoader, "
                 "PostprocessFunc,\n"
                 "                               RunResults, TensorMetadata)\n"
                 "from parity.constants import MARK_ALL\n"
                 "from parity.json import load_json, save_json\n"
                 "from parity.logger import G_LOGGER\n\n\n"
                 "def main():\n",
                 PARITY_VERSION, command);
  if (severity != static_cast<int>(Severity::kInfo))
    fmt::format_to(out, "    G_LOGGER.severity = {}\n", severity);
  for (const auto& f : args.logging.log_format)
    if (f == "no-colors") fmt::format_to(out, "    G_LOGGER.colors = False\n");
  if (!args.logging.log_file.empty())
    fmt::format_to(out, "    G_LOGGER.log_file = {}\n", py_str(args.logging.log_file));
  for (const auto& plugin : args.plugins)
    fmt::format_to(out, "    parity.load_plugin({})\n", py_str(plugin));

  fmt::format_to(out, "\n    # Loaders\n    load_model = OnnxFromPath({}, external_data_dir={}, "
                      "ignore_external_data={})\n",
                 py_str(args.model.model_file), py_str(args.model.external_data_dir),
                 py_bool(args.model.ignore_external_data));
  if (!args.model.onnx_outputs.empty() || !args.model.onnx_exclude_outputs.empty()) {
    std::string outputs = args.model.mark_all()               ? "MARK_ALL"
                          : args.model.onnx_outputs.empty() ? "None"
                                                             : py_list(args.model.onnx_outputs);
    fmt::format_to(out, "    load_model = ModifyOutputs(load_model, outputs={}, "
                        "exclude_outputs={})\n",
                   outputs, py_list(args.model.onnx_exclude_outputs));
  }
  fmt::format_to(out, "\n    # Data loader\n{}",
                 data_loader_code(args.data, args.data_loader_script));

  fmt::format_to(out, "\n    # Runners: the model is loaded once and shared\n");
  if (args.runners.empty()) {
    fmt::format_to(out, "    runners = []\n");
  } else {
    fmt::format_to(out, "    model = load_model()\n    runners = [\n");
    for (RunnerKind k : args.runners) s += runner_code(k, ort, args.ref_threads);
    fmt::format_to(out, "    ]\n");
  }

  fmt::format_to(out, "\n    # Runner execution\n    results = Comparator.run(runners, "
                      "data_loader=data_loader, warm_up={}, save_inputs_path={})\n",
                 cmp.warm_up, cmp.save_inputs.empty() ? "None" : py_str(cmp.save_inputs));
  if (!cmp.save_outputs.empty())
    fmt::format_to(out, "    save_json(results, {}, description='inference results')\n",
                   py_str(cmp.save_outputs));
  for (const auto& path : cmp.load_outputs)
    fmt::format_to(out, "    results.extend(load_json({}, description='inference results'))\n",
                   py_str(path));
  if (top_k)
    fmt::format_to(out, "    Comparator.postprocess(results, PostprocessFunc.top_k({}))\n",
                   py_per_output(top_k->k, [](const std::pair<int64_t, int64_t>& ka) {
                     return fmt::format("({}, {})", ka.first, ka.second);
                   }));

  fmt::format_to(out, "\n    # Comparison\n    success = True\n    if len(results) > 1:\n"
                      "        compare_func = {}\n"
                      "        accuracy = Comparator.compare_accuracy(results, fail_fast={}, "
                      "compare_func=compare_func)\n"
                      "        success = success and bool(accuracy)\n",
                 compare_func_code(args), py_bool(cmp.fail_fast));
  if (cmp.validate)
    fmt::format_to(out, "    success = Comparator.validate(results, check_inf=True, "
                        "check_nan=True) and success\n");
  fmt::format_to(out,
                 "    return 0 if success else 1\n\n\n"
                 "if __name__ == '__main__':\n"
                 "    # Errors end the run as they end `parity run`: reported once, status 1 (2\n"
                 "    # for a usage error).\n"
                 "    try:\n"
                 "        sys.exit(main())\n"
                 "    except parity.ParityUsageError as err:\n"
                 "        G_LOGGER.log(str(err), G_LOGGER.CRITICAL)\n"
                 "        sys.exit(2)\n"
                 "    except parity.ParityException as err:\n"
                 "        G_LOGGER.log(str(err), G_LOGGER.CRITICAL)\n"
                 "        sys.exit(1)\n");
  return s;
}

int write_run_script(const RunArgs& args) {
  std::string script = generate_run_script(args, this_command_line());
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
