#include "cli/dataset_run.h"

#include <fmt/format.h>

#include "cli/app.h"
#include "cli/gen_script.h"
#include "cli/scripts.h"
#include "comparator/dataset.h"
#include "core/logger.h"
#include "core/py_format.h"
#include "io/json.h"
#include "report/dataset_report.h"

namespace parity::cli {

namespace {

// Flags that need every output or every feed in memory, which a dataset run never holds.
void refuse_unstreamable(const RunArgs& args, const ComparatorOptions& cmp,
                         const std::vector<ConfiguredBackend>& backends) {
  auto refuse = [](const char* flag, const char* why) {
    fail_usage("failed to use {} with a dataset run (--dataset, --shard, --dask): {}", flag, why);
  };
  if (!cmp.save_inputs.empty())
    refuse("--save-inputs",
           "a dataset run holds one feed at a time; the feeds are already in files (or made "
           "again by the same --seed)");
  if (cmp.validate) refuse("--validate", "it needs every output in memory");
  if (cmp.top_k) refuse("--postprocess", "it needs every output in memory");
  if (cmp.warm_up > 0) refuse("--warm-up", "runners are activated once and stay warm");
  if (cmp.fail_fast) refuse("--fail-fast", "a dataset run goes on to report every feed");
  if (!backends.empty() && !cmp.load_outputs.empty())
    refuse("--load-outputs with runners",
           "compare saved results of a dataset run on their own (parity run --load-outputs "
           "all.json), or run the runners");
  const std::string& address = args.dataset.dask_address;
  if (args.dataset.uses_dask() && !address.empty() && address.find("://") == std::string::npos &&
      address.find(':') == std::string::npos)
    fail_usage(
        "failed to use --dask with the scheduler address '{}': an address is "
        "PROTOCOL://HOST:PORT or HOST:PORT (tcp://10.0.0.5:8786); give the model before --dask, "
        "or --dask alone for a local cluster",
        address);
  if (!args.save_onnx.output.empty() && args.dataset.uses_dask())
    refuse("--save-onnx with --dask",
           "the workers load the model themselves; save it with 'parity run --save-onnx' "
           "without --dask, or with 'parity surgeon sanitize -o'");
  if (backends.empty() && args.dataset.uses_dask())
    refuse("--dask without runners", "there is nothing to run on the cluster");
  if (backends.empty() && !args.dataset.shard.empty())
    refuse("--shard without runners", "shards split the feeds of runners");
}

void finish(const DatasetSummary& summary, const RunArgs& args, const ComparatorOptions& cmp) {
  DatasetSummaryOptions options;
  options.worst = static_cast<size_t>(args.dataset.worst);
  summary.log(options);
  if (!cmp.report.empty())
    write_dataset_report(cmp.report, summary, options.worst, invoked_command());
}

RunEnd compare_saved(const RunArgs& args, const ComparatorOptions& cmp,
                     std::optional<RunResults> loaded) {
  RunResults results;
  if (loaded) {
    results = std::move(*loaded);
  } else {
    for (const auto& path : cmp.load_outputs) {
      logger().info("Loading inference results from {}", path);
      for (auto& entry : io::load_run_results(path)) results.append(std::move(entry));
    }
  }
  if (results.size() < 2)
    return RunEnd{RunVerdict::nothing_compared(
                      "Compared nothing: --load-outputs gave one set of results and there is "
                      "nothing to compare it with; add another results file"),
                  std::nullopt, false};
  const DatasetSummary summary = compare_dataset_results(results, cmp.compare_func());
  finish(summary, args, cmp);
  return RunEnd{summary.verdict(), std::nullopt, false};
}

RunEnd run_in_process(const RunArgs& args, const ComparatorOptions& cmp,
                      const std::vector<ConfiguredBackend>& backends) {
  const Shard shard = args.dataset.parsed_shard();
  const RunnerModels models = runner_models(args, backends);
  std::vector<std::unique_ptr<Runner>> owned;
  for (size_t i = 0; i < backends.size(); ++i)
    owned.push_back(backends[i].make_runner(models.loaders[i]));
  std::vector<Runner*> runners;
  std::vector<std::string> names;
  for (auto& r : owned) {
    runners.push_back(r.get());
    names.push_back(r->name());
  }
  std::unique_ptr<FeedSource> feeds = args.data.make_feeds(/*lazy=*/true);

  DatasetRunOptions options;
  options.compare = cmp.compare_func();
  options.shard = shard;
  options.strict_inputs = args.data.strict_inputs;
  std::unique_ptr<io::RunResultsStream> writer;
  if (!cmp.save_outputs.empty()) {
    writer = std::make_unique<io::RunResultsStream>(cmp.save_outputs, names);
    options.on_iteration = [&](size_t index, const std::vector<RunnerOutcome>& outcomes) {
      for (size_t r = 0; r < outcomes.size(); ++r) {
        if (outcomes[r].result) {
          writer->add(r, *outcomes[r].result);
          continue;
        }
        IterationResult failed;  // no outputs: why the runner failed on this feed
        failed.runner_name = names[r];
        failed.dataset_index = index;
        failed.error = outcomes[r].error;
        writer->add(r, failed);
      }
    };
  }
  if (shard.count > 1)
    logger().info("Dataset shard {}/{}: iterations i with i % {} == {}", shard.index, shard.count,
                  shard.count, shard.index);
  const DatasetSummary summary = run_dataset(runners, *feeds, options);
  if (writer) {
    logger().info("Saving inference results to {}", cmp.save_outputs);
    writer->finish();
  }
  finish(summary, args, cmp);
  return RunEnd{summary.verdict(), std::nullopt, false};
}

}  // namespace

bool is_dataset_results(const RunResults& results) {
  for (const auto& [runner, iterations] : results)
    for (const IterationResult& it : iterations)
      if (it.dataset_index) return true;
  return false;
}

std::string generate_dataset_script(const RunArgs& args, const ComparatorOptions& cmp,
                                    const std::vector<ConfiguredBackend>& backends,
                                    const std::string& command) {
  const RunnerScripts scripts = runner_scripts_of(backends, "run from Python (--dask, or a script)",
                                                  "run the dataset in process (--dataset)");
  const std::vector<RunnerScript>& runner_scripts = scripts.runners;
  const Shard shard = args.dataset.parsed_shard();
  std::string s = fmt::format(
      "#!/usr/bin/env python3\n"
      "# Generated by parity {} from the command:\n"
      "#   {}\n"
      "# A dataset run: exits 0 when every feed ran and every comparison passed, else 1.\n"
      "import os\n"
      "import sys\n\n"
      "import parity\n"
      "from parity.backend.common import InvokeFromScript, invoke_from_script\n"
      "from parity.backend.onnx import InferShapes, ModifyOutputs, OnnxFromPath, SaveOnnx\n"
      "{}"
      "from parity.comparator import CompareFunc, DataLoader, TensorMetadata\n"
      "from parity.constants import MARK_ALL\n"
      "from parity.dataset import FileFeeds, run_dataset, write_dataset_report\n"
      "from parity.json import load_json\n"
      "from parity.logger import G_LOGGER\n\n\n",
      PARITY_VERSION, command, scripts.import_lines);
  // setup() runs once per process that runs feeds (each Dask worker), so it builds everything
  // a worker needs; its result is cached there.
  s += "def setup():\n";
  for (const auto& plugin : args.plugins)
    s += fmt::format("    parity.load_plugin({})\n", py_str(plugin));
  s += fmt::format(
      "    load_model = OnnxFromPath({}, external_data_dir={}, ignore_external_data={})\n",
      py_str(args.model.model_file), py_str(args.model.external_data_dir),
      py_bool(args.model.ignore_external_data));
  if (args.model.shape_inference) s += "    load_model = InferShapes(load_model)\n";
  if (!args.model.onnx_outputs.empty() || !args.model.onnx_exclude_outputs.empty()) {
    std::string outputs = args.model.mark_all()             ? "MARK_ALL"
                          : args.model.onnx_outputs.empty() ? "None"
                                                            : py_list(args.model.onnx_outputs);
    s += fmt::format("    load_model = ModifyOutputs(load_model, outputs={}, exclude_outputs={})\n",
                     outputs, py_list(args.model.onnx_exclude_outputs));
  }
  s += save_onnx_code(args);  // (refused with --dask: each worker would write it)
  s += "    model = load_model()\n    runners = [\n";
  for (const RunnerScript& r : runner_scripts) s += fmt::format("        {},\n", r.expression);
  s += fmt::format("    ]\n    return runners, {}\n\n\n", compare_func_code(args, cmp));

  s += "def main():\n";
  const int severity = static_cast<int>(args.logging.severity());
  if (severity != static_cast<int>(Severity::kInfo))
    s += fmt::format("    G_LOGGER.severity = {}\n", severity);
  for (const auto& plugin : args.plugins)
    s += fmt::format("    parity.load_plugin({})\n", py_str(plugin));
  if (args.data_loader_script.empty() && !args.data.load_inputs.empty())
    s += fmt::format("    data_loader = FileFeeds({})\n", py_list(args.data.load_inputs));
  else
    s += data_loader_code(args.data, args.data_loader_script);
  const std::string common =
      fmt::format("shard=({}, {}), save_outputs_path={}, strict_inputs={}", shard.index,
                  shard.count, cmp.save_outputs.empty() ? "None" : py_str(cmp.save_outputs),
                  py_bool(args.data.strict_inputs));
  if (args.dataset.uses_dask()) {
    s += fmt::format(
        "    from parity.distributed import run_dataset as run_distributed\n"
        "    summary = run_distributed(setup, data_loader, address={}, n_workers={}, "
        "batch_size={}, {})\n",
        args.dataset.dask_address.empty() ? "None" : py_str(args.dataset.dask_address),
        args.dataset.dask_workers, args.dataset.dask_batch, common);
  } else {
    s += fmt::format(
        "    runners, compare_func = setup()\n"
        "    summary = run_dataset(runners, data_loader, compare_func=compare_func, {})\n",
        common);
  }
  s += fmt::format("    summary.log(worst={})\n", args.dataset.worst);
  if (!cmp.report.empty())
    s += fmt::format("    write_dataset_report({}, summary, worst={}, command={})\n",
                     py_str(cmp.report), args.dataset.worst, py_str(command));
  s += "    why = summary.why()\n"
       "    if why:\n"
       "        G_LOGGER.error(why)\n"
       "    return 0 if summary.passed() else 1\n\n\n";
  s += script_main_block();
  return s;
}

RunEnd run_dataset_command(const RunArgs& args, const ComparatorOptions& cmp,
                           const std::vector<ConfiguredBackend>& backends,
                           std::optional<RunResults> loaded) {
  refuse_unstreamable(args, cmp, backends);
  args.dataset.parsed_shard();  // a malformed --shard fails before any work
  if (backends.empty()) return compare_saved(args, cmp, std::move(loaded));
  const bool python = args.dataset.uses_dask() || run_needs_python(args);
  if (!args.gen_script.empty() || python) {
    const std::string script = generate_dataset_script(args, cmp, backends, invoked_command());
    if (!args.gen_script.empty()) {
      if (args.gen_script == "-") {
        std::fwrite(script.data(), 1, script.size(), stdout);
        std::fflush(stdout);
      } else {
        io::write_file(args.gen_script, script);
        logger().info("Writing script to: {}", args.gen_script);
      }
      return RunEnd{std::nullopt, 0, true};
    }
    return RunEnd{std::nullopt, run_python_script(script), false};
  }
  return run_in_process(args, cmp, backends);
}

}  // namespace parity::cli
