// --report for runs compared with Polygraphy's all-outputs path.
#include <fmt/format.h>

#include "cli/layerwise.h"
#include "cli/layerwise_backends.h"
#include "cli/run.h"
#include "comparator/compare_internal.h"
#include "comparator/report_html.h"
#include "core/logger.h"
#include "io/json.h"

namespace parity::cli {

void write_run_report(const RunArgs& args, const RunResults& results,
                      const AccuracyResult& accuracy) {
  TensorCompareOptions options = tensor_compare_options(args.comparator);
  options.with_profile = true;
  HtmlReportData data;
  data.command = process_command_line();
  data.metric = options.metric;
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
  logger().info("Writing the report to {}", args.comparator.report);
  io::write_file(args.comparator.report, render_html_report(data));
}

}  // namespace parity::cli
