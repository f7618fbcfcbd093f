#include "onnx/proto_convert.h"

#include <bit>
#include <cstring>
#include <set>

#include <onnx/onnx_pb.h>

#include "core/error.h"
#include "core/mx_types.h"

namespace parity::onnx_io {

static_assert(std::endian::native == std::endian::little,
              "ONNX raw data is little-endian; Parity reads it in place");

namespace {

using ::onnx::TensorProto;

DataType checked_dtype(int32_t elem_type, const std::string& tensor) {
  if (elem_type == 0 || !dtype_is_valid(elem_type))
    fail(
        "failed to load tensor '{}' with data_type {}: the element type must be one of "
        "ONNX's TensorProto.DataType values 1-22",
        tensor, elem_type);
  return static_cast<DataType>(elem_type);
}

Shape checked_shape(const TensorProto& p) {
  Shape shape(p.dims().begin(), p.dims().end());
  int64_t numel = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(numel, d, &numel) || numel > (int64_t{1} << 48))
      fail(
          "failed to load tensor '{}' with shape {}: every dimension must be 0 or more and "
          "the element count must fit in memory",
          p.name(), shape_str(shape));
  }
  return shape;
}

// The typed field that holds `dt`'s values, by onnx.proto's rules, and how many it holds.
std::pair<int, const char*> typed_field(const TensorProto& p, DataType dt) {
  switch (dt) {
    case DataType::kFloat32:
    case DataType::kComplex64:
      return {p.float_data_size(), "float_data"};
    case DataType::kFloat64:
    case DataType::kComplex128:
      return {p.double_data_size(), "double_data"};
    case DataType::kInt64:
      return {p.int64_data_size(), "int64_data"};
    case DataType::kUInt32:
    case DataType::kUInt64:
      return {p.uint64_data_size(), "uint64_data"};
    case DataType::kString:
      return {p.string_data_size(), "string_data"};
    default:
      return {p.int32_data_size(), "int32_data"};
  }
}

// Checked before allocating, so that a huge shape with little data is an error, not an
// attempt to allocate the shape.
void check_typed_count(const TensorProto& p, DataType dt, const Shape& shape) {
  const auto n = static_cast<size_t>(shape_numel(shape));
  size_t expected = n;
  if (dt == DataType::kComplex64 || dt == DataType::kComplex128) expected = 2 * n;
  if (dtype_is_4bit(dt)) expected = (n + 1) / 2;
  auto [count, field] = typed_field(p, dt);
  if (static_cast<size_t>(count) != expected)
    fail("failed to load tensor '{}' with {} values in {}: shape {} of {} needs {}", p.name(),
         count, field, shape_str(shape), dtype_name(dt), expected);
}

// Copies typed-field values into `dst`, converting each with `convert`.
template <typename Dst, typename Field, typename Convert>
void copy_field(const Field& field, Dst* dst, Convert convert) {
  for (int i = 0; i < field.size(); ++i) dst[i] = convert(field.Get(i));
}

// The typed fields, following onnx.proto: small integer, bool, 16-bit and 8-bit float types
// sit in int32_data (floats as their bit patterns; int4 as one packed byte per int32).
Tensor tensor_from_typed_fields(const TensorProto& p, DataType dt, const Shape& shape) {
  check_typed_count(p, dt, shape);
  Tensor t(dt, shape);
  const size_t n = static_cast<size_t>(t.numel());
  auto* raw = t.raw_data();
  // The MX types sit in int32_data like the other 8- and 4-bit types.
  DataType storage = dt;
  if (dt == kDtypeFloat8E8M0) storage = DataType::kUInt8;
  if (dt == kDtypeFloat4E2M1) storage = DataType::kUInt4;
  switch (storage) {
    case DataType::kFloat32:
    case DataType::kComplex64:
      copy_field(p.float_data(), static_cast<float*>(raw), [](float v) { return v; });
      break;
    case DataType::kFloat64:
    case DataType::kComplex128:
      copy_field(p.double_data(), static_cast<double*>(raw), [](double v) { return v; });
      break;
    case DataType::kInt64:
      copy_field(p.int64_data(), static_cast<int64_t*>(raw), [](int64_t v) { return v; });
      break;
    case DataType::kUInt64:
      copy_field(p.uint64_data(), static_cast<uint64_t*>(raw), [](uint64_t v) { return v; });
      break;
    case DataType::kUInt32:
      copy_field(p.uint64_data(), static_cast<uint32_t*>(raw),
                 [](uint64_t v) { return static_cast<uint32_t>(v); });
      break;
    case DataType::kInt32:
      copy_field(p.int32_data(), static_cast<int32_t*>(raw), [](int32_t v) { return v; });
      break;
    case DataType::kInt16:
    case DataType::kUInt16:
    case DataType::kFloat16:
    case DataType::kBFloat16:
      copy_field(p.int32_data(), static_cast<uint16_t*>(raw),
                 [](int32_t v) { return static_cast<uint16_t>(v); });
      break;
    case DataType::kBool:
      copy_field(p.int32_data(), static_cast<uint8_t*>(raw),
                 [](int32_t v) { return static_cast<uint8_t>(v != 0); });
      break;
    case DataType::kInt8:
    case DataType::kUInt8:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
      copy_field(p.int32_data(), static_cast<uint8_t*>(raw),
                 [](int32_t v) { return static_cast<uint8_t>(v); });
      break;
    case DataType::kInt4:
    case DataType::kUInt4:
      copy_field(p.int32_data(), static_cast<uint8_t*>(raw),
                 [](int32_t v) { return static_cast<uint8_t>(v); });
      if (n % 2) static_cast<uint8_t*>(raw)[n / 2] &= 0x0F;  // the unused high nibble
      break;
    case DataType::kString:
      copy_field(p.string_data(), static_cast<std::string*>(raw),
                 [](const std::string& v) { return v; });
      break;
    default:
      fail("failed to load tensor '{}' with data_type {}: unknown element type", p.name(),
           static_cast<int>(dt));
  }
  return t;
}

Tensor tensor_from_raw(const TensorProto& p, DataType dt, const Shape& shape) {
  if (dt == DataType::kString)
    fail(
        "failed to load tensor '{}' with raw_data of type string: string tensors must use "
        "string_data",
        p.name());
  const std::string& raw = p.raw_data();
  const size_t needed = dtype_storage_bytes(dt, static_cast<size_t>(shape_numel(shape)));
  if (raw.size() != needed)
    fail("failed to load tensor '{}' with {} bytes of raw_data: shape {} of {} needs {} bytes",
         p.name(), raw.size(), shape_str(shape), dtype_name(dt), needed);
  Tensor t(dt, shape);
  if (!raw.empty()) std::memcpy(t.raw_data(), raw.data(), raw.size());
  return t;
}

}  // namespace

Tensor tensor_from_proto(const TensorProto& p, const TensorSource& source) {
  const DataType dt = checked_dtype(p.data_type(), p.name());
  const Shape shape = checked_shape(p);
  if (p.has_segment())
    fail(
        "failed to load tensor '{}' with segment [{}, {}]: segmented tensors are only used in "
        "streams, a model's tensors must be whole",
        p.name(), p.segment().begin(), p.segment().end());
  if (p.data_location() == TensorProto::EXTERNAL) {
    if (source.ignore_external_data) return zero_tensor(dt, shape);
    if (!source.external)
      fail(
          "failed to load tensor '{}' with external data: a lone tensor has no folder to read "
          "external data from; embed the data in the tensor",
          p.name());
    return source.external->load(p, dt, shape);
  }
  if (p.has_raw_data()) return tensor_from_raw(p, dt, shape);
  return tensor_from_typed_fields(p, dt, shape);
}

Tensor tensor_from_sparse_proto(const ::onnx::SparseTensorProto& p, const TensorSource& source) {
  const std::string& name = p.values().name();
  Tensor values = tensor_from_proto(p.values(), source);
  Tensor indices = tensor_from_proto(p.indices(), source);
  Shape shape(p.dims().begin(), p.dims().end());
  for (int64_t d : shape)
    if (d < 0)
      fail("failed to load sparse tensor '{}' with shape {}: every dimension must be 0 or more",
           name, shape_str(shape));
  // The dense form is allocated whole: a huge shape with a few values is refused here, by
  // name, before anything is allocated.
  Tensor dense;
  try {
    dense = Tensor(values.dtype(), shape);
  } catch (const Error& e) {
    fail("failed to load sparse tensor '{}' with dims {} as a dense tensor: {}", name,
         shape_str(shape), e.what());
  }
  const int64_t nnz = values.numel();
  const int64_t numel = dense.numel();
  if (indices.dtype() != DataType::kInt64 ||
      !(indices.shape() == Shape{nnz} ||
        indices.shape() == Shape{nnz, static_cast<int64_t>(shape.size())}))
    fail(
        "failed to load sparse tensor '{}' with indices of type {} and shape {}: indices must "
        "be int64 of shape ({},) or ({}, {})",
        name, dtype_name(indices.dtype()), shape_str(indices.shape()), nnz, nnz, shape.size());
  const bool linear = indices.rank() == 1;
  const int64_t* idx = indices.data<int64_t>();
  const size_t bits = dtype_bits(values.dtype());
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t flat = 0;
    if (linear) {
      flat = idx[k];
    } else {
      for (size_t d = 0; d < shape.size(); ++d) {
        int64_t i = idx[k * static_cast<int64_t>(shape.size()) + static_cast<int64_t>(d)];
        if (i < 0 || i >= shape[d]) flat = -1;
        if (flat >= 0) flat = flat * shape[d] + i;  // < numel, checked above
      }
    }
    if (flat < 0 || flat >= numel)
      fail(
          "failed to load sparse tensor '{}' with value {} at an index outside shape {}: "
          "indices must address elements of the dense shape",
          name, k, shape_str(shape));
    if (values.dtype() == DataType::kString) {
      static_cast<std::string*>(dense.raw_data())[flat] =
          static_cast<const std::string*>(values.raw_data())[k];
    } else if (bits == 4) {
      uint4_set(static_cast<uint8_t*>(dense.raw_data()), static_cast<size_t>(flat),
                uint4_get(static_cast<const uint8_t*>(values.raw_data()), static_cast<size_t>(k)));
    } else {
      const size_t size = bits / 8;
      std::memcpy(static_cast<uint8_t*>(dense.raw_data()) + flat * size,
                  static_cast<const uint8_t*>(values.raw_data()) + k * size, size);
    }
  }
  return dense;
}

ir::ValueType value_type_from_proto(const ::onnx::TypeProto& t) {
  ir::ValueType v;
  switch (t.value_case()) {
    case ::onnx::TypeProto::kTensorType: {
      const auto& tt = t.tensor_type();
      std::optional<DataType> elem;
      if (tt.elem_type() != 0 && dtype_is_valid(tt.elem_type()))
        elem = static_cast<DataType>(tt.elem_type());
      std::optional<DimList> dims;
      if (tt.has_shape()) {
        dims.emplace();
        for (const auto& d : tt.shape().dim()) {
          if (d.has_dim_value() && d.dim_value() >= 0)
            dims->push_back(Dim::fixed(d.dim_value()));
          else if (d.has_dim_param() && !d.dim_param().empty())
            dims->push_back(Dim::symbolic(d.dim_param()));
          else
            dims->push_back(Dim::unknown());
        }
      }
      return ir::ValueType::tensor(elem, std::move(dims));
    }
    case ::onnx::TypeProto::kSequenceType:
      v.kind = ir::ValueType::Kind::kSequence;
      if (t.sequence_type().has_elem_type())
        v.inner =
            std::make_shared<ir::ValueType>(value_type_from_proto(t.sequence_type().elem_type()));
      return v;
    case ::onnx::TypeProto::kOptionalType:
      v.kind = ir::ValueType::Kind::kOptional;
      if (t.optional_type().has_elem_type())
        v.inner =
            std::make_shared<ir::ValueType>(value_type_from_proto(t.optional_type().elem_type()));
      return v;
    case ::onnx::TypeProto::kMapType:
      v.kind = ir::ValueType::Kind::kMap;
      if (t.map_type().key_type() != 0 && dtype_is_valid(t.map_type().key_type()))
        v.elem_type = static_cast<DataType>(t.map_type().key_type());
      if (t.map_type().has_value_type())
        v.inner = std::make_shared<ir::ValueType>(value_type_from_proto(t.map_type().value_type()));
      return v;
    default:  // sparse tensors: no backend of Parity produces them
      return v;
  }
}

namespace {

using AType = ir::Attribute::Type;

// ONNX's AttributeType values mapped to the IR's; sparse tensors become dense tensors.
std::optional<AType> attribute_type(int onnx_type) {
  using P = ::onnx::AttributeProto;
  switch (onnx_type) {
    case P::UNDEFINED:
      return AType::kUndefined;
    case P::FLOAT:
      return AType::kFloat;
    case P::INT:
      return AType::kInt;
    case P::STRING:
      return AType::kString;
    case P::TENSOR:
    case P::SPARSE_TENSOR:
      return AType::kTensor;
    case P::GRAPH:
      return AType::kGraph;
    case P::TYPE_PROTO:
      return AType::kTypeProto;
    case P::FLOATS:
      return AType::kFloats;
    case P::INTS:
      return AType::kInts;
    case P::STRINGS:
      return AType::kStrings;
    case P::TENSORS:
    case P::SPARSE_TENSORS:
      return AType::kTensors;
    case P::GRAPHS:
      return AType::kGraphs;
    case P::TYPE_PROTOS:
      return AType::kTypeProtos;
    default:
      return std::nullopt;
  }
}

// Files written by old exporters may leave `type` unset; the populated field tells it.
AType infer_attribute_type(const ::onnx::AttributeProto& a) {
  if (a.has_f()) return AType::kFloat;
  if (a.has_i()) return AType::kInt;
  if (a.has_s()) return AType::kString;
  if (a.has_t() || a.has_sparse_tensor()) return AType::kTensor;
  if (a.has_g()) return AType::kGraph;
  if (a.has_tp()) return AType::kTypeProto;
  if (a.floats_size()) return AType::kFloats;
  if (a.ints_size()) return AType::kInts;
  if (a.strings_size()) return AType::kStrings;
  if (a.tensors_size() || a.sparse_tensors_size()) return AType::kTensors;
  if (a.graphs_size()) return AType::kGraphs;
  if (a.type_protos_size()) return AType::kTypeProtos;
  return AType::kUndefined;
}

std::shared_ptr<ir::Graph> subgraph_from_proto(const ::onnx::GraphProto& g, ir::Graph& parent,
                                               const TensorSource& source) {
  auto sub = std::make_shared<ir::Graph>();
  sub->parent = &parent;
  graph_from_proto(g, *sub, source);
  return sub;
}

ir::Attribute attribute_from_proto(const ::onnx::AttributeProto& a, const ir::Node& node,
                                   ir::Graph& graph, const TensorSource& source) {
  ir::Attribute out;
  out.name = a.name();
  const std::optional<AType> type = attribute_type(a.type());
  if (!type)
    fail(
        "failed to load attribute '{}' of node '{}' ({}) with type {}: the type must be one of "
        "ONNX's AttributeProto.AttributeType values 0-14",
        a.name(), node.name, node.op_type, static_cast<int>(a.type()));
  out.type = *type == AType::kUndefined ? infer_attribute_type(a) : *type;
  switch (out.type) {
    case AType::kFloat:
      out.f = a.f();
      break;
    case AType::kInt:
      out.i = a.i();
      break;
    case AType::kString:
      out.s = a.s();
      break;
    case AType::kTensor:
      out.t = a.has_sparse_tensor() ? tensor_from_sparse_proto(a.sparse_tensor(), source)
                                    : tensor_from_proto(a.t(), source);
      break;
    case AType::kGraph:
      out.g = subgraph_from_proto(a.g(), graph, source);
      break;
    case AType::kTypeProto:
      out.type_protos.push_back(value_type_from_proto(a.tp()));
      break;
    case AType::kFloats:
      out.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case AType::kInts:
      out.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case AType::kStrings:
      out.strings.assign(a.strings().begin(), a.strings().end());
      break;
    case AType::kTensors:
      for (const auto& t : a.tensors()) out.tensors.push_back(tensor_from_proto(t, source));
      for (const auto& t : a.sparse_tensors())
        out.tensors.push_back(tensor_from_sparse_proto(t, source));
      break;
    case AType::kGraphs:
      for (const auto& g : a.graphs()) out.graphs.push_back(subgraph_from_proto(g, graph, source));
      break;
    case AType::kTypeProtos:
      for (const auto& tp : a.type_protos()) out.type_protos.push_back(value_type_from_proto(tp));
      break;
    case AType::kUndefined:
      break;  // an attribute with no value: kept so kernels can say so
  }
  return out;
}

ir::ValueInfo value_info_from_proto(const ::onnx::ValueInfoProto& v) {
  ir::ValueInfo out;
  out.name = v.name();
  if (v.has_type()) out.type = value_type_from_proto(v.type());
  return out;
}

}  // namespace

void graph_from_proto(const ::onnx::GraphProto& proto, ir::Graph& out, const TensorSource& source) {
  out.name = proto.name();
  for (const auto& t : proto.initializer()) {
    if (out.initializers.count(t.name()))
      fail(
          "failed to load initializer '{}' of graph '{}': the name is used by another "
          "initializer; initializer names must be unique",
          t.name(), out.name);
    out.initializers.emplace(t.name(), tensor_from_proto(t, source));
  }
  for (const auto& s : proto.sparse_initializer()) {
    const std::string& name = s.values().name();
    if (out.initializers.count(name))
      fail(
          "failed to load sparse initializer '{}' of graph '{}': the name is used by another "
          "initializer; initializer names must be unique",
          name, out.name);
    out.initializers.emplace(name, tensor_from_sparse_proto(s, source));
  }
  for (const auto& v : proto.input())
    if (!out.initializers.count(v.name())) out.inputs.push_back(value_info_from_proto(v));
  for (const auto& v : proto.output()) out.outputs.push_back(value_info_from_proto(v));
  for (const auto& v : proto.value_info())
    if (v.has_type()) out.value_info[v.name()] = value_type_from_proto(v.type());

  out.nodes.reserve(proto.node_size());
  for (int i = 0; i < proto.node_size(); ++i) {
    const auto& np = proto.node(i);
    ir::Node node;
    node.op_type = np.op_type();
    node.name = np.name().empty() ? node.op_type + "_" + std::to_string(i) : np.name();
    node.domain = np.domain() == "ai.onnx" ? "" : np.domain();
    node.inputs.assign(np.input().begin(), np.input().end());
    node.outputs.assign(np.output().begin(), np.output().end());
    node.attributes.reserve(np.attribute_size());
    for (const auto& a : np.attribute())
      node.attributes.push_back(attribute_from_proto(a, node, out, source));
    out.nodes.push_back(std::move(node));
  }
}

void toposort_recursive(ir::Graph& graph) {
  ir::toposort(graph);
  for (auto& node : graph.nodes)
    for (auto& a : node.attributes) {
      if (a.g) toposort_recursive(*a.g);
      for (auto& g : a.graphs) toposort_recursive(*g);
    }
}

}  // namespace parity::onnx_io
