// `parity run`: run the model on each selected backend with the same inputs, compare the
// outputs, optionally save and load inputs and results.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/args.h"

namespace parity::cli {

enum class RunnerKind { kPluginRef, kOnnxrt };

struct RunArgs {
  LoggingArgs logging;
  ModelArgs model;
  std::vector<RunnerKind> runners;  // in command-line order
  DataLoaderArgs data;
  ComparatorArgs comparator;
  OnnxrtArgs onnxrt;
  // Added with the plugin and script flags (cli/scripts.h).
  std::vector<std::string> plugins;
  int ref_threads = 0;  // --ref-threads
  std::string gen_script;
  std::string data_loader_script;
  std::string compare_func_script;
};

// Adds the subcommand to `app`; `args` is filled when it is parsed (runner order included).
CLI::App* setup_run(CLI::App& app, RunArgs& args);
// Reads the runner flags in the order they were given (after parsing).
void collect_runner_order(CLI::App& sub, RunArgs& args);
// Runs and returns the exit status: 0 all passed, 1 a comparison or validation failed.
int run_run(const RunArgs& args);

}  // namespace parity::cli
