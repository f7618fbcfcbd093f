#include "onnx/describe.h"
#include "core/mx_types.h"

#include <map>
#include <sstream>

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

namespace parity::onnx_io {

namespace {

// Polygraphy's util.indent_block: every line (trailing newline dropped) prefixed by tabs.
std::string indent_block(const std::string& block, int level = 1) {
  const std::string tab(static_cast<size_t>(level), '\t');
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

std::string strip(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t\n");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t\n") - begin + 1);
}

// Python's repr(float): shortest round-trip digits, always with a '.' or an exponent.
std::string py_float(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eni") == std::string::npos) s += ".0";
  return s;
}

std::string py_str_list(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const auto& s : items) quoted.push_back(fmt::format("'{}'", s));
  return fmt::format("[{}]", fmt::join(quoted, ", "));
}

double element_as_double(const Tensor& t, size_t i) {
  const void* p = t.raw_data();
  if (t.dtype() == kDtypeFloat8E8M0) return static_cast<const float8e8m0*>(p)[i].to_float();
  if (t.dtype() == kDtypeFloat4E2M1) return float4e2m1_get(static_cast<const uint8_t*>(p), i);
  switch (t.dtype()) {
    case DataType::kFloat32:
      return static_cast<const float*>(p)[i];
    case DataType::kFloat64:
      return static_cast<const double*>(p)[i];
    case DataType::kFloat16:
      return static_cast<const float16*>(p)[i].to_float();
    case DataType::kBFloat16:
      return static_cast<const bfloat16*>(p)[i].to_float();
    case DataType::kFloat8E4M3FN:
      return static_cast<const float8e4m3fn*>(p)[i].to_float();
    case DataType::kFloat8E4M3FNUZ:
      return static_cast<const float8e4m3fnuz*>(p)[i].to_float();
    case DataType::kFloat8E5M2:
      return static_cast<const float8e5m2*>(p)[i].to_float();
    case DataType::kFloat8E5M2FNUZ:
      return static_cast<const float8e5m2fnuz*>(p)[i].to_float();
    case DataType::kInt8:
      return static_cast<const int8_t*>(p)[i];
    case DataType::kInt16:
      return static_cast<const int16_t*>(p)[i];
    case DataType::kInt32:
      return static_cast<const int32_t*>(p)[i];
    case DataType::kInt64:
      return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case DataType::kUInt8:
      return static_cast<const uint8_t*>(p)[i];
    case DataType::kUInt16:
      return static_cast<const uint16_t*>(p)[i];
    case DataType::kUInt32:
      return static_cast<const uint32_t*>(p)[i];
    case DataType::kUInt64:
      return static_cast<double>(static_cast<const uint64_t*>(p)[i]);
    case DataType::kBool:
      return static_cast<const uint8_t*>(p)[i] != 0;
    case DataType::kInt4:
      return int4_get(static_cast<const uint8_t*>(p), i);
    case DataType::kUInt4:
      return uint4_get(static_cast<const uint8_t*>(p), i);
    default:
      return 0;
  }
}

std::string element_str(const Tensor& t, size_t i) {
  switch (t.dtype()) {
    case DataType::kString:
      return fmt::format("'{}'", static_cast<const std::string*>(t.raw_data())[i]);
    case DataType::kBool:
      return element_as_double(t, i) != 0 ? "True" : "False";
    case DataType::kComplex64: {
      const float* c = static_cast<const float*>(t.raw_data()) + 2 * i;
      return fmt::format("({}{:+}j)", c[0], c[1]);
    }
    case DataType::kComplex128: {
      const double* c = static_cast<const double*>(t.raw_data()) + 2 * i;
      return fmt::format("({}{:+}j)", c[0], c[1]);
    }
    default:
      if (dtype_is_float(t.dtype())) return py_float(element_as_double(t, i));
      return fmt::format("{}", static_cast<int64_t>(element_as_double(t, i)));
  }
}

// The values as nested lists, one innermost list per line (used when no formatter is given).
void nested_values(const Tensor& t, size_t dim, size_t& index, std::string& out) {
  if (t.rank() == 0) {
    out += element_str(t, index++);
    return;
  }
  out += "[";
  const int64_t n = t.shape()[dim];
  for (int64_t k = 0; k < n; ++k) {
    if (k) out += dim + 1 == t.shape().size() ? ", " : ",\n" + std::string(dim + 1, ' ');
    if (dim + 1 == t.shape().size())
      out += element_str(t, index++);
    else
      nested_values(t, dim + 1, index, out);
  }
  out += "]";
}

std::string values_str(const Tensor& t, const DescribeOptions& options) {
  if (options.format_values) return options.format_values(t);
  std::string out;
  size_t index = 0;
  nested_values(t, 0, index, out);
  return out;
}

struct Meta {
  std::optional<DataType> dtype;
  std::optional<DimList> shape;
};

// MetadataTuple's str: "[dtype=float32, shape=(1, 'N')]", parts that are unknown left out.
std::string meta_str(const Meta& m) {
  std::vector<std::string> parts;
  if (m.dtype) parts.push_back(fmt::format("dtype={}", dtype_name(*m.dtype)));
  if (m.shape) parts.push_back(fmt::format("shape={}", dims_str(*m.shape)));
  return parts.empty() ? "" : fmt::format("[{}]", fmt::join(parts, ", "));
}

Meta meta_of(const ir::ValueType& t) {
  if (t.kind != ir::ValueType::Kind::kTensor) return {};
  return Meta{t.elem_type, t.shape};
}

Meta meta_of(const Tensor& t) { return Meta{t.dtype(), dims_from_shape(t.shape())}; }

using MetaList = std::vector<std::pair<std::string, Meta>>;

std::string metadata_block(const MetaList& list) {
  std::vector<std::string> elems;
  for (const auto& [name, meta] : list) elems.push_back(strip(name + " " + meta_str(meta)));
  return fmt::format("{{{}}}", fmt::join(elems, ",\n "));
}

class GraphPrinter {
 public:
  explicit GraphPrinter(const DescribeOptions& options) : options_(options) {}

  std::string graph(const ir::Graph& g, std::map<std::string, Meta> tensors, int level,
                    const std::string& doc_string) {
    MetaList inputs, outputs, initializers;
    for (const auto& v : g.inputs) inputs.emplace_back(v.name, meta_of(v.type));
    for (const auto& v : g.outputs) outputs.emplace_back(v.name, meta_of(v.type));
    for (const auto& [name, t] : g.initializers) initializers.emplace_back(name, meta_of(t));
    for (const auto& [name, type] : g.value_info) tensors[name] = meta_of(type);
    for (const auto& list : {initializers, inputs, outputs})
      for (const auto& [name, meta] : list) tensors[name] = meta;

    const char* kind = level == 0 ? "Graph" : "Subgraph";
    std::string s;
    if (options_.attrs && !doc_string.empty())
      s += fmt::format("---- Docstring ----\n{}\n\n", doc_string);
    s += fmt::format("---- {} {} Input(s) ----\n{}\n\n", inputs.size(), kind,
                     metadata_block(inputs));
    s += fmt::format("---- {} {} Output(s) ----\n{}\n\n", outputs.size(), kind,
                     metadata_block(outputs));
    s += fmt::format("---- {} Initializer(s) ----\n", initializers.size());
    if (options_.weights) {
      for (const auto& [name, t] : g.initializers)
        s += fmt::format("Initializer | {} [dtype={}, shape=[{}]] | Values:\n{}\n\n", name,
                         dtype_name(t.dtype()), fmt::join(t.shape(), ", "),
                         indent_block(values_str(t, options_)));
      if (g.initializers.empty()) s += "{}\n\n";
    } else if (options_.layers) {
      s += metadata_block(initializers) + "\n\n";
    } else {
      s += "\n";
    }
    s += fmt::format("---- {} Node(s) ----\n", g.nodes.size());
    if (options_.layers)
      for (size_t i = 0; i < g.nodes.size(); ++i) s += node(g, g.nodes[i], i, tensors, level);
    return indent_block(s, level);
  }

 private:
  std::string names_block(const ir::Graph& g, const std::vector<std::string>& names,
                          const std::map<std::string, Meta>& tensors) {
    MetaList list;
    for (const auto& n : names) {
      auto it = tensors.find(n);
      list.emplace_back(g.initializers.count(n) ? "Initializer | " + n : n,
                        it == tensors.end() ? Meta{} : it->second);
    }
    return metadata_block(list);
  }

  // Polygraphy's util.str_from_layer, then the attributes.
  std::string node(const ir::Graph& g, const ir::Node& n, size_t index,
                   const std::map<std::string, Meta>& tensors, int level) {
    std::string s = fmt::format("Node {:<4} | {} [Op: {}]\n", index, n.name, n.op_type);
    s += indent_block(names_block(g, n.inputs, tensors));
    const bool both = !n.inputs.empty() && !n.outputs.empty();
    if (both) s += "\n";
    const int out_level = both ? 1 : 0;
    s += indent_block(" -> " + strip(indent_block(names_block(g, n.outputs, tensors), out_level)),
                      out_level) +
         "\n";
    if (options_.attrs) {
      std::vector<std::string> lines;
      for (const auto& a : n.attributes)
        if (auto value = attribute(a, tensors, level))
          lines.push_back(indent_block(fmt::format("{}.{} = {}", n.name, a.name, *value)));
      if (!lines.empty()) s += indent_block("---- Attributes ----") + "\n";
      for (const auto& line : lines) s += line + "\n";
    }
    return s + "\n";
  }

  // The attribute as Polygraphy prints it; nullopt for the types Polygraphy skips.
  std::optional<std::string> attribute(const ir::Attribute& a,
                                       const std::map<std::string, Meta>& tensors, int level) {
    using T = ir::Attribute::Type;
    switch (a.type) {
      case T::kFloat:
        return py_float(a.f);
      case T::kInt:
        return std::to_string(a.i);
      case T::kString:
        return a.s;
      case T::kTensor: {
        std::string s = fmt::format("Tensor: [dtype={}, shape=[{}]]", dtype_name(a.t.dtype()),
                                    fmt::join(a.t.shape(), ", "));
        if (options_.weights) s += " | Values:\n" + indent_block(values_str(a.t, options_));
        return s;
      }
      case T::kGraph:
        return "\n" + graph(*a.g, tensors, level + 2, "");
      case T::kFloats: {
        std::vector<std::string> parts;
        for (float f : a.floats) parts.push_back(py_float(f));
        return fmt::format("[{}]", fmt::join(parts, ", "));
      }
      case T::kInts:
        return fmt::format("[{}]", fmt::join(a.ints, ", "));
      case T::kStrings:
        return py_str_list(a.strings);
      default:
        return std::nullopt;
    }
  }

  const DescribeOptions& options_;
};

}  // namespace

std::string describe_model(const ir::Model& model, const DescribeOptions& options) {
  std::string opset = "Unknown";
  std::vector<std::string> others;
  auto add_opset = [&](const std::string& domain, int64_t version) {
    if (domain.empty())
      opset = std::to_string(version);
    else
      others.push_back(fmt::format("'{}': {}", domain, version));
  };
  if (model.proto) {  // the file's order, as Polygraphy prints the dict
    for (const auto& op : model.proto->opset_import())
      add_opset(op.domain() == "ai.onnx" ? "" : op.domain(), op.version());
  } else {
    for (const auto& [domain, version] : model.opsets) add_opset(domain, version);
  }
  std::string s = fmt::format("Name: {} | ONNX Opset: {}", model.graph.name, opset);
  if (!others.empty()) s += fmt::format(" | Other Opsets: {{{}}}", fmt::join(others, ", "));
  s += "\n\n";
  const std::string doc = model.proto ? model.proto->graph().doc_string() : "";
  return s + GraphPrinter(options).graph(model.graph, {}, 0, doc);
}

}  // namespace parity::onnx_io
