// ONNX Runtime's RotaryEmbedding and GroupQueryAttention, domain com.microsoft
// (docs/ContribOperators.md of the onnxruntime repository; where the text is silent, ONNX
// Runtime's CPU kernels decide): the rotary position embedding of LLaMA-style decoders, and
// their causal attention with fewer key/value heads than query heads, a key/value cache and
// an optional rotary embedding folded in. All in double, rounded once (ms_attention_util.h).
#include "backend/ref/ops/ms_attention_util.h"

namespace parity::ref {
namespace {

// cos_cache and sin_cache [max_position, rotary_dim / 2], checked and read as doubles.
struct RotaryCache {
  std::vector<double> cos, sin;
  int64_t positions = 0, half = 0;
  const double* cos_row(int64_t p) const { return cos.data() + p * half; }
  const double* sin_row(int64_t p) const { return sin.data() + p * half; }
};

RotaryCache rotary_cache(const Tensor& c, const Tensor& s, DataType dtype, RunContext& ctx) {
  if (c.rank() != 2 || c.shape() != s.shape())
    ctx.fail(
        "cos_cache / sin_cache have shapes {} / {}; they must both be [max_position, "
        "rotary_dim / 2]",
        shape_str(c.shape()), shape_str(s.shape()));
  if (c.dtype() != dtype || s.dtype() != dtype)
    ctx.fail("cos_cache / sin_cache have element types {} / {}; they must be the input's ({})",
             dtype_name(c.dtype()), dtype_name(s.dtype()), dtype_name(dtype));
  return {values_as_doubles(c), values_as_doubles(s), c.shape()[0], c.shape()[1]};
}

// RotaryEmbedding(input, position_ids, cos_cache, sin_cache): rotates the first rotary_dim
// values of every head of input ([B, S, N * H] or [B, N, S, H]) by the cache rows of its
// position: position_ids [B, S] (int64), or one value p0 giving position p0 + s. Attributes
// interleaved (pairs (2i, 2i + 1) instead of halves), num_heads (needed with a 3-D input when
// rotary_embedding_dim is set), rotary_embedding_dim (default: the head size, 2 x the cache
// width); is_packed_batching and scale must keep their defaults (0, 1.0).
class MsRotaryEmbedding : public Kernel {
 public:
  explicit MsRotaryEmbedding(const OpContext& ctx)
      : interleaved_(attr_flag(ctx, "interleaved")),
        heads_(ctx.attr_int("num_heads", 0)),
        rotary_dim_(ctx.attr_int("rotary_embedding_dim", 0)) {
    if (ctx.attr_int("is_packed_batching", 0) != 0)
      ctx.fail("attribute 'is_packed_batching' is {}; Parity supports only 0",
               ctx.attr_int("is_packed_batching", 0));
    if (ctx.attr_float("scale", 1.0f) != 1.0f)
      ctx.fail("attribute 'scale' is {}; Parity supports only 1.0", ctx.attr_float("scale", 1.0f));
    if (heads_ < 0 || rotary_dim_ < 0)
      ctx.fail("attributes num_heads {} and rotary_embedding_dim {} must not be negative", heads_,
               rotary_dim_);
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "input");
    const Tensor& pos = input_tensor(in, 1, "position_ids");
    const RotaryCache cache = rotary_cache(input_tensor(in, 2, "cos_cache"),
                                           input_tensor(in, 3, "sin_cache"), x.dtype(), ctx);
    if (x.rank() != 3 && x.rank() != 4)
      ctx.fail("input has shape {}; it must be [B, S, N * H] or [B, N, S, H]",
               shape_str(x.shape()));
    const int64_t rotary = rotary_dim_ > 0 ? rotary_dim_ : 2 * cache.half;
    if (rotary != 2 * cache.half)
      ctx.fail("rotary_embedding_dim {} does not match the caches' width {} (it must be twice it)",
               rotary, cache.half);
    const int64_t batch = x.shape()[0];
    int64_t seq, heads, head;
    if (x.rank() == 4) {
      heads = x.shape()[1], seq = x.shape()[2], head = x.shape()[3];
    } else {
      seq = x.shape()[1];
      heads = heads_ > 0 ? heads_ : (rotary > 0 ? x.shape()[2] / rotary : 0);
      if (heads <= 0 || x.shape()[2] % heads != 0)
        ctx.fail("input's hidden size {} does not split into num_heads {} heads", x.shape()[2],
                 heads);
      head = x.shape()[2] / heads;
    }
    if (rotary > head || rotary % 2 != 0)
      ctx.fail("rotary dim {} must be even and at most the head size {}", rotary, head);
    const std::vector<int64_t> p = read_int64s(pos, "position_ids");
    if (p.size() != 1 && static_cast<int64_t>(p.size()) != batch * seq)
      ctx.fail("position_ids has shape {}; it must be [{}, {}] or hold one start position",
               shape_str(pos.shape()), batch, seq);
    std::vector<double> v = values_as_doubles(x);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t n = 0; n < heads; ++n)
        for (int64_t s = 0; s < seq; ++s) {
          const int64_t at = p.size() == 1 ? p[0] + s : p[b * seq + s];
          if (at < 0 || at >= cache.positions)
            ctx.fail("position {} is outside the caches' {} rows", at, cache.positions);
          const int64_t off = x.rank() == 4 ? ((b * heads + n) * seq + s) * head
                                            : ((b * seq + s) * heads + n) * head;
          rotate_head(v.data() + off, rotary, interleaved_, cache.cos_row(at), cache.sin_row(at));
        }
    return {tensor_from_doubles(x.dtype(), x.shape(), v)};
  }

 private:
  bool interleaved_;
  int64_t heads_, rotary_dim_;
};
PARITY_REF_OP("com.microsoft", "RotaryEmbedding", 1, kOpsetMax, MsRotaryEmbedding);

// GroupQueryAttention(query, key, value, past_key?, past_value?, seqlens_k,
// total_sequence_length, cos_cache?, sin_cache?, position_ids?, attention_bias?, head_sink?):
// query [B, S, N * H], key / value [B, S, Nkv * H]; past_key / past_value [B, Nkv, P, H].
// Batch b holds seqlens_k[b] + 1 tokens in all; its past is that minus S (none on the first
// prompt, S == total_sequence_length). The new keys and values go after the past in
// present_key / present_value [B, Nkv, max(P, total_sequence_length), H] (zero beyond);
// query i attends causally to keys t <= past + i (and, with local_window_size > 0, only to the
// last local_window_size of them, its own included: ONNX Runtime 1.30's CPU kernel, which the
// documentation's "left window size" leaves open). Query head n reads key/value head n / (N / Nkv).
// Attributes num_heads, kv_num_heads (required), scale (default 1/sqrt(H)), softcap (0: none),
// local_window_size (-1), do_rotary (rotates new queries and keys at their positions, or
// position_ids), rotary_interleaved, smooth_softmax (an extra zero logit; head_sink gives one
// per head instead). Packed QKV (no key) and the output_qk output are refused.
class GroupQueryAttention : public Kernel {
 public:
  explicit GroupQueryAttention(const OpContext& ctx)
      : heads_(ctx.attr_int("num_heads")),
        kv_heads_(ctx.attr_int("kv_num_heads")),
        scale_(ctx.attr_float("scale", 0.0f)),
        softcap_(ctx.attr_float("softcap", 0.0f)),
        window_(ctx.attr_int("local_window_size", -1)),
        rotary_(attr_flag(ctx, "do_rotary")),
        interleaved_(attr_flag(ctx, "rotary_interleaved")),
        smooth_(attr_flag(ctx, "smooth_softmax")) {
    if (heads_ <= 0 || kv_heads_ <= 0 || heads_ % kv_heads_ != 0)
      ctx.fail(
          "attributes num_heads {} and kv_num_heads {}: both must be positive and "
          "num_heads a multiple of kv_num_heads",
          heads_, kv_heads_);
    if (softcap_ < 0) ctx.fail("attribute 'softcap' is {}; it must not be negative", softcap_);
    if (window_ == 0 || window_ < -1)
      ctx.fail("attribute 'local_window_size' is {}; it must be -1 (no window) or positive",
               window_);
    if (ctx.num_outputs() > 3 && !ctx.node().outputs[3].empty())
      ctx.fail("output output_qk is asked for; Parity does not produce it");
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& query = input_tensor(in, 0, "query");
    const Tensor* key = optional_input(in, 1, "key");
    const Tensor* value = optional_input(in, 2, "value");
    if (!key || !value)
      ctx.fail(
          "key or value is absent (packed QKV); Parity supports separate query, key and "
          "value");
    const Tensor* past_key = optional_input(in, 3, "past_key");
    const Tensor* past_value = optional_input(in, 4, "past_value");
    const Tensor& seqlens = input_tensor(in, 5, "seqlens_k");
    const int64_t total_len = static_cast<int64_t>(
        read_scalar(input_tensor(in, 6, "total_sequence_length"), "total_sequence_length"));
    const Tensor* cos_t = optional_input(in, 7, "cos_cache");
    const Tensor* sin_t = optional_input(in, 8, "sin_cache");
    const Tensor* position_ids = optional_input(in, 9, "position_ids");
    const Tensor* abias = optional_input(in, 10, "attention_bias");
    const Tensor* sink = optional_input(in, 11, "head_sink");
    if (query.rank() != 3)
      ctx.fail("query has shape {}; it must be [B, S, N * H]", shape_str(query.shape()));
    const int64_t batch = query.shape()[0], seq = query.shape()[1];
    if (query.shape()[2] % heads_ != 0)
      ctx.fail("query's hidden size {} is not a multiple of num_heads {}", query.shape()[2],
               heads_);
    const int64_t head = query.shape()[2] / heads_;
    const Shape kv_shape{batch, seq, kv_heads_ * head};
    for (const Tensor* t : {key, value}) {
      check_same_dtype(query, *t, ctx, "query", "key/value");
      if (t->shape() != kv_shape)
        ctx.fail("key / value has shape {}; it must be {}", shape_str(t->shape()),
                 shape_str(kv_shape));
    }
    if ((past_key == nullptr) != (past_value == nullptr))
      ctx.fail("past_key and past_value must be given together");
    int64_t past_cap = 0;
    if (past_key) {
      for (const Tensor* t : {past_key, past_value}) {
        check_same_dtype(query, *t, ctx, "query", "past_key/past_value");
        if (t->rank() != 4 || t->shape()[0] != batch || t->shape()[1] != kv_heads_ ||
            t->shape()[3] != head || t->shape() != past_key->shape())
          ctx.fail("past_key / past_value has shape {}; it must be [{}, {}, P, {}]",
                   shape_str(t->shape()), batch, kv_heads_, head);
      }
      past_cap = past_key->shape()[2];
    }
    if (seqlens.numel() != batch)
      ctx.fail("seqlens_k has shape {}; it must hold {} values", shape_str(seqlens.shape()), batch);
    const std::vector<int64_t> lens = read_int64s(seqlens, "seqlens_k");
    const int64_t present_len = std::max(past_cap, total_len);
    const bool first_prompt = seq == total_len;
    std::vector<int64_t> past_of(static_cast<size_t>(batch));
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t total_b = lens[b] + 1;
      past_of[b] = first_prompt ? 0 : total_b - seq;
      if (total_b > total_len || past_of[b] < 0 || past_of[b] > past_cap ||
          (first_prompt && total_b != seq))
        ctx.fail(
            "seqlens_k[{}] is {}: batch {} would hold {} tokens, which does not fit "
            "sequence length {}, total_sequence_length {} and the past's {} positions "
            "(padded batches are not supported)",
            b, lens[b], b, total_b, seq, total_len, past_cap);
    }
    if (sink && (sink->numel() != heads_ || sink->dtype() != query.dtype()))
      ctx.fail("head_sink is {} {}; it must hold num_heads ({}) values of query's type",
               dtype_name(sink->dtype()), shape_str(sink->shape()), heads_);

    std::vector<double> q = split_heads(values_as_doubles(query).data(), batch, seq, heads_, head);
    std::vector<double> k =
        split_heads(values_as_doubles(*key).data(), batch, seq, kv_heads_, head);
    const std::vector<double> v =
        split_heads(values_as_doubles(*value).data(), batch, seq, kv_heads_, head);
    if (rotary_) {
      if (!cos_t || !sin_t) ctx.fail("do_rotary is 1 but cos_cache / sin_cache are absent");
      const RotaryCache cache = rotary_cache(*cos_t, *sin_t, query.dtype(), ctx);
      const int64_t rotary = 2 * cache.half;
      if (rotary > head)
        ctx.fail("the caches' rotary dim {} exceeds the head size {}", rotary, head);
      std::vector<int64_t> pos;
      if (position_ids) {
        pos = read_int64s(*position_ids, "position_ids");
        if (static_cast<int64_t>(pos.size()) != batch * seq)
          ctx.fail("position_ids has shape {}; it must be [{}, {}]",
                   shape_str(position_ids->shape()), batch, seq);
      }
      auto rotate = [&](std::vector<double>& x, int64_t nh) {
        for (int64_t b = 0; b < batch; ++b)
          for (int64_t n = 0; n < nh; ++n)
            for (int64_t s = 0; s < seq; ++s) {
              const int64_t p = position_ids ? pos[b * seq + s] : past_of[b] + s;
              if (p < 0 || p >= cache.positions)
                ctx.fail("position {} is outside the caches' {} rows", p, cache.positions);
              rotate_head(x.data() + ((b * nh + n) * seq + s) * head, rotary, interleaved_,
                          cache.cos_row(p), cache.sin_row(p));
            }
      };
      rotate(q, heads_);
      rotate(k, kv_heads_);
    }
    // present: the past's first past_of[b] positions, then the new ones, zero beyond.
    auto present = [&](const Tensor* past, const std::vector<double>& now) {
      std::vector<double> p(static_cast<size_t>(batch * kv_heads_ * present_len * head), 0.0);
      const std::vector<double> pv = past ? values_as_doubles(*past) : std::vector<double>();
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t n = 0; n < kv_heads_; ++n) {
          double* dst = p.data() + (b * kv_heads_ + n) * present_len * head;
          if (past)
            std::copy_n(pv.data() + (b * kv_heads_ + n) * past_cap * head, past_of[b] * head, dst);
          std::copy_n(now.data() + (b * kv_heads_ + n) * seq * head, seq * head,
                      dst + past_of[b] * head);
        }
      return p;
    };
    const std::vector<double> pk = present(past_key, k), pv = present(past_value, v);

    AttentionShape a;
    a.batch = batch;
    a.heads = heads_;
    a.kv_heads = kv_heads_;
    a.q_len = seq;
    a.kv_len = present_len;
    a.head_size = a.v_head_size = head;
    std::vector<double> bias_v;
    int64_t bias_bs = 0, bias_ns = 0;
    if (abias) {
      const Shape& s = abias->shape();
      if (s.size() != 4 || (s[0] != batch && s[0] != 1) || (s[1] != heads_ && s[1] != 1) ||
          s[2] != seq || s[3] != total_len)
        ctx.fail("attention_bias has shape {}; it must be [{} or 1, {} or 1, {}, {}]", shape_str(s),
                 batch, heads_, seq, total_len);
      check_same_dtype(query, *abias, ctx, "query", "attention_bias");
      bias_v = values_as_doubles(*abias);
      bias_ns = s[1] == 1 ? 0 : seq * total_len;
      bias_bs = s[0] == 1 ? 0 : s[1] * seq * total_len;
    }
    const std::vector<double> sinks = sink ? values_as_doubles(*sink) : std::vector<double>();
    const double inf = std::numeric_limits<double>::infinity();
    const int64_t window = window_;
    const double scale = scale_ != 0 ? scale_ : 1.0 / std::sqrt(static_cast<double>(head));
    const std::vector<double> y = attend(
        a, q, pk, pv, scale, softcap_,
        [&](int64_t b, int64_t n, int64_t s, int64_t t) {
          const int64_t last = past_of[b] + s;  // the query's own position
          if (t > last || (window > 0 && t <= last - window)) return -inf;
          return bias_v.empty() ? 0.0 : bias_v[b * bias_bs + n * bias_ns + s * total_len + t];
        },
        [&](int64_t n) { return sinks.empty() ? 0.0 : sinks[n]; }, smooth_ || sink != nullptr);
    Outputs out = {tensor_from_doubles(query.dtype(), query.shape(), y)};
    const Shape present_shape{batch, kv_heads_, present_len, head};
    const auto& names = ctx.node().outputs;
    for (size_t i = 1; i < names.size() && i < 3; ++i)
      out.push_back(names[i].empty() ? Value::none()
                                     : Value(tensor_from_doubles(query.dtype(), present_shape,
                                                                 i == 1 ? pk : pv)));
    if (names.size() > 3) out.push_back(Value::none());
    return out;
  }

 private:
  int64_t heads_, kv_heads_;
  double scale_, softcap_;
  int64_t window_;
  bool rotary_, interleaved_, smooth_;
};
PARITY_REF_OP("com.microsoft", "GroupQueryAttention", 1, kOpsetMax, GroupQueryAttention);

}  // namespace
}  // namespace parity::ref
