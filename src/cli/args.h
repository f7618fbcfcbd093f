// Option groups shared by the subcommands (Polygraphy's tools/args): each group is a plain
// struct filled by CLI11 and turned into the library's typed options once, after parsing.
// The Python module builds the same structs, so both front ends mean the same thing.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "backend/onnxrt/runner.h"
#include "core/logger.h"
#include "comparator/comparator.h"
#include "comparator/compare.h"
#include "comparator/data_loader.h"
#include "onnx/model_io.h"

namespace parity::cli {

struct LoggingArgs {
  int verbose = 0;
  int quiet = 0;
  std::string verbosity;  // a severity name
  bool silent = false;
  std::string log_file;
  std::vector<std::string> log_format;  // timestamp, line-info, no-colors

  // The severity these flags select (--silent: above every severity); UsageError for an
  // unknown --verbosity.
  Severity severity() const;
};
void add_logging_args(CLI::App& app, LoggingArgs& args);
void apply_logging_args(const LoggingArgs& args);

struct ModelArgs {
  std::string model_file;
  std::string external_data_dir;
  bool ignore_external_data = false;
  std::vector<std::string> onnx_outputs;  // names, or the two tokens "mark all"
  std::vector<std::string> onnx_exclude_outputs;

  bool mark_all() const;
  onnx_io::LoadOptions load_options() const;
};
void add_model_args(CLI::App& app, ModelArgs& args, bool with_outputs);

struct DataLoaderArgs {
  uint32_t seed = 1;
  int64_t iterations = 1;
  std::vector<std::string> val_range;
  std::vector<std::string> input_shapes;
  std::vector<std::string> load_inputs;

  DataLoaderOptions options() const;
  // Where the feeds come from: the files of --load-inputs, else the generating DataLoader.
  std::unique_ptr<FeedSource> make_feeds() const;
};
void add_data_loader_args(CLI::App& app, DataLoaderArgs& args);

struct ComparatorArgs {
  int64_t warm_up = 0;
  std::string save_inputs;
  std::string save_outputs;
  std::vector<std::string> load_outputs;
  bool validate = false;
  bool fail_fast = false;
  std::string compare = "simple";
  std::vector<std::string> atol, rtol, check_error_stat, error_quantile, index_tolerance;
  bool infinities_compare_equal = false;
  bool no_shape_check = false;
  std::vector<std::string> postprocess;
  // Layer-wise runs, the report, --compare distance/quality (cli/layerwise.h).
  std::string mark_budget;
  bool local_error = false;
  std::string report;
  std::vector<std::string> l2_tolerance, cosine_similarity_threshold, psnr_tolerance,
      snr_tolerance;

  CompareFunc compare_func() const;  // throws UsageError for malformed values
};
void add_comparator_args(CLI::App& app, ComparatorArgs& args);

struct OnnxrtArgs {
  std::vector<std::string> providers{"cpu"};
  std::vector<std::string> provider_options;
  std::string ort_lib;
  int threads = 0;
  std::string optimization_level = "all";
  std::vector<std::string> custom_op_libs;

  OrtOptions options() const;
};
void add_onnxrt_args(CLI::App& app, OnnxrtArgs& args);

}  // namespace parity::cli
