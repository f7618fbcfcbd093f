#include "cli/inspect.h"

#include <algorithm>
#include <array>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli/option_checks.h"
#include "comparator/output_stats.h"
#include "core/logger.h"
#include "core/numeric.h"
#include "core/py_format.h"
#include "io/json.h"
#include "onnx/describe.h"
#include "onnx/loaders.h"
#include "surgeon/model_file.h"
#include "surgeon/shape_inference.h"
#include "surgeon/upper_bound.h"

namespace parity::cli {

CLI::App* setup_inspect_model(CLI::App& inspect, InspectModelArgs& args) {
  CLI::App* sub = inspect.add_subcommand("model", "Display information about a model.");
  add_logging_args(*sub, args.logging);
  add_model_args(*sub, args.model, /*with_outputs=*/false);
  sub->add_option("--show", args.show,
                  "What to show: layers (each node), attrs (node attributes; needs layers), "
                  "weights (initializer values)")
      ->check(CLI::IsMember({"layers", "attrs", "weights"}));
  sub->add_flag("--shape-inference,--do-shape-inference", args.shape_inference,
                "Enable ONNX shape inference when loading the model")
      ->group("ONNX Shape Inference");
  sub->add_flag("--list-unbounded-dds", args.list_unbounded_dds,
                "List all tensors with unbounded Data-Dependent Shapes (DDS). Note that listing "
                "unbounded DDS only works for models that have been constant folded and have "
                "shapes inferred");
  return sub;
}

CLI::App* setup_inspect_data(CLI::App& inspect, InspectDataArgs& args) {
  CLI::App* sub = inspect.add_subcommand(
      "data", "Display inputs or outputs saved by --save-inputs or --save-outputs.");
  add_logging_args(*sub, args.logging);
  sub->add_option("path", args.path, "A file written by --save-inputs or --save-outputs")
      ->required();
  sub->add_flag("-a,--all", args.all, "Show every iteration instead of just the first");
  sub->add_flag("-s,--show-values", args.show_values, "Show the values of the tensors");
  sub->add_flag("--histogram", args.histogram, "Show a histogram of the values");
  check_range(sub->add_option(
                  "-n,--num-items", args.num_items,
                  "The number of values to show at the beginning and end of each dimension when "
                  "printing arrays. Use a value of -1 to show all elements in the array. Defaults "
                  "to 3."),
              int64_t{-1}, int64_t{1} << 40);
  check_range(
      sub->add_option("--line-width", args.line_width,
                      "The number of characters per line when displaying arrays. Use a value of -1 "
                      "to insert line breaks only at dimension end points. Defaults to 75."),
      int64_t{-1}, int64_t{1} << 40);
  return sub;
}

int run_inspect_model(const InspectModelArgs& args) {
  // With shape inference (or the DDS listing, which reads the graph's protobuf), the model is
  // loaded as a protobuf first, inferred, and then turned into the IR that is described.
  std::optional<surgeon::ModelFile> file;
  ModelPtr model;
  if (args.shape_inference || args.list_unbounded_dds) {
    file = args.model.load_proto();
    if (args.shape_inference) surgeon::infer_shapes(*file->proto);
    model =
        onnx_io::model_from_proto(file->proto, args.model.load_options(), file->external_data_dir);
    model->path = args.model.path();
  } else {
    model = args.model.loader()();
  }
  onnx_io::DescribeOptions options;
  auto shows = [&](const char* what) {
    return std::find(args.show.begin(), args.show.end(), what) != args.show.end();
  };
  options.layers = shows("layers");
  options.attrs = shows("attrs");
  options.weights = shows("weights");
  options.ignore_external_data = args.model.load_options().ignore_external_data;
  // Polygraphy strips the description (the last node's blank line, trailing indentation).
  std::string text = onnx_io::describe_model(*model, options);
  const size_t end = text.find_last_not_of(" \t\n\r\v\f");
  text.erase(end == std::string::npos ? 0 : end + 1);
  logger().info("==== ONNX Model ====\n{}", text);
  if (args.list_unbounded_dds) {
    ::onnx::GraphProto& graph = *file->proto->mutable_graph();
    const std::vector<std::string> found = surgeon::unbounded_dds_tensors(graph);
    logger().info("Found tensors with unbounded DDS: {}", surgeon::unbounded_dds_str(graph, found));
  }
  return 0;
}

namespace {

std::string indent_block(const std::string& text, int levels) {
  std::string pad(4 * static_cast<size_t>(levels), ' ');
  std::string out = pad;
  for (char c : text) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

// Results of mark-all runs hold hundreds of outputs: an aligned line per output (dtype, shape
// and min/max/mean from one pass over the data) reads better than a full stats line each.
constexpr size_t kManyOutputs = 8;

std::string summary_table(const TensorMap& tensors, const InspectDataArgs& args, int indent) {
  std::vector<std::array<std::string, 6>> rows{{"name", "dtype", "shape", "min", "max", "mean"}};
  std::vector<std::string> histograms{""};
  for (const auto& [name, tensor] : tensors) {
    std::array<std::string, 6> row{
        name, std::string(dtype_name(tensor.dtype())), shape_str(tensor.shape()), "-", "-", "-"};
    std::string hist;
    if (dtype_is_numeric(tensor.dtype())) {
      const NumArray values = to_num_array(tensor);
      const BasicStats s = compute_basic_stats(values);
      if (s.count > 0) {
        row[3] = format_g(s.min, 5);
        row[4] = format_g(s.max, 5);
        row[5] = format_g(s.mean, 5);
      }
      if (args.histogram) hist = str_histogram(values, std::nullopt, &s);
    }
    rows.push_back(std::move(row));
    histograms.push_back(std::move(hist));
  }
  std::array<size_t, 6> width{};
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::string out;
  for (size_t r = 0; r < rows.size(); ++r) {
    std::string line;
    for (size_t c = 0; c < rows[r].size(); ++c)
      line += (c < 3 ? fmt::format("{:<{}}", rows[r][c], width[c])
                     : fmt::format("{:>{}}", rows[r][c], width[c])) +
              (c + 1 < rows[r].size() ? " | " : "");
    out += "\n" + indent_block(line, indent - 1);
    if (!histograms[r].empty()) out += "\n" + indent_block(histograms[r], indent);
  }
  return out;
}

std::string str_from_iterations(const std::vector<TensorMap>& iterations,
                                const InspectDataArgs& args) {
  std::string out;
  for (size_t index = 0; index < iterations.size(); ++index) {
    int indent = 1;
    if (iterations.size() > 1 && args.all) {
      out += indent_block(fmt::format("\n-- Iteration: {}\n", index), 0);
      indent = 2;
    }
    if (iterations[index].size() > kManyOutputs && !args.show_values) {
      out += summary_table(iterations[index], args, indent);
      if (indent == 2) out += "\n";
      if (!args.all) break;
      continue;
    }
    for (const auto& [name, tensor] : iterations[index]) {
      NumArray values = to_num_array(tensor);
      out += indent_block(
          fmt::format("\n{} [dtype={}, shape={}] | Stats: {}", name, dtype_name(tensor.dtype()),
                      shape_str(tensor.shape()), str_output_stats(values, "")),
          indent - 1);
      if (args.histogram) {
        std::string hist = str_histogram(values, std::nullopt);
        if (!hist.empty()) out += "\n" + indent_block(hist, indent);
      }
      if (args.show_values)
        out +=
            "\n" + indent_block(numpy_array_str(tensor, {args.num_items, args.line_width}), indent);
    }
    if (indent == 2) out += "\n";
    if (!args.all) break;
  }
  return out;
}

std::string strip(const std::string& s) {
  size_t b = s.find_first_not_of(" \n");
  size_t e = s.find_last_not_of(" \n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

int run_inspect_data(const InspectDataArgs& args) {
  std::string text = io::read_file(args.path);
  // Run results are an object with the RunResults marker; inputs are a list of feeds.
  bool is_results = false;
  try {
    auto j = nlohmann::json::parse(text);
    is_results = j.is_object();
  } catch (const nlohmann::json::exception& e) {
    fail(
        "failed to read '{}' as JSON: {}; expected a file written by --save-inputs or "
        "--save-outputs",
        args.path, e.what());
  }
  std::string out;
  if (is_results) {
    RunResults results = io::run_results_from_json(text);
    out += fmt::format("==== Run Results ({} runners) ====\n\n", results.size());
    size_t width = 0;
    for (const auto& [name, its] : results) width = std::max(width, name.size());
    for (const auto& [name, its] : results) {
      std::vector<TensorMap> outputs;
      for (const auto& it : its) outputs.push_back(it.outputs);
      out += fmt::format("---- {:<{}} ({} iterations) ----\n", name, width, its.size());
      out += str_from_iterations(outputs, args) + "\n";
    }
  } else {
    std::vector<TensorMap> feeds = io::inputs_from_json(text);
    out += fmt::format("==== Data ({} iterations) ====\n", feeds.size());
    out += str_from_iterations(feeds, args) + "\n";
  }
  logger().info("{}", strip(out));
  return 0;
}

}  // namespace parity::cli
