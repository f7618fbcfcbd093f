#include "surgeon/lint.h"

#include <climits>
#include <filesystem>
#include <map>

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <google/protobuf/io/coded_stream.h>

#include "backend/registry.h"
#include "comparator/data_loader.h"
#include "core/file_util.h"
#include "core/logger.h"
#include "onnx/model_io.h"
#include "surgeon/graph.h"
#include "surgeon/types.h"

namespace fs = std::filesystem;

namespace parity::surgeon {

std::string_view lint_level_name(LintLevel level) {
  switch (level) {
    case LintLevel::kException:
      return "exception";
    case LintLevel::kWarning:
      return "warning";
    case LintLevel::kInfo:
      return "info";
  }
  return "info";
}

std::string_view lint_source_name(LintSource source) {
  switch (source) {
    case LintSource::kInference:
      return "pluginref";
    case LintSource::kOnnxChecker:
      return "onnx_checker";
    case LintSource::kOnnxLoader:
      return "onnx_loader";
    case LintSource::kOnnxGs:
      return "onnx_graphsurgeon";
  }
  return "onnx_loader";
}

void LintReport::add(LintLevel level, LintSource source, const std::string& message,
                     const std::optional<std::string>& node, const std::string& op) {
  if (message.empty()) {
    if (node && !failing.count(*node)) passing.insert(*node);
    return;
  }
  // One line per finding, as Polygraphy prints them (its messages lose their line breaks).
  std::string text = message;
  for (char& c : text)
    if (c == '\n') c = ' ';
  const std::string scope = node && !op.empty() ? "Name: " + *node + ", Op: " + op + " | " : "";
  const Severity severity = level == LintLevel::kException ? Severity::kError
                            : level == LintLevel::kWarning ? Severity::kWarning
                                                           : Severity::kInfo;
  logger().log(severity, "LINT | " + scope + text);
  entries.push_back({level, source, text, node});
  if (node) {
    if (level == LintLevel::kException) {
      failing.insert(*node);
      passing.erase(*node);
    } else if (!failing.count(*node)) {
      passing.insert(*node);
    }
  }
  if (level == LintLevel::kException) valid = false;
}

namespace {

// The model in `bytes` as the file holds it (no checks: what is wrong is for the report), or
// nullptr when they are no ModelProto.
std::shared_ptr<::onnx::ModelProto> parse_model(const std::string& bytes) {
  auto model = std::make_shared<::onnx::ModelProto>();
  google::protobuf::io::CodedInputStream stream(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                static_cast<int>(bytes.size()));
  stream.SetTotalBytesLimit(INT_MAX);
  if (!model->ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage()) return nullptr;
  return model;
}

// The graph inputs that are not initializers: what the data loader generates.
TensorMetadata graph_input_metadata(const ::onnx::GraphProto& graph) {
  std::set<std::string> initializers;
  for (const auto& t : graph.initializer()) initializers.insert(t.name());
  TensorMetadata meta;
  for (const auto& in : graph.input()) {
    if (initializers.count(in.name())) continue;
    meta.add(in.name(), dtype_of(in.type()), dims_of(in.type()));
  }
  return meta;
}

// Polygraphy names unnamed nodes "polygraphy_unnamed_node_<index>" (made unique) so that
// every finding can name its node.
void name_unnamed_nodes(::onnx::GraphProto& graph) {
  std::set<std::string> names;
  for (const auto& node : graph.node()) names.insert(node.name());
  int uid = 0;
  for (int i = 0; i < graph.node_size(); ++i) {
    auto* node = graph.mutable_node(i);
    if (!node->name().empty()) continue;
    std::string name = fmt::format("polygraphy_unnamed_node_{}", i);
    while (names.count(name)) name = fmt::format("polygraphy_unnamed_node_{}_{}", i, uid++);
    logger().verbose("Node with topological id: {} has empty name. Renaming to: {}", i, name);
    node->set_name(name);
    names.insert(name);
  }
}

void check_duplicate_names(const ::onnx::GraphProto& graph, LintReport& report) {
  std::map<std::string, std::vector<int>> ids;
  std::vector<std::string> order;  // first appearance, as Python's dict keeps it
  for (int i = 0; i < graph.node_size(); ++i) {
    auto& list = ids[graph.node(i).name()];
    if (list.empty()) order.push_back(graph.node(i).name());
    list.push_back(i);
  }
  for (const auto& name : order) {
    const auto& list = ids[name];
    if (list.size() < 2) continue;
    report.add(LintLevel::kException, LintSource::kOnnxGs,
               fmt::format("Duplicate node name: '{}' for nodes with topological IDs: [{}] found.",
                           name, fmt::join(list, ", ")),
               name);
  }
}

// ONNX's checker on the graph level. Node-level findings ("Bad node spec") are left to the
// node-by-node runs, as Polygraphy leaves them; the check still counts as failed.
bool onnx_spec_check(::onnx::ModelProto model, LintReport& report) {
  for (auto& out : *model.mutable_graph()->mutable_output())
    if (out.type().has_tensor_type() && !out.type().tensor_type().has_shape())
      out.mutable_type()->mutable_tensor_type()->mutable_shape();
  try {
    ::onnx::checker::check_model(model);
  } catch (const ::onnx::checker::ValidationError& e) {
    const std::string message = e.what();
    if (message.find("Bad node spec for node") == std::string::npos)
      report.add(LintLevel::kException, LintSource::kOnnxChecker, message);
    return false;
  } catch (const std::exception& e) {
    report.add(LintLevel::kException, LintSource::kOnnxChecker, e.what());
    return false;
  }
  return true;
}

// Runs a model held as a protobuf on the reference backend.
TensorMap run_on_reference(std::shared_ptr<::onnx::ModelProto> proto, const TensorMap& feed,
                           const std::string& data_dir) {
  onnx_io::LoadOptions load;
  load.external_data_dir = data_dir;
  ModelPtr model = onnx_io::model_from_proto(std::move(proto), load, data_dir);
  ConfiguredBackend backend = BackendRegistry::global().configure("pluginref", {});
  std::unique_ptr<Runner> runner = backend.make_runner(Loader<ModelPtr>(model));
  RunnerActivation active(*runner);
  return runner->infer(feed);
}

// A model of `node` alone: its constant inputs stay initializers, the values it reads from the
// cache become graph inputs typed as the cached tensors.
std::shared_ptr<::onnx::ModelProto> singleton_model(const ::onnx::ModelProto& model, int index,
                                                    const std::vector<std::string>& reads,
                                                    const TensorMap& cache) {
  const ::onnx::GraphProto& graph = model.graph();
  const ::onnx::NodeProto& node = graph.node(index);
  auto one = std::make_shared<::onnx::ModelProto>();
  one->set_ir_version(model.ir_version());
  *one->mutable_opset_import() = model.opset_import();
  ::onnx::GraphProto* g = one->mutable_graph();
  g->set_name(node.name());
  *g->add_node() = node;
  std::set<std::string> added;
  for (const auto& name : reads) {
    if (!added.insert(name).second) continue;
    if (const Tensor* t = cache.find(name)) {
      auto* in = g->add_input();
      in->set_name(name);
      *in->mutable_type() = tensor_type(t->dtype(), dims_from_shape(t->shape()));
    } else if (const ::onnx::TensorProto* init = find_initializer(graph, name)) {
      *g->add_initializer() = *init;
    }
  }
  for (const auto& out : node.output())
    if (!out.empty()) g->add_output()->set_name(out);
  return one;
}

// Whether ONNX knows the op: one it does not (a custom op) is a warning, not an error.
bool is_known_op(const ::onnx::ModelProto& model, const ::onnx::NodeProto& node) {
  const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  for (const auto& op : model.opset_import()) {
    const std::string d = op.domain() == "ai.onnx" ? "" : op.domain();
    if (d == domain)
      return ::onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(op.version()),
                                              domain) != nullptr;
  }
  return false;  // no opset import for its domain
}

// Graph inputs and top-level nodes that do not reach an output, as warnings. Returns the names
// of the nodes that do reach one.
std::set<std::string> report_unused(const ::onnx::GraphProto& graph, LintReport& report) {
  ::onnx::GraphProto cleaned = graph;
  CleanupOptions options;
  options.remove_unused_graph_inputs = true;
  cleanup(cleaned, options);
  std::set<std::string> kept_inputs, kept_nodes;
  for (const auto& in : cleaned.input()) kept_inputs.insert(in.name());
  for (const auto& node : cleaned.node()) kept_nodes.insert(node.name() + '\n' + node.op_type());
  std::set<std::string> unused_inputs;
  for (const auto& in : graph.input())
    if (!kept_inputs.count(in.name())) unused_inputs.insert(in.name());
  for (const auto& name : unused_inputs)
    report.add(LintLevel::kWarning, LintSource::kOnnxGs,
               fmt::format("Input: '{}' does not affect outputs, can be removed.", name));
  std::set<std::pair<std::string, std::string>> unused_nodes;
  for (const auto& node : graph.node())
    if (!kept_nodes.count(node.name() + '\n' + node.op_type()))
      unused_nodes.insert({node.name(), node.op_type()});
  for (const auto& [name, op] : unused_nodes)
    report.add(LintLevel::kWarning, LintSource::kOnnxGs, "Does not affect outputs, can be removed.",
               name, op);
  std::set<std::string> kept;
  for (const auto& node : cleaned.node()) kept.insert(node.name());
  return kept;
}

}  // namespace

LintReport lint_model(const std::string& path, const LintOptions& options) {
  LintReport report;
  const std::string absolute = fs::absolute(path).lexically_normal().string();
  if (options.announce) logger().info("Loading model: {}", absolute);
  auto model = parse_model(read_regular_file(path, fmt::format("load model '{}'", path)));
  if (!model) {
    const std::string message = "Error parsing message with type 'onnx.ModelProto'";
    report.add(LintLevel::kException, LintSource::kOnnxLoader, message);
    report.closing_error = "Invalid ONNX model given: " + message;
    report.status = 1;
    return report;
  }
  if (model->ByteSizeLong() == 0) {
    report.add(LintLevel::kException, LintSource::kOnnxLoader, "Empty ONNX model given");
    report.status = 1;
    return report;
  }
  if (model->graph().node_size() == 0) {
    report.add(LintLevel::kWarning, LintSource::kOnnxLoader, "ONNX model has no nodes");
    return report;
  }
  std::string data_dir = options.external_data_dir;
  if (data_dir.empty()) data_dir = fs::path(path).parent_path().string();
  if (data_dir.empty()) data_dir = ".";
  ::onnx::GraphProto& graph = *model->mutable_graph();
  name_unnamed_nodes(graph);
  check_duplicate_names(graph, report);
  const bool spec_ok = onnx_spec_check(*model, report);
  logger().verbose("ONNX Checker passed: {}", spec_ok);

  std::unique_ptr<FeedSource> generated;
  FeedSource* feeds = options.feeds;
  if (!feeds) {
    generated = std::make_unique<DataLoader>();
    feeds = generated.get();
  }
  feeds->set_input_metadata(graph_input_metadata(graph));
  std::optional<TensorMap> feed = feeds->get(0);
  if (!feed) fail("failed to lint '{}': the data loader gave no inputs", path);
  // Inputs that do not fit the graph inputs are refused as a runner refuses them (Polygraphy's
  // lint stops there too); the one-node models would otherwise take any shape.
  check_feed("", *feed, graph_input_metadata(graph));

  if (spec_ok) {
    try {
      run_on_reference(std::make_shared<::onnx::ModelProto>(*model), *feed, data_dir);
      // Polygraphy lists the nodes left after its in-place cleanup as passing.
      report.passing = report_unused(graph, report);
      logger().verbose("Inference on the reference backend passed. Model is valid. Early exiting.");
      return report;
    } catch (const UsageError&) {
      throw;  // the inputs the user gave do not fit the model: not a finding about the model
    } catch (const std::exception& e) {
      logger().verbose("Inference on the reference backend failed with error: '{}'", e.what());
    }
  }

  // Node by node, in graph order. A node runs when every value it reads is in the cache;
  // values are dropped once their last reader has run.
  GraphIndex index(graph);
  TensorMap cache = *feed;
  std::map<std::string, size_t> readers_left;
  for (int i = 0; i < graph.node_size(); ++i)
    for (const auto& name : index.reads(i)) ++readers_left[name];
  for (int i = 0; i < graph.node_size(); ++i) {
    const ::onnx::NodeProto& node = graph.node(i);
    const std::vector<std::string>& reads = index.reads(i);
    bool ready = true;
    for (const auto& name : reads)
      if (!cache.contains(name) && !index.is_initializer(name)) ready = false;
    logger().extra_verbose("Linting node: {}: {}", node.name(), node.op_type());
    std::optional<TensorMap> outputs;
    if (ready) {
      TensorMap node_feed;
      for (const auto& name : reads)
        if (const Tensor* t = cache.find(name)) node_feed.set(name, *t);
      try {
        outputs = run_on_reference(singleton_model(*model, i, reads, cache), node_feed, data_dir);
        report.add(LintLevel::kException, LintSource::kInference, "", node.name(), node.op_type());
      } catch (const std::exception& e) {
        const LintLevel level =
            is_known_op(*model, node) ? LintLevel::kException : LintLevel::kWarning;
        report.add(level, LintSource::kInference, e.what(), node.name(), node.op_type());
      }
    }
    for (const auto& name : reads)
      if (cache.contains(name) && --readers_left[name] == 0) cache.erase(name);
    if (outputs)
      for (const auto& [name, value] : *outputs) cache.set(name, value);
  }
  report_unused(graph, report);
  report.status = report.valid ? 0 : 1;
  return report;
}

}  // namespace parity::surgeon
