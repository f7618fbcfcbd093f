// Attention (opsets 23 and 24): scaled dot-product attention over Q, K, V with
//   scores = scale * Q K^T                       (qk_matmul_output_mode 0)
//   capped = softcap * tanh(scores / softcap)    (mode 1; only when softcap > 0)
//   biased = capped + mask + causal bias         (mode 2)
//   probs  = softmax(biased) over the keys       (mode 3)
//   Y      = probs V
// Softcap comes before the mask as in ONNX's reference implementation (onnx/reference/ops/
// op_attention.py) and ONNX Runtime: the operator page's diagram draws the mask first, which
// would turn a masked key's -inf into -softcap and let it take part. Inputs are 4-D (batch,
// heads, sequence, head_size) or 3-D (batch, sequence, heads * head_size) with q_num_heads and
// kv_num_heads given. Grouped-query heads: query head h reads key/value head
// h / (q_heads / kv_heads). past_key/past_value are concatenated before K/V along the sequence
// (present_key/present_value are the results). The boolean mask keeps the keys where it is
// true; a float mask is added; a mask shorter than the keys is padded with -inf. is_causal
// masks the keys j > i + offset: offset 0 without a cache (the upper-left alignment the
// specification names), the past length with past_key (the new queries follow the cached
// keys), and nonpad_kv_seqlen[b] - q_len with opset 24's nonpad_kv_seqlen, as ONNX's reference
// and ONNX Runtime align it. nonpad_kv_seqlen also masks the keys j >= nonpad_kv_seqlen[b].
// Everything is computed in double
// and each output rounded once, so softmax_precision (which can only ask for float, float16,
// double or bfloat16) changes nothing but is checked.
#include <cmath>
#include <limits>

#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

Tensor tensor_of(DataType dtype, const Shape& shape, const std::vector<double>& v) {
  return dispatch<FloatTypes>(dtype, [&]<typename T>() {
    Tensor t = uninitialized_tensor(dtype, shape);
    T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = narrow<T>(v[i]);
    return t;
  });
}

// One of Q, K, V as (batch, heads, seq, head_size) doubles.
struct Heads {
  int64_t batch = 0, heads = 0, seq = 0, size = 0;
  std::vector<double> v;
  double at(int64_t b, int64_t h, int64_t s, int64_t d) const {
    return v[static_cast<size_t>(((b * heads + h) * seq + s) * size + d)];
  }
};

class Attention : public Kernel {
 public:
  explicit Attention(const OpContext& ctx)
      : is_causal_(ctx.attr_int("is_causal", 0)),
        q_num_heads_(ctx.attr_int("q_num_heads", 0)),
        kv_num_heads_(ctx.attr_int("kv_num_heads", 0)),
        mode_(ctx.attr_int("qk_matmul_output_mode", 0)),
        softcap_(ctx.attr_float("softcap", 0.0f)),
        has_scale_(ctx.has_attr("scale")),
        scale_(ctx.attr_float("scale", 1.0f)),
        opset_(ctx.opset()) {
    if (is_causal_ != 0 && is_causal_ != 1)
      ctx.fail("attribute 'is_causal' is {}; it must be 0 or 1", is_causal_);
    if (mode_ < 0 || mode_ > 3)
      ctx.fail(
          "attribute 'qk_matmul_output_mode' is {}; valid: 0 (QK), 1 (after softcap), "
          "2 (with the mask), 3 (after softmax)",
          mode_);
    if (softcap_ < 0) ctx.fail("attribute 'softcap' is {}; it must be >= 0", softcap_);
    if (ctx.has_attr("softmax_precision")) {
      const int64_t p = ctx.attr_int("softmax_precision");
      if (p != 1 && p != 10 && p != 11 && p != 16)
        ctx.fail(
            "attribute 'softmax_precision' is {}; valid: 1 (float), 10 (float16), "
            "11 (double), 16 (bfloat16)",
            p);
    }
    if (q_num_heads_ < 0 || kv_num_heads_ < 0)
      ctx.fail("attributes q_num_heads ({}) and kv_num_heads ({}) must be positive", q_num_heads_,
               kv_num_heads_);
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& q_in = input_tensor(in, 0, "Q");
    const Tensor& k_in = input_tensor(in, 1, "K");
    const Tensor& v_in = input_tensor(in, 2, "V");
    const Tensor* mask = optional_input(in, 3, "attn_mask");
    const Tensor* past_k = optional_input(in, 4, "past_key");
    const Tensor* past_v = optional_input(in, 5, "past_value");
    const Tensor* nonpad = optional_input(in, 6, "nonpad_kv_seqlen");
    if (nonpad && opset_ < 24)
      ctx.fail("input 'nonpad_kv_seqlen' is new in opset 24; the model's opset is {}", opset_);
    if (q_in.dtype() != k_in.dtype())
      ctx.fail("Q is {} and K is {}; they must have one type", dtype_name(q_in.dtype()),
               dtype_name(k_in.dtype()));
    if (q_in.rank() != k_in.rank() || q_in.rank() != v_in.rank() ||
        (q_in.rank() != 3 && q_in.rank() != 4))
      ctx.fail("Q {}, K {} and V {} must all be 3-D or all 4-D", shape_str(q_in.shape()),
               shape_str(k_in.shape()), shape_str(v_in.shape()));
    const bool three_d = q_in.rank() == 3;
    if (three_d && (q_num_heads_ == 0 || kv_num_heads_ == 0))
      ctx.fail("3-D inputs need attributes q_num_heads and kv_num_heads");
    Heads q = heads_of(q_in, q_num_heads_, "Q", ctx);
    Heads k = heads_of(k_in, kv_num_heads_, "K", ctx);
    Heads v = heads_of(v_in, kv_num_heads_, "V", ctx);
    if (k.batch != q.batch || v.batch != q.batch || k.heads != v.heads || k.seq != v.seq ||
        k.size != q.size)
      ctx.fail(
          "Q {}, K {} and V {} disagree: they need one batch size, K and V one number "
          "of heads and one sequence length, Q and K one head size",
          shape_str(q_in.shape()), shape_str(k_in.shape()), shape_str(v_in.shape()));
    if (k.heads == 0 || q.heads % k.heads != 0)
      ctx.fail(
          "{} query heads cannot be shared among {} key/value heads: q_num_heads must be "
          "a multiple of kv_num_heads",
          q.heads, k.heads);
    if ((past_k == nullptr) != (past_v == nullptr))
      ctx.fail("past_key and past_value must be given together");
    int64_t past_len = 0;
    if (past_k) {
      if (nonpad) ctx.fail("nonpad_kv_seqlen cannot be used with past_key and past_value");
      Heads pk = cache_of(*past_k, k, "past_key", ctx);
      Heads pv = cache_of(*past_v, v, "past_value", ctx);
      if (pk.seq != pv.seq)
        ctx.fail("past_key {} and past_value {} have different sequence lengths",
                 shape_str(past_k->shape()), shape_str(past_v->shape()));
      past_len = pk.seq;
      k = concat_seq(pk, k);
      v = concat_seq(pv, v);
    }
    const int64_t total = k.seq;
    const int64_t sq = q.seq, hq = q.heads, group = q.heads / k.heads;
    std::vector<int64_t> valid(static_cast<size_t>(q.batch), total);
    std::vector<int64_t> causal_offset(static_cast<size_t>(q.batch), past_len);
    if (nonpad) {
      std::vector<int64_t> n = read_int64s(*nonpad, "input 'nonpad_kv_seqlen'");
      if (nonpad->dtype() != DataType::kInt64 || nonpad->shape() != Shape{q.batch})
        ctx.fail("input 'nonpad_kv_seqlen' is {} {}; it must be int64 of shape ({},)",
                 dtype_name(nonpad->dtype()), shape_str(nonpad->shape()), q.batch);
      for (size_t b = 0; b < n.size(); ++b) {
        if (n[b] < 0 || n[b] > total)
          ctx.fail("nonpad_kv_seqlen[{}] is {}; it must be in [0, {}]", b, n[b], total);
        valid[b] = n[b];
        causal_offset[b] = n[b] - sq;
      }
    }
    // The bias for every (batch, head, query, key): mask, padding and causal part.
    const Shape score_shape{q.batch, hq, sq, total};
    std::vector<double> bias = mask_bias(mask, score_shape, q_in.dtype(), ctx);
    const double scale = has_scale_ ? scale_ : 1.0 / std::sqrt(static_cast<double>(q.size));

    std::vector<double> qk_out(static_cast<size_t>(q.batch * hq * sq * total));
    std::vector<double> y(static_cast<size_t>(q.batch * hq * sq * v.size));
    parallel_for(q.batch * hq * sq, grain_for(total * (q.size + v.size)),
                 [&](int64_t begin, int64_t end) {
                   std::vector<double> s(static_cast<size_t>(total));
                   for (int64_t row = begin; row < end; ++row) {
                     const int64_t i = row % sq, h = (row / sq) % hq, b = row / (sq * hq);
                     const int64_t hk = h / group;
                     const double* brow = bias.empty() ? nullptr : bias.data() + row * total;
                     double* qk = qk_out.data() + row * total;
                     for (int64_t j = 0; j < total; ++j) {
                       double dot = 0;
                       for (int64_t d = 0; d < q.size; ++d)
                         dot += q.at(b, h, i, d) * k.at(b, hk, j, d);
                       double x = scale * dot;
                       if (mode_ == 0) qk[j] = x;
                       if (softcap_ > 0) x = softcap_ * std::tanh(x / softcap_);
                       if (mode_ == 1) qk[j] = x;
                       if (brow) x += brow[j];
                       if (j >= valid[b] || (is_causal_ && j > i + causal_offset[b])) x = kNegInf;
                       if (mode_ == 2) qk[j] = x;
                       s[j] = x;
                     }
                     double top = kNegInf;
                     for (int64_t j = 0; j < total; ++j) top = std::max(top, s[j]);
                     double sum = 0;
                     for (int64_t j = 0; j < total; ++j) sum += (s[j] = std::exp(s[j] - top));
                     for (int64_t j = 0; j < total; ++j)
                       s[j] /= sum;  // a row masked everywhere is NaN
                     if (mode_ == 3) std::copy(s.begin(), s.end(), qk);
                     double* yr = y.data() + row * v.size;
                     for (int64_t d = 0; d < v.size; ++d) {
                       double acc = 0;
                       for (int64_t j = 0; j < total; ++j) acc += s[j] * v.at(b, hk, j, d);
                       yr[d] = acc;
                     }
                   }
                 });

    Outputs out(ctx.node().outputs.size());
    if (three_d) {  // (batch, heads, seq, size) -> (batch, seq, heads * size)
      std::vector<double> t(y.size());
      for (int64_t b = 0; b < q.batch; ++b)
        for (int64_t h = 0; h < hq; ++h)
          for (int64_t i = 0; i < sq; ++i)
            for (int64_t d = 0; d < v.size; ++d)
              t[((b * sq + i) * hq + h) * v.size + d] = y[((b * hq + h) * sq + i) * v.size + d];
      out[0] = tensor_of(q_in.dtype(), {q.batch, sq, hq * v.size}, t);
    } else {
      out[0] = tensor_of(q_in.dtype(), {q.batch, hq, sq, v.size}, y);
    }
    auto wanted = [&](size_t i) {
      return i < ctx.node().outputs.size() && !ctx.node().outputs[i].empty();
    };
    if (wanted(1)) out[1] = tensor_of(k_in.dtype(), {k.batch, k.heads, k.seq, k.size}, k.v);
    if (wanted(2)) out[2] = tensor_of(v_in.dtype(), {v.batch, v.heads, v.seq, v.size}, v.v);
    if (wanted(3)) out[3] = tensor_of(q_in.dtype(), score_shape, qk_out);
    for (size_t i = 1; i < out.size(); ++i)
      if (!wanted(i)) out[i] = Value::none();
    return out;
  }

 private:
  // Q, K or V as (batch, heads, seq, size); 3-D inputs are split into `num_heads` heads.
  static Heads heads_of(const Tensor& t, int64_t num_heads, std::string_view what,
                        RunContext& ctx) {
    Heads h;
    const Shape& s = t.shape();
    h.batch = s[0];
    std::vector<double> values = read_doubles(t, fmt::format("input {}", what));
    if (t.rank() == 4) {
      h.heads = s[1], h.seq = s[2], h.size = s[3];
      h.v = std::move(values);
      return h;
    }
    if (s[2] % num_heads != 0)
      ctx.fail("input {} {} has a hidden size of {}, not a multiple of its {} heads", what,
               shape_str(s), s[2], num_heads);
    h.heads = num_heads, h.seq = s[1], h.size = s[2] / num_heads;
    h.v.resize(values.size());
    for (int64_t b = 0; b < h.batch; ++b)
      for (int64_t i = 0; i < h.seq; ++i)
        for (int64_t n = 0; n < h.heads; ++n)
          for (int64_t d = 0; d < h.size; ++d)
            h.v[((b * h.heads + n) * h.seq + i) * h.size + d] =
                values[((b * h.seq + i) * h.heads + n) * h.size + d];
    return h;
  }

  // A past cache: 4-D (batch, kv_heads, past_seq, size) matching `like`.
  static Heads cache_of(const Tensor& t, const Heads& like, std::string_view what,
                        RunContext& ctx) {
    const Shape& s = t.shape();
    if (t.rank() != 4 || s[0] != like.batch || s[1] != like.heads || s[3] != like.size)
      ctx.fail("input {} is {}; it must be (batch {}, heads {}, past length, head size {})", what,
               shape_str(s), like.batch, like.heads, like.size);
    Heads h{s[0], s[1], s[2], s[3], read_doubles(t, fmt::format("input {}", what))};
    return h;
  }

  static Heads concat_seq(const Heads& a, const Heads& b) {
    Heads c{a.batch, a.heads, a.seq + b.seq, a.size, {}};
    c.v.resize(static_cast<size_t>(c.batch * c.heads * c.seq * c.size));
    for (int64_t n = 0; n < c.batch; ++n)
      for (int64_t h = 0; h < c.heads; ++h)
        for (int64_t s = 0; s < c.seq; ++s)
          for (int64_t d = 0; d < c.size; ++d)
            c.v[((n * c.heads + h) * c.seq + s) * c.size + d] =
                s < a.seq ? a.at(n, h, s, d) : b.at(n, h, s - a.seq, d);
    return c;
  }

  // The mask as an additive bias of shape `out` (empty when there is no mask). The mask
  // broadcasts to `out` once its last dim is padded to the key count (-inf / false).
  static std::vector<double> mask_bias(const Tensor* mask, const Shape& out, DataType q_type,
                                       RunContext& ctx) {
    if (!mask) return {};
    const bool is_bool = mask->dtype() == DataType::kBool;
    if (!is_bool && mask->dtype() != q_type)
      ctx.fail("attn_mask is {}; it must be bool or the type of Q ({})", dtype_name(mask->dtype()),
               dtype_name(q_type));
    Shape ms = mask->shape();
    if (ms.empty() || ms.size() > 4) ctx.fail("attn_mask {} must have 1 to 4 dims", shape_str(ms));
    const int64_t total = out[3], mlen = ms.back();
    if (mlen > total)
      ctx.fail("attn_mask {} has {} keys; at most {} (past plus current) are allowed",
               shape_str(ms), mlen, total);
    std::vector<double> mv;
    if (is_bool) {
      const bool* p = mask->data<bool>();
      mv.resize(static_cast<size_t>(mask->numel()));
      for (size_t i = 0; i < mv.size(); ++i) mv[i] = p[i] ? 0.0 : kNegInf;
    } else {
      mv = read_doubles(*mask, "input attn_mask");
    }
    Shape padded = ms;
    padded.back() = total;
    while (padded.size() < 4) padded.insert(padded.begin(), 1);
    for (size_t d = 0; d < 4; ++d)
      if (padded[d] != 1 && padded[d] != out[d])
        ctx.fail("attn_mask {} does not broadcast to (batch, q_heads, q_seq, keys) {}",
                 shape_str(ms), shape_str(out));
    std::vector<double> bias(static_cast<size_t>(shape_numel(out)));
    const Shape ps = strides_of(padded);
    for (int64_t n = 0; n < out[0]; ++n)
      for (int64_t h = 0; h < out[1]; ++h)
        for (int64_t i = 0; i < out[2]; ++i)
          for (int64_t j = 0; j < total; ++j) {
            double x = kNegInf;
            if (j < mlen) {
              const int64_t row = (padded[0] == 1 ? 0 : n) * ps[0] / total +
                                  (padded[1] == 1 ? 0 : h) * ps[1] / total +
                                  (padded[2] == 1 ? 0 : i) * ps[2] / total;
              x = mv[static_cast<size_t>(row * mlen + j)];
            }
            bias[static_cast<size_t>(((n * out[1] + h) * out[2] + i) * total + j)] = x;
          }
    return bias;
  }

  int64_t is_causal_, q_num_heads_, kv_num_heads_, mode_;
  double softcap_;
  bool has_scale_;
  double scale_;
  int64_t opset_;
};
// Versions 23, 24 (nonpad_kv_seqlen).
PARITY_REF_OP("", "Attention", 23, kOpsetMax, Attention);

}  // namespace
}  // namespace parity::ref
