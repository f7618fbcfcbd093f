// `parity data merge s0.json s1.json ... -o all.json`: joins the saved results of the shards of
// one dataset run (--shard with --save-outputs) into the file the unsharded run would have
// saved, so comparing it prints the same summary.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/logging_args.h"

namespace parity::cli {

struct DataMergeArgs {
  LoggingArgs logging;
  std::vector<std::string> inputs;
  std::string output;
};

// Adds `merge` to the `data` subcommand group.
CLI::App* setup_data_merge(CLI::App& data, DataMergeArgs& args);
int run_data_merge(const DataMergeArgs& args);

}  // namespace parity::cli
