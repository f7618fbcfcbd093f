#include "surgeon/fp16.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include "core/error.h"
#include "core/float_types.h"
#include "core/logger.h"
#include "onnx/external_data.h"
#include "onnx/proto_convert.h"
#include "surgeon/graph.h"

namespace parity::surgeon {

namespace {

constexpr int kFloat = ::onnx::TensorProto::FLOAT;
constexpr int kHalf = ::onnx::TensorProto::FLOAT16;

bool has_body(const ::onnx::NodeProto& node) {
  for (const auto& a : node.attribute())
    if (a.has_g() || a.graphs_size() > 0) return true;
  return false;
}

std::string normal_domain(const std::string& domain) { return domain == "ai.onnx" ? "" : domain; }

int64_t opset_of(const ::onnx::ModelProto& model, const std::string& domain) {
  for (const auto& op : model.opset_import())
    if (normal_domain(op.domain()) == domain) return op.version();
  return -1;
}

// A copy for type inference: the structure, with the data of large float initializers left out
// (inference needs their types and dims, not 2 GB of weights).
::onnx::ModelProto structure_copy(const ::onnx::ModelProto& model) {
  ::onnx::ModelProto copy;
  copy.set_ir_version(model.ir_version());
  *copy.mutable_opset_import() = model.opset_import();
  *copy.mutable_functions() = model.functions();
  const ::onnx::GraphProto& g = model.graph();
  ::onnx::GraphProto* out = copy.mutable_graph();
  out->set_name(g.name());
  *out->mutable_node() = g.node();
  *out->mutable_input() = g.input();
  *out->mutable_output() = g.output();
  *out->mutable_value_info() = g.value_info();
  for (const auto& t : g.initializer()) {
    int64_t numel = 1;
    for (int64_t d : t.dims()) numel *= d;
    if (numel <= 1024 && t.data_location() != ::onnx::TensorProto::EXTERNAL) {
      *out->add_initializer() = t;
      continue;
    }
    ::onnx::TensorProto* typed_only = out->add_initializer();  // type and dims, no data
    typed_only->set_name(t.name());
    typed_only->set_data_type(t.data_type());
    *typed_only->mutable_dims() = t.dims();
  }
  return copy;
}

// The element type of every top-level tensor that ONNX's shape inference can tell.
std::map<std::string, int> infer_elem_types(const ::onnx::ModelProto& model) {
  ::onnx::ModelProto copy = structure_copy(model);
  try {
    ::onnx::shape_inference::InferShapes(copy);
  } catch (const std::exception& e) {
    logger().warning(
        "ONNX shape inference failed ({}); types it did not reach are left as they are", e.what());
  }
  std::map<std::string, int> types;
  auto record = [&](const ::onnx::ValueInfoProto& v) {
    if (v.type().has_tensor_type() && v.type().tensor_type().elem_type() != 0)
      types[v.name()] = v.type().tensor_type().elem_type();
  };
  const auto& g = copy.graph();
  for (const auto& v : g.input()) record(v);
  for (const auto& v : g.output()) record(v);
  for (const auto& v : g.value_info()) record(v);
  for (const auto& t : g.initializer()) types[t.name()] = t.data_type();
  return types;
}

// Whether input (or output) `index` of a node with this schema may hold float16.
bool slot_allows_half(const ::onnx::OpSchema& schema, bool input, int index) {
  const auto& params = input ? schema.inputs() : schema.outputs();
  if (params.empty()) return false;
  const size_t i = static_cast<size_t>(index);
  if (i >= params.size() &&
      params.back().GetOption() != ::onnx::OpSchema::FormalParameterOption::Variadic)
    return false;
  const std::string& type_str = params[std::min(i, params.size() - 1)].GetTypeStr();
  for (const auto& c : schema.typeConstraintParams())
    if (c.type_param_str == type_str)
      return std::find(c.allowed_type_strs.begin(), c.allowed_type_strs.end(), "tensor(float16)") !=
             c.allowed_type_strs.end();
  return type_str == "tensor(float16)";
}

// Float32 -> float16 of a tensor, clamped as onnxmltools clamps (inf and NaN kept).
void tensor_to_half(::onnx::TensorProto& t, const Fp16Options& options) {
  onnx_io::ExternalDataStore store(options.external_data_dir);
  const Tensor values = onnx_io::tensor_from_proto(t, onnx_io::TensorSource{&store, false});
  const float* src = values.data<float>();
  const float lo = static_cast<float>(options.min_positive_val);
  const float hi = static_cast<float>(options.max_finite_val);
  std::string raw(static_cast<size_t>(values.numel()) * 2, '\0');
  for (int64_t i = 0; i < values.numel(); ++i) {
    float v = src[i];
    if (v > 0 && v < lo) v = lo;
    if (v < 0 && v > -lo) v = -lo;
    if (std::isfinite(v) && v > hi) v = hi;
    if (std::isfinite(v) && v < -hi) v = -hi;
    const uint16_t bits = float16::from_float(v).bits;
    raw[2 * i] = static_cast<char>(bits & 0xff);
    raw[2 * i + 1] = static_cast<char>(bits >> 8);
  }
  t.clear_float_data();
  t.clear_external_data();
  t.clear_data_location();
  t.set_data_type(kHalf);
  t.set_raw_data(std::move(raw));
}

// Renames reads of `from` inside a body (and the bodies in it) that see the outer value.
void rename_outer_reads(::onnx::GraphProto& body, const std::string& from, const std::string& to) {
  for (const auto& in : body.input())
    if (in.name() == from) return;  // shadowed
  for (const auto& t : body.initializer())
    if (t.name() == from) return;
  for (const auto& node : body.node())
    for (const auto& out : node.output())
      if (out == from) return;
  for (auto& node : *body.mutable_node()) {
    for (auto& in : *node.mutable_input())
      if (in == from) in = to;
    for (auto& a : *node.mutable_attribute()) {
      if (a.has_g()) rename_outer_reads(*a.mutable_g(), from, to);
      for (auto& g : *a.mutable_graphs()) rename_outer_reads(g, from, to);
    }
  }
  for (auto& out : *body.mutable_output())
    if (out.name() == from) out.set_name(to);
}

// A float tensor of the top-level graph: the dtype it is produced in, the dtypes it is read in,
// and the names of its two versions once converted.
struct FloatTensor {
  int home = kHalf;
  std::set<int> needed;
  int producer = -1;  // node index; -1 for graph inputs and initializers
  std::optional<int> output_needs;
  std::map<int, std::string> names;  // dtype -> name of that version
  std::string cast_name;
};

// Types the converted model with ONNX's strict inference: a mismatch is an Error.
void check_types(const ::onnx::ModelProto& model) {
  ::onnx::ModelProto copy = structure_copy(model);
  ::onnx::shape_inference::InferShapes(copy, ::onnx::OpSchemaRegistry::Instance(),
                                       ::onnx::ShapeInferenceOptions(true, 1, false));
}

}  // namespace

const std::set<std::string>& default_fp16_op_block_list() {
  static const std::set<std::string> ops = {
      "ArrayFeatureExtractor", "Binarizer", "CastMap", "CategoryMapper", "DictVectorizer",
      "FeatureVectorizer", "Imputer", "LabelEncoder", "LinearClassifier", "LinearRegressor",
      "Normalizer", "OneHotEncoder", "RandomUniformLike", "SVMClassifier", "SVMRegressor", "Scaler",
      "TreeEnsembleClassifier", "TreeEnsembleRegressor", "ZipMap", "NonMaxSuppression", "TopK",
      "RoiAlign", "Resize", "Range", "CumSum", "Min", "Max", "Upsample",
      // Parity's own addition: ONNX defines it by a function whose constants are float32, so
      // ONNX's type inference refuses it in float16.
      "MeanVarianceNormalization"};
  return ops;
}

size_t convert_to_fp16(::onnx::ModelProto& model, const Fp16Options& options) {
  logger().info("Converting float tensors to float16");
  bool original_types_check = true;
  try {
    check_types(model);
  } catch (const std::exception&) {
    original_types_check = false;  // nothing to hold the result to
  }
  const std::map<std::string, int> types = infer_elem_types(model);
  ::onnx::GraphProto& graph = *model.mutable_graph();
  const GraphIndex index(graph);
  auto is_float = [&](const std::string& name) {
    auto it = types.find(name);
    return !name.empty() && it != types.end() && it->second == kFloat;
  };

  // Which nodes run in float16, and what each of their float slots holds.
  std::map<std::string, FloatTensor> tensors;
  std::vector<std::vector<int>> input_dtype(graph.node_size());
  for (int i = 0; i < graph.node_size(); ++i) {
    const ::onnx::NodeProto& node = graph.node(i);
    const std::string domain = normal_domain(node.domain());
    const ::onnx::OpSchema* schema = nullptr;
    const int64_t opset = opset_of(model, domain);
    if (domain.empty() && opset > 0)
      schema = ::onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset), domain);
    const bool converted =
        schema && !has_body(node) && !default_fp16_op_block_list().count(node.op_type()) &&
        !options.op_block_list.count(node.op_type()) && !options.node_block_list.count(node.name());
    input_dtype[i].assign(node.input_size(), 0);
    for (int j = 0; j < node.input_size(); ++j) {
      if (!is_float(node.input(j))) continue;
      const int dtype = converted && slot_allows_half(*schema, true, j) ? kHalf : kFloat;
      input_dtype[i][j] = dtype;
      tensors[node.input(j)].needed.insert(dtype);
    }
    for (const auto& name : index.reads(i)) {  // values read from inside a body
      if (std::find(node.input().begin(), node.input().end(), name) != node.input().end()) continue;
      if (is_float(name)) tensors[name].needed.insert(kFloat);
    }
    for (int j = 0; j < node.output_size(); ++j) {
      if (!is_float(node.output(j))) continue;
      FloatTensor& t = tensors[node.output(j)];
      t.home = converted && slot_allows_half(*schema, false, j) ? kHalf : kFloat;
      t.producer = i;
    }
  }
  std::set<std::string> graph_inputs;
  for (const auto& in : graph.input()) {
    graph_inputs.insert(in.name());
    if (is_float(in.name())) tensors[in.name()].home = options.keep_io_types ? kFloat : kHalf;
  }
  for (const auto& init : graph.initializer()) {
    if (graph_inputs.count(init.name()) || init.data_type() != kFloat) continue;
    FloatTensor& t = tensors[init.name()];
    t.home = t.needed == std::set<int>{kHalf} ? kHalf : kFloat;
  }
  for (const auto& out : graph.output())
    if (is_float(out.name())) {
      FloatTensor& t = tensors[out.name()];
      t.output_needs = options.keep_io_types ? kFloat : kHalf;
      t.needed.insert(*t.output_needs);
    }

  // Names of the versions: the graph output keeps its name in the dtype the output needs,
  // any other tensor in the dtype it is produced in.
  std::set<std::string> names;
  for (const auto& name : index.tensor_names()) names.insert(name);
  std::set<std::string> node_names;
  for (const auto& node : graph.node()) node_names.insert(node.name());
  auto unique = [](std::set<std::string>& taken, std::string name) {
    std::string candidate = name;
    for (int k = 1; taken.count(candidate); ++k) candidate = fmt::format("{}_{}", name, k);
    taken.insert(candidate);
    return candidate;
  };
  std::map<std::string, int> input_position, output_position;
  for (int i = 0; i < graph.input_size(); ++i) input_position[graph.input(i).name()] = i;
  for (int i = 0; i < graph.output_size(); ++i) output_position[graph.output(i).name()] = i;
  for (auto& [name, t] : tensors) {
    const int named = t.output_needs ? *t.output_needs : t.home;
    t.names[named] = name;
    const int other = named == kHalf ? kFloat : kHalf;
    const bool two_versions = t.needed.count(other) || t.home == other;
    if (!two_versions) continue;
    std::string base = fmt::format("{}_{}", name, other == kHalf ? "fp16" : "fp32");
    std::string cast = fmt::format("{}_cast_to_{}", name, t.home == kHalf ? "fp32" : "fp16");
    if (t.home == kFloat && input_position.count(name) && other == kHalf) {
      base = fmt::format("graph_input_cast_{}", input_position[name]);
      cast = fmt::format("graph_input_cast{}", input_position[name]);
    } else if (t.output_needs && t.home != *t.output_needs) {
      base = fmt::format("graph_output_cast_{}", output_position[name]);
      cast = fmt::format("graph_output_cast{}", output_position[name]);
    }
    t.names[other] = unique(names, base);
    t.cast_name = unique(node_names, cast);
  }

  // Rewrite the nodes.
  for (int i = 0; i < graph.node_size(); ++i) {
    ::onnx::NodeProto& node = *graph.mutable_node(i);
    for (int j = 0; j < node.input_size(); ++j)
      if (input_dtype[i][j]) node.set_input(j, tensors[node.input(j)].names[input_dtype[i][j]]);
    for (auto& a : *node.mutable_attribute()) {  // bodies read float32 versions
      auto rename_in = [&](::onnx::GraphProto& body) {
        for (const auto& name : outer_reads(body)) {
          auto it = tensors.find(name);
          if (it == tensors.end() || it->second.names[kFloat] == name) continue;
          rename_outer_reads(body, name, it->second.names[kFloat]);
        }
      };
      if (a.has_g()) rename_in(*a.mutable_g());
      for (auto& g : *a.mutable_graphs()) rename_in(g);
    }
    bool half_out = false;
    for (int j = 0; j < node.output_size(); ++j) {
      auto it = tensors.find(node.output(j));
      if (it == tensors.end() || it->second.producer != i) continue;
      half_out = half_out || it->second.home == kHalf;
      node.set_output(j, it->second.names[it->second.home]);
    }
    if (!half_out) continue;
    // Ops whose output type comes from an attribute rather than from their inputs.
    const std::string& op = node.op_type();
    bool has_value = false, has_dtype = false;
    for (auto& a : *node.mutable_attribute()) {
      if (op == "Cast" && a.name() == "to" && a.type() == ::onnx::AttributeProto::STRING &&
          a.s() == "FLOAT")
        a.set_s("FLOAT16");  // Cast before opset 6 names its type
      else if (op == "Cast" && a.name() == "to" && a.i() == kFloat)
        a.set_i(kHalf);
      if (a.name() == "dtype" || a.name() == "output_datatype") {
        has_dtype = true;
        if (a.i() == kFloat) a.set_i(kHalf);
      }
      if ((op == "Constant" || op == "ConstantOfShape") && a.name() == "value") {
        has_value = true;
        if (a.t().data_type() == kFloat) tensor_to_half(*a.mutable_t(), options);
      }
      if (op == "Constant" && (a.name() == "value_float" || a.name() == "value_floats")) {
        ::onnx::TensorProto t;
        t.set_data_type(kFloat);
        if (a.name() == "value_float") {
          t.add_float_data(a.f());
        } else {
          t.add_dims(a.floats_size());
          for (float f : a.floats()) t.add_float_data(f);
        }
        tensor_to_half(t, options);
        a.Clear();
        a.set_name("value");
        a.set_type(::onnx::AttributeProto::TENSOR);
        *a.mutable_t() = std::move(t);
      }
    }
    if (op == "ConstantOfShape" && !has_value) {  // the default value is a float32 zero
      auto* a = node.add_attribute();
      a->set_name("value");
      a->set_type(::onnx::AttributeProto::TENSOR);
      a->mutable_t()->set_data_type(kHalf);
      a->mutable_t()->add_dims(1);
      a->mutable_t()->set_raw_data(std::string(2, '\0'));
    }
    // Ops whose output is float32 when their type attribute is left out.
    const bool window = op == "HannWindow" || op == "HammingWindow" || op == "BlackmanWindow";
    if ((op == "RandomNormal" || op == "RandomUniform" || window) && !has_dtype) {
      auto* a = node.add_attribute();
      a->set_name(window ? "output_datatype" : "dtype");
      a->set_type(::onnx::AttributeProto::INT);
      a->set_i(kHalf);
    }
  }

  // Initializers, graph inputs and outputs, value_info.
  for (auto& init : *graph.mutable_initializer()) {
    auto it = tensors.find(init.name());
    if (it != tensors.end() && it->second.home == kHalf && init.data_type() == kFloat)
      tensor_to_half(init, options);
  }
  auto set_type = [&](::onnx::ValueInfoProto& v) {
    auto it = tensors.find(v.name());
    if (it == tensors.end() || !v.type().has_tensor_type()) return;
    for (const auto& [dtype, name] : it->second.names)
      if (name == v.name()) v.mutable_type()->mutable_tensor_type()->set_elem_type(dtype);
  };
  for (auto& v : *graph.mutable_input()) set_type(v);
  for (auto& v : *graph.mutable_output()) set_type(v);
  for (auto& v : *graph.mutable_value_info()) set_type(v);

  // The new versions get value_info with their element type: the Cast of old opsets has no
  // type inference, and a reader of the model should not have to guess.
  for (const auto& [name, t] : tensors)
    for (const auto& [dtype, version] : t.names) {
      if (version == name) continue;
      auto* v = graph.add_value_info();
      v->set_name(version);
      v->mutable_type()->mutable_tensor_type()->set_elem_type(dtype);
    }

  // The Casts, each right after the producer of what it reads (first for inputs/initializers).
  // Cast before opset 6 takes its type by name.
  const bool named_cast_type = opset_of(model, "") > 0 && opset_of(model, "") < 6;
  std::vector<std::vector<::onnx::NodeProto>> casts_after(graph.node_size() + 1);
  size_t count = 0;
  for (const auto& [name, t] : tensors) {
    if (t.cast_name.empty()) continue;
    const int to = t.home == kHalf ? kFloat : kHalf;
    ::onnx::NodeProto cast;
    cast.set_name(t.cast_name);
    cast.set_op_type("Cast");
    cast.add_input(t.names.at(t.home));
    cast.add_output(t.names.at(to));
    auto* a = cast.add_attribute();
    a->set_name("to");
    if (named_cast_type) {
      a->set_type(::onnx::AttributeProto::STRING);
      a->set_s(to == kHalf ? "FLOAT16" : "FLOAT");
    } else {
      a->set_type(::onnx::AttributeProto::INT);
      a->set_i(to);
    }
    casts_after[t.producer + 1].push_back(std::move(cast));
    ++count;
  }
  google::protobuf::RepeatedPtrField<::onnx::NodeProto> nodes;
  for (auto& cast : casts_after[0]) *nodes.Add() = std::move(cast);
  for (int i = 0; i < graph.node_size(); ++i) {
    *nodes.Add() = std::move(*graph.mutable_node(i));
    for (auto& cast : casts_after[i + 1]) *nodes.Add() = std::move(cast);
  }
  graph.mutable_node()->Swap(&nodes);

  if (original_types_check) {
    try {
      check_types(model);
    } catch (const std::exception& e) {
      fail(
          "failed to convert the model to float16: ONNX's type inference refuses the converted "
          "model ({}); the rule is that every tensor keeps one element type. Keep the node in "
          "float32 (Fp16Options::node_block_list) or report this model",
          e.what());
    }
  }
  logger().verbose("Inserted {} Cast nodes", count);
  return count;
}

}  // namespace parity::surgeon
