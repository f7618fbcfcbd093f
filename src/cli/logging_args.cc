#include "cli/logging_args.h"

#include <unistd.h>

#include <cstdio>
#include <optional>

#include "core/error.h"
#include "core/logger.h"
#include "core/progress.h"

namespace parity::cli {

void add_logging_args(CLI::App& app, LoggingArgs& args) {
  app.add_flag("-v,--verbose", args.verbose, "Increase logging verbosity. Specify multiple times")
      ->group("Logging");
  app.add_flag("-q,--quiet", args.quiet, "Decrease logging verbosity. Specify multiple times")
      ->group("Logging");
  app.add_option("--verbosity", args.verbosity,
                 "Logging severity: ULTRA_VERBOSE, SUPER_VERBOSE, EXTRA_VERBOSE, VERBOSE, INFO, "
                 "START, FINISH, WARNING, ERROR or CRITICAL; [<path>:]<severity> sets it for the "
                 "messages of Parity's sources under <path> (e.g. backend/onnxrt:VERBOSE)")
      ->group("Logging");
  app.add_flag("--silent", args.silent, "Disable all output")->group("Logging");
  app.add_option("--log-format", args.log_format,
                 "Log format options: timestamp (the time of each line), line-info (the source "
                 "file and line of each message), no-colors")
      ->check(CLI::IsMember({"timestamp", "line-info", "no-colors"}))
      ->group("Logging");
  app.add_option("--log-file", args.log_file, "Also write the log to this file")->group("Logging");
}

namespace {

Severity parse_severity(const std::string& token, const std::string& name) {
  auto parsed = severity_from_name(name);
  if (!parsed)
    fail_usage(
        "failed to parse --verbosity with value '{}': unknown severity '{}'; valid "
        "choices are ULTRA_VERBOSE, SUPER_VERBOSE, EXTRA_VERBOSE, VERBOSE, INFO, START, "
        "FINISH, WARNING, ERROR, CRITICAL, each optionally after <path>:",
        token, name);
  return *parsed;
}

}  // namespace

Severity LoggingArgs::severity() const {
  if (silent) return static_cast<Severity>(1000);
  std::optional<Severity> chosen;
  for (const std::string& token : verbosity) {
    const size_t colon = token.rfind(':');
    const std::string path = colon == std::string::npos ? "" : token.substr(0, colon);
    const Severity s =
        parse_severity(token, token.substr(colon == std::string::npos ? 0 : colon + 1));
    if (path.empty()) chosen = s;
  }
  return chosen ? *chosen : severity_from_count(verbose - quiet);
}

std::vector<std::pair<std::string, Severity>> LoggingArgs::path_severities() const {
  std::vector<std::pair<std::string, Severity>> out;
  for (const std::string& token : verbosity) {
    const size_t colon = token.rfind(':');
    if (colon == std::string::npos || colon == 0) continue;
    out.emplace_back(token.substr(0, colon), parse_severity(token, token.substr(colon + 1)));
  }
  return out;
}

void apply_logging_args(const LoggingArgs& args) {
  logger().set_severity(args.severity());
  // A progress line for long runs, only where a person watches: stderr on a terminal.
  set_progress_enabled(!args.silent && isatty(fileno(stderr)) != 0);
  if (!args.silent)
    for (const auto& [path, s] : args.path_severities()) logger().set_path_severity(path, s);
  bool timestamp = false, line_info = false;
  for (const auto& f : args.log_format) {
    if (f == "no-colors") logger().set_colors(false);
    timestamp |= f == "timestamp";
    line_info |= f == "line-info";
  }
  logger().set_format(timestamp, line_info);
  if (!args.log_file.empty()) logger().set_log_file(args.log_file);
}

}  // namespace parity::cli
