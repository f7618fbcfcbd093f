// `parity run`: run the model on each selected backend with the same inputs, compare the
// outputs, optionally save and load inputs and results. With marked tensors and the reference
// against one other source, the comparison is layer-wise (layerwise/layerwise_comparator.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/backend_args.h"
#include "cli/comparator_args.h"
#include "cli/data_loader_args.h"
#include "cli/dataset_args.h"
#include "cli/logging_args.h"
#include "cli/model_args.h"
#include "cli/save_onnx_args.h"
#include "comparator/verdict.h"

namespace parity::cli {

struct RunArgs {
  LoggingArgs logging;
  ModelArgs model;
  BackendArgs backends;  // filled after parsing (collect_backend_args)
  DataLoaderArgs data;
  ComparatorArgs comparator;
  DatasetArgs dataset;
  // --save-onnx and its external data flags: the model the runners load, saved as it is
  // loaded (after shape inference and marking).
  SaveOnnxArgs save_onnx;
  bool no_onnxruntime_shape_inference = false;  // accepted; Parity always uses libonnx
  // Added with the plugin and script flags (cli/scripts.h).
  std::vector<std::string> plugins;
  std::string gen_script;
  std::string data_loader_script;
  std::string compare_func_script;
};

// Adds the subcommand to `app`; `args` is filled when it is parsed, except `backends`.
CLI::App* setup_run(CLI::App& app, RunArgs& args);
// How `parity run` ends. `script` is set when the run was written as a script (--gen-script)
// or run as one (the script's exit status then stands for the verdict).
struct RunEnd {
  std::optional<RunVerdict> verdict;
  std::optional<int> script_status;
  bool wrote_script = false;
};
RunEnd run_command(const RunArgs& args);
// The model the runners of a run load, loaded once (shape inference and marked outputs as the
// model flags ask) and shared: one loader per backend, in order. Each prints Polygraphy's
// "Loading model" line when its runner is activated, and the first one activated saves the model
// with --save-onnx ("Saving ONNX model to: ..."), after that line as Polygraphy's SaveOnnx does.
struct RunnerModels {
  ModelPtr shared;
  std::vector<Loader<ModelPtr>> loaders;
};
RunnerModels runner_models(const RunArgs& args, const std::vector<ConfiguredBackend>& backends);

}  // namespace parity::cli
