// `parity data to-input`: input files and output files (--save-outputs, layer-wise ones
// included) merged into one file for --load-inputs (surgeon/data_to_input.h).
#include <memory>

#include "cli/tool_command.h"
#include "core/error.h"
#include "core/logger.h"
#include "io/json.h"
#include "io/json_parser.h"
#include "surgeon/data_to_input.h"

namespace parity::cli {

namespace {

struct ToInputArgs {
  LoggingArgs logging;
  std::vector<std::string> paths;
  std::string output;
};

int run_to_input(const ToInputArgs& args) {
  std::vector<TensorMap> inputs;
  for (const auto& path : args.paths) {
    const std::string text = io::read_file(path);
    try {
      const auto json = io::parse_json(text);
      if (json.is_object() && json.contains("polygraphy_class") &&
          json["polygraphy_class"] == "RunResults") {
        const RunResults results = io::run_results_from_json(text);
        for (const auto& [runner, iterations] : results) {
          std::vector<TensorMap> outputs;
          for (const auto& iteration : iterations) outputs.push_back(iteration.outputs);
          surgeon::merge_iterations(inputs, outputs, path);
        }
      } else if (json.is_object() && !json.contains("polygraphy_class")) {
        // One feed dict, not a list of them: Polygraphy takes it as one iteration.
        surgeon::merge_iterations(inputs, io::inputs_from_json("[" + text + "]"), path);
      } else {
        surgeon::merge_iterations(inputs, io::inputs_from_json(text), path);
      }
    } catch (const UsageError&) {
      throw;
    } catch (const Error& e) {
      fail("failed to read {} as input or output data: {}", path, e.what());
    }
  }
  logger().info("Saving input file containing {} iteration(s) to {}", inputs.size(), args.output);
  io::save_inputs(args.output, inputs);
  return 0;
}

}  // namespace

void setup_data(CLI::App& app, ToolCommands& commands) {
  CLI::App& data = command_group(app, "data", "Manipulate input and output data.");
  auto args = std::make_shared<ToInputArgs>();
  CLI::App* sub = data.add_subcommand(
      "to-input",
      "Combine one or more input/output files into a single file usable with --load-inputs.");
  add_logging_args(*sub, args->logging);
  sub->add_option("paths", args->paths,
                  "Files of input or output data (output data from exactly one runner; a later "
                  "runner's outputs override an earlier one's)")
      ->required();
  sub->add_option("-o,--output", args->output, "Path to the file to generate")->required();
  commands.push_back({sub, &args->logging, false, [args] { return run_to_input(*args); }});
}

}  // namespace parity::cli
