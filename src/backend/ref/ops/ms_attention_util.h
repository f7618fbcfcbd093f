// Shared by ONNX Runtime's attention ops of domain com.microsoft (Attention,
// MultiHeadAttention, GroupQueryAttention) and RotaryEmbedding: scaled dot-product attention
// over heads held as doubles, and the rotation of rotary position embeddings.
//
// Exactness: every score is a dot product summed over the head in increasing order, the
// softmax takes its max, exponentials and sum in order over the keys, and each output element
// sums probability x value over the keys in order, all in double; one work item computes one
// (batch, head, query) row, so the bits do not depend on the thread count. Callers round once
// when they write the outputs.
#pragma once

#include <cmath>
#include <limits>
#include <vector>

#include "backend/ref/ops/elementwise_util.h"

namespace parity::ref {

// Sizes of one attention: queries [batch, heads, q_len, head_size], keys [batch, kv_heads,
// kv_len, head_size], values [batch, kv_heads, kv_len, v_head_size]; query head n reads
// key/value head n / (heads / kv_heads).
struct AttentionShape {
  int64_t batch = 0, heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, head_size = 0, v_head_size = 0;
};

// What is added to the scores, in order: softcap (when > 0: s = softcap * tanh(s / softcap)),
// then bias(b, n, s, t) (a double; -infinity excludes key t). sink, when set, is one more logit
// per head (sink(n)) that takes part in the softmax's max and sum but has no value.
// Returns the outputs [batch, q_len, heads, v_head_size].
template <typename Bias, typename Sink>
std::vector<double> attend(const AttentionShape& a, const std::vector<double>& q,
                           const std::vector<double>& k, const std::vector<double>& v, double scale,
                           double softcap, Bias bias, Sink sink, bool with_sink) {
  std::vector<double> out(static_cast<size_t>(a.batch * a.q_len * a.heads * a.v_head_size));
  const int64_t group = a.heads / a.kv_heads;
  const int64_t rows = a.batch * a.heads * a.q_len;
  parallel_for(
      rows, grain_for(a.kv_len * (a.head_size + a.v_head_size)), [&](int64_t first, int64_t last) {
        std::vector<double> scores(static_cast<size_t>(a.kv_len));
        for (int64_t row = first; row < last; ++row) {
          const int64_t s = row % a.q_len, n = row / a.q_len % a.heads, b = row / a.q_len / a.heads;
          const int64_t kvh = n / group;
          const double* qr = q.data() + ((b * a.heads + n) * a.q_len + s) * a.head_size;
          const double* kb = k.data() + (b * a.kv_heads + kvh) * a.kv_len * a.head_size;
          const double* vb = v.data() + (b * a.kv_heads + kvh) * a.kv_len * a.v_head_size;
          double max = -std::numeric_limits<double>::infinity();
          for (int64_t t = 0; t < a.kv_len; ++t) {
            double dot = 0;
            for (int64_t i = 0; i < a.head_size; ++i) dot += qr[i] * kb[t * a.head_size + i];
            double sc = dot * scale;
            if (softcap > 0) sc = softcap * std::tanh(sc / softcap);
            sc += bias(b, n, s, t);
            scores[t] = sc;
            max = std::max(max, sc);
          }
          const double sink_logit = with_sink ? sink(n) : 0.0;
          if (with_sink) max = std::max(max, sink_logit);
          double sum = 0;
          for (int64_t t = 0; t < a.kv_len; ++t) {
            scores[t] = std::exp(scores[t] - max);
            sum += scores[t];
          }
          if (with_sink) sum += std::exp(sink_logit - max);
          double* o = out.data() + ((b * a.q_len + s) * a.heads + n) * a.v_head_size;
          for (int64_t i = 0; i < a.v_head_size; ++i) o[i] = 0;
          for (int64_t t = 0; t < a.kv_len; ++t) {
            const double p = scores[t] / sum;
            for (int64_t i = 0; i < a.v_head_size; ++i) o[i] += p * vb[t * a.v_head_size + i];
          }
        }
      });
  return out;
}

// attend without a sink.
template <typename Bias>
std::vector<double> attend(const AttentionShape& a, const std::vector<double>& q,
                           const std::vector<double>& k, const std::vector<double>& v, double scale,
                           double softcap, Bias bias) {
  return attend(
      a, q, k, v, scale, softcap, bias, [](int64_t) { return 0.0; }, false);
}

// A [batch, seq, heads * size] activation as [batch, heads, seq, size].
inline std::vector<double> split_heads(const double* x, int64_t batch, int64_t seq, int64_t heads,
                                       int64_t size) {
  std::vector<double> out(static_cast<size_t>(batch * seq * heads * size));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < seq; ++s)
      for (int64_t n = 0; n < heads; ++n)
        for (int64_t i = 0; i < size; ++i)
          out[((b * heads + n) * seq + s) * size + i] = x[((b * seq + s) * heads + n) * size + i];
  return out;
}

// Rotates one head vector x (of head_size values; the first rotary_dim rotated, the rest
// kept) by the angles of cache row `pos`: cos and sin rows hold rotary_dim / 2 values. Halves
// form the pairs (x[i], x[i + rotary_dim / 2]) unless `interleaved` ((x[2i], x[2i + 1])):
// x' = x * cos - y * sin, y' = y * cos + x * sin.
inline void rotate_head(double* x, int64_t rotary_dim, bool interleaved, const double* cos_row,
                        const double* sin_row) {
  const int64_t half = rotary_dim / 2;
  for (int64_t i = 0; i < half; ++i) {
    const int64_t ix = interleaved ? 2 * i : i, iy = interleaved ? 2 * i + 1 : i + half;
    const double a = x[ix], b = x[iy];
    x[ix] = a * cos_row[i] - b * sin_row[i];
    x[iy] = b * cos_row[i] + a * sin_row[i];
  }
}

// A 0/1 attribute (unidirectional, interleaved, do_rotary...); other values are refused.
inline bool attr_flag(const OpContext& ctx, const char* name) {
  const int64_t v = ctx.attr_int(name, 0);
  if (v != 0 && v != 1) ctx.fail("attribute '{}' is {}; it must be 0 or 1", name, v);
  return v == 1;
}

// The values of a floating tensor as doubles.
inline std::vector<double> values_as_doubles(const Tensor& t) {
  return dispatch<FloatTypes>(
      t.dtype(),
      [&]<typename T>() {
        std::vector<double> v(static_cast<size_t>(t.numel()));
        const T* p = t.data<T>();
        for (int64_t i = 0; i < t.numel(); ++i) v[i] = to_double(p[i]);
        return v;
      },
      "input");
}

// A tensor of `dtype` and `shape` holding `values` rounded once.
inline Tensor tensor_from_doubles(DataType dtype, const Shape& shape,
                                  const std::vector<double>& values) {
  return dispatch<FloatTypes>(dtype, [&]<typename T>() {
    Tensor t = uninitialized_tensor(dtype, shape);
    T* p = t.data<T>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = narrow<T>(values[i]);
    return t;
  });
}

}  // namespace parity::ref
