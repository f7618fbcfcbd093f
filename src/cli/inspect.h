// `parity inspect model` and `parity inspect data`.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/logging_args.h"
#include "cli/model_args.h"

namespace parity::cli {

struct InspectModelArgs {
  LoggingArgs logging;
  ModelArgs model;
  std::vector<std::string> show;    // layers, attrs, weights
  bool shape_inference = false;     // ONNX shape inference before describing
  bool list_unbounded_dds = false;  // the tensors that make data-dependent shapes unbounded
};

struct InspectDataArgs {
  LoggingArgs logging;
  std::string path;
  bool all = false;
  bool show_values = false;
  bool histogram = false;
  int64_t num_items = 3;    // -n: NumPy's edgeitems; -1 shows every element
  int64_t line_width = 75;  // -1: line breaks only where a dimension ends
};

CLI::App* setup_inspect_model(CLI::App& inspect, InspectModelArgs& args);
CLI::App* setup_inspect_data(CLI::App& inspect, InspectDataArgs& args);
int run_inspect_model(const InspectModelArgs& args);
int run_inspect_data(const InspectDataArgs& args);

}  // namespace parity::cli
