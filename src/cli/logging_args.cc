#include "cli/logging_args.h"

#include "core/error.h"

namespace parity::cli {

void add_logging_args(CLI::App& app, LoggingArgs& args) {
  app.add_flag("-v,--verbose", args.verbose, "Increase logging verbosity. Specify multiple times")
      ->group("Logging");
  app.add_flag("-q,--quiet", args.quiet, "Decrease logging verbosity. Specify multiple times")
      ->group("Logging");
  app.add_option("--verbosity", args.verbosity,
                 "Logging severity: ULTRA_VERBOSE, SUPER_VERBOSE, EXTRA_VERBOSE, VERBOSE, INFO, "
                 "START, FINISH, WARNING, ERROR or CRITICAL")
      ->group("Logging");
  app.add_flag("--silent", args.silent, "Disable all output")->group("Logging");
  app.add_option("--log-format", args.log_format, "Log format options: no-colors")
      ->check(CLI::IsMember({"timestamp", "line-info", "no-colors"}))
      ->group("Logging");
  app.add_option("--log-file", args.log_file, "Also write the log to this file")->group("Logging");
}

Severity LoggingArgs::severity() const {
  if (silent) return static_cast<Severity>(1000);
  if (verbosity.empty()) return severity_from_count(verbose - quiet);
  auto parsed = severity_from_name(verbosity);
  if (!parsed)
    fail_usage(
        "failed to parse --verbosity with value '{}': unknown severity; valid choices "
        "are ULTRA_VERBOSE, SUPER_VERBOSE, EXTRA_VERBOSE, VERBOSE, INFO, START, FINISH, "
        "WARNING, ERROR, CRITICAL",
        verbosity);
  return *parsed;
}

void apply_logging_args(const LoggingArgs& args) {
  Severity s = args.severity();
  logger().set_severity(s);
  for (const auto& f : args.log_format)
    if (f == "no-colors") logger().set_colors(false);
  if (!args.log_file.empty()) logger().set_log_file(args.log_file);
}

}  // namespace parity::cli
