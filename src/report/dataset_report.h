// The HTML report of a dataset run (--report with --dataset): one self-contained file with the
// pass rate, the feeds that failed to run, the failing iterations, and per output the
// distribution of the per-iteration error (order statistics, a histogram by decade) and the
// worst inputs by their dataset index. Made from the DatasetSummary alone, so a merged sharded
// run writes the same report as the unsharded run.
#pragma once

#include <string>

#include "comparator/dataset.h"

namespace parity {

std::string render_dataset_report(const DatasetSummary& summary, size_t worst,
                                  const std::string& command);
void write_dataset_report(const std::string& path, const DatasetSummary& summary, size_t worst,
                          const std::string& command);

}  // namespace parity
