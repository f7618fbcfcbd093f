#include "surgeon/fold.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "backend/registry.h"
#include "core/error.h"
#include "core/logger.h"
#include "onnx/model_io.h"
#include "surgeon/graph.h"
#include "surgeon/shape_inference.h"
#include "surgeon/types.h"

namespace parity::surgeon {

namespace {

// Ops whose value differs from run to run: never folded.
const std::set<std::string> kNondeterministic = {"RandomNormal",     "RandomUniform",
                                                 "RandomNormalLike", "RandomUniformLike",
                                                 "Multinomial",      "Bernoulli"};

bool is_onnx_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

bool has_bodies(const ::onnx::NodeProto& node) {
  for (const auto& a : node.attribute())
    if (a.has_g() || a.graphs_size() > 0) return true;
  return false;
}

size_t count_nodes(const ::onnx::GraphProto& g) {
  size_t n = static_cast<size_t>(g.node_size());
  for (const auto& node : g.node())
    for (const auto& a : node.attribute()) {
      if (a.has_g()) n += count_nodes(a.g());
      for (const auto& sub : a.graphs()) n += count_nodes(sub);
    }
  return n;
}

const ::onnx::AttributeProto* attribute(const ::onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

// The constants a graph can read: its own initializers (not overridable inputs) and those of
// the graphs around it.
using Constants = std::map<std::string, const ::onnx::TensorProto*>;

Constants constants_of(const ::onnx::GraphProto& g, const Constants& outer) {
  Constants c = outer;
  std::set<std::string> inputs;
  for (const auto& in : g.input()) {
    inputs.insert(in.name());
    c.erase(in.name());  // a body input hides an outer value of the same name
  }
  for (const auto& node : g.node())
    for (const auto& out : node.output()) c.erase(out);
  for (const auto& t : g.initializer())
    if (!inputs.count(t.name())) c[t.name()] = &t;
  return c;
}

class Folder {
 public:
  Folder(const ModelFile& model, const FoldOptions& options, std::set<std::string>& warned)
      : model_(model),
        options_(options),
        warned_(warned),
        store_(model.external_data_dir),
        backend_(BackendRegistry::global().configure("pluginref", {})) {}

  // One pass over `g` and, after it, over the bodies of its nodes.
  void fold_graph(::onnx::GraphProto& g, const Constants& outer) {
    inline_constant_ifs(g, outer);
    fold_nodes(g, constants_of(g, outer));
    cleanup(g);
    const Constants inner = constants_of(g, outer);
    for (auto& node : *g.mutable_node())
      for (auto& a : *node.mutable_attribute()) {
        if (a.has_g()) fold_graph(*a.mutable_g(), inner);
        for (auto& sub : *a.mutable_graphs()) fold_graph(sub, inner);
      }
  }

 private:
  // An If whose condition is constant becomes the nodes of the branch it takes.
  void inline_constant_ifs(::onnx::GraphProto& g, const Constants& outer) {
    const Constants constants = constants_of(g, outer);
    for (int i = 0; i < g.node_size(); ++i) {
      const ::onnx::NodeProto& node = g.node(i);
      if (node.op_type() != "If" || !is_onnx_domain(node.domain()) || node.input_size() != 1)
        continue;
      auto c = constants.find(node.input(0));
      if (c == constants.end()) continue;
      const Tensor cond = tensor_value(*c->second, store_);
      if (cond.dtype() != DataType::kBool || cond.numel() != 1) continue;
      const auto* branch_attr =
          attribute(node, cond.data<bool>()[0] ? "then_branch" : "else_branch");
      if (!branch_attr || !branch_attr->has_g()) continue;
      ::onnx::GraphProto branch = branch_attr->g();
      const ::onnx::NodeProto if_node = node;
      // The branch's outputs take the If's output names.
      std::map<std::string, std::string> renamed;
      std::vector<::onnx::NodeProto> extra;
      std::set<std::string> produced;
      for (const auto& n : branch.node())
        for (const auto& o : n.output()) produced.insert(o);
      for (int k = 0; k < branch.output_size() && k < if_node.output_size(); ++k) {
        const std::string& from = branch.output(k).name();
        const std::string& to = if_node.output(k);
        if (to.empty()) continue;
        if (produced.count(from) && !renamed.count(from)) {
          renamed[from] = to;
        } else {
          ::onnx::NodeProto id;
          id.set_op_type("Identity");
          id.set_name(fmt::format("{}_output_{}", if_node.name(), k));
          id.add_input(renamed.count(from) ? renamed[from] : from);
          id.add_output(to);
          extra.push_back(id);
        }
      }
      for (auto& n : *branch.mutable_node()) {
        for (auto& in : *n.mutable_input())
          if (auto r = renamed.find(in); r != renamed.end()) in = r->second;
        for (auto& out : *n.mutable_output())
          if (auto r = renamed.find(out); r != renamed.end()) out = r->second;
      }
      for (auto& t : *branch.mutable_initializer()) *g.add_initializer() = std::move(t);
      ::google::protobuf::RepeatedPtrField<::onnx::NodeProto> nodes;
      for (int k = 0; k < g.node_size(); ++k) {
        if (k != i) {
          nodes.Add()->Swap(g.mutable_node(k));
          continue;
        }
        for (auto& n : *branch.mutable_node()) nodes.Add()->Swap(&n);
        for (auto& n : extra) nodes.Add()->Swap(&n);
      }
      logger().verbose("Inlined the {} branch of If {} (its condition is constant)",
                       cond.data<bool>()[0] ? "then" : "else", node_label(g, i));
      g.mutable_node()->Swap(&nodes);
      toposort(g);
      return inline_constant_ifs(g, outer);  // the nodes moved: look again
    }
  }

  // The value Shape or Size has when its input's shape is known (fold_shapes).
  std::optional<Tensor> shape_value(const ::onnx::GraphProto& g, const ::onnx::NodeProto& node) {
    if (!options_.fold_shapes || !is_onnx_domain(node.domain()) || node.input_size() != 1)
      return std::nullopt;
    if (node.op_type() != "Shape" && node.op_type() != "Size") return std::nullopt;
    const ::onnx::TypeProto* type = find_type(g, node.input(0));
    if (!type) return std::nullopt;
    const std::optional<DimList> dims = dims_of(*type);
    if (!dims || !dims_are_fixed(*dims)) return std::nullopt;
    std::vector<int64_t> shape;
    for (const Dim& d : *dims) shape.push_back(d.value);
    if (node.op_type() == "Size") {
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      return Tensor::scalar<int64_t>(n);
    }
    const int64_t rank = static_cast<int64_t>(shape.size());
    auto bound = [&](const char* name, int64_t fallback) {
      const auto* a = attribute(node, name);
      int64_t v = a ? a->i() : fallback;
      if (v < 0) v += rank;
      return std::clamp<int64_t>(v, 0, rank);
    };
    const int64_t start = bound("start", 0), end = std::max(bound("end", rank), start);
    std::vector<int64_t> out(shape.begin() + start, shape.begin() + end);
    return Tensor::from_vector<int64_t>({static_cast<int64_t>(out.size())}, out);
  }

  // Runs one node on the reference backend with its constant inputs fed.
  std::vector<Tensor> evaluate(const ::onnx::NodeProto& node, const TensorMap& feed) {
    auto proto = std::make_shared<::onnx::ModelProto>();
    proto->set_ir_version(model_.proto->ir_version());
    *proto->mutable_opset_import() = model_.proto->opset_import();
    *proto->mutable_functions() = model_.proto->functions();
    auto* g = proto->mutable_graph();
    g->set_name("fold_" + node.name());
    *g->add_node() = node;
    for (const auto& [name, t] : feed) {
      auto* in = g->add_input();
      in->set_name(name);
      *in->mutable_type() = tensor_type(t.dtype(), dims_from_shape(t.shape()));
    }
    std::vector<std::string> outputs;
    for (const auto& o : node.output())
      if (!o.empty()) {
        outputs.push_back(o);
        g->add_output()->set_name(o);
      }
    ModelPtr ir = onnx_io::model_from_proto(proto, {}, model_.external_data_dir);
    const TensorMap values = backend_.fetch_tensors(ir, feed, outputs);
    std::vector<Tensor> out;
    for (const auto& o : outputs) out.push_back(values.at(o));
    return out;
  }

  void fold_nodes(::onnx::GraphProto& g, const Constants& constants) {
    std::map<std::string, Tensor> computed;  // values of folded outputs, for later nodes
    std::set<std::string> too_large;
    std::vector<bool> folded(g.node_size(), false);
    bool failed = false;
    for (int i = 0; i < g.node_size() && !failed; ++i) {
      const ::onnx::NodeProto& node = g.node(i);
      if (node.output_size() == 0) continue;
      std::vector<Tensor> values;
      if (std::optional<Tensor> shape = shape_value(g, node)) {
        values.push_back(std::move(*shape));
      } else {
        if (!is_onnx_domain(node.domain()) || kNondeterministic.count(node.op_type()) ||
            has_bodies(node))
          continue;
        bool constant = true;
        for (const auto& in : node.input())
          if (!in.empty() && !computed.count(in) && !constants.count(in)) constant = false;
        if (!constant) continue;
        TensorMap feed;
        for (const auto& in : node.input()) {
          if (in.empty() || feed.contains(in)) continue;
          if (auto c = computed.find(in); c != computed.end())
            feed.set(in, c->second);
          else
            feed.set(in, tensor_value(*constants.at(in), store_));
        }
        try {
          values = evaluate(node, feed);
        } catch (const Error& e) {
          if (warned_.insert(node_label(g, i)).second)  // once, not once per pass
            logger().warning("Failed to fold node {}: it is kept unfolded. Note: Error was:\n{}",
                             node_label(g, i), e.what());
          if (options_.partitioning == Partitioning::kNone) {
            logger().warning(
                "Inference failed: no constants are folded in graph '{}'. You may want to try "
                "enabling partitioning (--partitioning basic) to fold the rest.",
                g.name());
            failed = true;
          }
          continue;
        }
      }
      size_t k = 0;
      for (const auto& o : node.output()) {
        if (o.empty()) continue;
        Tensor& v = values[k++];
        if (options_.size_threshold && v.nbytes() > *options_.size_threshold) {
          logger().verbose(
              "Will not fold: '{}' since its size in bytes ({}) exceeds the size threshold ({})", o,
              v.nbytes(), *options_.size_threshold);
          too_large.insert(o);
        }
        computed[o] = std::move(v);
      }
      folded[i] = true;
    }
    if (failed) return;

    // Folded nodes whose every output is small enough become initializers; the others stay.
    ::google::protobuf::RepeatedPtrField<::onnx::NodeProto> kept;
    std::vector<::onnx::TensorProto> made;
    for (int i = 0; i < g.node_size(); ++i) {
      const ::onnx::NodeProto& node = g.node(i);
      bool replace = folded[i];
      for (const auto& o : node.output())
        if (!o.empty() && too_large.count(o)) replace = false;
      if (!replace) {
        kept.Add()->CopyFrom(node);
        continue;
      }
      for (const auto& o : node.output())
        if (!o.empty()) made.push_back(tensor_proto(o, computed.at(o)));
    }
    g.mutable_node()->Swap(&kept);
    // A folded value that had a record in value_info is now an initializer.
    std::set<std::string> made_names;
    for (auto& t : made) {
      made_names.insert(t.name());
      *g.add_initializer() = std::move(t);
    }
    auto* info = g.mutable_value_info();
    info->erase(std::remove_if(info->begin(), info->end(),
                               [&](const ::onnx::ValueInfoProto& v) {
                                 return made_names.count(v.name()) > 0;
                               }),
                info->end());
  }

  const ModelFile& model_;
  const FoldOptions& options_;
  std::set<std::string>& warned_;
  onnx_io::ExternalDataStore store_;
  ConfiguredBackend backend_;
};

}  // namespace

size_t fold_constants(ModelFile& model, const FoldOptions& options) {
  ::onnx::ModelProto& proto = *model.proto;
  const size_t original = count_nodes(proto.graph());
  size_t before = original, after = std::numeric_limits<size_t>::max();
  int pass = 0;
  std::set<std::string> warned;
  while (before != after && (!options.num_passes || pass < *options.num_passes)) {
    before = count_nodes(proto.graph());
    logger().start("Folding Constants | Pass {}", pass + 1);
    try {
      Folder folder(model, options, warned);
      folder.fold_graph(*proto.mutable_graph(), {});
      if (options.fold_shapes && options.shape_inference) infer_shapes(proto);
    } catch (const Error& e) {
      if (!options.error_ok) throw;
      logger().warning(
          "Constant folding pass failed. Skipping subsequent passes.\nNote: Error was:\n{}",
          e.what());
      break;
    }
    after = count_nodes(proto.graph());
    ++pass;
    logger().finish("    Total Nodes | Original: {:5}, After Folding: {:5} | {:5} Nodes Folded",
                    before, after, before - after);
  }
  return original - count_nodes(proto.graph());
}

}  // namespace parity::surgeon
