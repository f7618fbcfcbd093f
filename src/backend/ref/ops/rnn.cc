// Recurrent layers: RNN, GRU and LSTM (one layer, forward / reverse / bidirectional).
//
// Each (direction, batch entry) is an independent chain of time steps, so chains run in
// parallel and each one is computed in one fixed order. The whole recurrence, hidden and cell
// state included, is kept in double; only the values written to Y, Y_h and Y_c are rounded to
// the element type.
//
// Speed without changing a bit: the input products x_t · W of every time step are one GEMM
// before the recurrence (matmul_util.h), and the recurrent products h · R one vectorized
// matrix-vector product per step (gemv_unfused, over R transposed); both sum each element's
// products in increasing index from zero, as the scalar dot product did, with products rounded
// alike (fused only where they are exact). The gate activations stay glibc's scalar functions:
// their double results feed the next step, so a vector function that differs from glibc in the
// last bit of a double would change the state, not just a rounding (vector_math.h's guard
// only proves a result's rounding to the element type).
//
// Gate order in W, R and B follows the spec: RNN [i], GRU [z, r, h], LSTM [i, o, f, c];
// peepholes P are [i, o, f]. Versions 1 and 3 (GRU) / 7 / 14 differ only by attributes:
// output_sequence (1, ignored: which outputs exist is said by the node), linear_before_reset
// (GRU from 3) and layout (14), so one kernel reads each attribute where its version has it.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "backend/ref/ops/gemm_kernel.h"
#include "backend/ref/ops/kernel_util.h"
#include "backend/ref/ops/matmul_util.h"
#include "core/checked_math.h"
#include "core/limits.h"

namespace parity::ref {
namespace {

using RecurrentTypes = TypeList<float, double, float16>;

enum class CellKind { kRnn, kGru, kLstm };
enum class Direction { kForward, kReverse, kBidirectional };

enum class ActivationKind {
  kRelu,
  kTanh,
  kSigmoid,
  kAffine,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kHardSigmoid,
  kElu,
  kSoftsign,
  kSoftplus
};

struct ActivationInfo {
  const char* name;
  ActivationKind kind;
  bool uses_alpha, uses_beta;
  double default_alpha, default_beta;  // those of the ONNX operators of the same name
};

constexpr ActivationInfo kActivations[] = {
    {"Relu", ActivationKind::kRelu, false, false, 0, 0},
    {"Tanh", ActivationKind::kTanh, false, false, 0, 0},
    {"Sigmoid", ActivationKind::kSigmoid, false, false, 0, 0},
    {"Affine", ActivationKind::kAffine, true, true, 1.0, 0.0},
    {"LeakyRelu", ActivationKind::kLeakyRelu, true, false, 0.01, 0},
    {"ThresholdedRelu", ActivationKind::kThresholdedRelu, true, false, 1.0, 0},
    {"ScaledTanh", ActivationKind::kScaledTanh, true, true, 1.0, 1.0},
    {"HardSigmoid", ActivationKind::kHardSigmoid, true, true, 0.2, 0.5},
    {"Elu", ActivationKind::kElu, true, false, 1.0, 0},
    {"Softsign", ActivationKind::kSoftsign, false, false, 0, 0},
    {"Softplus", ActivationKind::kSoftplus, false, false, 0, 0},
};

struct Activation {
  ActivationKind kind = ActivationKind::kTanh;
  double alpha = 0, beta = 0;

  double operator()(double x) const {
    switch (kind) {
      case ActivationKind::kRelu:
        return x < 0 ? 0.0 : x;
      case ActivationKind::kTanh:
        return std::tanh(x);
      case ActivationKind::kSigmoid:
        return 1.0 / (1.0 + std::exp(-x));
      case ActivationKind::kAffine:
        return alpha * x + beta;
      case ActivationKind::kLeakyRelu:
        return x >= 0 ? x : alpha * x;
      case ActivationKind::kThresholdedRelu:
        return x > alpha ? x : 0.0;
      case ActivationKind::kScaledTanh:
        return alpha * std::tanh(beta * x);
      case ActivationKind::kHardSigmoid:
        return std::clamp(alpha * x + beta, 0.0, 1.0);
      case ActivationKind::kElu:
        return x >= 0 ? x : alpha * std::expm1(x);
      case ActivationKind::kSoftsign:
        return x / (1.0 + std::abs(x));
      case ActivationKind::kSoftplus:
        return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
    }
    return x;
  }
};

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char p, char q) {
           return std::tolower(static_cast<unsigned char>(p)) ==
                  std::tolower(static_cast<unsigned char>(q));
         });
}

// The activations of every direction, forward first. A list naming one direction's
// activations serves both directions of a bidirectional layer (as ONNX Runtime accepts).
// activation_alpha / activation_beta are consumed in order by the activations that use them;
// a missing value takes the default of the ONNX operator of the same name.
std::vector<Activation> read_activations(const OpContext& ctx, std::vector<std::string> defaults,
                                         int64_t num_directions) {
  const size_t per_direction = defaults.size();
  std::vector<std::string> names = ctx.attr_strings("activations", {});
  if (names.empty()) names = defaults;
  if (names.size() == per_direction && num_directions == 2) {
    const std::vector<std::string> one_direction = names;
    names.insert(names.end(), one_direction.begin(), one_direction.end());
  }
  if (names.size() != per_direction * static_cast<size_t>(num_directions))
    ctx.fail(
        "attribute 'activations' has {} names; it needs {} per direction for {} "
        "direction(s)",
        names.size(), per_direction, num_directions);
  const std::vector<float> alphas = ctx.attr_floats("activation_alpha", {});
  const std::vector<float> betas = ctx.attr_floats("activation_beta", {});
  size_t next_alpha = 0, next_beta = 0;
  std::vector<Activation> out;
  for (const std::string& name : names) {
    const ActivationInfo* info = nullptr;
    for (const ActivationInfo& a : kActivations)
      if (same_name(a.name, name)) info = &a;
    if (!info)
      ctx.fail(
          "activation '{}' is not an RNN activation; valid choices: "
          "Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, "
          "HardSigmoid, Elu, Softsign, Softplus",
          name);
    Activation act{info->kind, info->default_alpha, info->default_beta};
    if (info->uses_alpha && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
    if (info->uses_beta && next_beta < betas.size()) act.beta = betas[next_beta++];
    out.push_back(act);
  }
  return out;
}

// Where each chain's values live in X, Y and the state tensors, for both layouts.
struct Geometry {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
  bool batch_first = false;  // layout 1

  int64_t x_offset(int64_t t, int64_t b) const {
    return (batch_first ? b * seq + t : t * batch + b) * input;
  }
  int64_t y_offset(int64_t t, int64_t d, int64_t b) const {
    return (batch_first ? (b * seq + t) * dirs + d : (t * dirs + d) * batch + b) * hidden;
  }
  int64_t state_offset(int64_t d, int64_t b) const {
    return (batch_first ? b * dirs + d : d * batch + b) * hidden;
  }
  Shape y_shape() const {
    return batch_first ? Shape{batch, seq, dirs, hidden} : Shape{seq, dirs, batch, hidden};
  }
  Shape state_shape() const {
    return batch_first ? Shape{batch, dirs, hidden} : Shape{dirs, batch, hidden};
  }
};

std::vector<double> doubles_of(const Tensor* t) {
  return t ? read_doubles<RecurrentTypes>(*t, "the input") : std::vector<double>{};
}

class Recurrent : public Kernel {
 public:
  Recurrent(const OpContext& ctx, CellKind cell) : cell_(cell) {
    gates_ = cell == CellKind::kRnn ? 1 : cell == CellKind::kGru ? 3 : 4;
    const std::string direction = ctx.attr_string("direction", "forward");
    if (direction == "forward")
      direction_ = Direction::kForward;
    else if (direction == "reverse")
      direction_ = Direction::kReverse;
    else if (direction == "bidirectional")
      direction_ = Direction::kBidirectional;
    else
      ctx.fail("attribute 'direction' is '{}'; valid choices: forward, reverse, bidirectional",
               direction);
    const int64_t dirs = direction_ == Direction::kBidirectional ? 2 : 1;
    std::vector<std::string> defaults = cell == CellKind::kRnn ? std::vector<std::string>{"Tanh"}
                                        : cell == CellKind::kGru
                                            ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                            : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    activations_ = read_activations(ctx, std::move(defaults), dirs);
    if (ctx.has_attr("clip")) {
      clip_ = ctx.attr_float("clip");
      if (!(clip_ > 0)) ctx.fail("attribute 'clip' is {}; it must be > 0", clip_);
    }
    hidden_size_ = ctx.attr_int("hidden_size", -1);
    if (cell == CellKind::kGru && ctx.opset() >= 3)
      linear_before_reset_ = ctx.attr_int("linear_before_reset", 0) != 0;
    if (cell == CellKind::kLstm) input_forget_ = ctx.attr_int("input_forget", 0) != 0;
    if (ctx.opset() >= 14) {
      const int64_t layout = ctx.attr_int("layout", 0);
      if (layout != 0 && layout != 1)
        ctx.fail("attribute 'layout' is {}; valid choices: 0, 1", layout);
      batch_first_ = layout == 1;
    }
    for (size_t i = 0; i < ctx.num_outputs(); ++i)
      wanted_.push_back(!ctx.node().outputs[i].empty());
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    return dispatch<RecurrentTypes>(
        x.dtype(), [&]<typename T>() { return compute<T>(in, ctx); }, "input X");
  }

 private:
  // Checks that `t` (when present) has `dtype` and shape `want`; throws naming the input.
  static void check_input(RunContext& ctx, const Tensor* t, const char* name, DataType dtype,
                          const Shape& want) {
    if (!t) return;
    if (t->dtype() != dtype)
      ctx.fail("input '{}' has element type {}; it must have X's type {}", name,
               dtype_name(t->dtype()), dtype_name(dtype));
    if (t->shape() != want)
      ctx.fail("input '{}' has shape {}; it must be {} (from X, R and the attributes)", name,
               shape_str(t->shape()), shape_str(want));
  }

  template <typename T>
  Outputs compute(const Inputs& in, RunContext& ctx) const {
    const Tensor& x = input_tensor(in, 0, "X");
    const Tensor& w = input_tensor(in, 1, "W");
    const Tensor& r = input_tensor(in, 2, "R");
    const Tensor* b = optional_input(in, 3, "B");
    const Tensor* lens = optional_input(in, 4, "sequence_lens");
    const Tensor* h0 = optional_input(in, 5, "initial_h");
    const bool lstm = cell_ == CellKind::kLstm;
    const Tensor* c0 = lstm ? optional_input(in, 6, "initial_c") : nullptr;
    const Tensor* p = lstm ? optional_input(in, 7, "P") : nullptr;

    Geometry g;
    g.batch_first = batch_first_;
    g.dirs = direction_ == Direction::kBidirectional ? 2 : 1;
    if (x.rank() != 3)
      ctx.fail("input 'X' has shape {}; it must have rank 3", shape_str(x.shape()));
    g.seq = x.shape()[batch_first_ ? 1 : 0];
    g.batch = x.shape()[batch_first_ ? 0 : 1];
    g.input = x.shape()[2];
    if (r.rank() != 3)
      ctx.fail("input 'R' has shape {}; it must have rank 3", shape_str(r.shape()));
    g.hidden = r.shape()[2];
    if (hidden_size_ >= 0 && hidden_size_ != g.hidden)
      ctx.fail("input 'R' has shape {}; its last dim must equal hidden_size {}",
               shape_str(r.shape()), hidden_size_);
    const int64_t gh = gates_ * g.hidden;
    const DataType dt = x.dtype();
    check_input(ctx, &w, "W", dt, {g.dirs, gh, g.input});
    check_input(ctx, &r, "R", dt, {g.dirs, gh, g.hidden});
    check_input(ctx, b, "B", dt, {g.dirs, 2 * gh});
    check_input(ctx, h0, "initial_h", dt, g.state_shape());
    check_input(ctx, c0, "initial_c", dt, g.state_shape());
    check_input(ctx, p, "P", dt, {g.dirs, 3 * g.hidden});
    std::vector<int64_t> seq_lens(static_cast<size_t>(g.batch), g.seq);
    if (lens) {
      if (lens->shape() != Shape{g.batch})
        ctx.fail("input 'sequence_lens' has shape {}; it must be ({},), one length per batch entry",
                 shape_str(lens->shape()), g.batch);
      seq_lens = read_int64s(*lens, "input 'sequence_lens'");
      for (int64_t len : seq_lens)
        if (len < 0 || len > g.seq)
          ctx.fail("input 'sequence_lens' holds {}; each length must be in [0, {}]", len, g.seq);
    }

    const std::vector<double> wd = doubles_of(&w), rd = doubles_of(&r), bd = doubles_of(b),
                              h0d = doubles_of(h0), c0d = doubles_of(c0), pd = doubles_of(p);
    auto want = [&](size_t i) { return i < wanted_.size() && wanted_[i]; };
    Tensor y = want(0) ? Tensor(dt, g.y_shape()) : Tensor();  // zero-filled: padded steps stay 0
    Tensor yh = want(1) ? uninitialized_tensor(dt, g.state_shape()) : Tensor();
    Tensor yc = want(2) && lstm ? uninitialized_tensor(dt, g.state_shape()) : Tensor();
    const T* xp = x.data<T>();
    T* yp = y.defined() ? y.data<T>() : nullptr;
    T* yhp = yh.defined() ? yh.data<T>() : nullptr;
    T* ycp = yc.defined() ? yc.data<T>() : nullptr;

    // x_t · W_d[k] for every time step and direction: xw[(d * rows + t * batch + b) * gh + k].
    const int64_t rows = g.seq * g.batch;
    check_scratch_allocation(saturating_mul(g.dirs * rows, gh), sizeof(double),
                             "the input products of every time step (in double)");
    std::vector<double> xw(static_cast<size_t>(g.dirs * rows * gh));
    {
      const PackedB<double> wp = pack_b<double>(
          g.dirs, g.input, gh,
          [&](int64_t d, int64_t p, int64_t k) { return wd[(d * gh + k) * g.input + p]; });
      std::vector<int64_t> which(static_cast<size_t>(g.dirs));
      for (int64_t d = 0; d < g.dirs; ++d) which[d] = d;
      multiply_blocks<double>(
          g.dirs, rows, wp, which,
          [&](int64_t, int64_t row, int64_t p) {
            return to_double(xp[g.x_offset(row / g.batch, row % g.batch) + p]);
          },
          [&](int64_t d, int64_t row, int64_t k0, int64_t count, const double* v) {
            std::copy(v, v + count, xw.data() + (d * rows + row) * gh + k0);
          },
          gemm_exact_products_v<T>);
    }
    // R transposed, [H, gh] per direction, for the recurrent products.
    std::vector<double> rt(rd.size());
    for (int64_t d = 0; d < g.dirs; ++d)
      for (int64_t k = 0; k < gh; ++k)
        for (int64_t i = 0; i < g.hidden; ++i)
          rt[(d * g.hidden + i) * gh + k] = rd[(d * gh + k) * g.hidden + i];

    const int64_t chains = g.dirs * g.batch;
    const int64_t work = g.seq * gh * g.hidden;
    parallel_for(chains, grain_for(work), [&](int64_t begin, int64_t end) {
      std::vector<double> h(g.hidden), c(g.hidden), pre(gh), rec(gh), next(g.hidden);
      for (int64_t chain = begin; chain < end; ++chain) {
        const int64_t d = chain / g.batch, bi = chain % g.batch;
        const bool reverse = direction_ == Direction::kReverse || d == 1;
        const int64_t so = g.state_offset(d, bi);
        for (int64_t j = 0; j < g.hidden; ++j) {
          h[j] = h0d.empty() ? 0.0 : h0d[so + j];
          c[j] = c0d.empty() ? 0.0 : c0d[so + j];
        }
        const Weights wt{rt.data() + d * g.hidden * gh,
                         bd.empty() ? nullptr : bd.data() + d * 2 * gh,
                         pd.empty() ? nullptr : pd.data() + d * 3 * g.hidden,
                         activations_.data() + d * activations_.size() / g.dirs};
        const int64_t len = seq_lens[bi];
        for (int64_t s = 0; s < len; ++s) {
          const int64_t t = reverse ? len - 1 - s : s;
          const double* xwt = xw.data() + (d * rows + t * g.batch + bi) * gh;
          step(g, wt, xwt, h.data(), c.data(), pre.data(), rec.data(), next.data());
          if (yp)
            for (int64_t j = 0; j < g.hidden; ++j) yp[g.y_offset(t, d, bi) + j] = narrow<T>(h[j]);
        }
        for (int64_t j = 0; j < g.hidden; ++j) {
          if (yhp) yhp[so + j] = narrow<T>(h[j]);
          if (ycp) ycp[so + j] = narrow<T>(c[j]);
        }
      }
    });
    Outputs out(wanted_.size());
    if (y.defined()) out[0] = std::move(y);
    if (yh.defined()) out[1] = std::move(yh);
    if (yc.defined()) out[2] = std::move(yc);
    return out;
  }

  // One direction's parameters, in double.
  struct Weights {
    const double* rt;  // [H, gates*H]: R transposed
    const double* b;   // [2*gates*H] (Wb then Rb) or null
    const double* p;   // [3*H] or null
    const Activation* act;
  };

  double clipped(double v) const { return clip_ > 0 ? std::clamp(v, -clip_, clip_) : v; }

  // rec[k] = v · R[k] for the gates k in [first * H, (first + count) * H), one sum per gate row
  // in increasing index.
  static void recurrent_products(const Geometry& g, const Weights& wt, const double* v,
                                 int64_t gates, int64_t first, int64_t count, double* rec) {
    const int64_t gh = gates * g.hidden;
    std::fill(rec + first * g.hidden, rec + (first + count) * g.hidden, 0.0);
    gemv_unfused(g.hidden, v, wt.rt + first * g.hidden, gh, count * g.hidden,
                 rec + first * g.hidden);
  }

  // pre[k] = (x · W[k] + Wb) (+ (h · R[k] + Rb) for gates in [0, with_r)), with xw = x · W and
  // rec = h · R.
  void gate_inputs(const Geometry& g, const Weights& wt, const double* xw, const double* rec,
                   double* pre, int64_t with_r) const {
    const int64_t gh = gates_ * g.hidden;
    for (int64_t k = 0; k < gh; ++k) {
      double v = xw[k] + (wt.b ? wt.b[k] : 0.0);
      if (k < with_r * g.hidden) v += rec[k] + (wt.b ? wt.b[gh + k] : 0.0);
      pre[k] = v;
    }
  }

  void step(const Geometry& g, const Weights& wt, const double* xw, double* h, double* c,
            double* pre, double* rec, double* next) const {
    const int64_t H = g.hidden;
    switch (cell_) {
      case CellKind::kRnn:
        recurrent_products(g, wt, h, gates_, 0, 1, rec);
        gate_inputs(g, wt, xw, rec, pre, 1);
        for (int64_t j = 0; j < H; ++j) h[j] = wt.act[0](clipped(pre[j]));
        return;
      case CellKind::kGru: {
        // z and r see h directly; the h gate sees r ⊙ h (or r ⊙ (h · R_h + Rb_h)).
        recurrent_products(g, wt, h, gates_, 0, linear_before_reset_ ? 3 : 2, rec);
        gate_inputs(g, wt, xw, rec, pre, 2);
        const double* rbh = wt.b ? wt.b + 3 * H + 2 * H : nullptr;
        double* z = pre;
        double* rg = pre + H;
        for (int64_t j = 0; j < H; ++j) {
          z[j] = wt.act[0](clipped(z[j]));
          rg[j] = wt.act[0](clipped(rg[j]));
        }
        for (int64_t j = 0; j < H; ++j) next[j] = rg[j] * h[j];
        if (!linear_before_reset_) recurrent_products(g, wt, next, gates_, 2, 1, rec);
        for (int64_t j = 0; j < H; ++j) {
          const double rb = rbh ? rbh[j] : 0.0;
          const double rec_h =
              linear_before_reset_ ? rg[j] * (rec[2 * H + j] + rb) : rec[2 * H + j] + rb;
          pre[2 * H + j] = wt.act[1](clipped(pre[2 * H + j] + rec_h));
        }
        for (int64_t j = 0; j < H; ++j) h[j] = (1 - z[j]) * pre[2 * H + j] + z[j] * h[j];
        return;
      }
      case CellKind::kLstm: {
        recurrent_products(g, wt, h, gates_, 0, 4, rec);
        gate_inputs(g, wt, xw, rec, pre, 4);
        double* i = pre;
        double* o = pre + H;
        double* f = pre + 2 * H;
        double* cc = pre + 3 * H;
        const double* pi = wt.p;
        const double* po = wt.p ? wt.p + H : nullptr;
        const double* pf = wt.p ? wt.p + 2 * H : nullptr;
        for (int64_t j = 0; j < H; ++j) {
          i[j] = wt.act[0](clipped(i[j] + (pi ? pi[j] * c[j] : 0.0)));
          // input_forget couples the gates: f = 1 - i.
          f[j] = input_forget_ ? 1.0 - i[j] : wt.act[0](clipped(f[j] + (pf ? pf[j] * c[j] : 0.0)));
          cc[j] = wt.act[1](clipped(cc[j]));
          c[j] = f[j] * c[j] + i[j] * cc[j];
          o[j] = wt.act[0](clipped(o[j] + (po ? po[j] * c[j] : 0.0)));
          h[j] = o[j] * wt.act[2](c[j]);
        }
        return;
      }
    }
  }

  CellKind cell_;
  int64_t gates_ = 1;
  Direction direction_ = Direction::kForward;
  std::vector<Activation> activations_;
  // Clip bounds the inputs of the gate activations (as ONNX Runtime applies it); 0 = no clip.
  double clip_ = 0;
  int64_t hidden_size_ = -1;
  bool linear_before_reset_ = false, input_forget_ = false, batch_first_ = false;
  std::vector<bool> wanted_;  // which outputs the node names
};

struct Rnn : Recurrent {
  explicit Rnn(const OpContext& ctx) : Recurrent(ctx, CellKind::kRnn) {}
};
struct Gru : Recurrent {
  explicit Gru(const OpContext& ctx) : Recurrent(ctx, CellKind::kGru) {}
};
struct Lstm : Recurrent {
  explicit Lstm(const OpContext& ctx) : Recurrent(ctx, CellKind::kLstm) {}
};
// RNN 1, 7, 14; GRU 1, 3, 7, 14; LSTM 1, 7, 14: the constructor reads each version's attributes.
PARITY_REF_OP("", "RNN", 1, kOpsetMax, Rnn);
PARITY_REF_OP("", "GRU", 1, kOpsetMax, Gru);
PARITY_REF_OP("", "LSTM", 1, kOpsetMax, Lstm);

}  // namespace
}  // namespace parity::ref
