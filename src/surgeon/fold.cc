#include "surgeon/fold.h"

#include <algorithm>
#include <functional>
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

// The constants a graph can read: its own initializers and those of the graphs around it. From
// IR version 4 on, an initializer that is also a graph input is a default the user may
// override, so it is not constant; before, every initializer had to be listed as an input, so
// there they all are constants.
using Constants = std::map<std::string, const ::onnx::TensorProto*>;

Constants constants_of(const ::onnx::GraphProto& g, const Constants& outer,
                       bool inputs_may_be_constant) {
  Constants c = outer;
  std::set<std::string> inputs;
  for (const auto& in : g.input()) {
    inputs.insert(in.name());
    c.erase(in.name());  // a body input hides an outer value of the same name
  }
  for (const auto& node : g.node())
    for (const auto& out : node.output()) c.erase(out);
  for (const auto& t : g.initializer())
    if (inputs_may_be_constant || !inputs.count(t.name())) c[t.name()] = &t;
  return c;
}

class Folder {
 public:
  Folder(const ModelFile& model, const FoldOptions& options, std::set<std::string>& warned)
      : model_(model),
        options_(options),
        warned_(warned),
        old_ir_(model.proto->ir_version() > 0 && model.proto->ir_version() < 4),
        store_(model.external_data_dir),
        backend_(BackendRegistry::global().configure("pluginref", {})) {}

  // One pass over `g` and, after it, over the bodies of its nodes.
  void fold_graph(::onnx::GraphProto& g, const Constants& outer) {
    inline_constant_ifs(g, outer);
    fold_nodes(g, constants_of(g, outer, old_ir_));
    cleanup(g);
    const Constants inner = constants_of(g, outer, old_ir_);
    for (auto& node : *g.mutable_node())
      for (auto& a : *node.mutable_attribute()) {
        if (a.has_g()) fold_graph(*a.mutable_g(), inner);
        for (auto& sub : *a.mutable_graphs()) fold_graph(sub, inner);
      }
  }

 private:
  // An If whose condition is constant becomes the nodes of the branch it takes.
  void inline_constant_ifs(::onnx::GraphProto& g, const Constants& outer) {
    const Constants constants = constants_of(g, outer, old_ir_);
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

  // The dims a Shape node outputs (its start/end applied), as far as the records know them.
  std::optional<DimList> shape_dims(const ::onnx::GraphProto& g, const ::onnx::NodeProto& node) {
    if (node.op_type() != "Shape" || !is_onnx_domain(node.domain()) || node.input_size() != 1)
      return std::nullopt;
    const ::onnx::TypeProto* type = find_type(g, node.input(0));
    if (!type) return std::nullopt;
    const std::optional<DimList> dims = dims_of(*type);
    if (!dims) return std::nullopt;
    const int64_t rank = static_cast<int64_t>(dims->size());
    auto bound = [&](const char* name, int64_t fallback) {
      const auto* a = attribute(node, name);
      int64_t v = a ? a->i() : fallback;
      if (v < 0) v += rank;
      return std::clamp<int64_t>(v, 0, rank);
    };
    const int64_t start = bound("start", 0), end = std::max(bound("end", rank), start);
    return DimList(dims->begin() + start, dims->begin() + end);
  }

  static std::optional<Tensor> fixed_dims_tensor(const DimList& dims, bool scalar = false) {
    std::vector<int64_t> values;
    for (const Dim& d : dims) {
      if (!d.is_fixed()) return std::nullopt;
      values.push_back(d.value);
    }
    if (scalar) return Tensor::scalar<int64_t>(values.at(0));
    return Tensor::from_vector<int64_t>({static_cast<int64_t>(values.size())}, values);
  }

  // The value Shape or Size has when its input's shape is known (fold_shapes).
  std::optional<Tensor> shape_value(const ::onnx::GraphProto& g, const ::onnx::NodeProto& node) {
    if (!options_.fold_shapes) return std::nullopt;
    if (node.op_type() == "Size" && is_onnx_domain(node.domain()) && node.input_size() == 1) {
      const ::onnx::TypeProto* type = find_type(g, node.input(0));
      const auto dims = type ? dims_of(*type) : std::nullopt;
      if (!dims || !dims_are_fixed(*dims)) return std::nullopt;
      int64_t n = 1;
      for (const Dim& d : *dims) n *= d.value;
      return Tensor::scalar<int64_t>(n);
    }
    const auto dims = shape_dims(g, node);
    return dims ? fixed_dims_tensor(*dims) : std::nullopt;
  }

  // GraphSurgeon's partial shape folding: a Gather or Slice of a Shape whose input's shape is
  // only partly known folds when the dims it picks are known ("Shape(x)[1]" of ('N', 3) is 3).
  std::optional<Tensor> picked_dims_value(
      const ::onnx::GraphProto& g, const ::onnx::NodeProto& node, const GraphIndex& index,
      const std::function<std::optional<Tensor>(const std::string&)>& constant) {
    if (!options_.fold_shapes || !is_onnx_domain(node.domain()) || node.input_size() < 2)
      return std::nullopt;
    if (node.op_type() != "Gather" && node.op_type() != "Slice") return std::nullopt;
    const auto producer = index.producer(node.input(0));
    if (!producer) return std::nullopt;
    const auto dims = shape_dims(g, g.node(*producer));
    if (!dims) return std::nullopt;
    const int64_t n = static_cast<int64_t>(dims->size());
    auto ints = [&](int k) -> std::optional<std::vector<int64_t>> {
      if (k >= node.input_size() || node.input(k).empty()) return std::nullopt;
      const std::optional<Tensor> t = constant(node.input(k));
      if (!t) return std::nullopt;
      std::vector<int64_t> out;
      for (int64_t i = 0; i < t->numel(); ++i) {
        if (t->dtype() == DataType::kInt64)
          out.push_back(t->data<int64_t>()[i]);
        else if (t->dtype() == DataType::kInt32)
          out.push_back(t->data<int32_t>()[i]);
        else
          return std::nullopt;
      }
      return out;
    };
    if (node.op_type() == "Gather") {
      const auto* axis = attribute(node, "axis");
      if (axis && axis->i() != 0 && axis->i() != -1) return std::nullopt;
      const std::optional<Tensor> indices = constant(node.input(1));
      const auto picks = ints(1);
      if (!indices || !picks || indices->rank() > 1) return std::nullopt;
      DimList picked;
      for (int64_t i : *picks) {
        if (i < 0) i += n;
        if (i < 0 || i >= n) return std::nullopt;  // out of range: let the backend say so
        picked.push_back((*dims)[i]);
      }
      return fixed_dims_tensor(picked, indices->rank() == 0);
    }
    // Slice (opset 10+: starts, ends, axes, steps as inputs) along the only axis.
    for (int k : {3, 4})  // given axes or steps must be known too
      if (k < node.input_size() && !node.input(k).empty() && !constant(node.input(k)))
        return std::nullopt;
    const auto starts = ints(1), ends = ints(2), axes = ints(3), steps = ints(4);
    if (!starts || !ends || starts->size() != 1 || ends->size() != 1) return std::nullopt;
    if (axes && (axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1))) return std::nullopt;
    const int64_t step = steps && steps->size() == 1 ? (*steps)[0] : 1;
    if (step == 0) return std::nullopt;
    auto clamp = [&](int64_t v, int64_t lo, int64_t hi) {
      if (v < 0) v += n;
      return std::clamp(v, lo, hi);
    };
    int64_t start = step > 0 ? clamp((*starts)[0], 0, n) : clamp((*starts)[0], -1, n - 1);
    const int64_t end = step > 0 ? clamp((*ends)[0], 0, n) : clamp((*ends)[0], -1, n - 1);
    DimList picked;
    for (int64_t i = start; step > 0 ? i < end : i > end; i += step) picked.push_back((*dims)[i]);
    return fixed_dims_tensor(picked);
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
    const GraphIndex index(g);
    std::set<std::string> graph_outputs;
    for (const auto& o : g.output()) graph_outputs.insert(o.name());
    auto constant = [&](const std::string& name) -> std::optional<Tensor> {
      if (auto c = computed.find(name); c != computed.end()) return c->second;
      if (auto c = constants.find(name); c != constants.end())
        return tensor_value(*c->second, store_);
      return std::nullopt;
    };
    std::vector<bool> folded(g.node_size(), false);
    bool failed = false;
    for (int i = 0; i < g.node_size() && !failed; ++i) {
      const ::onnx::NodeProto& node = g.node(i);
      if (node.output_size() == 0) continue;
      // A graph output folded is kept as a Constant node (backends expect outputs made by
      // nodes, as ONNX Runtime and the reference backend do), so that one is already done.
      if (node.op_type() == "Constant" && is_onnx_domain(node.domain()) &&
          std::all_of(node.output().begin(), node.output().end(),
                      [&](const std::string& o) { return graph_outputs.count(o) > 0; }))
        continue;
      std::vector<Tensor> values;
      if (std::optional<Tensor> shape = shape_value(g, node)) {
        values.push_back(std::move(*shape));
      } else if (std::optional<Tensor> picked = picked_dims_value(g, node, index, constant)) {
        values.push_back(std::move(*picked));
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

    // Folded nodes whose every output is small enough become initializers (graph outputs,
    // Constant nodes); the others stay.
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
      for (const auto& o : node.output()) {
        if (o.empty()) continue;
        if (!graph_outputs.count(o)) {
          made.push_back(tensor_proto(o, computed.at(o)));
          continue;
        }
        ::onnx::NodeProto* c = kept.Add();
        c->set_op_type("Constant");
        c->set_name(o + "_folded");
        c->add_output(o);
        auto* value = c->add_attribute();
        value->set_name("value");
        value->set_type(::onnx::AttributeProto::TENSOR);
        *value->mutable_t() = tensor_proto("", computed.at(o));
      }
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
  bool old_ir_;  // IR version < 4: initializers listed as inputs are still constants
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
