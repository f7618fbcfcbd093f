// `parity surgeon prune`, `surgeon weight-strip` and `surgeon weight-reconstruct`: the weight
// tools of surgeon (surgeon/sparsity.h, surgeon/weight_strip.h), each reading a model, editing
// its initializers in place and writing it through the model tools' one writer.
#include <cctype>
#include <memory>

#include "cli/surgeon.h"
#include "cli/tool_command.h"
#include "core/error.h"
#include "core/file_util.h"
#include "surgeon/sparsity.h"
#include "surgeon/weight_strip.h"

namespace parity::cli {

namespace {

struct WeightToolArgs {
  SurgeonModelArgs model;    // logging, the model, the saving flags (-o, --save-external-data)
  std::string exclude_list;  // weight-strip only
};

enum class WeightTool { kPrune, kStrip, kReconstruct };

// The names in the exclude list file, one a line (trailing whitespace dropped).
std::set<std::string> read_exclude_list(const std::string& path) {
  std::set<std::string> names;
  if (path.empty()) return names;
  const std::string text = read_regular_file(path, fmt::format("read exclude list {}", path));
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    names.insert(line);
    start = end + 1;
  }
  return names;
}

int run_weight_tool(WeightTool tool, const WeightToolArgs& args) {
  const std::set<std::string> exclude = read_exclude_list(args.exclude_list);
  (void)args.model.save.options(args.model.model_file);  // malformed saving flags fail first
  surgeon::ModelFile model = args.model.load();
  switch (tool) {
    case WeightTool::kPrune:
      surgeon::prune_to_2_4(*model.proto, model.external_data_dir);
      break;
    case WeightTool::kStrip:
      surgeon::strip_weights(*model.proto, exclude, model.external_data_dir);
      break;
    case WeightTool::kReconstruct:
      surgeon::reconstruct_weights(*model.proto);
      break;
  }
  args.model.save_model(model);
  return 0;
}

void add_weight_tool(CLI::App& surgeon, ToolCommands& commands, WeightTool tool, const char* name,
                     const char* help) {
  auto args = std::make_shared<WeightToolArgs>();
  CLI::App* sub = surgeon.add_subcommand(name, help);
  add_surgeon_model_args(*sub, args->model);
  if (tool == WeightTool::kStrip)
    sub->add_option("--exclude-list", args->exclude_list,
                    "Path to text file containing a list of initializers to skip");
  commands.push_back(
      {sub, &args->model.logging, true, [tool, args] { return run_weight_tool(tool, *args); }});
}

}  // namespace

void setup_surgeon_weights(CLI::App& app, ToolCommands& commands) {
  CLI::App& surgeon = command_group(app, "surgeon", "Modify ONNX models.");
  add_weight_tool(surgeon, commands, WeightTool::kPrune, "prune",
                  "Prune the weights of a model to follow a 2:4 structured sparsity pattern "
                  "without regard for accuracy (for functional testing of sparsity only)");
  add_weight_tool(surgeon, commands, WeightTool::kStrip, "weight-strip",
                  "Strip the weights of a model, keeping their names, dtypes and shapes and "
                  "marking them TRT_WEIGHTLESS");
  add_weight_tool(surgeon, commands, WeightTool::kReconstruct, "weight-reconstruct",
                  "Fill the weights stripped by weight-strip with proxy values so that the "
                  "model runs");
}

}  // namespace parity::cli
