#include "surgeon/weight_strip.h"

#include <cmath>
#include <cstring>
#include <map>
#include <vector>

#include <onnx/defs/schema.h>

#include "comparator/data_loader.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/float_types.h"
#include "core/logger.h"
#include "surgeon/sparsity.h"

namespace parity::surgeon {

namespace {

constexpr const char* kWeightless = "TRT_WEIGHTLESS";

// The input positions at which a DequantizeLinear or Transpose output makes a pattern.
const std::map<std::string, std::set<int>>& base_positions() {
  static const std::map<std::string, std::set<int>> positions = {
      {"Conv", {0}}, {"ConvTranspose", {0}}, {"Gemm", {0, 1, 2}}, {"MatMul", {0, 1}}};
  return positions;
}

// Whether `node` is one of the single-op patterns (an op with its allowed input counts).
bool is_base_op(const ::onnx::NodeProto& node, bool with_gather_slice) {
  const std::string& op = node.op_type();
  const int n = node.input_size();
  if (op == "Conv" || op == "ConvTranspose" || op == "Gemm") return n == 2 || n == 3;
  if (op == "MatMul") return n == 2;
  if (!with_gather_slice) return false;
  if (op == "Gather") return n == 2;
  if (op == "Slice") return n >= 3 && n <= 5;
  return false;
}

class Stripper {
 public:
  Stripper(const ::onnx::GraphProto& graph, const std::set<std::string>& exclude)
      : exclude_(exclude) {
    for (const auto& t : graph.initializer()) initializers_[t.name()] = &t;
    for (const auto& node : graph.node())
      for (int i = 0; i < node.input_size(); ++i) consumers_[node.input(i)].push_back({&node, i});
  }

  // The initializers to strip, from the patterns and the plugins.
  std::set<std::string> select(const ::onnx::GraphProto& graph) {
    for (const auto& node : graph.node()) {
      if (is_base_op(node, true) || feeds_base_op(node)) add_inputs(node);
      if (!::onnx::OpSchemaRegistry::Schema(node.op_type(), "")) add_inputs(node);  // a plugin
    }
    return selected_;
  }

  std::set<std::string> excluded_not_found() const {
    std::set<std::string> missing;
    for (const auto& name : exclude_)
      if (!excluded_found_.count(name)) missing.insert(name);
    return missing;
  }

 private:
  struct Use {
    const ::onnx::NodeProto* node;
    int index;
  };

  // Q -> DQ -> base op, or Transpose -> base op, at one of the base op's pattern positions.
  bool feeds_base_op(const ::onnx::NodeProto& node) const {
    auto into_base = [&](const std::string& tensor) {
      auto it = consumers_.find(tensor);
      if (it == consumers_.end()) return false;
      for (const Use& use : it->second) {
        auto p = base_positions().find(use.node->op_type());
        if (p != base_positions().end() && is_base_op(*use.node, false) &&
            p->second.count(use.index))
          return true;
      }
      return false;
    };
    if (node.op_type() == "Transpose" && node.input_size() == 1 && node.output_size() >= 1)
      return into_base(node.output(0));
    if (node.op_type() != "QuantizeLinear" || node.input_size() < 2 || node.input_size() > 3 ||
        node.output_size() < 1)
      return false;
    auto it = consumers_.find(node.output(0));
    if (it == consumers_.end()) return false;
    for (const Use& use : it->second)
      if (use.node->op_type() == "DequantizeLinear" && use.index == 0 &&
          use.node->input_size() >= 2 && use.node->input_size() <= 3 &&
          use.node->output_size() >= 1 && into_base(use.node->output(0)))
        return true;
    return false;
  }

  void add_inputs(const ::onnx::NodeProto& node) {
    for (int i = 0; i < node.input_size(); ++i)
      if (!skip(node, node.input(i), i)) {
        logger().verbose("Stripping initializer {} to the {} op.", node.input(i), node.op_type());
        selected_.insert(node.input(i));
      }
  }

  bool skip(const ::onnx::NodeProto& node, const std::string& name, int index) {
    const std::string& op = node.op_type();
    if ((op == "QuantizeLinear" || op == "Slice") && index != 0) return true;
    auto it = initializers_.find(name);
    if (it == initializers_.end()) return true;
    const ::onnx::TensorProto& t = *it->second;
    if (t.data_type() == ::onnx::TensorProto::UINT8) return true;
    if (exclude_.count(name)) {
      excluded_found_.insert(name);
      return true;
    }
    static const std::map<std::string, int64_t> thresholds = {
        {"Conv", 1}, {"ConvTranspose", 1}, {"Gather", 1024}, {"Gemm", 1}, {"Slice", 1024}};
    int64_t numel = 1;
    for (int64_t d : t.dims()) numel *= d;
    auto th = thresholds.find(op);
    return th != thresholds.end() && numel < th->second;
  }

  std::map<std::string, const ::onnx::TensorProto*> initializers_;
  std::map<std::string, std::vector<Use>> consumers_;
  const std::set<std::string>& exclude_;
  std::set<std::string> excluded_found_, selected_;
};

// NumPy's legacy standard normal (RandomState.randn): Marsaglia's polar method, the second
// value of each pair kept for the next call.
class Gauss {
 public:
  explicit Gauss(uint32_t seed) : random_(seed) {}
  double next() {
    if (has_cached_) {
      has_cached_ = false;
      return cached_;
    }
    double x1, x2, r2;
    do {
      x1 = 2.0 * random_.random_sample() - 1.0;
      x2 = 2.0 * random_.random_sample() - 1.0;
      r2 = x1 * x1 + x2 * x2;
    } while (r2 >= 1.0 || r2 == 0.0);
    const double f = std::sqrt(-2.0 * std::log(r2) / r2);
    cached_ = f * x1;
    has_cached_ = true;
    return f * x2;
  }

 private:
  NumpyRandomState random_;
  double cached_ = 0;
  bool has_cached_ = false;
};

// `count` values of `dtype` from doubles, as NumPy's astype converts them.
std::string proxy_bytes(int onnx_dtype, int64_t count, Gauss& gauss, const std::string& name) {
  const DataType dtype = static_cast<DataType>(onnx_dtype);
  std::string out(dtype_storage_bytes(dtype, static_cast<size_t>(count)), '\0');
  auto put = [&](auto value, int64_t i) {
    std::memcpy(out.data() + i * sizeof(value), &value, sizeof(value));
  };
  for (int64_t i = 0; i < count; ++i) {
    const double v = gauss.next();
    switch (dtype) {
      case DataType::kFloat32:
        put(static_cast<float>(v), i);
        break;
      case DataType::kFloat64:
        put(v, i);
        break;
      case DataType::kFloat16:
        put(float16::from_double(v).bits, i);
        break;
      case DataType::kBFloat16:
        put(bfloat16::from_double(v).bits, i);
        break;
      case DataType::kInt8:
        put(static_cast<int8_t>(v), i);
        break;
      case DataType::kInt16:
        put(static_cast<int16_t>(v), i);
        break;
      case DataType::kInt32:
        put(static_cast<int32_t>(v), i);
        break;
      case DataType::kInt64:
        put(static_cast<int64_t>(v), i);
        break;
      default:
        fail(
            "failed to reconstruct initializer '{}' of dtype {}: proxy weights are made for "
            "float and signed integer types only",
            name, dtype_name(dtype));
    }
  }
  return out;
}

}  // namespace

size_t strip_weights(::onnx::ModelProto& model, const std::set<std::string>& exclude,
                     const std::string& external_data_dir) {
  logger().start("Beginning weight stripping...");
  logger().warning(
      "The model is expected to be constant folded to successfully capture all weights "
      "eligible for stripping");
  logger().info("Querying Sparse Initializers in the model");
  const std::set<std::string> sparse = check_sparsity(model, external_data_dir);
  Stripper stripper(model.graph(), exclude);
  const std::set<std::string> selected = stripper.select(model.graph());
  size_t stripped = 0;
  for (auto& t : *model.mutable_graph()->mutable_initializer()) {
    if (!selected.count(t.name())) continue;
    logger().verbose("Stripping initializer {}", t.name());
    t.clear_raw_data();
    t.clear_float_data();
    t.clear_int32_data();
    t.clear_int64_data();
    t.clear_double_data();
    t.clear_uint64_data();
    t.clear_string_data();
    t.clear_external_data();
    t.clear_data_location();
    t.set_doc_string(std::string(kWeightless) + "/" + (sparse.count(t.name()) ? "SPARSE_2_4" : ""));
    ++stripped;
  }
  const std::set<std::string> missing = stripper.excluded_not_found();
  if (!missing.empty()) {
    std::vector<std::string> quoted;
    for (const auto& name : missing) quoted.push_back("'" + name + "'");
    logger().warning(
        "The following weights provided by the user to skip stripping were not found in the "
        "model: {{{}}}.",
        fmt::join(quoted, ", "));
  }
  if (stripped)
    model.set_doc_string(model.doc_string().empty() ? kWeightless
                                                    : model.doc_string() + "-" + kWeightless);
  logger().finish("Finished stripping {} weights", stripped);
  return stripped;
}

size_t reconstruct_weights(::onnx::ModelProto& model, uint32_t seed) {
  logger().start("Beginning weight reconstruction...");
  std::set<std::string> skip;
  size_t reconstructed = 0;
  Gauss gauss(seed);
  for (auto& t : *model.mutable_graph()->mutable_initializer()) {
    const std::string& doc = t.doc_string();
    if (doc.find(kWeightless) == std::string::npos) {
      skip.insert(t.name());
      continue;
    }
    const size_t slash = doc.find('/');
    if (slash == std::string::npos || doc.find('/', slash + 1) != std::string::npos)
      fail(
          "failed to reconstruct initializer '{}': its doc_string '{}' is not a weight-strip "
          "marker; the rule is 'TRT_WEIGHTLESS/' or 'TRT_WEIGHTLESS/SPARSE_2_4'",
          t.name(), doc);
    if (doc.substr(slash + 1).empty()) skip.insert(t.name());
    if (!t.raw_data().empty() || t.float_data_size() || t.int32_data_size() ||
        t.int64_data_size() || t.double_data_size() || t.external_data_size())
      fail(
          "failed to reconstruct initializer '{}': it is marked {} but holds data; the rule is "
          "that only stripped initializers are marked",
          t.name(), doc);
    int64_t numel = 1;
    for (int64_t d : t.dims()) numel *= d;
    logger().verbose("Reconstructing weights for the {} initializer", t.name());
    t.set_raw_data(proxy_bytes(t.data_type(), numel, gauss, t.name()));
    ++reconstructed;
  }
  logger().info("Calling Sparsity Pruner to prune selected weights");
  prune_to_2_4(model, ".", skip);
  logger().finish("Finished reconstructing {} weights", reconstructed);
  return reconstructed;
}

}  // namespace parity::surgeon
