#include "cli/app.h"

#include <chrono>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "backend/plugins.h"
#include "cli/data_merge.h"
#include "cli/debug.h"
#include "cli/inspect.h"
#include "cli/run.h"
#include "cli/surgeon.h"
#include "cli/tool_command.h"
#include "core/error.h"
#include "core/logger.h"
#include "core/names.h"

namespace parity::cli {

namespace {

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

std::string& command_storage() {
  static std::string command;
  return command;
}

std::string command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) {
    if (i) s += ' ';
    s += argv[i];
  }
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';  // it goes into one-line comments and headers
  return s;
}

// The libraries given with --plugins, found before parsing: a plugin may add a backend, whose
// flags must exist when the command line is parsed.
std::vector<std::string> plugin_paths(int argc, char** argv) {
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--plugins=", 0) == 0) {
      paths.push_back(arg.substr(10));
    } else if (arg == "--plugins") {
      while (i + 1 < argc && argv[i + 1][0] != '-') paths.push_back(argv[++i]);
    }
  }
  return paths;
}

// "; did you mean 'x'?" for a close candidate, else "".
std::string did_you_mean_text(const std::string& name, const std::vector<std::string>& candidates) {
  const std::string hint = did_you_mean(name, candidates);
  return hint.rfind("; did you mean", 0) == 0 ? hint : "";
}

// The deepest subcommand the parse entered ("parity run"), for the help hint and the flags a
// mistyped one is compared with.
const CLI::App* deepest_parsed(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands())
    if (sub->parsed()) return deepest_parsed(*sub);
  return &app;
}

std::string command_path(const CLI::App& app, const char* program) {
  std::string path;
  for (const CLI::App* a = &app; a && a->get_parent(); a = a->get_parent())
    path = " " + a->get_name() + path;
  return program + path;
}

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  return names;
}

std::vector<std::string> flag_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& n : opt->get_lnames()) names.push_back("--" + n);
    for (const std::string& n : opt->get_snames()) names.push_back("-" + n);
  }
  return names;
}

// A usage error as Polygraphy's argparse words it where it can: an unknown subcommand is an
// "invalid choice" listing the choices, an unknown flag gets the nearest flag; then where to
// find the help of the level the mistake was made at.
std::string usage_error_message(const CLI::App& app, const CLI::ParseError& e,
                                const char* program) {
  const CLI::App* at = deepest_parsed(app);
  std::string message = e.what();
  const std::vector<std::string> choices = subcommand_names(*at);
  const std::vector<std::string> extras = at->remaining();
  if (!choices.empty() && at->get_subcommands().empty()) {
    // A subcommand was required and none was recognised.
    std::vector<std::string> quoted;
    for (const auto& c : choices) quoted.push_back("'" + c + "'");
    const std::string given = extras.empty() ? "" : extras.front();
    message =
        given.empty() || given[0] == '-'
            ? fmt::format("a subcommand is required (choose from {})", fmt::join(quoted, ", "))
            : fmt::format("argument subcommand: invalid choice: '{}' (choose from {}){}", given,
                          fmt::join(quoted, ", "),
                          given.empty() ? "" : did_you_mean_text(given, choices));
  } else if (dynamic_cast<const CLI::ValidationError*>(&e)) {
    // CLI11 puts "<flag>: " before a check's message; check_range's already names the flag.
    if (const size_t at_rule = message.find(": failed to parse "); at_rule != std::string::npos)
      message = message.substr(at_rule + 2);
  } else if (dynamic_cast<const CLI::ConversionError*>(&e)) {
    // "Could not convert: --seed = abc", from a typed option without a range check.
    const std::string prefix = "Could not convert: ";
    if (const size_t eq = message.find(" = ");
        message.rfind(prefix, 0) == 0 && eq != std::string::npos) {
      const std::string flag = message.substr(prefix.size(), eq - prefix.size());
      const CLI::Option* opt = at->get_option_no_throw(flag);
      const std::string type = opt ? opt->get_type_name() : "";
      message = fmt::format("failed to parse {} with value '{}': it must be {}", flag,
                            message.substr(eq + 3),
                            type == "INT"     ? "an integer"
                            : type == "UINT"  ? "a non-negative integer"
                            : type == "FLOAT" ? "a number"
                                              : "a value of type " + type);
    }
  } else if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    std::vector<std::string> unknown;
    std::vector<std::pair<std::string, std::string>> hints;  // (given, nearest)
    for (const std::string& x : extras) {
      unknown.push_back("'" + x + "'");
      if (x.size() > 1 && x[0] == '-') {
        const std::string flag = x.substr(0, x.find('='));
        const std::vector<std::string> flags = flag_names(*at);
        if (!did_you_mean_text(flag, flags).empty())
          hints.emplace_back(flag, nearest_names(flag, flags, 1).front());
      }
    }
    message = fmt::format("Unrecognized Options: [{}]", fmt::join(unknown, ", "));
    if (hints.size() == 1) message += fmt::format("; did you mean '{}'?", hints[0].second);
    if (hints.size() > 1) {
      std::vector<std::string> parts;
      for (const auto& [given, nearest] : hints)
        parts.push_back(fmt::format("'{}' for '{}'", nearest, given));
      message += fmt::format("; did you mean {}?", fmt::join(parts, ", "));
    }
  }
  return fmt::format("[!] {}\n    Run '{} --help' for usage.\n", message,
                     command_path(*at, program));
}

}  // namespace

const std::string& invoked_command() { return command_storage(); }

int main(int argc, char** argv) {
  // Polygraphy's "Runtime:" counts from the start of its main, before the command line is
  // parsed; so does Parity's, plugin loading included.
  const auto start = std::chrono::steady_clock::now();
  auto runtime = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  command_storage() = command_line(argc, argv);
  try {
    for (const std::string& path : plugin_paths(argc, argv)) load_plugin(path);
  } catch (const Error& e) {
    logger().log(Severity::kCritical, e.what());
    logger().error("FAILED | Runtime: {:.3f}s | Command: {}", runtime(), invoked_command());
    return kExitFailed;
  }

  CLI::App app{"Parity: run an ONNX model on several backends and compare the results.", "parity"};
  app.set_version_flag("--version", std::string("parity ") + PARITY_VERSION);
  app.require_subcommand(1);

  RunArgs run_args;
  CLI::App* run = setup_run(app, run_args);

  CLI::App* inspect = app.add_subcommand("inspect", "Display information about models and data.");
  inspect->require_subcommand(1);
  InspectModelArgs model_args;
  CLI::App* inspect_model = setup_inspect_model(*inspect, model_args);
  InspectDataArgs data_args;
  CLI::App* inspect_data = setup_inspect_data(*inspect, data_args);
  SurgeonArgs surgeon_args;
  CLI::App* surgeon = setup_surgeon(app, surgeon_args);
  // The model tools, each registered with its own flags and runner (surgeon's weight tools
  // join the `surgeon` group made above; the tool is found before the group's own dispatch).
  ToolCommands tools;
  setup_check(app, tools);
  setup_convert(app, tools);
  setup_data(app, tools);
  setup_surgeon_weights(app, tools);
  setup_inspect_sparsity(app, tools);

  DebugReduceArgs reduce_args;
  DebugRepeatArgs repeat_args;
  CLI::App* debug = setup_debug(app, reduce_args, repeat_args);
  CLI::App* debug_reduce = debug->get_subcommand("reduce");
  CLI::App* debug_repeat = debug->get_subcommand("repeat");

  // `data merge` joins the `data` group too (cli/data_merge.h).
  DataMergeArgs merge_args;
  CLI::App* data_merge =
      setup_data_merge(command_group(app, "data", "Manipulate input and output data."), merge_args);
  tools.push_back(ToolCommand{data_merge, &merge_args.logging, false,
                              [&merge_args] { return run_data_merge(merge_args); }});

  // CLI11 splits a bare "[a,b]" value into two values; Polygraphy's syntax needs it whole
  // (--val-range [0,1]). Such a token is passed on as ":[a,b]", which every per-key option
  // reads as the value for the default key "" (the text after the last colon).
  // The debug tools' --check takes the rest of the command line as the check command.
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "debug") {
    IterativeArgs& iterative =
        args.size() > 1 && args[1] == "repeat" ? repeat_args.iterative : reduce_args.iterative;
    bool found = false;
    args = take_check_command(std::move(args), iterative.check, found);
    iterative.has_check = found;
  }
  std::vector<std::string> tokens;
  for (auto it = args.rbegin(); it != args.rend(); ++it) {
    std::string t = *it;
    if (t.size() >= 2 && t.front() == '[' && t.back() == ']') t = ":" + t;
    tokens.push_back(std::move(t));
  }
  try {
    app.parse(tokens);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s", usage_error_message(app, e, argv[0]).c_str());
    return kExitUsage;
  }

  const ToolCommand* tool = nullptr;
  for (const ToolCommand& t : tools)
    if (t.app->parsed()) tool = &t;
  const LoggingArgs* logging = run->parsed()             ? &run_args.logging
                               : tool                    ? tool->logging
                               : inspect_model->parsed() ? &model_args.logging
                               : surgeon->parsed()       ? surgeon_args.logging()
                               : debug_reduce->parsed()  ? &reduce_args.logging
                               : debug_repeat->parsed()  ? &repeat_args.logging
                                                         : &data_args.logging;
  const std::string& command = invoked_command();
  // Polygraphy frames `run`, the `surgeon` tools, the debug tools and the model tools it marks
  // so (lint, prune, inspect sparsity, ...) with RUNNING and PASSED/FAILED lines, and not a run
  // that is only written as a script. For `run`, PASSED is printed only for a passing
  // RunVerdict (or a script that ran the comparison and exited 0): comparator/verdict.h says
  // how one is made; a surgeon tool passes when it wrote its model.
  const bool framed = (run->parsed() && run_args.gen_script.empty()) ||
                      (tool ? tool->framed : surgeon->parsed() && surgeon_args.framed()) ||
                      debug->parsed();
  int status = 0;
  bool passed = false;
  try {
    apply_logging_args(*logging);
    if (run->parsed())
      warn_ignored_generation_args(
          *run, !run_args.data_loader_script.empty() || !run_args.data.load_inputs.empty());
    if (framed) logger().start("RUNNING | Command: {}", command);
    if (run->parsed()) {
      run_args.backends = collect_backend_args(*run);
      const RunEnd end = run_command(run_args);
      if (end.verdict) {
        if (!end.verdict->why().empty()) logger().error("{}", end.verdict->why());
        status = end.verdict->exit_status();
        passed = end.verdict->passed();
      } else {
        status = end.script_status.value_or(kExitFailed);
        passed = status == 0;
      }
    } else if (tool) {
      status = tool->run();
      passed = status == 0;
    } else if (inspect_model->parsed()) {
      status = run_inspect_model(model_args);
    } else if (inspect_data->parsed()) {
      status = run_inspect_data(data_args);
    } else if (surgeon->parsed()) {
      status = run_surgeon(surgeon_args);
      passed = status == 0;
    } else if (debug_reduce->parsed()) {
      status = run_debug_reduce(reduce_args, *debug_reduce);
      passed = status == 0;
    } else if (debug_repeat->parsed()) {
      status = run_debug_repeat(repeat_args);
      passed = status == 0;
    }
  } catch (const UsageError& e) {
    logger().log(Severity::kCritical, e.what());
    return kExitUsage;
  } catch (const Error& e) {
    logger().log(Severity::kCritical, e.what());
    status = kExitFailed;
  } catch (const std::bad_alloc&) {
    logger().log(Severity::kCritical,
                 "Parity ran out of memory. Try fewer iterations, smaller input shapes, or "
                 "fewer marked outputs.");
    status = kExitFailed;
  } catch (const std::exception& e) {
    logger().log(Severity::kCritical, std::string("Unexpected error: ") + e.what());
    status = kExitFailed;
  }
  if (!framed) return status;
  if (passed && status == 0)
    logger().finish("PASSED | Runtime: {:.3f}s | Command: {}", runtime(), command);
  else
    logger().error("FAILED | Runtime: {:.3f}s | Command: {}", runtime(), command);
  return status == 0 && !passed ? kExitFailed : status;
}

}  // namespace parity::cli
