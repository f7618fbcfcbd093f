#include "backend/ref/executor.h"

#include "core/activity.h"

#include <new>
#include <set>

#include "backend/ref/opsets.h"
#include "backend/ref/registry.h"
#include "core/logger.h"

namespace parity::ref {

namespace {

// Where a node input (or a graph output) comes from.
struct InputRef {
  enum class Kind { kNone, kSlot, kConstant, kOuter, kUnknown };
  Kind kind = Kind::kNone;
  int slot = -1;  // kSlot: in this graph's frame; kOuter: in the frame `depth` levels up
  int depth = 0;
  const Tensor* constant = nullptr;  // kConstant: an initializer, owned by the model
  std::string name;
};

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Runs f, giving every error it raises the prefix that names the node (once: an error that
// already starts with it, such as one from ctx.fail(), is passed on as it is).
template <typename F>
auto with_prefix(const std::string& prefix, F&& f) {
  try {
    return f();
  } catch (const InternalError& e) {
    if (starts_with(e.what(), prefix)) throw;
    throw InternalError(prefix + e.what());
  } catch (const UsageError& e) {
    if (starts_with(e.what(), prefix)) throw;
    throw UsageError(prefix + e.what());
  } catch (const Error& e) {
    if (starts_with(e.what(), prefix)) throw;
    throw Error(prefix + e.what());
  } catch (const std::bad_alloc&) {
    throw Error(prefix + "out of memory");
  } catch (const std::exception& e) {
    throw InternalError(prefix + e.what());
  }
}

size_t value_bytes(const Value& v) {
  if (v.is_tensor()) return v.tensor.nbytes();
  size_t n = 0;
  for (const auto& t : v.sequence) n += t.nbytes();
  if (v.is_map()) n += v.map.keys.nbytes() + v.map.values.nbytes();
  for (const auto& m : v.maps) n += m.keys.nbytes() + m.values.nbytes();
  return n;
}

// Ops whose values change from run to run even on constant inputs: never folded.
bool is_random(const ir::Node& node) {
  static const std::set<std::string, std::less<>> kRandom = {
      "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike",
      "Bernoulli",    "Multinomial",      "Dropout"};
  return kRandom.count(node.op_type) > 0;
}

// The most bytes of folded values one graph keeps (they live as long as the executor, as the
// initializers do); nodes past it run at every inference as before.
constexpr size_t kMaxFoldedBytes = size_t{1} << 30;

std::string prepare_error_prefix(const ir::Node& node) {
  return fmt::format("failed to prepare node '{}' ({}): ", node.name, node.op_type);
}

}  // namespace

std::string run_error_prefix(const ir::Node& node) {
  return fmt::format("failed to run node '{}' ({}): ", node.name, node.op_type);
}

struct PreparedStep {
  const ir::Node* node = nullptr;
  std::unique_ptr<Kernel> kernel;
  std::vector<InputRef> inputs;
  std::vector<int> outputs;                  // a slot per output; -1 for an unused one
  std::vector<int> release;                  // slots whose last use is this step
  std::vector<const ExecutionPlan*> bodies;  // plans of the node's graph attributes
  // A node computed when the model was prepared (constant folding): its outputs, handed out
  // by every run instead of running the kernel again.
  bool folded = false;
  Outputs folded_outputs;
  // "node 'Conv_3' (Conv)" and the kernel's origin, noted while the kernel runs (core/activity.h).
  std::string activity;
};

struct ExecutionPlan {
  const ir::Graph* graph = nullptr;
  const ExecutionPlan* parent = nullptr;
  std::unordered_map<std::string, int> slots;  // every value the graph's inputs/nodes make
  std::vector<int> input_slots;                // the graph inputs, in order
  std::vector<InputRef> outputs;               // the graph outputs, in order
  std::vector<bool> kept;                      // slots never released (graph outputs)
  std::vector<PreparedStep> steps;
  std::set<std::string> outer_reads;  // names read from enclosing graphs (also by bodies)
  // The values folded at preparation: by slot (inputs of later folds) and, for tensors, by
  // name (OpContext::constant_input, so that a Conv packs folded weights once).
  std::unordered_map<int, Value> folded_slots;
  std::unordered_map<std::string, Tensor> folded_tensors;
  size_t folded_bytes = 0;

  // Where `name` comes from when read in this graph, looking outwards through the scopes.
  InputRef resolve(const std::string& name) const {
    InputRef r;
    r.name = name;
    if (name.empty()) return r;
    int depth = 0;
    for (const ExecutionPlan* p = this; p; p = p->parent, ++depth) {
      if (auto it = p->slots.find(name); it != p->slots.end()) {
        r.kind = depth == 0 ? InputRef::Kind::kSlot : InputRef::Kind::kOuter;
        r.slot = it->second;
        r.depth = depth;
        return r;
      }
      if (auto it = p->graph->initializers.find(name); it != p->graph->initializers.end()) {
        r.kind = InputRef::Kind::kConstant;
        r.constant = &it->second;
        return r;
      }
    }
    r.kind = InputRef::Kind::kUnknown;
    return r;
  }
};

// The values of one graph while it runs; `parent` holds those of the enclosing graph.
class Frame {
 public:
  Frame(const ExecutionPlan& p, Frame* parent_frame)
      : plan(p), parent(parent_frame), values(p.slots.size()) {}
  const ExecutionPlan& plan;
  Frame* parent;
  std::vector<Value> values;
};

namespace {

Value fetch(const Frame& frame, const InputRef& ref) {
  switch (ref.kind) {
    case InputRef::Kind::kSlot:
      return frame.values[ref.slot];
    case InputRef::Kind::kConstant:
      return Value(*ref.constant);
    case InputRef::Kind::kOuter: {
      const Frame* f = &frame;
      for (int d = 0; d < ref.depth; ++d) f = f->parent;
      return f->values[ref.slot];
    }
    default:
      return Value::none();
  }
}

}  // namespace

Executor::Executor(std::shared_ptr<const ir::Model> model, ExecutorOptions options)
    : model_(std::move(model)), options_(std::move(options)) {
  PARITY_ENFORCE(model_ != nullptr, "the executor needs a model");
  if (model_->opset("") > kHighestOnnxOpset)
    logger().warning(
        "the model imports ai.onnx opset {}; the reference backend implements "
        "opsets up to {}, so ops changed after {} run with their opset-{} meaning",
        model_->opset(""), kHighestOnnxOpset, kHighestOnnxOpset, kHighestOnnxOpset);
  main_ = &prepare(model_->graph, nullptr);
}

Executor::~Executor() = default;

const ExecutionPlan& Executor::prepare(const ir::Graph& graph, const ExecutionPlan* parent) {
  auto owned = std::make_unique<ExecutionPlan>();
  ExecutionPlan& plan = *owned;
  plans_[&graph] = std::move(owned);
  plan.graph = &graph;
  plan.parent = parent;

  // Every name gets its slot first, so that bodies prepared below can resolve them.
  auto add_slot = [&](const std::string& name) {
    if (name.empty()) return -1;
    return plan.slots.emplace(name, static_cast<int>(plan.slots.size())).first->second;
  };
  for (const auto& in : graph.inputs) plan.input_slots.push_back(add_slot(in.name));
  for (const auto& node : graph.nodes)
    for (const auto& out : node.outputs) add_slot(out);
  plan.kept.assign(plan.slots.size(), false);

  for (const auto& node : graph.nodes) prepare_step(plan, node);

  for (const auto& out : graph.outputs) {
    InputRef r = plan.resolve(out.name);
    if (r.kind == InputRef::Kind::kUnknown)
      fail(
          "failed to prepare graph '{}' with output '{}': no node, graph input or initializer "
          "provides it",
          graph.name, out.name);
    if (r.kind == InputRef::Kind::kSlot) plan.kept[r.slot] = true;
    if (r.kind == InputRef::Kind::kOuter) plan.outer_reads.insert(out.name);
    plan.outputs.push_back(std::move(r));
  }

  // Last uses. A body's reads of this graph's values are uses by the step that owns it.
  std::vector<int> last_use(plan.slots.size(), -1);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    PreparedStep& step = plan.steps[i];
    auto use = [&](const InputRef& r) {
      if (r.kind == InputRef::Kind::kSlot) last_use[r.slot] = static_cast<int>(i);
      if (r.kind == InputRef::Kind::kOuter) plan.outer_reads.insert(r.name);
    };
    for (const auto& r : step.inputs) use(r);
    for (const ExecutionPlan* body : step.bodies)
      for (const auto& name : body->outer_reads) use(plan.resolve(name));
    for (int slot : step.outputs)
      if (slot >= 0 && last_use[slot] < static_cast<int>(i)) last_use[slot] = static_cast<int>(i);
  }
  for (size_t slot = 0; slot < last_use.size(); ++slot)
    if (!plan.kept[slot] && last_use[slot] >= 0)
      plan.steps[last_use[slot]].release.push_back(static_cast<int>(slot));
  return plan;
}

void Executor::prepare_step(ExecutionPlan& plan, const ir::Node& node) {
  PreparedStep step;
  step.node = &node;
  for (const auto& name : node.inputs) {
    InputRef r = plan.resolve(name);
    if (r.kind == InputRef::Kind::kUnknown)
      fail("{}input '{}' is not produced by an earlier node, a graph input or an initializer",
           prepare_error_prefix(node), name);
    step.inputs.push_back(std::move(r));
  }
  for (const auto& name : node.outputs)
    step.outputs.push_back(name.empty() ? -1 : plan.slots.at(name));
  for (const auto& a : node.attributes) {
    if (a.type == ir::Attribute::Type::kGraph && a.g) step.bodies.push_back(&prepare(*a.g, &plan));
    if (a.type == ir::Attribute::Type::kGraphs)
      for (const auto& g : a.graphs)
        if (g) step.bodies.push_back(&prepare(*g, &plan));
  }

  const Registry& registry = Registry::global();
  int64_t opset = model_->opset(node.domain);
  // A domain the model does not import has no version: use the newest kernel.
  int64_t lookup_opset = opset > 0 ? opset : kOpsetMax;
  const KernelEntry* entry = registry.find(node.domain, node.op_type, lookup_opset);
  if (!entry) {
    if (registry.has_op(node.domain, node.op_type)) {
      std::vector<std::string> ranges;
      for (const auto& e : registry.entries())
        if (e.domain == node.domain && e.op_type == node.op_type)
          ranges.push_back(e.until >= kOpsetMax ? fmt::format("{}+", e.since)
                                                : fmt::format("{}-{}", e.since, e.until));
      fail(
          "{}the reference kernel does not support opset {} of domain '{}'; supported "
          "opsets: [{}]",
          prepare_error_prefix(node), opset, node.domain.empty() ? "ai.onnx" : node.domain,
          fmt::join(ranges, ", "));
    }
    fail(
        "Op: {} does not have a reference implementation registered!\nNote: registered ops "
        "with similar names: [{}]\nNote: needed by node '{}'",
        node.op_type, fmt::join(registry.nearest(node.op_type), ", "), node.name);
  }
  KernelFactory factory = entry->factory;
  step.activity = fmt::format("node '{}' ({}{}){}", node.name, node.op_type,
                              node.domain.empty() ? "" : ", domain " + node.domain,
                              entry->origin.empty() ? "" : " from " + entry->origin);
  OpContext ctx(node, opset, *plan.graph);
  ctx.set_folded(&plan.folded_tensors);
  step.kernel = with_prefix(prepare_error_prefix(node), [&] { return factory(ctx); });
  PARITY_ENFORCE(step.kernel != nullptr, "the factory of {} returned no kernel", node.op_type);
  fold(plan, step);
  plan.steps.push_back(std::move(step));
}

// Constant folding: a standard op without bodies or randomness whose every input is absent,
// an initializer or a value folded before runs now, once (weights made by ConstantOfShape,
// shapes computed from constants...). run() hands out the same values, so the bits and the
// observer's view are those of running it every time. A node that fails here is left to fail
// at run time, with the message it always gave.
void Executor::fold(ExecutionPlan& plan, PreparedStep& step) {
  const ir::Node& node = *step.node;
  if (!(node.domain.empty() || node.domain == "ai.onnx") || !step.bodies.empty() || is_random(node))
    return;
  Inputs inputs;
  for (const auto& r : step.inputs) {
    if (r.kind == InputRef::Kind::kNone) {
      inputs.push_back(Value::none());
    } else if (r.kind == InputRef::Kind::kConstant) {
      inputs.push_back(Value(*r.constant));
    } else if (auto it = plan.folded_slots.find(r.slot);
               r.kind == InputRef::Kind::kSlot && it != plan.folded_slots.end()) {
      inputs.push_back(it->second);
    } else {
      return;
    }
  }
  Frame frame(plan, nullptr);
  RunContext ctx(node, this, &frame);
  Outputs outputs;
  try {
    outputs = step.kernel->run(inputs, ctx);
  } catch (const std::exception&) {
    return;
  }
  size_t bytes = 0;
  for (const auto& v : outputs) bytes += value_bytes(v);
  if (outputs.size() != step.outputs.size() || plan.folded_bytes + bytes > kMaxFoldedBytes) return;
  plan.folded_bytes += bytes;
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (step.outputs[j] < 0) continue;
    plan.folded_slots[step.outputs[j]] = outputs[j];
    if (outputs[j].is_tensor()) plan.folded_tensors[node.outputs[j]] = outputs[j].tensor;
  }
  step.folded = true;
  step.folded_outputs = std::move(outputs);
  ++folded_nodes_;
}

void Executor::store(Frame& frame, int slot, Value value) {
  if (slot < 0) return;  // an unnamed value (the loader refuses unnamed graph inputs)
  release(frame, slot);
  if (value.is_none()) return;
  live_values_ += 1;
  live_bytes_ += value_bytes(value);
  frame.values[slot] = std::move(value);
  stats_.peak_live_values = std::max(stats_.peak_live_values, live_values_);
  stats_.peak_live_bytes = std::max(stats_.peak_live_bytes, live_bytes_);
}

void Executor::release(Frame& frame, int slot) {
  Value& v = frame.values[slot];
  if (v.is_none()) return;
  live_values_ -= 1;
  live_bytes_ -= value_bytes(v);
  v = Value::none();
}

void Executor::execute(const ExecutionPlan& plan, Frame& frame, const std::vector<bool>* keep) {
  Inputs inputs;
  for (const PreparedStep& step : plan.steps) {
    const ir::Node& node = *step.node;
    inputs.clear();
    Outputs outputs;
    if (step.folded) {
      outputs = step.folded_outputs;  // shares the buffers
    } else {
      for (const auto& ref : step.inputs) inputs.push_back(fetch(frame, ref));
      RunContext ctx(node, this, &frame);
      if (activity_watched()) note_activity(step.activity);
      outputs = with_prefix(run_error_prefix(node), [&] {
        if (const AllocationScope* scope = current_allocation_scope()) scope->check_time();
        return step.kernel->run(inputs, ctx);
      });
      if (activity_watched()) note_activity("");
    }
    inputs.clear();  // drop this step's references, so released values are freed below
    if (outputs.size() != step.outputs.size())
      throw InternalError(
          fmt::format("internal error: node '{}' ({}) has {} outputs but its "
                      "kernel returned {}",
                      node.name, node.op_type, step.outputs.size(), outputs.size()));
    if (observer_) observer_(node, outputs);
    for (size_t j = 0; j < outputs.size(); ++j)
      if (step.outputs[j] >= 0) store(frame, step.outputs[j], std::move(outputs[j]));
    for (int slot : step.release)
      if (!keep || !(*keep)[slot]) release(frame, slot);
  }
}

std::vector<NamedValue> Executor::run(const std::vector<NamedValue>& feed,
                                      const std::vector<std::string>& extra_outputs) {
  const ExecutionPlan& plan = *main_;
  const ir::Graph& graph = *plan.graph;
  stats_ = {};
  live_values_ = live_bytes_ = 0;
  // Allocations on this thread count against the limits until the run ends.
  AllocationScope scope(options_.limits, &live_bytes_);
  Frame frame(plan, nullptr);

  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const std::string& name = graph.inputs[i].name;
    const NamedValue* given = nullptr;
    for (const auto& f : feed)
      if (f.name == name) given = &f;
    if (!given) {
      std::vector<std::string> names;
      for (const auto& in : graph.inputs) names.push_back(in.name);
      fail(
          "failed to run the model with input '{}' missing from the feed: every graph input "
          "must be given; the inputs are [{}]",
          name, fmt::join(names, ", "));
    }
    store(frame, plan.input_slots[i], given->value);
  }

  std::vector<bool> keep(plan.slots.size(), false);
  std::vector<InputRef> extras;
  for (const auto& name : extra_outputs) {
    InputRef r = plan.resolve(name);
    if (r.kind == InputRef::Kind::kUnknown || name.empty())
      fail(
          "failed to keep value '{}' of the model: no node, graph input or initializer of the "
          "top-level graph has that name",
          name);
    if (r.kind == InputRef::Kind::kSlot) keep[r.slot] = true;
    extras.push_back(std::move(r));
  }

  execute(plan, frame, &keep);

  std::vector<NamedValue> result;
  for (size_t i = 0; i < plan.outputs.size(); ++i)
    result.push_back({graph.outputs[i].name, fetch(frame, plan.outputs[i])});
  for (const auto& r : extras) result.push_back({r.name, fetch(frame, r)});
  for (size_t slot = 0; slot < frame.values.size(); ++slot) release(frame, static_cast<int>(slot));
  return result;
}

TensorMap Executor::run(const TensorMap& feed, const std::vector<std::string>& extra_outputs) {
  std::vector<NamedValue> values;
  values.reserve(feed.size());
  for (const auto& [name, t] : feed) values.push_back({name, Value(t)});
  TensorMap result;
  for (auto& [name, v] : run(values, extra_outputs)) {
    if (!v.is_tensor())
      fail(
          "failed to return output '{}' as a tensor: it is {}; use the Value form of "
          "Executor::run for sequences, maps and optionals",
          name, v.kind_name());
    result.set(name, std::move(v.tensor));
  }
  return result;
}

Outputs Executor::run_subgraph(const ir::Node& owner, const ir::Graph& body, const Inputs& inputs,
                               Frame* frame) {
  auto it = plans_.find(&body);
  PARITY_ENFORCE(frame != nullptr && it != plans_.end() && it->second->parent == &frame->plan,
                 "node '{}' ran a body that is not one of its graph attributes", owner.name);
  const ExecutionPlan& plan = *it->second;
  if (inputs.size() != plan.input_slots.size())
    fail("{}its body '{}' takes {} inputs but was given {}", run_error_prefix(owner), body.name,
         plan.input_slots.size(), inputs.size());
  Frame child(plan, frame);
  for (size_t i = 0; i < inputs.size(); ++i) store(child, plan.input_slots[i], inputs[i]);
  execute(plan, child, nullptr);
  Outputs outputs;
  outputs.reserve(plan.outputs.size());
  for (const auto& ref : plan.outputs) outputs.push_back(fetch(child, ref));
  for (size_t slot = 0; slot < child.values.size(); ++slot) release(child, static_cast<int>(slot));
  return outputs;
}

}  // namespace parity::ref
