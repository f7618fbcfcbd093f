// `check lint`: Polygraphy's linter on Parity's reference backend. The model is checked with
// ONNX's checker, run whole on the reference backend with generated (or given) inputs, and, when
// either fails, run node by node in graph order so that each node that cannot run is named with
// its op. Nodes whose inputs come from a failing node are not run (as in Polygraphy). At the end,
// graph inputs and nodes that do not reach an output are reported as warnings.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "comparator/data_loader.h"
#include "core/tensor.h"

namespace parity::surgeon {

enum class LintLevel { kException, kWarning, kInfo };
// Where a finding comes from. Polygraphy's inference findings come from ONNX Runtime; Parity's
// from its reference backend, so the report says "pluginref" there.
enum class LintSource { kInference, kOnnxChecker, kOnnxLoader, kOnnxGs };

std::string_view lint_level_name(LintLevel level);     // "exception", "warning", "info"
std::string_view lint_source_name(LintSource source);  // "pluginref", "onnx_checker", ...

struct LintEntry {
  LintLevel level = LintLevel::kWarning;
  LintSource source = LintSource::kOnnxGs;
  std::string message;
  std::optional<std::string> node;  // the node the finding is about, if any
};

// Polygraphy's Lint.Report: the entries in the order found and the passing / failing nodes.
struct LintReport {
  std::vector<LintEntry> entries;
  std::set<std::string> passing, failing;
  bool valid = true;  // no entry of level exception
  int status = 0;     // the exit status Polygraphy's lint returns for this report
  // An error Polygraphy prints after saving the report ("Invalid ONNX model given: ..."), or "".
  std::string closing_error;

  // Records a finding (printed as "LINT | Name: n, Op: op | message" at the level's severity)
  // or, with an empty message, that `node` passed.
  void add(LintLevel level, LintSource source, const std::string& message,
           const std::optional<std::string>& node = std::nullopt, const std::string& op = "");
};

struct LintOptions {
  // Where the inputs of the run come from (its first feed, given the model's input metadata);
  // null: Polygraphy's default generated inputs (seed 1, values in [0, 1)).
  FeedSource* feeds = nullptr;
  std::string external_data_dir;  // empty: the model's folder
  // Whether to log "Loading model: <path>" (not for a model script's file, whose own line has
  // been logged when the script ran).
  bool announce = true;
};

// Lints the model file at `path`. Never throws for a broken model: what cannot be loaded is an
// entry of the report.
LintReport lint_model(const std::string& path, const LintOptions& options = {});

}  // namespace parity::surgeon
