// The comparator option group (Polygraphy's ComparatorRunArgs, ComparatorCompareArgs and
// CompareFuncArgs, plus Parity's layer-wise and report flags). The flags are kept as CLI11
// fills them and parsed once, by parse(), into the options the library takes: every consumer
// (the run, the layer-wise run, the report, --gen-script) reads the parsed values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "comparator/comparator.h"
#include "comparator/compare.h"
#include "comparator/tensor_error.h"

namespace parity::cli {

// What the comparator flags mean.
struct ComparatorOptions {
  int64_t warm_up = 0;
  // --use-subprocess: each runner in a child process (backend/subprocess_runner.h).
  bool use_subprocess = false;
  std::optional<double> subprocess_timeout;  // seconds per answer
  std::string save_inputs, save_outputs;
  std::vector<std::string> load_outputs;
  bool validate = false;
  bool fail_fast = false;
  std::string compare = "simple";  // simple, indices, distance, quality
  // The per-tensor thresholds of every metric, shared by the compare functions below, the
  // layer-wise comparison and the report.
  TensorCompareOptions tensor;
  IndicesCompareOptions indices;
  std::optional<TopKOptions> top_k;
  size_t mark_budget = 0;  // bytes
  bool local_error = false;
  std::string report;
  // --save-heatmaps, --save-error-metrics-plot, --show-*: CompareFunc.simple's figures.
  ErrorPlotOptions plots;

  SimpleCompareOptions simple() const;
  DistanceCompareOptions distance() const;
  QualityCompareOptions quality() const;
  // The compare function --compare selects, with these thresholds; `plotter` draws the
  // figures of `plots` (required when any is asked for).
  CompareFunc compare_func(std::shared_ptr<ErrorPlotter> plotter = nullptr) const;
};

struct ComparatorArgs {
  int64_t warm_up = 0;
  bool use_subprocess = false;
  std::optional<double> subprocess_timeout;
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
  std::string mark_budget;
  bool local_error = false;
  std::string report;
  std::vector<std::string> l2_tolerance, cosine_similarity_threshold, psnr_tolerance, snr_tolerance;
  std::string save_heatmaps, save_error_metrics_plot;
  bool show_heatmaps = false, show_error_metrics_plot = false;

  // Every value parsed; UsageError naming the flag for a malformed one.
  ComparatorOptions parse() const;
};
void add_comparator_args(CLI::App& app, ComparatorArgs& args);

// The first of the figure flags given (--save-heatmaps, ...), for messages.
std::string plot_flag(const ErrorPlotOptions& plots);

// --mark-budget's default: 1 GiB, at most a quarter of the machine's memory.
size_t default_mark_budget();

}  // namespace parity::cli
