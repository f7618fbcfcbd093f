// Gradient (ai.onnx.preview.training, version 1): the derivatives of the tensor named by `y`
// with respect to the tensors named by `xs`, computed by reverse-mode differentiation of the
// part of the enclosing graph that leads from xs (and zs) to y. The node's inputs are the
// values of xs then zs; the forward part is re-evaluated from them in double, then the
// adjoints are propagated back from dy = 1 for every element of y (so a non-scalar y gives
// the gradient of the sum of its elements), and each dy/dx_i is rounded once to x_i's type.
//
// Differentiated ops (any other op between xs and y is refused when the node is prepared):
//   Add, Sub, Mul, Div (NumPy broadcasting; adjoints summed back to each input's shape),
//   Neg, Identity, Relu, Sigmoid, Tanh, Exp, Log, Sqrt, MatMul of two 2-D tensors, and
//   Constant (no adjoint). Values the part reads that are neither in xs/zs nor produced in it
//   must be initializers (constants). Legacy broadcasting (opsets < 7, `broadcast` attribute)
//   is refused.
#include <cmath>
#include <map>
#include <set>

#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {
namespace {

// A tensor of doubles: the forward values and adjoints.
struct Real {
  Shape shape;
  std::vector<double> v;
};

Real real_of(const Tensor& t, std::string_view what) { return {t.shape(), read_doubles(t, what)}; }

// c = f(a, b) with NumPy broadcasting.
template <typename F>
Real broadcast_apply(const Real& a, const Real& b, F f) {
  Real c{broadcast_shapes({a.shape, b.shape}), {}};
  Broadcast bc(c.shape, {a.shape, b.shape});
  c.v.resize(static_cast<size_t>(bc.numel()));
  bc.for_each_run(0, bc.numel(), [&](int64_t o, const int64_t* in, int64_t len) {
    for (int64_t i = 0; i < len; ++i)
      c.v[o + i] = f(a.v[in[0] + i * bc.step(0)], b.v[in[1] + i * bc.step(1)]);
  });
  return c;
}

// The adjoint `g` (of a broadcast result) summed back to `shape`, in row-major order of g.
Real sum_to(const Real& g, const Shape& shape) {
  if (g.shape == shape) return g;
  Real r{shape, std::vector<double>(static_cast<size_t>(shape_numel(shape)), 0.0)};
  Broadcast bc(g.shape, {shape});
  bc.for_each_run(0, bc.numel(), [&](int64_t o, const int64_t* in, int64_t len) {
    for (int64_t i = 0; i < len; ++i) r.v[in[0] + i * bc.step(0)] += g.v[o + i];
  });
  return r;
}

template <typename F>
Real map(const Real& a, F f) {
  Real r{a.shape, std::vector<double>(a.v.size())};
  for (size_t i = 0; i < a.v.size(); ++i) r.v[i] = f(a.v[i]);
  return r;
}

// (m, k) x (k, n), or with `ta` / `tb` the transpose of that operand.
Real matmul2d(const Real& a, const Real& b, bool ta, bool tb) {
  const int64_t m = ta ? a.shape[1] : a.shape[0], k = ta ? a.shape[0] : a.shape[1];
  const int64_t n = tb ? b.shape[0] : b.shape[1];
  Real c{{m, n}, std::vector<double>(static_cast<size_t>(m * n), 0.0)};
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p)
        acc += (ta ? a.v[p * m + i] : a.v[i * k + p]) * (tb ? b.v[j * k + p] : b.v[p * n + j]);
      c.v[i * n + j] = acc;
    }
  return c;
}

const std::set<std::string> kDifferentiable = {"Add",      "Sub",  "Mul",     "Div",     "Neg",
                                               "Identity", "Relu", "Sigmoid", "Tanh",    "Exp",
                                               "Log",      "Sqrt", "MatMul",  "Constant"};

// The initializer `name` of `graph` or of a graph enclosing it.
const Tensor* find_initializer(const ir::Graph* graph, const std::string& name) {
  for (; graph; graph = graph->parent) {
    auto it = graph->initializers.find(name);
    if (it != graph->initializers.end()) return &it->second;
  }
  return nullptr;
}

class Gradient : public Kernel {
 public:
  explicit Gradient(const OpContext& ctx)
      : xs_(ctx.attr_strings("xs")), zs_(ctx.attr_strings("zs", {})), y_(ctx.attr_string("y")) {
    if (ctx.num_inputs() != xs_.size() + zs_.size())
      ctx.fail("it has {} inputs; it needs one per name of xs and zs ({} + {})", ctx.num_inputs(),
               xs_.size(), zs_.size());
    if (ctx.num_outputs() != xs_.size())
      ctx.fail("it has {} outputs; it needs one per name of xs ({})", ctx.num_outputs(),
               xs_.size());
    std::set<std::string> free(xs_.begin(), xs_.end());
    free.insert(zs_.begin(), zs_.end());
    // The nodes y depends on, back to xs/zs: walk the producers from y.
    const ir::Graph& graph = ctx.graph();
    std::map<std::string, size_t> producer;
    for (size_t i = 0; i < graph.nodes.size(); ++i)
      for (const auto& out : graph.nodes[i].outputs)
        if (!out.empty()) producer[out] = i;
    std::set<size_t> part;
    std::vector<std::string> pending = {y_};
    std::set<std::string> seen;
    while (!pending.empty()) {
      std::string name = pending.back();
      pending.pop_back();
      if (name.empty() || free.count(name) || !seen.insert(name).second) continue;
      auto it = producer.find(name);
      if (it == producer.end()) {
        if (const Tensor* t = find_initializer(&graph, name)) {
          constants_[name] = real_of(*t, fmt::format("initializer '{}'", name));
          continue;
        }
        ctx.fail("y '{}' depends on '{}', which is neither in xs/zs nor a constant", y_, name);
      }
      const ir::Node& node = graph.nodes[it->second];
      if (!node.domain.empty() || !kDifferentiable.count(node.op_type))
        ctx.fail(
            "node '{}' ({}) between xs and y cannot be differentiated; differentiable "
            "ops: [Add, Sub, Mul, Div, Neg, Identity, Relu, Sigmoid, Tanh, Exp, Log, "
            "Sqrt, MatMul (2-D), Constant]",
            node.name, node.op_type);
      if (node.attribute("broadcast"))
        ctx.fail(
            "node '{}' ({}) uses the legacy 'broadcast' attribute, which Gradient does "
            "not differentiate",
            node.name, node.op_type);
      if (node.op_type == "Constant") {
        const ir::Attribute* value = node.attribute("value");
        if (!value || value->type != ir::Attribute::Type::kTensor)
          ctx.fail("Constant node '{}' needs a tensor 'value' to be differentiated through",
                   node.name);
        constants_[node.outputs[0]] = real_of(value->t, "a Constant value");
        continue;
      }
      part.insert(it->second);
      for (const auto& input : node.inputs) pending.push_back(input);
    }
    for (size_t i : part) nodes_.push_back(&graph.nodes[i]);  // std::set keeps graph order
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    std::map<std::string, Real> value = constants_;
    std::vector<const Tensor*> xs_in;
    for (size_t i = 0; i < xs_.size() + zs_.size(); ++i) {
      const std::string& name = i < xs_.size() ? xs_[i] : zs_[i - xs_.size()];
      const Tensor& t = input_tensor(in, i, name);
      if (i < xs_.size()) xs_in.push_back(&t);
      value[name] = real_of(t, fmt::format("input '{}'", name));
    }
    // Forward, in graph order.
    for (const ir::Node* node : nodes_) {
      auto arg = [&](size_t k) -> const Real& { return value.at(node->inputs.at(k)); };
      const std::string& op = node->op_type;
      auto binary = [&](auto f) { return broadcast_apply(arg(0), arg(1), f); };
      Real r;
      if (op == "Add")
        r = binary([](double a, double b) { return a + b; });
      else if (op == "Sub")
        r = binary([](double a, double b) { return a - b; });
      else if (op == "Mul")
        r = binary([](double a, double b) { return a * b; });
      else if (op == "Div")
        r = binary([](double a, double b) { return a / b; });
      else if (op == "Neg")
        r = map(arg(0), [](double a) { return -a; });
      else if (op == "Identity")
        r = arg(0);
      else if (op == "Relu")
        r = map(arg(0), [](double a) { return a < 0 ? 0.0 : a; });
      else if (op == "Sigmoid")
        r = map(arg(0), [](double a) { return 1 / (1 + std::exp(-a)); });
      else if (op == "Tanh")
        r = map(arg(0), [](double a) { return std::tanh(a); });
      else if (op == "Exp")
        r = map(arg(0), [](double a) { return std::exp(a); });
      else if (op == "Log")
        r = map(arg(0), [](double a) { return std::log(a); });
      else if (op == "Sqrt")
        r = map(arg(0), [](double a) { return std::sqrt(a); });
      else {  // MatMul
        const Real &a = arg(0), &b = arg(1);
        if (a.shape.size() != 2 || b.shape.size() != 2 || a.shape[1] != b.shape[0])
          ctx.fail(
              "MatMul node '{}' has operands {} and {}; Gradient differentiates only the "
              "product of two 2-D matrices (m, k) x (k, n)",
              node->name, shape_str(a.shape), shape_str(b.shape));
        r = matmul2d(a, b, false, false);
      }
      value[node->outputs[0]] = std::move(r);
    }
    const Real& y = value.at(y_);
    // Backward: adjoints from y = 1, nodes in reverse order.
    std::map<std::string, Real> adj;
    adj[y_] = Real{y.shape, std::vector<double>(y.v.size(), 1.0)};
    auto accumulate = [&](const std::string& name, Real g) {
      auto it = adj.find(name);
      if (it == adj.end()) {
        adj.emplace(name, std::move(g));
      } else {
        for (size_t i = 0; i < g.v.size(); ++i) it->second.v[i] += g.v[i];
      }
    };
    for (auto n = nodes_.rbegin(); n != nodes_.rend(); ++n) {
      const ir::Node* node = *n;
      auto it = adj.find(node->outputs[0]);
      if (it == adj.end()) continue;
      const Real g = it->second;
      const Real& out = value.at(node->outputs[0]);
      const std::string& op = node->op_type;
      const std::string& in0 = node->inputs[0];
      const Real& a = value.at(in0);
      auto times = [](const Real& p, const Real& q) {
        return broadcast_apply(p, q, [](double x, double z) { return x * z; });
      };
      auto unary = [&](auto dfn) {  // dfn(x, y) = dy/dx
        Real d{a.shape, std::vector<double>(a.v.size())};
        for (size_t i = 0; i < d.v.size(); ++i) d.v[i] = g.v[i] * dfn(a.v[i], out.v[i]);
        accumulate(in0, std::move(d));
      };
      if (op == "Add" || op == "Sub") {
        accumulate(in0, sum_to(g, a.shape));
        Real gb = op == "Sub" ? map(g, [](double v) { return -v; }) : g;
        accumulate(node->inputs[1], sum_to(gb, value.at(node->inputs[1]).shape));
      } else if (op == "Mul") {
        const Real& b = value.at(node->inputs[1]);
        accumulate(in0, sum_to(times(g, b), a.shape));
        accumulate(node->inputs[1], sum_to(times(g, a), b.shape));
      } else if (op == "Div") {
        const Real& b = value.at(node->inputs[1]);
        accumulate(
            in0, sum_to(broadcast_apply(g, b, [](double x, double z) { return x / z; }), a.shape));
        // d(a/b)/db = -out / b.
        Real ob = broadcast_apply(out, b, [](double o, double z) { return -o / z; });
        accumulate(node->inputs[1], sum_to(times(g, ob), b.shape));
      } else if (op == "Neg") {
        unary([](double, double) { return -1.0; });
      } else if (op == "Identity") {
        unary([](double, double) { return 1.0; });
      } else if (op == "Relu") {
        unary([](double x, double) { return x > 0 ? 1.0 : 0.0; });
      } else if (op == "Sigmoid") {
        unary([](double, double s) { return s * (1 - s); });
      } else if (op == "Tanh") {
        unary([](double, double t) { return 1 - t * t; });
      } else if (op == "Exp") {
        unary([](double, double e) { return e; });
      } else if (op == "Log") {
        unary([](double x, double) { return 1 / x; });
      } else if (op == "Sqrt") {
        unary([](double, double s) { return 0.5 / s; });
      } else {  // MatMul: dA = dC B^T, dB = A^T dC
        const Real& b = value.at(node->inputs[1]);
        accumulate(in0, matmul2d(g, b, false, true));
        accumulate(node->inputs[1], matmul2d(a, g, true, false));
      }
    }
    Outputs out;
    for (size_t i = 0; i < xs_.size(); ++i) {
      const Tensor& x = *xs_in[i];
      auto it = adj.find(xs_[i]);
      out.push_back(dispatch<FloatTypes>(x.dtype(), [&]<typename T>() {
        Tensor d(x.dtype(), x.shape());  // zero: y does not depend on x_i
        if (it != adj.end()) {
          T* p = d.data<T>();
          for (size_t e = 0; e < it->second.v.size(); ++e) p[e] = narrow<T>(it->second.v[e]);
        }
        return d;
      }));
    }
    return out;
  }

 private:
  std::vector<std::string> xs_, zs_;
  std::string y_;
  std::map<std::string, Real> constants_;
  std::vector<const ir::Node*> nodes_;  // the differentiated part, in graph order
};
PARITY_REF_OP("ai.onnx.preview.training", "Gradient", 1, kOpsetMax, Gradient);

}  // namespace
}  // namespace parity::ref
