// ONNX Runtime's Attention and MultiHeadAttention, domain com.microsoft
// (docs/ContribOperators.md of the onnxruntime repository; where the text is silent, ONNX
// Runtime's CPU kernels decide): BERT / GPT-2 self-attention with the Q/K/V projection folded
// in, and multi-head attention over given queries, keys and values.
//
// Scores are scale * Q K^T + mask + attention_bias, softmax over the keys, times V
// (ms_attention_util.h). The mask adds 0 to an attended key and mask_filter_value (default
// -10000) to a masked one; with unidirectional=1 every key after the query's own position
// (past included) is masked too. Projections and all the rest are in double, rounded once.
#include "backend/ref/ops/ms_attention_util.h"

namespace parity::ref {
namespace {

// The [B, S, T] additive mask of mask_index / key_padding_mask (int32) and causality:
// [B] (right padding: keys from mask[b] on are masked), [2B] (ends then starts: keys outside
// [start, end) masked), [B, T] and [B, S, T] (0 masks, anything else attends).
std::vector<double> additive_mask(const Tensor* mask, int64_t batch, int64_t q_len, int64_t kv_len,
                                  int64_t past_len, bool causal, double filter, RunContext& ctx) {
  std::vector<double> out(static_cast<size_t>(batch * q_len * kv_len), 0.0);
  auto at = [&](int64_t b, int64_t s, int64_t t) -> double& {
    return out[(b * q_len + s) * kv_len + t];
  };
  if (mask) {
    if (mask->dtype() != DataType::kInt32)
      ctx.fail("the mask has element type {}; it must be int32", dtype_name(mask->dtype()));
    const int32_t* m = mask->data<int32_t>();
    const Shape& ms = mask->shape();
    if (ms == Shape{batch} || ms == Shape{2 * batch}) {
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t end = m[b], start = ms[0] == 2 * batch ? m[batch + b] : 0;
        for (int64_t s = 0; s < q_len; ++s)
          for (int64_t t = 0; t < kv_len; ++t)
            if (t >= end || t < start) at(b, s, t) = filter;
      }
    } else if (ms == Shape{batch, kv_len} || ms == Shape{batch, q_len, kv_len}) {
      const bool per_query = ms.size() == 3;
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t s = 0; s < q_len; ++s)
          for (int64_t t = 0; t < kv_len; ++t)
            if (m[per_query ? (b * q_len + s) * kv_len + t : b * kv_len + t] == 0)
              at(b, s, t) = filter;
    } else {
      ctx.fail(
          "the mask has shape {}; supported: [{}] (lengths), [{}] (ends, starts), "
          "[{}, {}] or [{}, {}, {}] (0 = masked)",
          shape_str(ms), batch, 2 * batch, batch, kv_len, batch, q_len, kv_len);
    }
  }
  if (causal)
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t s = 0; s < q_len; ++s)
        for (int64_t t = past_len + s + 1; t < kv_len; ++t) at(b, s, t) = filter;
  return out;
}

// attention_bias [B or 1, N or 1, S, T] as doubles with its broadcast strides.
struct AttentionBias {
  std::vector<double> values;
  int64_t b_stride = 0, n_stride = 0, q_len = 0, kv_len = 0;
  double at(int64_t b, int64_t n, int64_t s, int64_t t) const {
    return values.empty() ? 0.0 : values[b * b_stride + n * n_stride + s * kv_len + t];
  }
};

AttentionBias attention_bias(const Tensor* t, const AttentionShape& a, RunContext& ctx) {
  AttentionBias ab;
  if (!t) return ab;
  const Shape& s = t->shape();
  if (s.size() != 4 || (s[0] != a.batch && s[0] != 1) || (s[1] != a.heads && s[1] != 1) ||
      s[2] != a.q_len || s[3] != a.kv_len)
    ctx.fail("attention_bias has shape {}; it must be [{} or 1, {} or 1, {}, {}]", shape_str(s),
             a.batch, a.heads, a.q_len, a.kv_len);
  ab.values = values_as_doubles(*t);
  ab.q_len = a.q_len;
  ab.kv_len = a.kv_len;
  ab.n_stride = s[1] == 1 ? 0 : a.q_len * a.kv_len;
  ab.b_stride = s[0] == 1 ? 0 : s[1] * a.q_len * a.kv_len;
  return ab;
}

// Keys or values [B, N, T, H] with a past [B, N, P, H] in front: [B, N, P + T, H].
std::vector<double> with_past(const std::vector<double>* past, const std::vector<double>& now,
                              int64_t bn, int64_t past_len, int64_t len, int64_t size) {
  std::vector<double> out(static_cast<size_t>(bn * (past_len + len) * size));
  for (int64_t i = 0; i < bn; ++i) {
    double* o = out.data() + i * (past_len + len) * size;
    if (past) std::copy_n(past->data() + i * past_len * size, past_len * size, o);
    std::copy_n(now.data() + i * len * size, len * size, o + past_len * size);
  }
  return out;
}

// Attention(input, weights, bias?, mask_index?, past?, attention_bias?, past_sequence_length?):
// Q, K, V = input [B, S, In] x weights [In, Dq + Dk + Dv] + bias, split into num_heads heads
// (qkv_hidden_sizes gives Dq, Dk, Dv; default three equal parts); past [2, B, N, P, H] is put
// before K and V. Attributes num_heads (required), scale (default 1/sqrt(head size)),
// unidirectional, mask_filter_value, qkv_hidden_sizes; do_rotary and past_present_share_buffer
// must be 0 (refused otherwise). Outputs output [B, S, Dv] and optional present
// [2, B, N, P + S, H].
class MsAttention : public Kernel {
 public:
  explicit MsAttention(const OpContext& ctx)
      : heads_(ctx.attr_int("num_heads")),
        scale_(ctx.attr_float("scale", 0.0f)),
        filter_(ctx.attr_float("mask_filter_value", -10000.0f)),
        causal_(attr_flag(ctx, "unidirectional")),
        qkv_sizes_(ctx.attr_ints("qkv_hidden_sizes", {})) {
    if (heads_ <= 0) ctx.fail("attribute 'num_heads' is {}; it must be positive", heads_);
    for (const char* name : {"do_rotary", "past_present_share_buffer"})
      if (ctx.attr_int(name, 0) != 0)
        ctx.fail("attribute '{}' is {}; Parity supports only 0", name, ctx.attr_int(name, 0));
    if (!qkv_sizes_.empty() && qkv_sizes_.size() != 3)
      ctx.fail("attribute 'qkv_hidden_sizes' has {} values; it must have 3", qkv_sizes_.size());
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "input");
    const Tensor& w = input_tensor(in, 1, "weights");
    const Tensor* bias = optional_input(in, 2, "bias");
    const Tensor* mask = optional_input(in, 3, "mask_index");
    const Tensor* past = optional_input(in, 4, "past");
    const Tensor* abias = optional_input(in, 5, "attention_bias");
    if (optional_input(in, 6, "past_sequence_length"))
      ctx.fail(
          "input past_sequence_length is given; it goes with past_present_share_buffer, "
          "which Parity does not support");
    if (x.rank() != 3) ctx.fail("input has shape {}; it must be [B, S, In]", shape_str(x.shape()));
    const int64_t batch = x.shape()[0], seq = x.shape()[1], in_size = x.shape()[2];
    if (w.rank() != 2 || w.shape()[0] != in_size)
      ctx.fail("weights has shape {}; it must be [{}, Dq + Dk + Dv]", shape_str(w.shape()),
               in_size);
    const int64_t total = w.shape()[1];
    std::vector<int64_t> sizes = qkv_sizes_;
    if (sizes.empty()) sizes = {total / 3, total / 3, total / 3};
    if (sizes[0] + sizes[1] + sizes[2] != total || sizes[0] != sizes[1] || sizes[0] % heads_ != 0 ||
        sizes[2] % heads_ != 0 || sizes[0] <= 0)
      ctx.fail(
          "Q/K/V sizes {}, {}, {} do not fit weights {} and num_heads {}: they must sum to "
          "the weights' columns, Q and K equal, each a multiple of num_heads",
          sizes[0], sizes[1], sizes[2], shape_str(w.shape()), heads_);
    for (const Tensor* t : {&w, bias, past, abias})
      if (t) check_same_dtype(x, *t, ctx, "input", "weights/bias/past/attention_bias");
    if (bias && bias->numel() != total)
      ctx.fail("bias has shape {}; it must hold {} values", shape_str(bias->shape()), total);
    AttentionShape a;
    a.batch = batch;
    a.heads = a.kv_heads = heads_;
    a.q_len = seq;
    a.head_size = sizes[0] / heads_;
    a.v_head_size = sizes[2] / heads_;
    int64_t past_len = 0;
    if (past) {
      const Shape& ps = past->shape();
      if (ps.size() != 5 || ps[0] != 2 || ps[1] != batch || ps[2] != heads_ ||
          ps[4] != a.head_size || a.head_size != a.v_head_size)
        ctx.fail(
            "past has shape {}; it must be [2, {}, {}, P, {}] (and V's head size equal "
            "Q's)",
            shape_str(ps), batch, heads_, a.head_size);
      past_len = ps[3];
    }
    a.kv_len = past_len + seq;

    // The projection, row by row: sums over In in order, then the bias.
    const std::vector<double> xv = values_as_doubles(x), wv = values_as_doubles(w);
    const std::vector<double> bv = bias ? values_as_doubles(*bias) : std::vector<double>();
    std::vector<double> proj(static_cast<size_t>(batch * seq * total));
    parallel_for(batch * seq, grain_for(in_size * total), [&](int64_t first, int64_t last) {
      for (int64_t r = first; r < last; ++r)
        for (int64_t j = 0; j < total; ++j) {
          double acc = 0;
          for (int64_t p = 0; p < in_size; ++p) acc += xv[r * in_size + p] * wv[p * total + j];
          proj[r * total + j] = bv.empty() ? acc : acc + bv[j];
        }
    });
    auto part = [&](int64_t offset, int64_t width) {
      std::vector<double> p(static_cast<size_t>(batch * seq * width));
      for (int64_t r = 0; r < batch * seq; ++r)
        std::copy_n(proj.data() + r * total + offset, width, p.data() + r * width);
      return split_heads(p.data(), batch, seq, heads_, width / heads_);
    };
    const std::vector<double> q = part(0, sizes[0]);
    std::vector<double> k = part(sizes[0], sizes[1]), v = part(sizes[0] + sizes[1], sizes[2]);
    std::vector<double> past_k, past_v;
    if (past) {
      const std::vector<double> pv = values_as_doubles(*past);
      const size_t half = pv.size() / 2;
      past_k.assign(pv.begin(), pv.begin() + half);
      past_v.assign(pv.begin() + half, pv.end());
    }
    k = with_past(past ? &past_k : nullptr, k, batch * heads_, past_len, seq, a.head_size);
    v = with_past(past ? &past_v : nullptr, v, batch * heads_, past_len, seq, a.v_head_size);

    const std::vector<double> m =
        additive_mask(mask, batch, seq, a.kv_len, past_len, causal_, filter_, ctx);
    const AttentionBias ab = attention_bias(abias, a, ctx);
    const double scale = scale_ != 0 ? scale_ : 1.0 / std::sqrt(static_cast<double>(a.head_size));
    const std::vector<double> y =
        attend(a, q, k, v, scale, 0.0, [&](int64_t b, int64_t n, int64_t s, int64_t t) {
          return m[(b * seq + s) * a.kv_len + t] + ab.at(b, n, s, t);
        });
    Outputs out = {tensor_from_doubles(x.dtype(), {batch, seq, sizes[2]}, y)};
    if (ctx.node().outputs.size() > 1) {
      if (ctx.node().outputs[1].empty()) {
        out.push_back(Value::none());
      } else {
        std::vector<double> present = k;
        present.insert(present.end(), v.begin(), v.end());
        out.push_back(
            tensor_from_doubles(x.dtype(), {2, batch, heads_, a.kv_len, a.head_size}, present));
      }
    }
    return out;
  }

 private:
  int64_t heads_;
  double scale_, filter_;
  bool causal_;
  std::vector<int64_t> qkv_sizes_;
};
PARITY_REF_OP("com.microsoft", "Attention", 1, kOpsetMax, MsAttention);

// MultiHeadAttention(query, key, value, bias?, key_padding_mask?, attention_bias?, past_key?,
// past_value?, past_sequence_length?, cache_indirection?): query [B, S, D]; key and value
// [B, L, D] / [B, L, Dv] (split into heads, bias [D + D + Dv] added to Q, K, V first) or
// already split [B, N, L, H] (no bias, no past); past_key / past_value [B, N, P, H] put before
// the new keys and values. Attributes num_heads (required), scale, unidirectional,
// mask_filter_value. Outputs output [B, S, Dv], optional present_key / present_value
// [B, N, P + L, H]. Packed QKV (query [B, S, N, 3, H], no key or value) and packed KV (key
// [B, L, N, 2, H], no value) are unpacked first; past_sequence_length, cache_indirection and the
// qk output are refused.
class MultiHeadAttention : public Kernel {
  // The `count` tensors [B, S, N*H] packed in `t` [B, S, N, count, H] (heads_ must be N).
  std::vector<Tensor> unpack_heads(const Tensor& t, int64_t count, const char* what,
                                   RunContext& ctx) const {
    const Shape& s = t.shape();
    if (s[2] != heads_ || s[3] != count)
      ctx.fail("{} has shape {}; packed it must be [B, S, {}, {}, H]", what, shape_str(s), heads_,
               count);
    const std::vector<double> x = values_as_doubles(t);
    const int64_t rows = s[0] * s[1], h = s[4];
    std::vector<std::vector<double>> parts(count, std::vector<double>(rows * heads_ * h));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t n = 0; n < heads_; ++n)
        for (int64_t c = 0; c < count; ++c)
          for (int64_t i = 0; i < h; ++i)
            parts[c][(r * heads_ + n) * h + i] = x[((r * heads_ + n) * count + c) * h + i];
    std::vector<Tensor> out;
    for (const auto& p : parts)
      out.push_back(tensor_from_doubles(t.dtype(), {s[0], s[1], heads_ * h}, p));
    return out;
  }

 public:
  explicit MultiHeadAttention(const OpContext& ctx)
      : heads_(ctx.attr_int("num_heads")),
        scale_(ctx.attr_float("scale", 0.0f)),
        filter_(ctx.attr_float("mask_filter_value", -10000.0f)),
        causal_(attr_flag(ctx, "unidirectional")) {
    if (heads_ <= 0) ctx.fail("attribute 'num_heads' is {}; it must be positive", heads_);
    if (ctx.num_outputs() > 3 && !ctx.node().outputs[3].empty())
      ctx.fail("output qk is asked for; Parity does not produce it");
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor* key = optional_input(in, 1, "key");
    const Tensor* value = optional_input(in, 2, "value");
    // Packed forms (ONNX Runtime's operator documentation): query [B, S, N, 3, H] holding Q,
    // K and V with key and value absent; or key [B, L, N, 2, H] holding K and V with value
    // absent. Each is unpacked into the [B, S, D] tensors of the separate form (moves only).
    Tensor unpacked_q, unpacked_k, unpacked_v;
    const Tensor* query_ptr = &input_tensor(in, 0, "query");
    if (!key && !value && query_ptr->rank() == 5) {
      std::vector<Tensor> parts = unpack_heads(*query_ptr, 3, "query", ctx);
      unpacked_q = parts[0];
      unpacked_k = parts[1];
      unpacked_v = parts[2];
      query_ptr = &unpacked_q;
      key = &unpacked_k;
      value = &unpacked_v;
    } else if (key && !value && key->rank() == 5) {
      std::vector<Tensor> parts = unpack_heads(*key, 2, "key", ctx);
      unpacked_k = parts[0];
      unpacked_v = parts[1];
      key = &unpacked_k;
      value = &unpacked_v;
    }
    const Tensor& query = *query_ptr;
    const Tensor* bias = optional_input(in, 3, "bias");
    const Tensor* mask = optional_input(in, 4, "key_padding_mask");
    const Tensor* abias = optional_input(in, 5, "attention_bias");
    const Tensor* past_key = optional_input(in, 6, "past_key");
    const Tensor* past_value = optional_input(in, 7, "past_value");
    if (!key || !value)
      ctx.fail(
          "key or value is absent; give both, or pack Q, K, V into query [B, S, N, 3, H] or "
          "K, V into key [B, L, N, 2, H]");
    for (int i : {8, 9})
      if (optional_input(in, i, "past_sequence_length / cache_indirection"))
        ctx.fail("input {} ({}) is given; Parity does not support it", i,
                 i == 8 ? "past_sequence_length" : "cache_indirection");
    if (query.rank() != 3)
      ctx.fail("query has shape {}; it must be [B, S, D]", shape_str(query.shape()));
    for (const Tensor* t : {key, value, bias, abias, past_key, past_value})
      if (t) check_same_dtype(query, *t, ctx, "query", "key/value/bias/attention_bias/past");
    const int64_t batch = query.shape()[0], seq = query.shape()[1], d = query.shape()[2];
    if (d % heads_ != 0)
      ctx.fail("query's hidden size {} is not a multiple of num_heads {}", d, heads_);
    AttentionShape a;
    a.batch = batch;
    a.heads = a.kv_heads = heads_;
    a.q_len = seq;
    a.head_size = d / heads_;
    const bool split = key->rank() == 4;
    int64_t kv_seq = 0, dv = 0;
    if (split) {
      const Shape& ks = key->shape();
      const Shape& vs = value->shape();
      if (ks[0] != batch || ks[1] != heads_ || ks[3] != a.head_size || vs.size() != 4 ||
          vs[0] != batch || vs[1] != heads_ || vs[2] != ks[2])
        ctx.fail("key / value have shapes {} / {}; they must be [{}, {}, L, {}] / [{}, {}, L, Hv]",
                 shape_str(ks), shape_str(vs), batch, heads_, a.head_size, batch, heads_);
      if (bias || past_key || past_value)
        ctx.fail(
            "bias or past is given with key [B, N, L, H]; Parity supports them with 3-D "
            "key and value only");
      kv_seq = ks[2];
      dv = vs[3] * heads_;
    } else {
      const Shape& ks = key->shape();
      const Shape& vs = value->shape();
      if (ks.size() != 3 || ks[0] != batch || ks[2] != d || vs.size() != 3 || vs[0] != batch ||
          vs[1] != ks[1] || vs[2] % heads_ != 0)
        ctx.fail(
            "key / value have shapes {} / {}; they must be [{}, L, {}] / [{}, L, Dv] (or "
            "[B, N, L, H])",
            shape_str(ks), shape_str(vs), batch, d, batch);
      kv_seq = ks[1];
      dv = vs[2];
    }
    a.v_head_size = dv / heads_;
    if (bias && bias->numel() != 2 * d + dv)
      ctx.fail("bias has shape {}; it must hold D + D + Dv = {} values", shape_str(bias->shape()),
               2 * d + dv);
    if ((past_key == nullptr) != (past_value == nullptr))
      ctx.fail("past_key and past_value must be given together");
    int64_t past_len = 0;
    if (past_key) {
      const Shape& pk = past_key->shape();
      const Shape& pv = past_value->shape();
      if (pk.size() != 4 || pk[0] != batch || pk[1] != heads_ || pk[3] != a.head_size ||
          pv != Shape{batch, heads_, pk[2], a.v_head_size})
        ctx.fail(
            "past_key / past_value have shapes {} / {}; they must be [{}, {}, P, {}] / "
            "[{}, {}, P, {}]",
            shape_str(pk), shape_str(pv), batch, heads_, a.head_size, batch, heads_, a.v_head_size);
      past_len = pk[2];
    }
    a.kv_len = past_len + kv_seq;

    const std::vector<double> bv = bias ? values_as_doubles(*bias) : std::vector<double>();
    auto project = [&](const Tensor& t, int64_t offset, int64_t width, int64_t len) {
      std::vector<double> x = values_as_doubles(t);
      if (!bv.empty())
        for (size_t i = 0; i < x.size(); ++i) x[i] += bv[offset + static_cast<int64_t>(i) % width];
      return split_heads(x.data(), batch, len, heads_, width / heads_);
    };
    const std::vector<double> q = project(query, 0, d, seq);
    std::vector<double> k = split ? values_as_doubles(*key) : project(*key, d, d, kv_seq);
    std::vector<double> v = split ? values_as_doubles(*value) : project(*value, 2 * d, dv, kv_seq);
    if (past_key) {
      const std::vector<double> pk = values_as_doubles(*past_key),
                                pv = values_as_doubles(*past_value);
      k = with_past(&pk, k, batch * heads_, past_len, kv_seq, a.head_size);
      v = with_past(&pv, v, batch * heads_, past_len, kv_seq, a.v_head_size);
    }
    const std::vector<double> m =
        additive_mask(mask, batch, seq, a.kv_len, past_len, causal_, filter_, ctx);
    const AttentionBias ab = attention_bias(abias, a, ctx);
    const double scale = scale_ != 0 ? scale_ : 1.0 / std::sqrt(static_cast<double>(a.head_size));
    const std::vector<double> y =
        attend(a, q, k, v, scale, 0.0, [&](int64_t b, int64_t n, int64_t s, int64_t t) {
          return m[(b * seq + s) * a.kv_len + t] + ab.at(b, n, s, t);
        });
    Outputs out = {tensor_from_doubles(query.dtype(), {batch, seq, dv}, y)};
    const auto& names = ctx.node().outputs;
    for (size_t i = 1; i < names.size() && i < 3; ++i) {
      if (names[i].empty()) {
        out.push_back(Value::none());
        continue;
      }
      const int64_t size = i == 1 ? a.head_size : a.v_head_size;
      out.push_back(
          tensor_from_doubles(query.dtype(), {batch, heads_, a.kv_len, size}, i == 1 ? k : v));
    }
    if (names.size() > 3) out.push_back(Value::none());
    return out;
  }

 private:
  int64_t heads_;
  double scale_, filter_;
  bool causal_;
};
PARITY_REF_OP("com.microsoft", "MultiHeadAttention", 1, kOpsetMax, MultiHeadAttention);

}  // namespace
}  // namespace parity::ref
