// The HTML report's data from a run's results or from a layer-wise run.
#include <fmt/format.h>

#include "comparator/compare_internal.h"
#include "core/logger.h"
#include "io/json.h"
#include "report/html_report.h"

namespace parity {

HtmlReportData report_from_results(const RunResults& results, const AccuracyResult& accuracy,
                                   TensorCompareOptions options) {
  options.with_profile = true;
  HtmlReportData data;
  data.metric = options.metric;
  data.atol = options.atol;
  data.rtol = options.rtol;
  data.passed = static_cast<bool>(accuracy);
  const bool many = accuracy.entries.size() > 1;
  for (const auto& [pair, iterations] : accuracy.entries) {
    if (data.runner0.empty()) data.runner0 = pair.first, data.runner1 = pair.second;
    const auto& its0 = results.at(pair.first);
    const auto& its1 = results.at(pair.second);
    for (size_t it = 0; it < iterations.size() && it < its0.size() && it < its1.size(); ++it) {
      for (const auto& [name, verdict] : iterations[it]) {
        const IterationResult& r0 = its0[it];
        const IterationResult& r1 = its1[it];
        const std::optional<std::string> other =
            find_str_in_names(name, r1.outputs.names(), std::nullopt);
        if (!r0.outputs.contains(name) || !other) continue;
        TensorErrorStats s =
            compare_tensors(name, r0.outputs.at(name), r1.outputs.at(*other), options);
        s.passed = verdict.passed;  // the compare function's verdict (indices, shapes...)
        if (many) s.name = fmt::format("{} vs. {}: {}", pair.first, pair.second, s.name);
        if (iterations.size() > 1) s.name += fmt::format(" [iteration {}]", it);
        data.outputs.push_back(std::move(s));
      }
    }
  }
  return data;
}

HtmlReportData report_from_layerwise(const LayerwiseRun& run) {
  HtmlReportData data;
  data.runner0 = run.runner0;
  data.runner1 = run.runner1;
  data.metric = run.options.compare.metric;
  data.atol = run.options.compare.atol;
  data.rtol = run.options.compare.rtol;
  data.passed = run.passed();
  if (run.iterations.empty()) return data;
  size_t shown = 0;
  while (shown + 1 < run.iterations.size() && run.iterations[shown].passed()) ++shown;
  data.outputs = run.iterations[shown].tensors;
  data.layerwise = &run.iterations[shown];
  if (run.iterations.size() > 1) data.title += fmt::format(" (iteration {})", shown);
  return data;
}

void write_html_report(const std::string& path, HtmlReportData data, const std::string& command) {
  data.command = command;
  logger().info("Writing the report to {}", path);
  io::write_file(path, render_html_report(data));
}

}  // namespace parity
