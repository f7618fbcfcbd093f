#include "cli/debug.h"

#include <algorithm>

#include "backend/registry.h"
#include "cli/backend_args.h"
#include "cli/parse_util.h"
#include "core/error.h"
#include "core/logger.h"
#include "debug/reduce.h"

namespace parity::cli {

std::vector<std::string> take_check_command(std::vector<std::string> args,
                                            std::vector<std::string>& check, bool& found) {
  found = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--check" || a == "--check-inference") {
      found = true;
      check.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      args.resize(i);
      break;
    }
  }
  return args;
}

namespace {

void add_iterative_args(CLI::App& sub, IterativeArgs& args, bool with_iter_artifact,
                        bool with_until) {
  const char* check = "Pass/Fail Reporting";
  // The option exists for --help; the command line's --check and what follows are taken out
  // before parsing (take_check_command).
  static bool listed_only = false;
  sub.add_flag("--check,--check-inference", listed_only,
               "A command to check the model (everything after --check). Without it, an "
               "interactive session asks whether each iteration passed. By default an exit "
               "status of 0 is a pass and any other a failure")
      ->group(check);
  auto* codes = sub.add_option("--fail-code,--fail-returncode", args.fail_codes,
                               "Exit statuses of the --check command that count as failures; "
                               "any other counts as a success")
                    ->group(check);
  auto* ignore =
      sub.add_option("--ignore-fail-code,--ignore-fail-returncode", args.ignore_fail_codes,
                     "Exit statuses of the --check command that are not failures")
          ->group(check);
  codes->excludes(ignore);
  sub.add_option("--fail-regex", args.fail_regex,
                 "Regular expressions of an error in the check command's output: it fails only "
                 "when one matches (with --fail-code, only for the failing exit statuses)")
      ->group(check);
  auto* show = sub.add_flag("--show-output", args.show_output,
                            "Show the check command's output for passing iterations too")
                   ->group(check);
  auto* hide = sub.add_flag("--hide-fail-output", args.hide_fail_output,
                            "Hide the check command's output for failing iterations")
                   ->group(check);
  show->excludes(hide);
  const char* sort = "Artifact Sorting";
  sub.add_option("--artifacts", args.artifacts,
                 "Paths of artifacts to sort: moved into 'good' and 'bad' folders after each "
                 "iteration, named with the date, time and iteration")
      ->group(sort);
  sub.add_option("--art-dir,--artifacts-dir", args.artifacts_dir,
                 "The folder to sort artifacts into. Defaults to polygraphy_artifacts")
      ->group(sort);
  const char* iter = "Iterative Debugging";
  if (with_iter_artifact) {
    sub.add_option("--iter-artifact,--intermediate-artifact", args.iter_artifact,
                   "Where each iteration's model is saved for the check. Defaults to "
                   "polygraphy_debug.onnx")
        ->group(iter);
    sub.add_flag("--no-remove-intermediate", args.no_remove_intermediate,
                 "Keep the intermediate artifact between iterations")
        ->group(iter);
  }
  sub.add_option("--iter-info,--iteration-info", args.iteration_info,
                 "Where to write a JSON file with the current iteration's index during each "
                 "iteration")
      ->group(iter);
  if (with_until)
    sub.add_option("--until", args.until,
                   "When to stop: 'good' (the first passing iteration), 'bad' (the first "
                   "failing one) or a number of iterations")
        ->required()
        ->group(iter);
  sub.add_option("--load-debug-replay", args.load_debug_replay,
                 "A debug replay to skip the iterations it decided")
      ->group(iter);
  sub.add_option("--save-debug-replay", args.save_debug_replay,
                 "Where to save the debug replay. Defaults to polygraphy_debug_replay.json")
      ->group(iter);
}

// --fail-code and --ignore-fail-code take one value at least, so empty means not given.
debug::CheckOptions check_options(const IterativeArgs& args) {
  debug::CheckOptions o;
  o.command = args.check;
  if (!args.fail_codes.empty()) o.fail_codes = args.fail_codes;
  if (!args.ignore_fail_codes.empty()) o.ignore_fail_codes = args.ignore_fail_codes;
  o.fail_regexes = args.fail_regex;
  o.show_output = args.show_output;
  o.hide_fail_output = args.hide_fail_output;
  return o;
}

debug::IterateOptions iterate_options(const IterativeArgs& args) {
  debug::IterateOptions o;
  o.iter_artifact = args.iter_artifact;
  o.remove_intermediate = !args.no_remove_intermediate;
  o.iteration_info = args.iteration_info;
  if (!args.until.empty()) o.until = debug::Until::parse(args.until);
  o.load_debug_replay = args.load_debug_replay;
  o.save_debug_replay = args.save_debug_replay;
  return o;
}

}  // namespace

CLI::App* setup_debug(CLI::App& app, DebugReduceArgs& reduce, DebugRepeatArgs& repeat) {
  CLI::App* debug =
      app.add_subcommand("debug", "[EXPERIMENTAL] Debug a wide variety of model issues.");
  debug->require_subcommand(1);

  CLI::App* r = debug->add_subcommand(
      "reduce",
      "[EXPERIMENTAL] Reduce a failing ONNX model to the minimum set of nodes that cause the "
      "failure. Each candidate is saved as polygraphy_debug.onnx and judged by the --check "
      "command; without --check, two backends (--onnxrt --pluginref) are compared in this "
      "process, starting from the first divergence");
  add_logging_args(*r, reduce.logging);
  add_model_args(*r, reduce.model, /*with_outputs=*/false);
  add_iterative_args(*r, reduce.iterative, /*with_iter_artifact=*/true, /*with_until=*/false);
  reduce.iterative.iter_artifact = "polygraphy_debug.onnx";
  r->add_option("--model-input-shapes,--model-inputs", reduce.model_input_shapes,
                "Shapes of the model's inputs: <input>:[1,3,224,224]")
      ->group("Model");
  r->add_option("-o,--output", reduce.output, "Path to save the reduced (failing) model")
      ->group("Reduce");
  r->add_option("--min-good,--minimal-good", reduce.min_good,
                "Path to save a model close in size to the reduced model that does not fail "
                "(not guaranteed to be found)")
      ->group("Reduce");
  auto* no_in = r->add_flag("--no-reduce-inputs", reduce.no_reduce_inputs,
                            "Do not change the graph inputs: only find the earliest failing "
                            "outputs")
                    ->group("Reduce");
  auto* no_out = r->add_flag("--no-reduce-outputs", reduce.no_reduce_outputs,
                             "Do not change the graph outputs: only find the latest failing "
                             "inputs")
                     ->group("Reduce");
  no_in->excludes(no_out);
  r->add_option("--mode", reduce.mode,
                "How nodes are removed: 'bisect' (binary search) or 'linear' (one node at a "
                "time; slower, better on branchy models). Defaults to bisect")
      ->check(CLI::IsMember({"bisect", "linear"}))
      ->group("Reduce");
  add_data_loader_args(*r, reduce.data);
  add_backend_args(*r);
  const char* fn = "Comparison (without --check)";
  ComparatorArgs& c = reduce.comparator;
  r->add_option("--atol,--abs-tol", c.atol, "Absolute tolerance: <value> or <output>:<value>")
      ->group(fn);
  r->add_option("--rtol,--rel-tol", c.rtol, "Relative tolerance: <value> or <output>:<value>")
      ->group(fn);
  r->add_option("--check-error-stat", c.check_error_stat,
                "Error statistic to check: elemwise, max, mean, median or quantile")
      ->group(fn);
  r->add_option("--error-quantile", c.error_quantile, "Quantile for --check-error-stat quantile")
      ->group(fn);
  r->add_flag("--infinities-compare-equal", c.infinities_compare_equal,
              "Matching infinities compare equal")
      ->group(fn);
  r->add_option("--mark-budget", c.mark_budget,
                "Memory for the layer-wise comparison of the full model (K/M/G suffix)")
      ->group(fn);

  CLI::App* p = debug->add_subcommand(
      "repeat",
      "[EXPERIMENTAL] Run an arbitrary command repeatedly, sorting generated artifacts into "
      "`good` and `bad` directories.");
  add_logging_args(*p, repeat.logging);
  add_iterative_args(*p, repeat.iterative, /*with_iter_artifact=*/false, /*with_until=*/true);
  return debug;
}

int run_debug_reduce(const DebugReduceArgs& args, const CLI::App& sub) {
  // Every value parsed before any work.
  const ComparatorOptions cmp = args.comparator.parse();
  const BackendArgs backend_args = collect_backend_args(sub);
  const std::vector<ConfiguredBackend> backends = backend_args.configure();
  debug::ReduceOptions options;
  options.mode = debug::reduce_mode_from_name(args.mode);
  options.reduce_inputs = !args.no_reduce_inputs;
  options.reduce_outputs = !args.no_reduce_outputs;
  options.output = args.output;
  options.min_good = args.min_good;
  options.iterate = iterate_options(args.iterative);
  const TensorMetadata shapes = parse_input_shapes("--model-input-shapes", args.model_input_shapes);
  const bool native = !args.iterative.has_check && !backends.empty();
  if (args.iterative.has_check && !backends.empty())
    fail_usage(
        "failed to use {} with --check: the check command judges each candidate, so "
        "runners given before --check would not be used; put them in the check "
        "command, or leave out --check to compare them in this process",
        backends.front().backend->flag_list().front());
  if (args.iterative.has_check && args.iterative.check.empty())
    fail_usage(
        "failed to use --check: it needs a command after it, e.g. --check parity run "
        "polygraphy_debug.onnx --onnxrt --pluginref");
  if (native && backends.size() != 2)
    fail_usage(
        "failed to reduce without --check: it compares exactly two backends (e.g. "
        "--onnxrt --pluginref), and {} were given",
        backends.size());
  if (options.output.empty() && options.min_good.empty())
    logger().critical(
        "--output (where to write the reduced model) and/or --min-good (where to write a "
        "reduced model that passes) must be provided!");

  // The judge first: Polygraphy announces an interactive session before loading the model.
  debug::Judge judge;
  if (!native) judge = debug::check_command_judge(check_options(args.iterative));
  ModelPtr model = debug::prepare_model(*args.model.loader()(), shapes);
  DataLoaderArgs data = args.data;
  if (!shapes.empty() && data.input_shapes.empty()) data.input_shapes = args.model_input_shapes;
  std::unique_ptr<FeedSource> feeds = data.make_feeds();
  const bool random = data.load_inputs.empty();
  const TensorMap feed = debug::first_feed(*model, *feeds);
  if (data.iterations > 1 || (feeds->size() && *feeds->size() > 1))
    logger().warning(
        "debug reduce uses the first feed only (for the values of frozen tensors{}); the others "
        "are not used",
        native ? " and the comparison" : "");

  debug::ReduceResult result;
  if (native) {
    result = debug::reduce_by_comparison(model, backends[0], backends[1], cmp.tensor, feed, random,
                                         options);
  } else {
    debug::FullModelValues values(model, BackendRegistry::global().configure("pluginref", {}), feed,
                                  random);
    const debug::ArtifactSorter sorter(args.iterative.artifacts, args.iterative.artifacts_dir);
    result = debug::reduce_model(model, options, values, &sorter, judge, {});
  }
  logger().verbose("Judged {} candidate(s); the reduced model has {} node(s)", result.candidates,
                   result.bad_nodes.size());
  return 0;
}

int run_debug_repeat(const DebugRepeatArgs& args) {
  // Polygraphy warns when nothing will be kept.
  if (args.iterative.artifacts.empty())
    logger().warning(
        "`--artifacts` was not specified; No artifacts will be stored during this run! Is this "
        "what you intended?");
  debug::IterateOptions options = iterate_options(args.iterative);
  options.iter_artifact.clear();
  const debug::ArtifactSorter sorter(args.iterative.artifacts, args.iterative.artifacts_dir);
  debug::Iterator iterator(options, debug::check_command_judge(check_options(args.iterative)),
                           &sorter);
  iterator.iterate({});
  return 0;
}

}  // namespace parity::cli
