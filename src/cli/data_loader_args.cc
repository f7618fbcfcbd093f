#include "cli/data_loader_args.h"

#include <algorithm>
#include <filesystem>

#include "cli/option_checks.h"
#include "cli/parse_util.h"
#include "core/logger.h"
#include "io/feed_files.h"
#include "io/json.h"

namespace parity::cli {

DataLoaderOptions DataLoaderArgs::options() const {
  DataLoaderOptions o;
  o.seed = seed;
  o.iterations = iterations;
  o.val_range = parse_val_ranges(val_range);
  o.input_metadata = parse_input_shapes("--input-shapes", input_shapes);
  return o;
}

std::unique_ptr<FeedSource> DataLoaderArgs::make_feeds(bool lazy) const {
  if (load_inputs.empty()) return std::make_unique<DataLoader>(options());
  // Folders, .npz and .npy are read by the file source (it knows the model's inputs when
  // feeds are asked for); JSON lists alone keep Polygraphy's loading before the run.
  const bool only_json = std::all_of(load_inputs.begin(), load_inputs.end(), [](const auto& p) {
    return !std::filesystem::is_directory(p) && !p.ends_with(".npz") && !p.ends_with(".npy");
  });
  if (lazy || !only_json) return std::make_unique<io::FileFeedSource>(load_inputs);
  std::vector<TensorMap> feeds;
  for (const auto& path : load_inputs) {
    logger().info("Loading input data from {}", path);
    for (auto& feed : io::load_inputs(path)) feeds.push_back(std::move(feed));
  }
  return std::make_unique<FeedList>(std::move(feeds));
}

void warn_ignored_generation_args(const CLI::App& app, bool custom_loader) {
  if (!custom_loader) return;
  // Polygraphy's order (it also has the deprecated --int-min ... --float-max, which Parity
  // does not).
  for (const char* flag : {"--seed", "--val-range", "--iterations"})
    if (app.count(flag) > 0)
      logger().warning(
          "Argument: '{}' will be ignored since a custom data loader was provided.\nThis "
          "argument is only valid when using the default data loader.",
          flag);
}

void add_data_loader_args(CLI::App& app, DataLoaderArgs& args) {
  const char* group = "Data Loader";
  check_range(
      app.add_option("--seed", args.seed, "Seed for random inputs; iteration i uses seed + i"),
      int64_t{0}, int64_t{UINT32_MAX})
      ->default_str("1")
      ->group(group);
  check_range(
      app.add_option("--iterations,--iters", args.iterations, "Number of inference iterations"),
      int64_t{1}, int64_t{1} << 40)
      ->default_str("1")
      ->group(group);
  app.add_option("--val-range", args.val_range,
                 "Range of generated values, inclusive: [min,max] or <input>:[min,max]. "
                 "Defaults to [0.0,1.0]")
      ->group(group);
  app.add_option("--input-shapes,--inputs", args.input_shapes,
                 "Input shapes for dynamic dimensions: <input>:[1,3,224,224]")
      ->group("Model");  // Polygraphy's ModelArgs holds the input shapes
  app.add_option("--load-inputs,--load-input-data", args.load_inputs,
                 "JSON files of inputs (List[Dict[str, array]]) to use instead of generating. "
                 "Also folders, .npz files (one feed: an array per input) and .npy files (one "
                 "feed of a single-input model); dataset runs (--dataset) read them one file at "
                 "a time")
      ->group(group);
  app.add_flag("--strict-inputs", args.strict_inputs,
               "Refuse loaded inputs whose names, dtypes or shapes do not fit the model, instead "
               "of renaming, casting and reshaping them with a warning as Polygraphy does")
      ->group(group);
}

}  // namespace parity::cli
