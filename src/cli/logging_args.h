// The logging option group (Polygraphy's LoggerArgs): -v/-q, --verbosity, --silent,
// --log-format, --log-file. Shared by every subcommand.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/logger.h"

namespace parity::cli {

struct LoggingArgs {
  int verbose = 0;
  int quiet = 0;
  // Severity names, each optionally for a path of Parity's sources ("VERBOSE",
  // "backend/onnxrt:VERBOSE"), as Polygraphy's --verbosity takes them.
  std::vector<std::string> verbosity;
  bool silent = false;
  std::string log_file;
  std::vector<std::string> log_format;  // timestamp, line-info, no-colors

  // The default severity these flags select (--silent: above every severity); UsageError for
  // an unknown --verbosity.
  Severity severity() const;
  // The per-path severities of --verbosity (path relative to src/, e.g. "backend/onnxrt").
  std::vector<std::pair<std::string, Severity>> path_severities() const;
};
void add_logging_args(CLI::App& app, LoggingArgs& args);
void apply_logging_args(const LoggingArgs& args);

}  // namespace parity::cli
