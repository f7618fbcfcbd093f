// `parity check lint`: Polygraphy's linter (surgeon/lint.h) and its JSON report.
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/data_loader_args.h"
#include "cli/model_args.h"
#include "cli/tool_command.h"
#include "core/file_util.h"
#include "core/logger.h"
#include "surgeon/lint.h"

namespace parity::cli {

namespace {

struct LintArgs {
  LoggingArgs logging;
  ModelArgs model;
  DataLoaderArgs data;
  std::string output;
};

// Polygraphy's report: {"summary": {"passing": [...], "failing": [...]}, "lint_entries": [...]},
// indented by 4 as its save_json writes it (names sorted: Polygraphy's come from a set).
std::string report_json(const surgeon::LintReport& report) {
  nlohmann::ordered_json entries = nlohmann::ordered_json::array();
  for (const auto& e : report.entries) {
    nlohmann::ordered_json entry;
    entry["level"] = std::string(surgeon::lint_level_name(e.level));
    entry["source"] = std::string(surgeon::lint_source_name(e.source));
    entry["message"] = e.message;
    if (e.node) entry["nodes"] = nlohmann::ordered_json::array({*e.node});
    entries.push_back(std::move(entry));
  }
  nlohmann::ordered_json json;
  json["summary"]["passing"] = nlohmann::ordered_json(report.passing);
  json["summary"]["failing"] = nlohmann::ordered_json(report.failing);
  json["lint_entries"] = std::move(entries);
  return json.dump(4, ' ', /*ensure_ascii=*/true);
}

int run_lint(const LintArgs& args) {
  std::unique_ptr<FeedSource> feeds = args.data.make_feeds();
  surgeon::LintOptions options;
  options.feeds = feeds.get();
  // A model script's model is linted as the file its function's model was written to.
  const bool script = args.model.is_script();
  options.external_data_dir = script ? "" : args.model.external_data_dir;
  options.announce = !script;
  const surgeon::LintReport report = surgeon::lint_model(
      script ? script_model_file(args.model.model_file) : args.model.model_file, options);
  if (!args.output.empty()) {
    logger().info("Saving linting report to {}", args.output);
    write_file_atomically(args.output, report_json(report), "linting report");
  }
  if (!report.closing_error.empty()) logger().error("{}", report.closing_error);
  return report.status;
}

}  // namespace

void setup_check(CLI::App& app, ToolCommands& commands) {
  CLI::App& check = command_group(app, "check", "Check and validate various aspects of a model.");
  auto args = std::make_shared<LintArgs>();
  CLI::App* lint = check.add_subcommand(
      "lint",
      "Lint an ONNX model: ONNX's checker, then each node run on the reference backend to find "
      "the nodes that cannot run, and the inputs and nodes that do not affect the outputs.");
  add_logging_args(*lint, args->logging);
  add_model_args(*lint, args->model, /*with_outputs=*/false);
  add_data_loader_args(*lint, args->data);
  lint->add_option("-o,--output", args->output, "Path to save the JSON report");
  commands.push_back({lint, &args->logging, true, [args] { return run_lint(*args); }});
}

}  // namespace parity::cli
