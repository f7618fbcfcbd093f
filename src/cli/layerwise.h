// `parity run` in layer-wise mode, the distance/quality compare functions and the HTML report
// on the command line.
//
// Layer-wise mode is used when tensors are marked (--onnx-outputs mark all, or names) and the
// reference backend is compared with exactly one other source (--onnxrt, a second --pluginref,
// or one --load-outputs file): every marked tensor is compared as the reference produces it and
// released, the other backend's tensors come in batches sized to --mark-budget, and the summary
// names the first divergence (and with --local-error the nodes that add the most error).
// Options that need every output in memory (--save-outputs, --postprocess, --validate,
// --compare indices) keep Polygraphy's all-outputs path.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "comparator/comparator.h"
#include "comparator/tensor_error.h"

namespace parity::cli {

struct ComparatorArgs;
struct RunArgs;

// --mark-budget, --local-error, --report and the thresholds of --compare distance/quality,
// stored in ComparatorArgs.
void add_layerwise_args(CLI::App& app, ComparatorArgs& args);

// "1073741824", "512M", "64KiB", "1g", "2GB": bytes (K/M/G/T are powers of 1024).
size_t parse_byte_size(const std::string& flag, const std::string& text);
// --mark-budget, or its default: 1 GiB, at most a quarter of the machine's memory.
size_t mark_budget_bytes(const ComparatorArgs& args);

// The per-tensor comparison the flags describe (simple, distance or quality).
TensorCompareOptions tensor_compare_options(const ComparatorArgs& args);
// compare_func::distance / compare_func::quality with the per-output thresholds.
CompareFunc metric_compare_func(const ComparatorArgs& args);

bool layerwise_applies(const RunArgs& args);
// Runs the comparison layer-wise; returns the exit status (0 passed, 1 failed).
int run_layerwise(const RunArgs& args);

// Writes --report for a run compared with Polygraphy's all-outputs path: the verdicts are
// `accuracy`'s, the statistics and pictures are measured again from `results`.
void write_run_report(const RunArgs& args, const RunResults& results,
                      const AccuracyResult& accuracy);

}  // namespace parity::cli
