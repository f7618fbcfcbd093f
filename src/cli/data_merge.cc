#include "cli/data_merge.h"

#include "core/logger.h"
#include "io/json.h"

namespace parity::cli {

CLI::App* setup_data_merge(CLI::App& data, DataMergeArgs& args) {
  CLI::App* sub = data.add_subcommand(
      "merge",
      "Combine the saved results of the shards of a dataset run (--shard, --save-outputs) into "
      "one file, ordered by dataset index; comparing it prints what the unsharded run prints.");
  add_logging_args(*sub, args.logging);
  sub->add_option("results", args.inputs, "The shards' results files (any order)")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("-o,--output", args.output, "Path of the merged results file")->required();
  return sub;
}

int run_data_merge(const DataMergeArgs& args) {
  for (const std::string& path : args.inputs)
    if (path == args.output)
      fail_usage(
          "failed to merge into {}: it is one of the inputs; give -o a new path, so the shards "
          "stay untouched",
          args.output);
  RunResults merged = io::merge_dataset_results(args.inputs);
  size_t iterations = merged.empty() ? 0 : merged[0].second.size();
  logger().info("Merged {} file(s): {} runner(s), {} iteration(s)", args.inputs.size(),
                merged.size(), iterations);
  io::save_run_results(args.output, merged);
  logger().info("Saving inference results to {}", args.output);
  return 0;
}

}  // namespace parity::cli
