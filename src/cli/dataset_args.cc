#include "cli/dataset_args.h"

#include "cli/option_checks.h"

namespace parity::cli {

Shard DatasetArgs::parsed_shard() const {
  return shard.empty() ? Shard{} : Shard::parse("--shard", shard);
}

void add_dataset_args(CLI::App& app, DatasetArgs& args) {
  const char* group = "Dataset";
  app.add_flag("--dataset", args.dataset,
               "Validate on a whole dataset: feeds are read one at a time and run on every "
               "runner at once, each iteration is compared as it comes and only its verdict "
               "and error statistics are kept; prints the dataset summary (pass rate, worst "
               "inputs by error with their indices, error distributions)")
      ->group(group);
  app.add_option("--shard", args.shard,
                 "Run a deterministic share of the iterations: INDEX/COUNT takes the iterations "
                 "i with i % COUNT == INDEX. Save each shard with --save-outputs and combine "
                 "them with 'parity data merge'. Implies --dataset")
      ->group(group);
  args.dask = app.add_option("--dask", args.dask_address,
                             "Run the dataset on a Dask cluster: a local cluster of worker "
                             "processes on this machine, or the scheduler at ADDRESS "
                             "(tcp://host:8786). Implies --dataset")
                  ->expected(0, 1)
                  ->group(group);
  check_range(app.add_option("--dask-workers", args.dask_workers,
                             "Worker processes of the local Dask cluster (without an ADDRESS)"),
              int64_t{1}, int64_t{1024})
      ->default_str("2")
      ->group(group);
  check_range(app.add_option("--dask-batch", args.dask_batch, "Feeds per Dask task"), int64_t{1},
              int64_t{1} << 20)
      ->default_str("8")
      ->group(group);
  check_range(app.add_option("--worst", args.worst,
                             "How many of the worst inputs the dataset summary names per output"),
              int64_t{0}, int64_t{1} << 20)
      ->default_str("5")
      ->group(group);
}

}  // namespace parity::cli
