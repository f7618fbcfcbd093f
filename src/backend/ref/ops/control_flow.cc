// Control flow: If, Loop, Scan (versions 8 and 9+) and SequenceMap. Each runs its bodies
// through RunContext::run_subgraph, so a body reads the values of every enclosing graph
// directly; loop-carried values, branch results and sequence items are passed on without
// copying, and only scan outputs are assembled into new tensors.
#include "backend/ref/ops/sequence_util.h"
#include "core/checked_math.h"
#include "core/limits.h"

namespace parity::ref {
namespace {

// Checks that a body takes `inputs` values and returns `outputs` (at prepare time, so a
// malformed model fails before anything runs).
void check_body(const OpContext& ctx, const ir::Graph& body, std::string_view attr, size_t inputs,
                size_t outputs) {
  if (body.inputs.size() != inputs || body.outputs.size() != outputs)
    ctx.fail("body '{}' takes {} inputs and returns {} outputs; this node needs {} and {}", attr,
             body.inputs.size(), body.outputs.size(), inputs, outputs);
}

// A boolean condition: a bool tensor with one element.
bool read_condition(const Value& v, std::string_view what, RunContext& ctx) {
  if (!v.is_tensor() || v.tensor.dtype() != DataType::kBool || v.tensor.numel() != 1)
    ctx.fail("{} is {}; it must be a bool tensor with one element", what,
             v.is_tensor() ? fmt::format("a {} tensor of shape {}", dtype_name(v.tensor.dtype()),
                                         shape_str(v.tensor.shape()))
                           : std::string(v.is_none() ? "absent" : "a sequence"));
  return v.tensor.data<bool>()[0];
}

const Tensor& body_tensor(const Value& v, size_t index, RunContext& ctx) {
  if (!v.is_tensor())
    ctx.fail("body output {} is {}; a scan output must be a tensor", index,
             v.is_none() ? "an empty optional" : "a sequence");
  return v.tensor;
}

// Per-iteration values stacked along `axis` (Loop and Scan outputs). With no iteration the
// result is empty along that axis, with the body's declared element type and, when they are
// all fixed, its declared dims.
Tensor stack(const std::vector<Tensor>& items, int64_t axis, bool reverse,
             const ir::ValueType& declared, RunContext& ctx) {
  if (items.empty()) {
    if (declared.kind != ir::ValueType::Kind::kTensor || !declared.elem_type)
      ctx.fail(
          "the loop ran no iteration and the body does not declare the element type of "
          "its scan output; it cannot make an empty output");
    Shape shape;
    if (declared.shape && dims_are_fixed(*declared.shape))
      for (const Dim& d : *declared.shape) shape.push_back(d.value);
    shape.insert(shape.begin() + std::min<int64_t>(axis, static_cast<int64_t>(shape.size())), 0);
    return Tensor(*declared.elem_type, shape);
  }
  if (!reverse) return join_along(items, axis, true, "the scan output's iterations");
  std::vector<Tensor> reversed(items.rbegin(), items.rend());
  return join_along(reversed, axis, true, "the scan output's iterations");
}

// ---------------------------------------------------------------------------------------------

class If : public Kernel {
 public:
  explicit If(const OpContext& ctx)
      : then_(ctx.attr_graph("then_branch")), else_(ctx.attr_graph("else_branch")) {
    if (ctx.num_inputs() != 1) ctx.fail("it has {} inputs; If takes 1 (cond)", ctx.num_inputs());
    check_body(ctx, *then_, "then_branch", 0, ctx.num_outputs());
    check_body(ctx, *else_, "else_branch", 0, ctx.num_outputs());
  }
  Outputs run(const Inputs& in, RunContext& ctx) override {
    const bool cond = read_condition(in[0], "input 'cond'", ctx);
    return ctx.run_subgraph(cond ? *then_ : *else_, {});
  }

 private:
  std::shared_ptr<ir::Graph> then_, else_;
};
// Versions 1, 11 (branches may differ in shape), 13 (sequences), 16 (optionals), 19, 21, 23
// (element types): the same run.
PARITY_REF_OP("", "If", 1, kOpsetMax, If);

class Loop : public Kernel {
 public:
  explicit Loop(const OpContext& ctx) : body_(ctx.attr_graph("body")) {
    if (ctx.num_inputs() < 2)
      ctx.fail("it has {} inputs; Loop takes M, cond and the loop-carried values",
               ctx.num_inputs());
    carried_ = ctx.num_inputs() - 2;
    if (ctx.num_outputs() < carried_)
      ctx.fail("it has {} outputs for {} loop-carried values; it needs one per value",
               ctx.num_outputs(), carried_);
    scans_ = ctx.num_outputs() - carried_;
    check_body(ctx, *body_, "body", 2 + carried_, 1 + carried_ + scans_);
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    std::optional<int64_t> trip_count;
    if (const Tensor* m = optional_input(in, 0, "M")) {
      if (m->numel() != 1 || m->dtype() != DataType::kInt64)
        ctx.fail("input 'M' is a {} tensor of shape {}; it must be an int64 with one element",
                 dtype_name(m->dtype()), shape_str(m->shape()));
      trip_count = m->data<int64_t>()[0];
    }
    bool cond = in[1].is_none() || read_condition(in[1], "input 'cond'", ctx);

    Inputs body_in(2 + carried_);
    for (size_t j = 0; j < carried_; ++j) body_in[2 + j] = in[2 + j];
    std::vector<std::vector<Tensor>> scanned(scans_);
    // A trip count of 10^15 (or a condition that never turns false) would run for ever: the
    // run's limits stop it with a message naming the node.
    const int64_t max_iterations = active_limits().max_loop_iterations;
    for (int64_t i = 0; cond && (!trip_count || i < *trip_count); ++i) {
      if (i >= max_iterations)
        ctx.fail(
            "stopped after {} iterations{}: that is the limit of iterations per Loop; "
            "raise it with --limit-loop-iterations",
            i, trip_count ? fmt::format(" of a trip count of {}", *trip_count) : "");
      if (const AllocationScope* scope = current_allocation_scope()) scope->check_time();
      body_in[0] = Tensor::scalar<int64_t>(i);
      body_in[1] = Tensor::scalar<bool>(cond);
      Outputs out = ctx.run_subgraph(*body_, body_in);
      // The body always yields the next condition; as in ONNX Runtime and ONNX's reference
      // implementation it is honoured even when the node's own 'cond' input is absent.
      cond = read_condition(out[0], "the body's condition output", ctx);
      for (size_t j = 0; j < carried_; ++j) body_in[2 + j] = std::move(out[1 + j]);
      for (size_t k = 0; k < scans_; ++k)
        scanned[k].push_back(body_tensor(out[1 + carried_ + k], 1 + carried_ + k, ctx));
    }

    Outputs result;
    result.reserve(carried_ + scans_);
    for (size_t j = 0; j < carried_; ++j) result.push_back(std::move(body_in[2 + j]));
    for (size_t k = 0; k < scans_; ++k)
      result.push_back(stack(scanned[k], 0, false, body_->outputs[1 + carried_ + k].type, ctx));
    return result;
  }

 private:
  std::shared_ptr<ir::Graph> body_;
  size_t carried_ = 0, scans_ = 0;
};
// Versions 1, 11, 13 (loop-carried sequences), 16 (optionals), 19, 21, 23 (element types).
PARITY_REF_OP("", "Loop", 1, kOpsetMax, Loop);

// Reads an attribute list of one value per item, defaulting to zeros.
std::vector<int64_t> per_item(const OpContext& ctx, std::string_view name, size_t count) {
  std::vector<int64_t> v = ctx.attr_ints(name, std::vector<int64_t>(count, 0));
  if (v.size() != count)
    ctx.fail("attribute '{}' has {} values; it needs one per item ({})", name, v.size(), count);
  return v;
}

// Scan 9 and later: no batch axis; each scan input has its own axis and direction, and each
// scan output its own axis and direction (prepend or append).
class Scan : public Kernel {
 public:
  explicit Scan(const OpContext& ctx) : body_(ctx.attr_graph("body")) {
    const int64_t m = ctx.attr_int("num_scan_inputs");
    if (m < 1 || static_cast<size_t>(m) > ctx.num_inputs())
      ctx.fail("attribute 'num_scan_inputs' is {}; it must be in [1, {}] (the number of inputs)", m,
               ctx.num_inputs());
    scan_inputs_ = static_cast<size_t>(m);
    states_ = ctx.num_inputs() - scan_inputs_;
    if (ctx.num_outputs() < states_)
      ctx.fail("it has {} outputs for {} state variables; it needs one per state",
               ctx.num_outputs(), states_);
    scan_outputs_ = ctx.num_outputs() - states_;
    check_body(ctx, *body_, "body", states_ + scan_inputs_, states_ + scan_outputs_);
    in_axes_ = per_item(ctx, "scan_input_axes", scan_inputs_);
    in_reverse_ = per_item(ctx, "scan_input_directions", scan_inputs_);
    out_axes_ = per_item(ctx, "scan_output_axes", scan_outputs_);
    out_reverse_ = per_item(ctx, "scan_output_directions", scan_outputs_);
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    std::vector<const Tensor*> xs;
    std::vector<int64_t> axes;
    int64_t length = -1;
    for (size_t i = 0; i < scan_inputs_; ++i) {
      const Tensor& x = input_tensor(in, states_ + i, "scan input");
      const int64_t axis = normalize_axis(in_axes_[i], x.rank(), "scan_input_axes");
      if (length >= 0 && x.shape()[axis] != length)
        ctx.fail("scan input {} has {} items along axis {}; every scan input must have {}", i,
                 x.shape()[axis], axis, length);
      length = x.shape()[axis];
      xs.push_back(&x);
      axes.push_back(axis);
    }

    Inputs body_in(states_ + scan_inputs_);
    for (size_t j = 0; j < states_; ++j) body_in[j] = in[j];
    std::vector<std::vector<Tensor>> scanned(scan_outputs_);
    for (int64_t t = 0; t < length; ++t) {
      for (size_t i = 0; i < scan_inputs_; ++i)
        body_in[states_ + i] = slice_at(*xs[i], axes[i], in_reverse_[i] ? length - 1 - t : t);
      Outputs out = ctx.run_subgraph(*body_, body_in);
      for (size_t j = 0; j < states_; ++j) body_in[j] = std::move(out[j]);
      for (size_t k = 0; k < scan_outputs_; ++k)
        scanned[k].push_back(body_tensor(out[states_ + k], states_ + k, ctx));
    }

    Outputs result;
    for (size_t j = 0; j < states_; ++j) result.push_back(std::move(body_in[j]));
    for (size_t k = 0; k < scan_outputs_; ++k) {
      const ir::ValueType& declared = body_->outputs[states_ + k].type;
      // The axis counts in the output, which has one more dim than each iteration's value.
      int64_t rank = scanned[k].empty()
                         ? (declared.shape ? static_cast<int64_t>(declared.shape->size()) : 0)
                         : scanned[k].front().rank();
      const int64_t axis = normalize_axis(out_axes_[k], rank + 1, "scan_output_axes");
      result.push_back(stack(scanned[k], axis, out_reverse_[k] != 0, declared, ctx));
    }
    return result;
  }

 private:
  std::shared_ptr<ir::Graph> body_;
  size_t scan_inputs_ = 0, states_ = 0, scan_outputs_ = 0;
  std::vector<int64_t> in_axes_, in_reverse_, out_axes_, out_reverse_;
};
// Versions 9 (axes, output directions), 11 (negative axes), 16, 19, 21, 23 (element types).
PARITY_REF_OP("", "Scan", 9, kOpsetMax, Scan);

// Scan 8: axis 0 of every input is a batch; each batch entry is scanned along axis 1 for
// sequence_lens[b] steps (all of axis 1 when absent). Scan outputs are padded with zeros past
// an entry's length (the spec leaves those values undefined).
class Scan8 : public Kernel {
 public:
  explicit Scan8(const OpContext& ctx) : body_(ctx.attr_graph("body")) {
    const int64_t m = ctx.attr_int("num_scan_inputs");
    if (ctx.num_inputs() < 1 || m < 1 || static_cast<size_t>(m) > ctx.num_inputs() - 1)
      ctx.fail(
          "attribute 'num_scan_inputs' is {}; it must be in [1, {}] (the inputs after "
          "sequence_lens)",
          m, ctx.num_inputs() == 0 ? 0 : ctx.num_inputs() - 1);
    scan_inputs_ = static_cast<size_t>(m);
    states_ = ctx.num_inputs() - 1 - scan_inputs_;
    if (ctx.num_outputs() < states_)
      ctx.fail("it has {} outputs for {} state variables; it needs one per state",
               ctx.num_outputs(), states_);
    scan_outputs_ = ctx.num_outputs() - states_;
    check_body(ctx, *body_, "body", states_ + scan_inputs_, states_ + scan_outputs_);
    reverse_ = per_item(ctx, "directions", scan_inputs_);
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    std::vector<const Tensor*> xs;
    int64_t batch = -1, max_length = -1;
    for (size_t i = 0; i < scan_inputs_; ++i) {
      const Tensor& x = input_tensor(in, 1 + states_ + i, "scan input");
      if (x.rank() < 2)
        ctx.fail("scan input {} has shape {}; it needs a batch and a sequence axis", i,
                 shape_str(x.shape()));
      if (batch >= 0 && (x.shape()[0] != batch || x.shape()[1] != max_length))
        ctx.fail(
            "scan input {} has shape {}; every scan input must have batch size {} and "
            "sequence length {}",
            i, shape_str(x.shape()), batch, max_length);
      batch = x.shape()[0];
      max_length = x.shape()[1];
      xs.push_back(&x);
    }
    std::vector<int64_t> lengths(static_cast<size_t>(batch), max_length);
    if (const Tensor* lens = optional_input(in, 0, "sequence_lens")) {
      lengths = read_int64s(*lens, "input 'sequence_lens'");
      if (static_cast<int64_t>(lengths.size()) != batch)
        ctx.fail("input 'sequence_lens' has {} values; it needs one per batch entry ({})",
                 lengths.size(), batch);
      for (int64_t len : lengths)
        if (len < 0 || len > max_length)
          ctx.fail("input 'sequence_lens' holds {}; lengths must be in [0, {}]", len, max_length);
    }
    for (size_t j = 0; j < states_; ++j) {
      const Tensor& s = input_tensor(in, 1 + j, "initial state");
      if (s.rank() < 1 || s.shape()[0] != batch)
        ctx.fail("initial state {} has shape {}; it needs the batch size {} as its first dim", j,
                 shape_str(s.shape()), batch);
    }

    std::vector<std::vector<Tensor>> final_states(states_);
    // scanned[k][b]: the iterations of scan output k for batch entry b.
    std::vector<std::vector<std::vector<Tensor>>> scanned(
        scan_outputs_, std::vector<std::vector<Tensor>>(static_cast<size_t>(batch)));
    for (int64_t b = 0; b < batch; ++b) {
      Inputs body_in(states_ + scan_inputs_);
      for (size_t j = 0; j < states_; ++j) body_in[j] = slice_at(in[1 + j].tensor, 0, b);
      std::vector<Tensor> entries;
      for (const Tensor* x : xs) entries.push_back(slice_at(*x, 0, b));
      const int64_t length = lengths[static_cast<size_t>(b)];
      for (int64_t t = 0; t < length; ++t) {
        for (size_t i = 0; i < scan_inputs_; ++i)
          body_in[states_ + i] = slice_at(entries[i], 0, reverse_[i] ? length - 1 - t : t);
        Outputs out = ctx.run_subgraph(*body_, body_in);
        for (size_t j = 0; j < states_; ++j) body_in[j] = std::move(out[j]);
        for (size_t k = 0; k < scan_outputs_; ++k)
          scanned[k][b].push_back(body_tensor(out[states_ + k], states_ + k, ctx));
      }
      for (size_t j = 0; j < states_; ++j)
        final_states[j].push_back(body_tensor(body_in[j], j, ctx));
    }

    Outputs result;
    for (size_t j = 0; j < states_; ++j)
      result.push_back(batch == 0 ? in[1 + j].tensor
                                  : join_along(final_states[j], 0, true, "the final states"));
    for (size_t k = 0; k < scan_outputs_; ++k)
      result.push_back(batched_output(scanned[k], batch, max_length, k, ctx));
    return result;
  }

 private:
  // [batch, max_length, ...]: each entry's iterations, then zeros up to max_length.
  Tensor batched_output(std::vector<std::vector<Tensor>>& per_entry, int64_t batch,
                        int64_t max_length, size_t k, RunContext& ctx) const {
    const ir::ValueType& declared = body_->outputs[states_ + k].type;
    const Tensor* sample = nullptr;
    for (const auto& items : per_entry)
      if (!items.empty()) sample = &items.front();
    if (!sample) {  // no iteration anywhere: the shape can only come from the declaration
      Tensor empty = stack({}, 0, false, declared, ctx);
      Shape shape = empty.shape();
      shape[0] = max_length;
      if (max_length > 0 && !(declared.shape && dims_are_fixed(*declared.shape)))
        ctx.fail(
            "no batch entry ran an iteration and the body does not declare the shape of "
            "scan output {}; its padding cannot be made",
            k);
      shape.insert(shape.begin(), batch);
      return Tensor(empty.dtype(), shape);
    }
    const Tensor zero(sample->dtype(), sample->shape());
    std::vector<Tensor> entries;
    for (auto& items : per_entry) {
      items.resize(static_cast<size_t>(max_length), zero);
      entries.push_back(join_along(items, 0, true, "the scan output's iterations"));
    }
    return join_along(entries, 0, true, "the scan output's batch entries");
  }

  std::shared_ptr<ir::Graph> body_;
  size_t scan_inputs_ = 0, states_ = 0, scan_outputs_ = 0;
  std::vector<int64_t> reverse_;
};
PARITY_REF_OP("", "Scan", 8, 8, Scan8);

// SequenceMap: runs the body once per item of the first input sequence, giving it the i-th
// item of every sequence input and every tensor input as it is; each body output becomes a
// sequence of the per-item results.
class SequenceMap : public Kernel {
 public:
  explicit SequenceMap(const OpContext& ctx) : body_(ctx.attr_graph("body")) {
    if (ctx.num_inputs() < 1 || ctx.num_outputs() < 1)
      ctx.fail("it has {} inputs and {} outputs; it needs at least 1 of each", ctx.num_inputs(),
               ctx.num_outputs());
    check_body(ctx, *body_, "body", ctx.num_inputs(), ctx.num_outputs());
    for (const auto& out : body_->outputs)
      elem_types_.push_back(out.type.kind == ir::ValueType::Kind::kTensor && out.type.elem_type
                                ? *out.type.elem_type
                                : DataType::kUndefined);
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Value& first = input_sequence(in, 0, "input_sequence");
    const size_t count = first.sequence.size();
    for (size_t i = 1; i < in.size(); ++i)
      if (in[i].is_sequence() && in[i].sequence.size() != count)
        ctx.fail(
            "input {} is a sequence of {} tensors; every sequence input must have {}, as "
            "'input_sequence' has",
            i, in[i].sequence.size(), count);
    std::vector<std::vector<Tensor>> results(body_->outputs.size());
    Inputs body_in(in.size());
    for (size_t i = 0; i < in.size(); ++i)
      if (!in[i].is_sequence()) body_in[i] = in[i];
    for (size_t n = 0; n < count; ++n) {
      for (size_t i = 0; i < in.size(); ++i)
        if (in[i].is_sequence()) body_in[i] = in[i].sequence[n];
      Outputs out = ctx.run_subgraph(*body_, body_in);
      for (size_t k = 0; k < out.size(); ++k) results[k].push_back(body_tensor(out[k], k, ctx));
    }
    Outputs result;
    for (size_t k = 0; k < results.size(); ++k) {
      DataType dtype = results[k].empty() ? elem_types_[k] : results[k].front().dtype();
      result.push_back(Value::make_sequence(std::move(results[k]), dtype));
    }
    return result;
  }

 private:
  std::shared_ptr<ir::Graph> body_;
  std::vector<DataType> elem_types_;
};
PARITY_REF_OP("", "SequenceMap", 17, kOpsetMax, SequenceMap);

}  // namespace
}  // namespace parity::ref
