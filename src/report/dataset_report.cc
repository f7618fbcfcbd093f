#include "report/dataset_report.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/logger.h"
#include "core/py_format.h"
#include "io/json.h"
#include "report/html_report.h"

namespace parity {

namespace {

constexpr char kStyle[] =
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;"
    "padding:.25em .6em;text-align:right}th{background:#f4f4f4}td.l,th.l{text-align:left}"
    ".pass{color:#17702a}.fail{color:#b00020}.bar{background:#4a78c2;height:.9em;display:"
    "inline-block}code{background:#f4f4f4;padding:.1em .3em}";

// A histogram by decade as rows of bars, widths relative to the fullest bucket.
std::string decade_table(const OutputErrorDistribution& d) {
  const size_t most = *std::max_element(d.decades.begin(), d.decades.end());
  std::string out =
      "<table><tr><th class=l>max absolute error</th><th>iterations</th>"
      "<th class=l></th></tr>";
  const int n = static_cast<int>(d.decades.size());
  for (int k = 0; k < n; ++k) {
    if (!d.decades[k]) continue;
    const int lo = k + OutputErrorDistribution::kFirstDecade;
    const std::string range = k == 0       ? fmt::format("&lt; 1e{}", lo + 1)
                              : k == n - 1 ? fmt::format("&ge; 1e{}", lo)
                                           : fmt::format("[1e{}, 1e{})", lo, lo + 1);
    const size_t width = most ? d.decades[k] * 300 / most : 0;
    out += fmt::format(
        "<tr><td class=l>{}</td><td>{}</td><td class=l><span class=bar style=\"width:{}px\">"
        "</span></td></tr>",
        range, d.decades[k], width);
  }
  return out + "</table>";
}

}  // namespace

std::string render_dataset_report(const DatasetSummary& summary, size_t worst,
                                  const std::string& command) {
  const auto& all = summary.iterations();
  const bool passed = summary.verdict().passed();
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Parity dataset report"
      "</title><style>{}</style></head><body>\n<h1>Parity dataset report</h1>\n<p><code>{}"
      "</code></p>\n<p class={}><b>{}</b>: runners {}, {} feeds, {} ran, {} passed</p>\n",
      kStyle, html_escape(command), passed ? "pass" : "fail", passed ? "PASSED" : "FAILED",
      html_escape(format_name_list(summary.runners())), all.size(), summary.ran_count(),
      summary.passed_count());
  std::string failed_to_run;
  for (const DatasetIteration& it : all)
    for (const std::string& e : it.errors)
      failed_to_run +=
          fmt::format("<tr><td>{}</td><td class=l>{}</td></tr>", it.index, html_escape(e));
  if (!failed_to_run.empty())
    out +=
        "<h2>Feeds that failed to run</h2><table><tr><th>feed</th><th class=l>error</th>"
        "</tr>" +
        failed_to_run + "</table>\n";
  for (size_t p = 0; p < summary.pairs().size(); ++p) {
    const auto& [a, b] = summary.pairs()[p];
    out += fmt::format("<h2>{} vs. {}</h2>\n", html_escape(a), html_escape(b));
    std::vector<std::string> failing;
    for (const DatasetIteration& it : all)
      if (it.ran() && !it.passed(p)) failing.push_back(std::to_string(it.index));
    if (!failing.empty())
      out += fmt::format("<p class=fail>Failing iterations: {}</p>\n", fmt::join(failing, ", "));
    for (const OutputErrorDistribution& d : error_distributions(summary, p, worst)) {
      out += fmt::format("<h3>Output {}: {}/{} iterations passed</h3>\n", html_escape(d.output),
                         d.passed, d.compared);
      out +=
          "<table><tr><th class=l>per-iteration max error</th><th>min</th><th>median</th>"
          "<th>p90</th><th>p99</th><th>max</th></tr>";
      out += fmt::format(
          "<tr><td class=l>absolute</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
          "</tr><tr><td class=l>relative</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
          "<td>{}</td></tr></table>\n",
          format_repr(d.abs_min), format_repr(d.abs_median), format_repr(d.abs_p90),
          format_repr(d.abs_p99), format_repr(d.abs_max), format_repr(d.rel_min),
          format_repr(d.rel_median), format_repr(d.rel_p90), format_repr(d.rel_p99),
          format_repr(d.rel_max));
      out += decade_table(d);
      out += "<table><tr><th>worst inputs: feed</th><th>max absolute error</th></tr>";
      for (const auto& [index, error] : d.worst)
        out += fmt::format("<tr><td>{}</td><td>{}</td></tr>", index, format_repr(error));
      out += "</table>\n";
    }
  }
  return out + "</body></html>\n";
}

void write_dataset_report(const std::string& path, const DatasetSummary& summary, size_t worst,
                          const std::string& command) {
  io::write_file(path, render_dataset_report(summary, worst, command));
  logger().info("Writing the report to {}", path);
}

}  // namespace parity
