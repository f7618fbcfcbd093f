// The description is made from the model's protobuf, as Polygraphy's str_from_onnx makes it
// from an onnx.ModelProto: nodes in file order with the names the file gives them (none when
// it gives none), initializers in file order, sparse initializers not listed, "ai.onnx" among
// the other opsets. The IR would print none of these as Polygraphy does (it sorts nodes, names
// unnamed ones, densifies sparse initializers and keeps initializers in a map).
#include "onnx/describe.h"

#include <algorithm>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "core/error.h"
#include "core/logger.h"
#include "core/py_format.h"
#include "onnx/proto_convert.h"

namespace parity::onnx_io {

namespace {

using ::onnx::AttributeProto;
using ::onnx::GraphProto;
using ::onnx::NodeProto;
using ::onnx::TensorProto;
using ::onnx::ValueInfoProto;

constexpr const char* kTab = "    ";  // Polygraphy's constants.TAB: four spaces, never '\t'

// Polygraphy's util.indent_block: every line (a trailing newline dropped) prefixed by `level`
// tabs; an empty block is one indentation.
std::string indent_block(const std::string& block, int level = 1) {
  std::string tab;
  for (int i = 0; i < level; ++i) tab += kTab;
  std::string out = tab;
  std::istringstream lines(block);
  std::string line;
  bool first = true;
  while (std::getline(lines, line)) {
    if (!first) out += "\n" + tab;
    out += line;
    first = false;
  }
  return out;
}

// Python's str.strip() for the ASCII whitespace a description can hold.
std::string strip(const std::string& s) {
  const char* ws = " \t\n\r\v\f";
  const auto begin = s.find_first_not_of(ws);
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(ws) - begin + 1);
}

// A tensor's metadata as Polygraphy's MetadataTuple prints it: "[dtype=float32, shape=(1, 'N')]",
// the parts it does not know left out. Shapes are held as printed dims (ints, quoted names, -1).
struct Meta {
  std::optional<std::string> dtype;
  std::optional<std::vector<std::string>> shape;
};

std::string tuple_str(const std::vector<std::string>& items) {
  if (items.size() == 1) return fmt::format("({},)", items[0]);
  return fmt::format("({})", fmt::join(items, ", "));
}

std::string meta_str(const Meta& m) {
  std::vector<std::string> parts;
  if (m.dtype) parts.push_back("dtype=" + *m.dtype);
  if (m.shape) parts.push_back("shape=" + tuple_str(*m.shape));
  return parts.empty() ? "" : fmt::format("[{}]", fmt::join(parts, ", "));
}

// Polygraphy's DataType.from_dtype(onnx type): None (left out) for the types it does not map
// (undefined, complex).
std::optional<std::string> dtype_of(int32_t elem_type) {
  if (!dtype_is_valid(elem_type)) return std::nullopt;
  const auto t = static_cast<DataType>(elem_type);
  if (t == DataType::kUndefined || t == DataType::kComplex64 || t == DataType::kComplex128 ||
      t == DataType::kUInt4)
    return std::nullopt;
  return std::string(dtype_name(t));
}

// Polygraphy's get_shape of a value: names quoted, sizes, -1 for a dim with neither; a value
// of unknown rank (or not a tensor) has the shape ().
std::vector<std::string> shape_of(const ValueInfoProto& v) {
  std::vector<std::string> dims;
  for (const auto& d : v.type().tensor_type().shape().dim()) {
    if (d.has_dim_param())
      dims.push_back(py_repr(d.dim_param()));
    else if (d.has_dim_value())
      dims.push_back(std::to_string(d.dim_value()));
    else
      dims.push_back("-1");
  }
  return dims;
}

std::vector<std::string> shape_of(const TensorProto& t) {
  std::vector<std::string> dims;
  for (int64_t d : t.dims()) dims.push_back(std::to_string(d));
  return dims;
}

Meta meta_of(const ValueInfoProto& v) {
  return Meta{dtype_of(v.type().tensor_type().elem_type()), shape_of(v)};
}
Meta meta_of(const TensorProto& t) { return Meta{dtype_of(t.data_type()), shape_of(t)}; }

// A dtype Polygraphy would print as "None" in an initializer's header is named by Parity's
// name instead (complex64, ...): no "dtype=None" is ever printed.
std::string header_dtype(const TensorProto& t) {
  if (auto d = dtype_of(t.data_type())) return *d;
  if (dtype_is_valid(t.data_type()))
    return std::string(dtype_name(static_cast<DataType>(t.data_type())));
  return std::to_string(t.data_type());
}

// An insertion-ordered map of names to metadata, as Polygraphy's TensorMetadata (an
// OrderedDict): a name added again keeps its first position and takes the new value.
class MetaList {
 public:
  void add(const std::string& name, Meta meta) {
    auto [it, inserted] = index_.emplace(name, entries_.size());
    if (inserted)
      entries_.emplace_back(name, std::move(meta));
    else
      entries_[it->second].second = std::move(meta);
  }
  bool contains(const std::string& name) const { return index_.count(name) != 0; }
  const Meta& at(const std::string& name) const { return entries_[index_.at(name)].second; }
  size_t size() const { return entries_.size(); }
  // TensorMetadata's str: "{a [dtype=..., shape=...],\n b}".
  std::string str() const {
    std::vector<std::string> elems;
    for (const auto& [name, meta] : entries_) elems.push_back(strip(name + " " + meta_str(meta)));
    return fmt::format("{{{}}}", fmt::join(elems, ",\n "));
  }

 private:
  std::vector<std::pair<std::string, Meta>> entries_;
  std::map<std::string, size_t> index_;
};

// ONNX's AttributeProto.AttributeType names, for Polygraphy's "unsupported" warning.
std::string attribute_type_name(AttributeProto::AttributeType t) {
  return AttributeProto::AttributeType_Name(t);
}

class GraphPrinter {
 public:
  GraphPrinter(const DescribeOptions& options, const std::string& external_data_dir)
      : options_(options), external_(external_data_dir) {}

  // Polygraphy's str_from_onnx_graph.
  std::string graph(const GraphProto& g, std::map<std::string, Meta> tensors, int level) {
    MetaList initializers, inputs, outputs;
    for (const auto& t : g.initializer()) initializers.add(t.name(), meta_of(t));
    for (const auto& v : g.input())
      if (!initializers.contains(v.name())) inputs.add(v.name(), meta_of(v));
    for (const auto& v : g.output()) outputs.add(v.name(), meta_of(v));
    // A subgraph sees the enclosing graph's tensors; its own override them.
    for (const auto& v : g.value_info()) tensors[v.name()] = meta_of(v);
    for (const auto& t : g.initializer()) tensors[t.name()] = meta_of(t);
    for (const auto& v : g.input())
      if (!initializers.contains(v.name())) tensors[v.name()] = meta_of(v);
    for (const auto& v : g.output()) tensors[v.name()] = meta_of(v);

    const char* kind = level == 0 ? "Graph" : "Subgraph";
    std::string s;
    if (options_.attrs && !g.doc_string().empty())
      s += fmt::format("---- Docstring ----\n{}\n\n", g.doc_string());
    s += fmt::format("---- {} {} Input(s) ----\n{}\n\n", inputs.size(), kind, inputs.str());
    s += fmt::format("---- {} {} Output(s) ----\n{}\n\n", outputs.size(), kind, outputs.str());
    s += fmt::format("---- {} Initializer(s) ----\n", initializers.size());
    if (options_.weights) {
      for (const auto& t : g.initializer())
        s += fmt::format("Initializer | {} [dtype={}, shape=[{}]] | Values:\n{}\n\n", t.name(),
                         header_dtype(t), fmt::join(t.dims(), ", "), indent_block(values(t)));
      if (g.initializer().empty()) s += "{}\n\n";
    } else if (options_.layers) {
      s += initializers.str() + "\n\n";
    } else {
      s += "\n";
    }
    s += fmt::format("---- {} Node(s) ----\n", g.node_size());
    if (options_.layers)
      for (int i = 0; i < g.node_size(); ++i) s += node(g.node(i), i, initializers, tensors, level);
    return indent_block(s, level);
  }

 private:
  // str(onnx.numpy_helper.to_array(t)), or Polygraphy's placeholder (and its error, once)
  // when the values cannot be read.
  std::string values(const TensorProto& t) {
    try {
      if (options_.ignore_external_data && t.data_location() == TensorProto::EXTERNAL)
        fail("the model was loaded with --ignore-external-data: its external data is not read");
      const Tensor tensor = tensor_from_proto(t, TensorSource{&external_, false});
      return options_.format_values ? options_.format_values(tensor) : numpy_array_str(tensor);
    } catch (const Error& e) {
      logger().log_once(Severity::kError,
                        fmt::format("Failed to load weights.\nNote: Error was: {}", e.what()));
      return "<error: failed to load weights>";
    }
  }

  // Polygraphy's get_names_and_meta + util.str_from_layer's tensor list: one entry per name
  // (repeated names repeated), initializers of this graph marked.
  std::string names_block(const google::protobuf::RepeatedPtrField<std::string>& names,
                          const MetaList& initializers,
                          const std::map<std::string, Meta>& tensors) {
    std::vector<std::string> elems;
    for (const auto& name : names) {
      auto it = tensors.find(name);
      const std::string shown = initializers.contains(name) ? "Initializer | " + name : name;
      elems.push_back(strip(shown + " " + (it == tensors.end() ? "" : meta_str(it->second))));
    }
    return fmt::format("{{{}}}", fmt::join(elems, ",\n "));
  }

  // Polygraphy's util.str_from_layer, then the attributes.
  std::string node(const NodeProto& n, int index, const MetaList& initializers,
                   const std::map<std::string, Meta>& tensors, int level) {
    std::string s = fmt::format("Node {:<4} | {} [Op: {}]\n", index, n.name(), n.op_type());
    s += indent_block(names_block(n.input(), initializers, tensors));
    const bool both = n.input_size() > 0 && n.output_size() > 0;
    if (both) s += "\n";
    const int out_level = both ? 1 : 0;
    s +=
        indent_block(
            " -> " + strip(indent_block(names_block(n.output(), initializers, tensors), out_level)),
            out_level) +
        "\n";
    if (options_.attrs) {
      std::vector<std::string> lines;
      const std::string prefix = n.name().empty() ? "" : n.name() + ".";
      for (const auto& a : n.attribute())
        if (auto value = attribute(a, tensors, level))
          lines.push_back(indent_block(fmt::format("{}{} = {}", prefix, a.name(), *value)));
      if (!lines.empty()) s += indent_block("---- Attributes ----") + "\n";
      for (const auto& line : lines) s += line + "\n";
    }
    return s + "\n";
  }

  // The attribute's value as Polygraphy prints it; nullopt (with Polygraphy's warning) for the
  // types it skips.
  std::optional<std::string> attribute(const AttributeProto& a,
                                       const std::map<std::string, Meta>& tensors, int level) {
    switch (a.type()) {
      case AttributeProto::FLOAT:
        return format_repr(a.f());
      case AttributeProto::INT:
        return std::to_string(a.i());
      case AttributeProto::STRING:
        return a.s();
      case AttributeProto::TENSOR: {
        std::string s = fmt::format("Tensor: [dtype={}, shape=[{}]]", header_dtype(a.t()),
                                    fmt::join(a.t().dims(), ", "));
        if (options_.weights) s += " | Values:\n" + indent_block(values(a.t()));
        return s;
      }
      case AttributeProto::GRAPH:
        return "\n" + graph(a.g(), tensors, level + 2);
      case AttributeProto::FLOATS: {
        std::vector<std::string> parts;
        for (float f : a.floats()) parts.push_back(format_repr(f));
        return fmt::format("[{}]", fmt::join(parts, ", "));
      }
      case AttributeProto::INTS:
        return fmt::format("[{}]", fmt::join(a.ints(), ", "));
      case AttributeProto::STRINGS: {
        std::vector<std::string> parts;
        for (const auto& s : a.strings()) parts.push_back(py_repr(s));
        return fmt::format("[{}]", fmt::join(parts, ", "));
      }
      default:
        if (AttributeProto::AttributeType_IsValid(a.type()))
          logger().warning("Attribute of type {} is currently unsupported. Skipping attribute.",
                           attribute_type_name(a.type()));
        else
          logger().warning(
              "Attribute type: {} was not recognized. Was the graph generated with a newer IR "
              "version than the installed `onnx` package? Skipping attribute.",
              static_cast<int>(a.type()));
        return std::nullopt;
    }
  }

  const DescribeOptions& options_;
  ExternalDataStore external_;
};

}  // namespace

std::string describe_model(const ir::Model& model, const DescribeOptions& options) {
  if (!model.proto)
    fail(
        "failed to describe model '{}': it has no protobuf; only models loaded from ONNX can "
        "be described",
        model.graph.name);
  const ::onnx::ModelProto& proto = *model.proto;
  // Polygraphy's get_opset: only the empty domain is ONNX's ("ai.onnx" is another domain);
  // the others as a Python dict in file order, a repeated domain keeping its first place.
  std::string opset = "Unknown";
  std::vector<std::pair<std::string, int64_t>> others;
  for (const auto& op : proto.opset_import()) {
    if (op.domain().empty()) {
      opset = std::to_string(op.version());
      continue;
    }
    auto it = std::find_if(others.begin(), others.end(),
                           [&](const auto& o) { return o.first == op.domain(); });
    if (it == others.end())
      others.emplace_back(op.domain(), op.version());
    else
      it->second = op.version();
  }
  std::string s = fmt::format("Name: {} | ONNX Opset: {}", proto.graph().name(), opset);
  if (!others.empty()) {
    std::vector<std::string> items;
    for (const auto& [domain, version] : others)
      items.push_back(fmt::format("{}: {}", py_repr(domain), version));
    s += fmt::format(" | Other Opsets: {{{}}}", fmt::join(items, ", "));
  }
  s += "\n\n";
  return s + GraphPrinter(options, model.external_data_dir.empty() ? "." : model.external_data_dir)
                 .graph(proto.graph(), {}, 0);
}

}  // namespace parity::onnx_io
