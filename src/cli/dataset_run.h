// `parity run --dataset` (and --shard, --dask): validation on a whole dataset
// (comparator/dataset.h). In process, the feeds stream through every runner at once and
// --save-outputs streams to its file; with --dask, a data-loader script or a compare-function
// script the run is written as a Python script over parity.distributed / parity.dataset and
// run by Python. Either way the summary is the one DatasetSummary prints.
#pragma once

#include <optional>
#include <vector>

#include "cli/run.h"
#include "comparator/struct.h"

namespace parity::cli {

// `loaded`: the --load-outputs files already read (when run_command looked at them to tell a
// dataset run's results).
RunEnd run_dataset_command(const RunArgs& args, const ComparatorOptions& cmp,
                           const std::vector<ConfiguredBackend>& backends,
                           std::optional<RunResults> loaded = std::nullopt);

// True when saved results come from a dataset run (their iterations carry dataset indices).
bool is_dataset_results(const RunResults& results);

// The Python script of a dataset run (for --dask and scripts, and --gen-script with --dataset).
std::string generate_dataset_script(const RunArgs& args, const ComparatorOptions& cmp,
                                    const std::vector<ConfiguredBackend>& backends,
                                    const std::string& command);

}  // namespace parity::cli
