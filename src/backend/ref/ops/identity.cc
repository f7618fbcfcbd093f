// Identity: passes its input on (tensor, sequence or optional) without copying; values are
// never written after they are made, so sharing the buffer is safe.
#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {
namespace {

class Identity : public Kernel {
 public:
  explicit Identity(const OpContext& ctx) {
    if (ctx.num_inputs() != 1 || ctx.num_outputs() != 1)
      ctx.fail("it has {} inputs and {} outputs; it must have 1 and 1", ctx.num_inputs(),
               ctx.num_outputs());
  }
  Outputs run(const Inputs& in, RunContext&) override { return {in[0]}; }
};
// Versions 1, 13, 14 (sequences), 16 (optionals), 19, 21, 23 (new element types only).
PARITY_REF_OP("", "Identity", 1, kOpsetMax, Identity);

}  // namespace
}  // namespace parity::ref
