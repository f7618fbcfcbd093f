// `parity surgeon` and its subcommands (one file each: surgeon_extract.cc,
// surgeon_sanitize.cc), which turn Polygraphy's flags into options for the surgeon layer.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/logging_args.h"
#include "cli/save_onnx_args.h"
#include "comparator/data_loader.h"
#include "surgeon/model_file.h"

namespace parity::cli {

// What every surgeon subcommand takes: logging, the model and where its data is, the output.
struct SurgeonModelArgs {
  LoggingArgs logging;
  std::string model_file;
  std::string external_data_dir;
  SaveOnnxArgs save;

  std::string path() const;  // absolute, as Polygraphy prints it
  // Loads the model, logging "Loading model: ..." and (unless told not to, for a tool that
  // edits the model while loading it, as Polygraphy's do) the "Original Model:" summary.
  surgeon::ModelFile load(bool show_summary = true) const;
  static void show_original(const surgeon::ModelFile& model);
  // Saves through the saving flags, then logs the "New Model:" summary.
  void save_model(surgeon::ModelFile& model) const;
};
void add_surgeon_model_args(CLI::App& app, SurgeonModelArgs& args);

// The data loader flags of the fallback shape inference run (--seed, --val-range and the input
// shapes under the subcommand's name for them).
struct FallbackDataArgs {
  std::vector<std::string> input_shapes;
  uint32_t seed = 1;
  std::vector<std::string> val_range;
  bool force_fallback = false;
  DataLoaderOptions options(const std::string& shapes_flag) const;
};
void add_fallback_data_args(CLI::App& app, FallbackDataArgs& args, const std::string& shapes_flags,
                            const std::string& shapes_help);

struct SurgeonExtractArgs {
  SurgeonModelArgs model;
  FallbackDataArgs data;
  std::vector<std::string> inputs;   // name:shape:dtype, each part may be 'auto'
  std::vector<std::string> outputs;  // name:dtype
};

struct SurgeonSanitizeArgs {
  SurgeonModelArgs model;
  FallbackDataArgs data;
  bool fold_constants = false;
  std::vector<int> num_passes;  // one value when given
  std::string partitioning;
  bool no_fold_shapes = false;
  bool no_per_pass_shape_inference = false;
  std::string fold_size_threshold;
  bool cleanup = false;
  bool toposort = false;
  bool no_shape_inference = false;
  std::vector<std::string> upper_bounds;  // --set-unbounded-dds-upper-bound
};

struct SurgeonArgs {
  SurgeonExtractArgs extract;
  SurgeonSanitizeArgs sanitize;
  CLI::App* extract_app = nullptr;
  CLI::App* sanitize_app = nullptr;
  // The logging flags of the subcommand that was parsed.
  const LoggingArgs* logging() const;
};

CLI::App* setup_surgeon(CLI::App& app, SurgeonArgs& args);
CLI::App* setup_surgeon_extract(CLI::App& surgeon, SurgeonExtractArgs& args);
CLI::App* setup_surgeon_sanitize(CLI::App& surgeon, SurgeonSanitizeArgs& args);
// The exit status of the subcommand that was parsed.
int run_surgeon(const SurgeonArgs& args);
int run_surgeon_extract(const SurgeonExtractArgs& args);
int run_surgeon_sanitize(const SurgeonSanitizeArgs& args);

}  // namespace parity::cli
