// Optional, OptionalHasElement, OptionalGetElement. An optional that holds a value is
// represented by the value itself and an empty one by Value::none() (core/value.h), so these
// kernels pass values on without copying.
#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {
namespace {

void check_arity(const OpContext& ctx, size_t max_inputs) {
  if (ctx.num_inputs() > max_inputs || ctx.num_outputs() != 1)
    ctx.fail("it has {} inputs and {} outputs; it takes at most {} and makes 1", ctx.num_inputs(),
             ctx.num_outputs(), max_inputs);
}

class Optional : public Kernel {
 public:
  explicit Optional(const OpContext& ctx) {
    check_arity(ctx, 1);
    const ir::Attribute* type = ctx.attr("type");
    if (type && type->type != ir::Attribute::Type::kTypeProto)
      ctx.fail("attribute 'type' has type {}; it must be of type {}",
               ir::attribute_type_name(type->type),
               ir::attribute_type_name(ir::Attribute::Type::kTypeProto));
    if (!ctx.has_input(0) && !type)
      ctx.fail(
          "it has no input and no attribute 'type'; an empty optional needs 'type' to say "
          "what it could hold");
  }
  Outputs run(const Inputs& in, RunContext&) override {
    return {in.empty() ? Value::none() : in[0]};
  }
};
// Version 15 only (newer opsets add element types, not behaviour).
PARITY_REF_OP("", "Optional", 15, kOpsetMax, Optional);

class OptionalHasElement : public Kernel {
 public:
  explicit OptionalHasElement(const OpContext& ctx) {
    check_arity(ctx, 1);
    // Version 15 requires the input; 18 lets it be absent (then the answer is false) and lets
    // it be a plain tensor or sequence (then the answer is true).
    if (ctx.opset() < 18 && !ctx.has_input(0))
      ctx.fail("input 'input' is absent; before opset 18 it is required");
  }
  Outputs run(const Inputs& in, RunContext&) override {
    return {Tensor::scalar<bool>(!in.empty() && !in[0].is_none())};
  }
};
PARITY_REF_OP("", "OptionalHasElement", 15, kOpsetMax, OptionalHasElement);

class OptionalGetElement : public Kernel {
 public:
  explicit OptionalGetElement(const OpContext& ctx) {
    check_arity(ctx, 1);
    if (!ctx.has_input(0)) ctx.fail("input 'input' is absent; it is required");
  }
  Outputs run(const Inputs& in, RunContext& ctx) override {
    if (in[0].is_none())
      ctx.fail(
          "input 'input' is an empty optional; OptionalGetElement needs one that holds a "
          "tensor or a sequence");
    return {in[0]};
  }
};
// Versions 15 (optional input) and 18 (a tensor or sequence is also accepted and returned as
// it is): with optionals represented by their values both read the same.
PARITY_REF_OP("", "OptionalGetElement", 15, kOpsetMax, OptionalGetElement);

}  // namespace
}  // namespace parity::ref
