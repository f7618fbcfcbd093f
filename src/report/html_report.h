// The HTML report (--report report.html): one self-contained file, readable offline (inline CSS,
// inline script, inline SVG; nothing is fetched). It shows the verdict per output with its error
// statistics, histograms of the absolute and relative error, a heatmap of the error for outputs
// of rank 2 and more (drawn by the inline script from embedded data), and for layer-wise runs the
// error of every node along the model with the first divergence and the largest local errors.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "comparator/comparator.h"
#include "comparator/tensor_error.h"
#include "layerwise/layerwise.h"
#include "layerwise/layerwise_comparator.h"

namespace parity {

struct HtmlReportData {
  std::string title = "Parity comparison report";
  std::string command;
  std::string runner0, runner1;  // out0's and out1's runners
  CompareMetric metric = CompareMetric::kSimple;
  bool passed = true;
  // The verdict per output: the compared outputs of a run, or every marked tensor of a
  // layer-wise run. Profiles (histograms, heatmaps) are shown when filled.
  std::vector<TensorErrorStats> outputs;
  const LayerwiseResult* layerwise = nullptr;  // null for a plain run
  // At most this many outputs get a detail section (failing ones and the last first).
  size_t max_details = 40;
  // The tolerances of CompareFunc.simple, marked on the histograms (kSimple only).
  PerOutput<double> atol = 1e-5, rtol = 1e-5;
};

std::string render_html_report(const HtmlReportData& data);

// Text for HTML content or a quoted attribute: & < > " ' escaped (shared by every page here).
std::string html_escape(std::string_view s);

// The report of a run compared with Polygraphy's all-outputs path: the verdicts are
// `accuracy`'s, the statistics and pictures measured again from `results` with `options`.
HtmlReportData report_from_results(const RunResults& results, const AccuracyResult& accuracy,
                                   TensorCompareOptions options);
// The report of a layer-wise run: its first failing iteration, else its first.
HtmlReportData report_from_layerwise(const LayerwiseRun& run);
// Renders `data` (with `command` shown at the top) into the file at `path`.
void write_html_report(const std::string& path, HtmlReportData data, const std::string& command);

}  // namespace parity
