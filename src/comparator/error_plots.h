// Polygraphy's [EXPERIMENTAL] figures of CompareFunc.simple's errors: heatmaps of the absolute
// and relative error of each compared output (save_heatmaps / show_heatmaps) and the plot of
// both errors against the magnitude of the second output (save_error_metrics_plot /
// show_error_metrics_plot). The comparison hands the arrays it compared to an ErrorPlotter,
// which draws them: parity's Python module draws in process
// (python/parity/comparator/error_plots.py), the `parity` command through that module in a
// child Python process (cli/plot_process.h), since the command does not link Python.
#pragma once

#include <string>

#include "core/tensor.h"

namespace parity {

struct ErrorPlotOptions {
  std::string save_heatmaps;  // folder; empty: not saved
  bool show_heatmaps = false;
  std::string save_error_metrics_plot;  // folder; empty: not saved
  bool show_error_metrics_plot = false;

  bool heatmaps() const { return !save_heatmaps.empty() || show_heatmaps; }
  bool error_metrics_plot() const {
    return !save_error_metrics_plot.empty() || show_error_metrics_plot;
  }
  bool any() const { return heatmaps() || error_metrics_plot(); }
  bool show() const { return show_heatmaps || show_error_metrics_plot; }
};

// One error of one output, in the output's shape (the first output's when shapes were matched):
// the figures' titles and file names come from `prefix` ("Absolute Error | out").
struct HeatmapRequest {
  const Tensor& diff;
  double min = 0, max = 0;  // of diff, as the comparison computed them
  std::string prefix;
  bool use_lognorm = false;  // the relative error is drawn on a log scale when it varies
  std::string save_dir;      // empty: not saved
  bool show = false;
};

struct ErrorMetricsRequest {
  const Tensor& absdiff;
  const Tensor& reldiff;
  const Tensor& reference;  // the second output, cast up
  double min_reldiff = 0, max_reldiff = 0;
  std::string runner0, runner1, out0_name, out1_name;
  std::string save_dir;  // empty: not saved
  bool show = false;
};

// Draws the figures; called while the comparison logs, so its lines fall where Polygraphy's
// do. Throws Error (UsageError for a request that cannot be honoured, such as showing
// figures without a display) when a figure cannot be drawn.
class ErrorPlotter {
 public:
  virtual ~ErrorPlotter() = default;
  virtual void heatmaps(const HeatmapRequest& request) = 0;
  virtual void error_metrics_plot(const ErrorMetricsRequest& request) = 0;
};

}  // namespace parity
