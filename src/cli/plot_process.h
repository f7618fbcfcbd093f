// The figures of --save-heatmaps / --save-error-metrics-plot (and --show-*) for the `parity`
// command, which does not link Python: the comparison hands its arrays to a PythonErrorPlotter,
// which saves them as .npy files and asks a child Python process running
// parity.comparator.error_plots to draw them, one request at a time, logging the child's lines
// where the comparison is. No Python starts unless one of these flags is given.
#pragma once

#include <memory>
#include <string>

#include "cli/python_process.h"
#include "comparator/error_plots.h"

namespace parity::cli {

class PythonErrorPlotter : public ErrorPlotter {
 public:
  // Starts Python and waits until it can draw: no matplotlib (Error) or --show-* without a
  // display (UsageError) fail here, before any inference.
  explicit PythonErrorPlotter(const ErrorPlotOptions& options);
  ~PythonErrorPlotter() override;

  void heatmaps(const HeatmapRequest& request) override;
  void error_metrics_plot(const ErrorMetricsRequest& request) override;

 private:
  // Sends the request with its arrays, logs the child's lines, throws its error. `what` names
  // the figure in messages ("heatmaps of 'Absolute Error | out'").
  void draw(const std::string& what, const std::string& request);

  TempPath folder_;  // the arrays of the request being drawn
  std::unique_ptr<PythonChild> child_;
};

}  // namespace parity::cli
