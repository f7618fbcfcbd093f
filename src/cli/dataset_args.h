// The dataset option group of `parity run`: validating on a whole dataset.
//   --dataset               stream the feeds through all runners at once, compare each iteration
//                           as it comes, keep only compact records, print the dataset summary
//   --shard INDEX/COUNT     this run takes the iterations i with i % COUNT == INDEX
//   --dask [ADDRESS]        run the dataset on a Dask cluster (python3-distributed): a local
//                           cluster of worker processes, or the scheduler at ADDRESS
//   --dask-workers N        workers of the local cluster
//   --dask-batch N          feeds per task
//   --worst N               how many of the worst inputs the summary names per output
// --shard and --dask imply --dataset.
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "comparator/dataset.h"

namespace parity::cli {

struct DatasetArgs {
  bool dataset = false;
  std::string shard;
  std::string dask_address;
  CLI::Option* dask = nullptr;  // given with or without an address
  int64_t dask_workers = 2;
  int64_t dask_batch = 8;
  int64_t worst = 5;

  bool uses_dask() const { return dask && dask->count() > 0; }
  bool enabled() const { return dataset || !shard.empty() || uses_dask(); }
  // UsageError for a malformed --shard.
  Shard parsed_shard() const;
};
void add_dataset_args(CLI::App& app, DatasetArgs& args);

}  // namespace parity::cli
