#include "cli/plot_process.h"

#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/logger.h"
#include "io/npy.h"

namespace parity::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Numbers as text, which Python's float() reads back exactly, NaN and infinities included
// (JSON has neither).
std::string number(double v) { return fmt::format("{}", v); }

json dir_or_null(const std::string& dir) { return dir.empty() ? json(nullptr) : json(dir); }

// The child's answer; an Error naming `what` when it ended without one.
json read_answer(PythonChild& child, const std::string& what) {
  std::optional<std::string> line = child.read_line();
  if (!line)
    fail(
        "failed to draw {}: the Python process drawing the figures "
        "(parity.comparator.error_plots) ended without an answer; its error is above",
        what);
  try {
    return json::parse(*line);
  } catch (const json::exception&) {
    fail(
        "failed to draw {}: the Python process drawing the figures answered '{}', which is "
        "not its protocol (does a sitecustomize print to stdout?)",
        what, line->substr(0, 200));
  }
}

void log_lines(const json& answer) {
  if (!answer.contains("log")) return;
  for (const json& entry : answer["log"]) {
    const std::string severity = entry.at(0).get<std::string>();
    Logger::Indent indent(entry.at(1).get<int>());
    const std::string text = entry.at(2).get<std::string>();
    if (severity == "start")
      logger().start("{}", text);
    else if (severity == "warning")
      logger().warning("{}", text);
    else if (severity == "verbose")
      logger().verbose("{}", text);
    else
      logger().info("{}", text);
  }
}

[[noreturn]] void throw_error(const json& answer, const std::string& what) {
  const std::string error = answer["error"].get<std::string>();
  if (answer.value("usage", false)) fail_usage("{}", error);
  fail("failed to draw {}: {}", what, error);
}

}  // namespace

PythonErrorPlotter::PythonErrorPlotter(const ErrorPlotOptions& options)
    : folder_(make_temp_dir("parity-plots")) {
  child_ = std::make_unique<PythonChild>(
      std::vector<std::string>{"-m", "parity.comparator.error_plots"});
  const std::string what = "the figures of the errors";
  if (!child_->write_line(json{{"show", options.show()}}.dump()))
    fail("failed to start Python to draw {}: it ended at once; its error is above", what);
  const json ready = read_answer(*child_, what);
  if (ready.contains("error")) {
    const std::string error = ready["error"].get<std::string>();
    if (ready.value("usage", false)) fail_usage("{}", error);
    fail("{}", error);
  }
}

PythonErrorPlotter::~PythonErrorPlotter() = default;

void PythonErrorPlotter::draw(const std::string& what, const std::string& request) {
  if (!child_->write_line(request))
    fail(
        "failed to draw {}: the Python process drawing the figures has ended; its error is "
        "above",
        what);
  const json answer = read_answer(*child_, what);
  log_lines(answer);
  if (answer.contains("error")) throw_error(answer, what);
}

void PythonErrorPlotter::heatmaps(const HeatmapRequest& r) {
  const std::string diff = (fs::path(folder_.path) / "diff.npy").string();
  io::save_npy(diff, r.diff);
  json request{{"kind", "heatmaps"},   {"arrays", {{"diff", diff}}},
               {"min", number(r.min)}, {"max", number(r.max)},
               {"prefix", r.prefix},   {"save_dir", dir_or_null(r.save_dir)},
               {"show", r.show},       {"use_lognorm", r.use_lognorm}};
  draw(fmt::format("the heatmaps of '{}'", r.prefix), request.dump());
  fs::remove(diff);
}

void PythonErrorPlotter::error_metrics_plot(const ErrorMetricsRequest& r) {
  json arrays;
  for (const auto& [key, tensor] :
       {std::pair("absdiff", &r.absdiff), std::pair("reldiff", &r.reldiff),
        std::pair("reference", &r.reference)}) {
    const std::string path = (fs::path(folder_.path) / (std::string(key) + ".npy")).string();
    io::save_npy(path, *tensor);
    arrays[key] = path;
  }
  json request{{"kind", "error_metrics"},
               {"arrays", arrays},
               {"min_reldiff", number(r.min_reldiff)},
               {"max_reldiff", number(r.max_reldiff)},
               {"runner0", r.runner0},
               {"runner1", r.runner1},
               {"out0", r.out0_name},
               {"out1", r.out1_name},
               {"save_dir", dir_or_null(r.save_dir)},
               {"show", r.show}};
  draw(fmt::format("the error metrics plot of '{}'", r.out0_name), request.dump());
  for (const auto& [key, path] : arrays.items()) fs::remove(path.get<std::string>());
}

}  // namespace parity::cli
