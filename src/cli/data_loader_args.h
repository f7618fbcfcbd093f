// The data loader option group (Polygraphy's DataLoaderArgs): generated inputs (seed,
// iterations, value ranges, shapes) or inputs loaded from files.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "comparator/data_loader.h"

namespace parity::cli {

struct DataLoaderArgs {
  uint32_t seed = 1;
  int64_t iterations = 1;
  std::vector<std::string> val_range;
  std::vector<std::string> input_shapes;
  std::vector<std::string> load_inputs;
  bool strict_inputs = false;

  // The generating DataLoader's options (UsageError for a malformed value).
  DataLoaderOptions options() const;
  // Where the feeds come from: the files of --load-inputs, else the generating DataLoader.
  // `lazy` (dataset runs): files and folders read one file at a time as feeds are asked for;
  // otherwise every JSON file is read here, before the run, as Polygraphy does.
  std::unique_ptr<FeedSource> make_feeds(bool lazy = false) const;
};
void add_data_loader_args(CLI::App& app, DataLoaderArgs& args);
// Polygraphy's warning for each generation flag (--seed, --val-range, --iterations) given on
// `app` beside a custom data loader (--data-loader-script or --load-inputs), which ignores them
// (an endless data loader script therefore runs until interrupted).
void warn_ignored_generation_args(const CLI::App& app, bool custom_loader);

}  // namespace parity::cli
