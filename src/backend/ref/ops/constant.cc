// Constant and ConstantOfShape. A Constant's tensor is built once, when the node is prepared,
// and every run hands out the same buffer (values are never written once made).
#include <algorithm>
#include <array>
#include <cstring>

#include "backend/ref/ops/movement_util.h"
#include "core/mx_types.h"

namespace parity::ref {
namespace {

// The attribute forms of Constant and the first opset that allows each.
struct ConstantForm {
  const char* name;
  ir::Attribute::Type type;
  int64_t since;
};
constexpr std::array<ConstantForm, 8> kConstantForms = {{
    {"value", ir::Attribute::Type::kTensor, 1},
    {"sparse_value", ir::Attribute::Type::kTensor, 11},  // densified by the loader
    {"value_float", ir::Attribute::Type::kFloat, 12},
    {"value_floats", ir::Attribute::Type::kFloats, 12},
    {"value_int", ir::Attribute::Type::kInt, 12},
    {"value_ints", ir::Attribute::Type::kInts, 12},
    {"value_string", ir::Attribute::Type::kString, 12},
    {"value_strings", ir::Attribute::Type::kStrings, 12},
}};

Tensor tensor_from_form(const ir::Attribute& a) {
  auto length = [](const auto& v) { return Shape{static_cast<int64_t>(v.size())}; };
  switch (a.type) {
    case ir::Attribute::Type::kTensor:
      return a.t;
    case ir::Attribute::Type::kFloat:
      return Tensor::scalar<float>(a.f);
    case ir::Attribute::Type::kFloats:
      return Tensor::from_vector<float>(length(a.floats), a.floats);
    case ir::Attribute::Type::kInt:
      return Tensor::scalar<int64_t>(a.i);
    case ir::Attribute::Type::kInts:
      return Tensor::from_vector<int64_t>(length(a.ints), a.ints);
    case ir::Attribute::Type::kString:
      return Tensor::scalar<std::string>(a.s);
    default:
      return Tensor::from_vector<std::string>(length(a.strings), a.strings);
  }
}

class Constant : public Kernel {
 public:
  explicit Constant(const OpContext& ctx) {
    if (ctx.num_inputs() != 0 || ctx.num_outputs() != 1)
      ctx.fail("it has {} inputs and {} outputs; Constant takes none and makes 1", ctx.num_inputs(),
               ctx.num_outputs());
    std::vector<std::string> allowed;
    const ir::Attribute* chosen = nullptr;
    for (const ConstantForm& form : kConstantForms) {
      if (ctx.opset() >= form.since) allowed.push_back(form.name);
      const ir::Attribute* a = ctx.attr(form.name);
      if (!a) continue;
      if (ctx.opset() < form.since)
        ctx.fail(
            "attribute '{}' is not allowed at opset {}: it exists from opset {}; valid "
            "attributes: [{}]",
            form.name, ctx.opset(), form.since, fmt::join(allowed, ", "));
      if (a->type != form.type)
        ctx.fail("attribute '{}' has type {}; it must be of type {}", form.name,
                 ir::attribute_type_name(a->type), ir::attribute_type_name(form.type));
      if (chosen)
        ctx.fail("attributes '{}' and '{}' are both set; exactly one value attribute must be",
                 chosen->name, a->name);
      chosen = a;
    }
    if (!chosen)
      ctx.fail("no value attribute is set; exactly one of [{}] must be", fmt::join(allowed, ", "));
    value_ = tensor_from_form(*chosen);
  }

  Outputs run(const Inputs&, RunContext&) override { return {value_}; }

 private:
  Tensor value_;
};
// Versions 1 and 9 (value), 11 (sparse_value), 12 (value_float(s)/int(s)/string(s)), 13, 19,
// 21, 23 (new element types): one kernel that checks which attributes the opset allows.
PARITY_REF_OP("", "Constant", 1, kOpsetMax, Constant);

// The first opset of ConstantOfShape at which an element type may be the fill value.
int64_t constant_of_shape_since(DataType t) {
  if (t == kDtypeFloat4E2M1) return 23;
  if (t == kDtypeFloat8E8M0) return 24;
  switch (t) {
    case DataType::kBFloat16:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
      return 20;
    case DataType::kInt4:
    case DataType::kUInt4:
      return 21;
    case DataType::kString:
    case DataType::kComplex64:
    case DataType::kComplex128:
    case DataType::kUndefined:
      return kOpsetMax + 1;  // never
    default:
      return 9;
  }
}

class ConstantOfShape : public Kernel {
 public:
  explicit ConstantOfShape(const OpContext& ctx)
      : value_(ctx.has_attr("value") ? ctx.attr_tensor("value") : Tensor::scalar<float>(0)) {
    if (value_.numel() != 1)
      ctx.fail("attribute 'value' has shape {}; it must hold exactly one element",
               shape_str(value_.shape()));
    if (ctx.opset() < constant_of_shape_since(value_.dtype())) {
      std::vector<std::string_view> names;
      for (int32_t t = 1; t <= static_cast<int32_t>(kDtypeFloat8E8M0); ++t)
        if (ctx.opset() >= constant_of_shape_since(static_cast<DataType>(t)))
          names.push_back(dtype_name(static_cast<DataType>(t)));
      ctx.fail(
          "attribute 'value' has element type {}, which opset {} does not allow; "
          "supported types: [{}]",
          dtype_name(value_.dtype()), ctx.opset(), fmt::join(names, ", "));
    }
    if (const Tensor* s = ctx.constant_input(0)) shape_ = read_shape(*s);
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    Shape shape = shape_ ? *shape_ : read_shape(input_tensor(in, 0, "input"));
    return {fill(shape)};
  }

 private:
  static Shape read_shape(const Tensor& t) {
    if (t.rank() > 1)
      fail("failed to read input 'input' of shape {}: it must be a 1-D shape",
           shape_str(t.shape()));
    Shape shape = read_int64s(t, "input 'input'");
    for (int64_t d : shape)
      if (d < 0)
        fail("failed to make a tensor of shape [{}]: dims must be 0 or more",
             fmt::join(shape, ", "));
    return shape;
  }

  Tensor fill(const Shape& shape) const {
    if (is_4bit(value_.dtype())) {
      Tensor unpacked = unpack_4bit(value_);
      return pack_4bit(fill_with(unpacked, shape), value_.dtype());
    }
    return fill_with(value_, shape);
  }

  static Tensor fill_with(const Tensor& value, const Shape& shape) {
    return dispatch_storage(value.dtype(), [&]<typename S>() {
      const S v = static_cast<const S*>(value.raw_data())[0];
      if constexpr (std::is_trivially_copyable_v<S>) {
        // Owned tensors start zero-filled: a zero fill value needs no pass over memory.
        const S zero{};
        if (std::memcmp(&v, &zero, sizeof(S)) == 0) return Tensor(value.dtype(), shape);
      }
      Tensor y = uninitialized_tensor(value.dtype(), shape);
      S* dst = static_cast<S*>(y.raw_data());
      parallel_for(y.numel(), kElementwiseGrain,
                   [&](int64_t b, int64_t e) { std::fill(dst + b, dst + e, v); });
      return y;
    });
  }

  Tensor value_;
  std::optional<Shape> shape_;
};
// Versions 9, 20 (bfloat16, float8), 21 (int4, uint4), 23 (newer types): the allowed fill
// types are checked against the model's opset.
PARITY_REF_OP("", "ConstantOfShape", 9, kOpsetMax, ConstantOfShape);

}  // namespace
}  // namespace parity::ref
