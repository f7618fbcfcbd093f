// `parity inspect sparsity`: whether each weight of a model follows a 2:4 structured sparsity
// pattern (surgeon/sparsity.h).
#include <memory>

#include "cli/model_args.h"
#include "cli/tool_command.h"
#include "core/logger.h"
#include "surgeon/model_file.h"
#include "surgeon/sparsity.h"

namespace parity::cli {

namespace {

struct SparsityArgs {
  LoggingArgs logging;
  ModelArgs model;
};

int run_inspect_sparsity(const SparsityArgs& args) {
  const surgeon::ModelFile model = args.model.load_proto();
  surgeon::check_sparsity(*model.proto, model.external_data_dir);
  return 0;
}

}  // namespace

void setup_inspect_sparsity(CLI::App& app, ToolCommands& commands) {
  CLI::App& inspect = command_group(app, "inspect", "Display information about models and data.");
  auto args = std::make_shared<SparsityArgs>();
  CLI::App* sub = inspect.add_subcommand(
      "sparsity",
      "Display whether each weight tensor of an ONNX model follows a 2:4 structured sparsity "
      "pattern.");
  add_logging_args(*sub, args->logging);
  add_model_args(*sub, args->model, /*with_outputs=*/false);
  commands.push_back({sub, &args->logging, true, [args] { return run_inspect_sparsity(*args); }});
}

}  // namespace parity::cli
