#include "surgeon/sparsity.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/dtype.h"
#include "core/float_types.h"
#include "core/logger.h"
#include "onnx/external_data.h"
#include "onnx/proto_convert.h"

namespace parity::surgeon {

namespace {

// Polygraphy's walk: which initializers are read along which axis by MatMul, Gemm and Conv.
class CandidateWalk {
 public:
  explicit CandidateWalk(const ::onnx::GraphProto& graph) : graph_(graph) {
    for (const auto& t : graph.initializer()) initializers_[t.name()] = &t;
    for (const auto& node : graph.node())
      for (const auto& out : node.output()) producers_[out] = &node;
  }

  // (name, axis) in first-found order; a later find of the same weight updates its axis.
  std::vector<PruneCandidate> run() {
    for (const auto& node : graph_.node()) {
      if (node.op_type() == "MatMul" && node.input_size() >= 2) {
        track(node.input(0), 1);
        track(node.input(1), 0);
      } else if (node.op_type() == "Gemm" && node.input_size() >= 2) {
        bool trans_a = false, trans_b = false;
        for (const auto& a : node.attribute()) {
          if (a.name() == "transA") trans_a = a.i() == 1;
          if (a.name() == "transB") trans_b = a.i() == 1;
        }
        track(node.input(0), trans_a ? 0 : 1);
        track(node.input(1), trans_b ? 1 : 0);
      } else if (node.op_type() == "Conv" && node.input_size() >= 2) {
        track(node.input(1), 1);
      }
    }
    return found_;
  }

  const ::onnx::TensorProto* initializer(const std::string& name) const {
    auto it = initializers_.find(name);
    return it == initializers_.end() ? nullptr : it->second;
  }

 private:
  void track(const std::string& name, int64_t axis) {
    if (initializers_.count(name)) {
      for (auto& c : found_)
        if (c.name == name) {
          c.axis = axis;
          return;
        }
      found_.push_back({name, axis});
      return;
    }
    auto it = producers_.find(name);
    if (it == producers_.end()) return;
    const ::onnx::NodeProto& producer = *it->second;
    static const std::set<std::string> look_through = {"QuantizeLinear", "DequantizeLinear",
                                                       "TRT_FP8QuantizeLinear",
                                                       "TRT_FP8DequantizeLinear", "Cast"};
    static const std::set<std::string> stops = {
        "LayerNormalization", "Reshape", "Concat", "Slice", "Shape",
        "Unsqueeze",          "Gather",  "Mul",    "Add"};
    if (look_through.count(producer.op_type())) {
      if (producer.input_size() > 0) track(producer.input(0), axis);
    } else if (producer.op_type() == "Transpose") {
      for (const auto& a : producer.attribute()) {
        if (a.name() != "perm") continue;
        auto p = std::find(a.ints().begin(), a.ints().end(), axis);
        if (p == a.ints().end()) {
          logger().warning("({}) produced by {} has no axis {} in its <perm>; not tracked", name,
                           producer.name(), axis);
          return;
        }
        track(producer.input(0), p - a.ints().begin());
        return;
      }
      logger().warning("{} doesn't have <perm> attribute!", producer.op_type());
    } else if (!stops.count(producer.op_type())) {
      logger().warning("({}) produced by {} type: {} is unsupported!", name, producer.name(),
                       producer.op_type());
    }
  }

  const ::onnx::GraphProto& graph_;
  std::map<std::string, const ::onnx::TensorProto*> initializers_;
  std::map<std::string, const ::onnx::NodeProto*> producers_;
  std::vector<PruneCandidate> found_;
};

bool is_pruneable_type(int dtype) {
  return dtype == ::onnx::TensorProto::FLOAT || dtype == ::onnx::TensorProto::FLOAT16 ||
         dtype == ::onnx::TensorProto::BFLOAT16;
}

double magnitude(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat32:
      return std::fabs(t.data<float>()[i]);
    case DataType::kFloat16:
      return std::fabs(t.data<float16>()[i].to_float());
    case DataType::kBFloat16:
      return std::fabs(t.data<bfloat16>()[i].to_float());
    default:
      return 0;
  }
}

// Visits each group of 4 values along `axis`: fn(indices of the 4 values in the flat buffer).
template <typename F>
void for_each_group(const Shape& dims, int64_t axis, F fn) {
  int64_t outer = 1, stride = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= dims[i];
  for (size_t i = axis + 1; i < dims.size(); ++i) stride *= dims[i];
  const int64_t length = dims[axis];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < stride; ++i)
      for (int64_t p = 0; p < length; p += 4) {
        int64_t idx[4];
        for (int k = 0; k < 4; ++k) idx[k] = o * length * stride + (p + k) * stride + i;
        if (!fn(idx)) return;
      }
}

// The two smallest magnitudes of a group (the first of equal ones), as positions 0..3.
std::pair<int, int> two_smallest(const double (&v)[4]) {
  int a = 0;
  for (int k = 1; k < 4; ++k)
    if (v[k] < v[a]) a = k;
  int b = a == 0 ? 1 : 0;
  for (int k = 0; k < 4; ++k)
    if (k != a && v[k] < v[b]) b = k;
  return {a, b};
}

Tensor load(const ::onnx::TensorProto& proto, const std::string& dir) {
  onnx_io::ExternalDataStore store(dir);
  return onnx_io::tensor_from_proto(proto, onnx_io::TensorSource{&store, false});
}

}  // namespace

std::vector<PruneCandidate> prune_candidates(const ::onnx::ModelProto& model,
                                             const std::set<std::string>& skip) {
  logger().verbose("Walking graph to collect weights candidates.");
  CandidateWalk walk(model.graph());
  const std::vector<PruneCandidate> found = walk.run();
  logger().verbose("Collected {} weights candidates.", found.size());
  std::vector<PruneCandidate> eligible;
  for (const auto& c : found) {
    const ::onnx::TensorProto& t = *walk.initializer(c.name);
    if (skip.count(c.name)) {
      logger().warning("Skipping tensor: {} since it was marked to skip pruning", c.name);
      continue;
    }
    if (!is_pruneable_type(t.data_type())) {
      logger().warning("Skipping tensor: {} due to unsupported type: {}", c.name,
                       dtype_name(static_cast<DataType>(t.data_type())));
      continue;
    }
    if (c.axis >= t.dims_size()) {
      logger().verbose("Skipping {} since it has no axis {} (rank {})", c.name, c.axis,
                       t.dims_size());
      continue;
    }
    if (t.dims(static_cast<int>(c.axis)) % 4 != 0) {
      logger().verbose(
          "Skipping {} since the length of axis {} ({} in {}) is not a multiple of 4. ", c.name,
          c.axis, t.dims(static_cast<int>(c.axis)),
          shape_str(Shape(t.dims().begin(), t.dims().end())));
      continue;
    }
    eligible.push_back(c);
  }
  logger().extra_verbose("Skipped {} of {} tensor(s) since they are not eligible for pruning. ",
                         found.size() - eligible.size(), found.size());
  logger().info("Found: {} weight tensor(s) eligible for pruning.", eligible.size());
  return eligible;
}

std::set<std::string> check_sparsity(const ::onnx::ModelProto& model,
                                     const std::string& external_data_dir) {
  const std::vector<PruneCandidate> candidates = prune_candidates(model);
  logger().start("Checking the sparsity pattern of {} tensors.", candidates.size());
  std::map<std::string, const ::onnx::TensorProto*> initializers;
  for (const auto& t : model.graph().initializer()) initializers[t.name()] = &t;
  std::set<std::string> sparse;
  for (const auto& c : candidates) {
    const Tensor t = load(*initializers.at(c.name), external_data_dir);
    bool is_sparse = true;
    for_each_group(t.shape(), c.axis, [&](const int64_t(&idx)[4]) {
      int zeros = 0;
      for (int64_t i : idx) zeros += magnitude(t, i) == 0;
      is_sparse = zeros >= 2;
      return is_sparse;
    });
    if (is_sparse) {
      logger().info("Found sparse tensor: {}", c.name);
      sparse.insert(c.name);
    } else {
      logger().warning("Found non-sparse tensor: {}", c.name);
    }
  }
  logger().finish("Finished checking {} tensors. ", candidates.size());
  return sparse;
}

size_t prune_to_2_4(::onnx::ModelProto& model, const std::string& external_data_dir,
                    const std::set<std::string>& skip) {
  const std::vector<PruneCandidate> candidates = prune_candidates(model, skip);
  logger().start("Pruning {} tensors.", candidates.size());
  std::map<std::string, ::onnx::TensorProto*> initializers;
  for (auto& t : *model.mutable_graph()->mutable_initializer()) initializers[t.name()] = &t;
  for (const auto& c : candidates) {
    ::onnx::TensorProto& proto = *initializers.at(c.name);
    Tensor t = load(proto, external_data_dir).clone();
    const size_t width = dtype_storage_bytes(t.dtype(), 1);
    char* bytes = static_cast<char*>(t.raw_data());
    for_each_group(t.shape(), c.axis, [&](const int64_t(&idx)[4]) {
      double v[4];
      for (int k = 0; k < 4; ++k) v[k] = magnitude(t, idx[k]);
      const auto [a, b] = two_smallest(v);
      std::fill_n(bytes + idx[a] * width, width, 0);
      std::fill_n(bytes + idx[b] * width, width, 0);
      return true;
    });
    proto.clear_float_data();
    proto.clear_int32_data();
    proto.clear_external_data();
    proto.clear_data_location();
    proto.set_raw_data(std::string(bytes, t.nbytes()));
  }
  logger().finish("Finished pruning {} tensors. ", candidates.size());
  // Polygraphy rebuilds the model here; Parity edited it in place, but says what it says.
  if (candidates.empty())
    logger().verbose("No need to build new model object");
  else
    logger().info("Replacing weights to build new model object...");
  return candidates.size();
}

}  // namespace parity::surgeon
