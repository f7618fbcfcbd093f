#include "backend/onnxrt/departures.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/mx_types.h"

namespace parity::onnxrt {
namespace {

// The departures, in the order of docs/onnxruntime-departures.md.
const std::vector<DepartureInfo> kDepartures = {
    {"averagepool-same-upper-dilations", "AveragePool",
     "with auto_pad SAME_UPPER and dilations > 1 the specification pads for the dilated "
     "window; ONNX Runtime pads for the undilated one, so windows and averages shift"},
    {"cast-float8e5m2-no-saturate-overflow", "Cast",
     "casting to float8e5m2 with saturate=0, a value that rounds past the largest finite one "
     "(61440 <= |x| < 65536) becomes +-Inf by the specification; ONNX Runtime gives NaN"},
    {"pad-wrap-larger-than-axis", "Pad",
     "mode wrap with pads larger than the axis repeats the data periodically by the "
     "specification (as numpy.pad); ONNX Runtime fills other values"},
    {"gridsample-cubic-border", "GridSample",
     "cubic interpolation with padding_mode border, at grid points outside the image, differs "
     "from the specification's (location clamped into the image, outside taps read the edge)"},
    {"stringsplit-empty-string", "StringSplit",
     "with a delimiter, an empty string splits into one empty substring by the "
     "specification (Python's str.split: \"\".split(\"-\") is [\"\"]); ONNX Runtime gives none"},
    {"cast-int4-rounding", "Cast",
     "casting a float to int4/uint4 rounds half to even and saturates by the specification; "
     "ONNX Runtime rounds ties away from zero and wraps out-of-range values"},
    {"cast-float8e8m0-out-of-range", "Cast",
     "casting to float8e8m0, ONNX's reference implementation takes the magnitude (negative "
     "values convert as their absolute value), gives zero and values below 2^-127 the "
     "smallest code and infinities NaN whatever `saturate` says; ONNX Runtime makes negative "
     "values, zero and tiny values the smallest code with saturate=1 and NaN with saturate=0, "
     "infinity 2^127 with saturate=1, and values above 2^127 NaN with saturate=0 in every "
     "round_mode"},
    {"dropout-inference-mask", "Dropout",
     "at opsets 7 to 11 the mask output (inference mode) is all ones by the specification "
     "(every element kept: output = data * mask); ONNX Runtime writes all zeros"},
};

const DepartureInfo& info(std::string_view id) {
  for (const auto& d : kDepartures)
    if (d.id == id) return d;
  throw std::logic_error(fmt::format("unknown departure id '{}'", id));
}

int64_t attr_int(const ir::Node& node, std::string_view name, int64_t dflt) {
  const ir::Attribute* a = node.attribute(name);
  return a ? a->i : dflt;
}
std::string attr_string(const ir::Node& node, std::string_view name, std::string dflt) {
  const ir::Attribute* a = node.attribute(name);
  return a ? a->s : dflt;
}

// The constant value of a node input: an initializer of this graph or an enclosing one.
const Tensor* constant(const ir::Graph& graph, const std::string& name) {
  for (const ir::Graph* g = &graph; g; g = g->parent) {
    auto it = g->initializers.find(name);
    if (it != g->initializers.end()) return &it->second;
  }
  return nullptr;
}

bool has_output(const ir::Node& node, size_t i) {
  return i < node.outputs.size() && !node.outputs[i].empty();
}

// The element type a CastLike's target input declares, if the model says.
std::optional<DataType> declared_type(const ir::Graph& graph, const std::string& name) {
  for (const ir::Graph* g = &graph; g; g = g->parent) {
    if (const ir::ValueType* t = g->find_type(name))
      if (t->kind == ir::ValueType::Kind::kTensor) return t->elem_type;
    if (auto it = g->initializers.find(name); it != g->initializers.end())
      return it->second.dtype();
  }
  return std::nullopt;
}

std::optional<DataType> cast_target(const ir::Node& node, const ir::Graph& graph) {
  if (node.op_type == "Cast") {
    const ir::Attribute* to = node.attribute("to");
    if (to) return static_cast<DataType>(to->i);
  } else if (node.op_type == "CastLike" && node.inputs.size() > 1) {
    return declared_type(graph, node.inputs[1]);
  }
  return std::nullopt;
}

// Appends the departures `node` may meet.
void match_node(const ir::Model& model, const ir::Graph& graph, const ir::Node& node,
                const std::string& top, std::vector<Departure>& out) {
  if (!node.domain.empty()) return;
  auto add = [&](std::string_view id) { out.push_back({&info(id), node.name, top}); };
  const std::string& op = node.op_type;
  const int64_t opset = model.opset("");
  if (op == "AveragePool") {
    const ir::Attribute* dil = node.attribute("dilations");
    const bool dilated =
        dil && std::any_of(dil->ints.begin(), dil->ints.end(), [](int64_t d) { return d > 1; });
    if (dilated && attr_string(node, "auto_pad", "NOTSET") == "SAME_UPPER")
      add("averagepool-same-upper-dilations");
  } else if (op == "Cast" || op == "CastLike") {
    const std::optional<DataType> to = cast_target(node, graph);
    if (to == DataType::kFloat8E5M2 && attr_int(node, "saturate", 1) == 0)
      add("cast-float8e5m2-no-saturate-overflow");
    if (to == DataType::kInt4 || to == DataType::kUInt4) add("cast-int4-rounding");
    if (to == kDtypeFloat8E8M0) add("cast-float8e8m0-out-of-range");
  } else if (op == "Pad") {
    if (attr_string(node, "mode", "constant") != "wrap") return;
    // Only pads larger than the axis depart; when pads and the input shape are known and
    // every pad fits, the node is fine.
    const Tensor* pads = node.inputs.size() > 1 ? constant(graph, node.inputs[1]) : nullptr;
    const ir::ValueType* x = graph.find_type(node.inputs[0]);
    if (pads && pads->dtype() == DataType::kInt64 && x && x->shape && node.inputs.size() < 4) {
      const DimList& dims = *x->shape;
      const int64_t* p = pads->data<int64_t>();
      bool fits = pads->numel() == 2 * static_cast<int64_t>(dims.size());
      for (size_t d = 0; fits && d < dims.size(); ++d)
        fits = dims[d].is_fixed() && p[d] <= dims[d].value && p[d + dims.size()] <= dims[d].value;
      if (fits) return;
    }
    add("pad-wrap-larger-than-axis");
  } else if (op == "GridSample") {
    const std::string mode = attr_string(node, "mode", opset >= 20 ? "linear" : "bilinear");
    if ((mode == "cubic" || mode == "bicubic") &&
        attr_string(node, "padding_mode", "zeros") == "border")
      add("gridsample-cubic-border");
  } else if (op == "StringSplit") {
    add("stringsplit-empty-string");
  } else if (op == "Dropout") {
    if (!has_output(node, 1)) return;
    // Opsets 7 to 11 have no training mode: always inference. ONNX Runtime follows the
    // specification from opset 12 on, and opsets before 7 are not covered by the reproducer.
    if (opset >= 7 && opset <= 11) add("dropout-inference-mask");
  }
}

// `top` is the top-level node the graph belongs to ("" for the top-level graph itself).
void match_graph(const ir::Model& model, const ir::Graph& graph, const std::string& top,
                 std::vector<Departure>& out) {
  for (const ir::Node& node : graph.nodes) {
    const std::string& owner = top.empty() ? node.name : top;
    match_node(model, graph, node, owner, out);
    for (const ir::Attribute& a : node.attributes) {
      if (a.g) match_graph(model, *a.g, owner, out);
      for (const auto& g : a.graphs)
        if (g) match_graph(model, *g, owner, out);
    }
  }
}

}  // namespace

const std::vector<DepartureInfo>& all_departures() { return kDepartures; }

std::vector<Departure> known_departures(const ir::Model& model) {
  std::vector<Departure> out;
  match_graph(model, model.graph, "", out);
  return out;
}

std::vector<Departure> known_departures(const ir::Model& model,
                                        const std::vector<std::string>& values) {
  // The names every requested value depends on, walking producers back from them.
  std::map<std::string, const ir::Node*> producer;
  for (const ir::Node& node : model.graph.nodes)
    for (const std::string& out : node.outputs)
      if (!out.empty()) producer[out] = &node;
  std::set<const ir::Node*> upstream;
  std::vector<std::string> pending = values;
  while (!pending.empty()) {
    const std::string name = pending.back();
    pending.pop_back();
    auto it = producer.find(name);
    if (it == producer.end() || !upstream.insert(it->second).second) continue;
    for (const std::string& in : it->second->inputs) pending.push_back(in);
  }
  std::set<std::string> names;
  for (const ir::Node* n : upstream) names.insert(n->name);
  std::vector<Departure> out;
  for (Departure& d : known_departures(model))
    if (names.count(d.top_node)) out.push_back(std::move(d));
  return out;
}

std::string describe(const Departure& d) {
  return fmt::format(
      "node '{}' ({}) may meet a known ONNX Runtime departure from the specification: {} "
      "(docs/onnxruntime-departures.md#{})",
      d.node, d.info->op, d.info->summary, d.info->id);
}

}  // namespace parity::onnxrt
