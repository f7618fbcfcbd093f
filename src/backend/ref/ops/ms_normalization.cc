// ONNX Runtime's fused normalisations (docs/ContribOperators.md of the onnxruntime
// repository): SkipLayerNormalization, SkipSimplifiedLayerNormalization and
// EmbedLayerNormalization in domain com.microsoft, and SimplifiedLayerNormalization, which
// ONNX Runtime registers in the ONNX domain ("", version 1) although no ONNX opset defines it.
//
// "Simplified" is RMS normalisation: y = x / sqrt(mean(x^2) + epsilon) * gamma, no mean
// subtracted and no beta. Every row's sums (input + skip + bias, the embeddings) are formed in
// double, its statistics taken in double, and each output element rounded once.
#include <cmath>

#include "backend/ref/ops/elementwise_util.h"

namespace parity::ref {
namespace {

// Mean and population variance of n doubles, shifted by the first value (as the standard
// normalisations do) so that E[x^2] - E[x]^2 does not cancel; summed in order.
struct RowMoments {
  double mean = 0, var = 0, mean_square = 0;
};
RowMoments row_moments(const double* x, int64_t n) {
  if (n == 0) return {};
  const double k = x[0];
  double s1 = 0, s2 = 0, sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = x[i] - k;
    s1 += d;
    s2 += d * d;
    sq += x[i] * x[i];
  }
  const double m = s1 / static_cast<double>(n);
  return {k + m, std::max(0.0, s2 / static_cast<double>(n) - m * m), sq / static_cast<double>(n)};
}

// The values of a 1-D tensor of `size` elements (gamma, beta, bias) as doubles; throws naming
// it when its shape differs.
std::vector<double> vector_of(const Tensor& t, int64_t size, const Tensor& x, const char* what,
                              RunContext& ctx) {
  if (t.dtype() != x.dtype())
    ctx.fail("inputs input and {} have element types {} and {}; they must be equal", what,
             dtype_name(x.dtype()), dtype_name(t.dtype()));
  if (t.numel() != size || t.rank() != 1)
    ctx.fail("{} has shape {}; it must be 1-D with the hidden size ({}) values", what,
             shape_str(t.shape()), size);
  return dispatch<FloatTypes>(t.dtype(), [&]<typename T>() {
    std::vector<double> v(static_cast<size_t>(size));
    for (int64_t i = 0; i < size; ++i) v[i] = to_double(t.data<T>()[i]);
    return v;
  });
}

// A float tensor of `shape` from doubles (the mean / inv_std_var outputs, type float per the
// documentation), or none when the node does not ask for output k.
Value stat_output(RunContext& ctx, size_t k, const Shape& shape, const std::vector<double>& v) {
  if (k >= ctx.node().outputs.size() || ctx.node().outputs[k].empty()) return Value::none();
  Tensor t = uninitialized_tensor(DataType::kFloat32, shape);
  for (size_t i = 0; i < v.size(); ++i) t.data<float>()[i] = static_cast<float>(v[i]);
  return t;
}

// Normalises the rows of `sums` ([rows, h], doubles) into a tensor of `dtype` and `shape`:
// layer normalisation (with beta, possibly empty = 0) or, when `simplified`, RMS
// normalisation. mean and inv receive each row's statistics.
Tensor normalize_rows(const std::vector<double>& sums, int64_t h, DataType dtype,
                      const Shape& shape, const std::vector<double>& gamma,
                      const std::vector<double>& beta, double epsilon, bool simplified,
                      std::vector<double>& mean, std::vector<double>& inv) {
  const int64_t rows = h == 0 ? 0 : static_cast<int64_t>(sums.size()) / h;
  mean.assign(static_cast<size_t>(rows), 0.0);
  inv.assign(static_cast<size_t>(rows), 0.0);
  return dispatch<FloatTypes>(dtype, [&]<typename T>() {
    Tensor y = uninitialized_tensor(dtype, shape);
    T* py = y.data<T>();
    parallel_for(rows, grain_for(4 * h), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const double* x = sums.data() + r * h;
        const RowMoments m = row_moments(x, h);
        const double center = simplified ? 0.0 : m.mean;
        mean[r] = m.mean;
        inv[r] = 1.0 / std::sqrt((simplified ? m.mean_square : m.var) + epsilon);
        for (int64_t i = 0; i < h; ++i) {
          double v = (x[i] - center) * inv[r] * gamma[i];
          if (!beta.empty()) v += beta[i];
          py[r * h + i] = narrow<T>(v);
        }
      }
    });
    return y;
  });
}

// The values of a floating tensor as doubles.
std::vector<double> doubles_of(const Tensor& t) {
  return dispatch<FloatTypes>(
      t.dtype(),
      [&]<typename T>() {
        std::vector<double> v(static_cast<size_t>(t.numel()));
        parallel_for(t.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) v[i] = to_double(t.data<T>()[i]);
        });
        return v;
      },
      "input");
}

// SkipLayerNormalization(input, skip, gamma, beta?, bias?) and
// SkipSimplifiedLayerNormalization(input, skip, gamma, bias?): s = input + skip + bias over
// the last (hidden) dim, then layer normalisation (with beta) or RMS normalisation of s with
// gamma. input is [B, S, H] or [tokens, H]; skip has input's shape or, for 3-D input, [1, S, H]
// or [S, H] (shared by the batch). Attribute epsilon (ONNX Runtime's default 1e-12).
// Outputs: output; optional mean and inv_std_var ([B, S, 1], float; mean is that of s, also for
// the simplified form) and input_skip_bias_sum (s, input's type).
template <bool kSimplified>
class SkipNormalization : public Kernel {
 public:
  explicit SkipNormalization(const OpContext& ctx)
      : epsilon_(static_cast<double>(ctx.attr_float("epsilon", 1e-12f))) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "input");
    const Tensor& skip = input_tensor(in, 1, "skip");
    const Tensor& gamma_t = input_tensor(in, 2, "gamma");
    const Tensor* beta_t = kSimplified ? nullptr : optional_input(in, 3, "beta");
    const Tensor* bias_t = optional_input(in, kSimplified ? 3 : 4, "bias");
    if (x.rank() != 2 && x.rank() != 3)
      ctx.fail(
          "input has shape {}; it must be 3-D [batch, sequence, hidden] or 2-D "
          "[tokens, hidden]",
          shape_str(x.shape()));
    check_same_dtype(x, skip, ctx, "input", "skip");
    const int64_t h = x.shape().back();
    const Shape& xs = x.shape();
    const Shape& ss = skip.shape();
    // skip of input's shape, or one [S, H] block shared by every batch of a 3-D input.
    const bool shared = x.rank() == 3 && ss != xs &&
                        ((ss.size() == 3 && ss[0] == 1 && ss[1] == xs[1] && ss[2] == h) ||
                         (ss.size() == 2 && ss[0] == xs[1] && ss[1] == h));
    if (ss != xs && !shared)
      ctx.fail("skip has shape {}; it must equal input's shape {}{}", shape_str(ss), shape_str(xs),
               x.rank() == 3 ? " or be [1, S, H] / [S, H]" : "");
    const std::vector<double> gamma = vector_of(gamma_t, h, x, "gamma", ctx);
    const std::vector<double> beta =
        beta_t ? vector_of(*beta_t, h, x, "beta", ctx) : std::vector<double>();
    const std::vector<double> bias =
        bias_t ? vector_of(*bias_t, h, x, "bias", ctx) : std::vector<double>();
    std::vector<double> sums = doubles_of(x);
    const std::vector<double> sk = doubles_of(skip);
    const int64_t block = static_cast<int64_t>(sk.size());
    for (size_t i = 0; i < sums.size(); ++i) {
      sums[i] += sk[shared ? static_cast<int64_t>(i) % block : static_cast<int64_t>(i)];
      if (!bias.empty()) sums[i] += bias[i % h];
    }
    std::vector<double> mean, inv;
    Tensor y =
        normalize_rows(sums, h, x.dtype(), xs, gamma, beta, epsilon_, kSimplified, mean, inv);
    Outputs out = {std::move(y)};
    Shape stat_shape = xs;
    stat_shape.back() = 1;
    out.push_back(stat_output(ctx, 1, stat_shape, mean));
    out.push_back(stat_output(ctx, 2, stat_shape, inv));
    if (ctx.node().outputs.size() > 3 && !ctx.node().outputs[3].empty())
      out.push_back(dispatch<FloatTypes>(x.dtype(), [&]<typename T>() {
        Tensor s = uninitialized_tensor(x.dtype(), xs);
        for (size_t i = 0; i < sums.size(); ++i) s.data<T>()[i] = narrow<T>(sums[i]);
        return s;
      }));
    else
      out.push_back(Value::none());
    out.resize(ctx.node().outputs.size());
    return out;
  }

 private:
  double epsilon_;
};
PARITY_REF_OP("com.microsoft", "SkipLayerNormalization", 1, kOpsetMax, SkipNormalization<false>);
PARITY_REF_OP("com.microsoft", "SkipSimplifiedLayerNormalization", 1, kOpsetMax,
              SkipNormalization<true>);

// SimplifiedLayerNormalization(X, scale): RMS normalisation over the dims from `axis` (default
// -1) on, Y = X / sqrt(mean(X^2) + epsilon) * scale, scale having the normalised shape.
// Attributes axis, epsilon (default 1e-5) and stash_type (1 = float, the only value ONNX
// Runtime accepts on CPU besides double, 11). Optional output inv_std_var: X's shape with the
// normalised dims set to 1, in the stash type.
class SimplifiedLayerNormalization : public Kernel {
 public:
  explicit SimplifiedLayerNormalization(const OpContext& ctx)
      : axis_(ctx.attr_int("axis", -1)),
        epsilon_(static_cast<double>(ctx.attr_float("epsilon", 1e-5f))) {
    const int64_t stash = ctx.attr_int("stash_type", 1);
    if (stash != 1 && stash != 11)
      ctx.fail("attribute 'stash_type' is {}; it must be 1 (float) or 11 (double)", stash);
    stash_ = stash == 1 ? DataType::kFloat32 : DataType::kFloat64;
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const Tensor& scale = input_tensor(in, 1, "scale");
    check_rank(x, 1, 64, "input X");
    const int64_t axis = normalize_axis(axis_, x.rank());
    const int64_t h = dims_product(x.shape(), axis, x.rank());
    const Shape norm_shape(x.shape().begin() + axis, x.shape().end());
    if (scale.numel() != h)
      ctx.fail("scale has shape {}; it must have the normalised shape {}", shape_str(scale.shape()),
               shape_str(norm_shape));
    check_same_dtype(x, scale, ctx, "X", "scale");
    const std::vector<double> gamma = doubles_of(scale);
    std::vector<double> mean, inv;
    Tensor y = normalize_rows(doubles_of(x), h, x.dtype(), x.shape(), gamma, {}, epsilon_,
                              /*simplified=*/true, mean, inv);
    Outputs out = {std::move(y)};
    if (ctx.node().outputs.size() > 1) {
      Shape stat_shape = x.shape();
      for (int64_t d = axis; d < x.rank(); ++d) stat_shape[d] = 1;
      if (ctx.node().outputs[1].empty()) {
        out.push_back(Value::none());
      } else {
        out.push_back(dispatch<TypeList<float, double>>(stash_, [&]<typename U>() {
          Tensor t = uninitialized_tensor(stash_, stat_shape);
          for (size_t r = 0; r < inv.size(); ++r) t.data<U>()[r] = static_cast<U>(inv[r]);
          return t;
        }));
      }
    }
    return out;
  }

 private:
  int64_t axis_;
  double epsilon_;
  DataType stash_;
};
PARITY_REF_OP("", "SimplifiedLayerNormalization", 1, kOpsetMax, SimplifiedLayerNormalization);

// EmbedLayerNormalization(input_ids, segment_ids?, word_embedding, position_embedding,
// segment_embedding?, gamma, beta, mask?, position_ids?): BERT's embedding layer. For token
// (b, s): e = word[input_ids[b, s]] + position[p] + segment[segment_ids[b, s]], with p =
// position_ids[b, s] (position_ids [B, S], or [1, S] shared) or s when absent; then layer
// normalisation of e with gamma and beta. Attributes epsilon (default 1e-12) and
// mask_index_type (1, the default: output 1 is each batch's count of mask values equal to 1,
// 0 without a mask; 0: no mask_index). Outputs output [B, S, H], mask_index [B] int32 and
// embedding_sum (e, optional). Ids are int32; an id outside its table is an error.
class EmbedLayerNormalization : public Kernel {
 public:
  explicit EmbedLayerNormalization(const OpContext& ctx)
      : epsilon_(static_cast<double>(ctx.attr_float("epsilon", 1e-12f))),
        mask_index_type_(ctx.attr_int("mask_index_type", 1)) {
    if (mask_index_type_ != 0 && mask_index_type_ != 1)
      ctx.fail(
          "attribute 'mask_index_type' is {}; it must be 0 (no mask index) or 1 (the "
          "count of unmasked tokens per batch)",
          mask_index_type_);
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& ids = input_tensor(in, 0, "input_ids");
    const Tensor* segment_ids = optional_input(in, 1, "segment_ids");
    const Tensor& word = input_tensor(in, 2, "word_embedding");
    const Tensor& position = input_tensor(in, 3, "position_embedding");
    const Tensor* segment = optional_input(in, 4, "segment_embedding");
    const Tensor& gamma_t = input_tensor(in, 5, "gamma");
    const Tensor& beta_t = input_tensor(in, 6, "beta");
    const Tensor* mask = optional_input(in, 7, "mask");
    const Tensor* position_ids = optional_input(in, 8, "position_ids");
    if (ids.rank() != 2)
      ctx.fail("input_ids has shape {}; it must be 2-D [batch, sequence]", shape_str(ids.shape()));
    const int64_t batch = ids.shape()[0], seq = ids.shape()[1];
    for (const Tensor* t : {&ids, segment_ids, mask, position_ids})
      if (t && t->dtype() != DataType::kInt32)
        ctx.fail("an id or mask input has element type {}; it must be int32",
                 dtype_name(t->dtype()));
    for (const Tensor* t : {segment_ids, mask})
      if (t && t->shape() != ids.shape())
        ctx.fail("segment_ids / mask has shape {}; it must equal input_ids' shape {}",
                 shape_str(t->shape()), shape_str(ids.shape()));
    if ((segment_ids == nullptr) != (segment == nullptr))
      ctx.fail("segment_ids and segment_embedding must be given together");
    for (const Tensor* t : {&word, &position, segment})
      if (t && t->rank() != 2)
        ctx.fail("an embedding table has shape {}; it must be 2-D [rows, hidden]",
                 shape_str(t->shape()));
    const int64_t h = word.shape()[1];
    for (const Tensor* t : {&position, segment})
      if (t && t->shape()[1] != h)
        ctx.fail("an embedding table has shape {}; its hidden size must be word_embedding's ({})",
                 shape_str(t->shape()), h);
    if (position_ids && position_ids->numel() != batch * seq && position_ids->numel() != seq)
      ctx.fail("position_ids has shape {}; it must be [{}, {}] or [1, {}]",
               shape_str(position_ids->shape()), batch, seq, seq);
    const std::vector<double> gamma = vector_of(gamma_t, h, word, "gamma", ctx);
    const std::vector<double> beta = vector_of(beta_t, h, word, "beta", ctx);
    const std::vector<double> wv = doubles_of(word), pv = doubles_of(position);
    const std::vector<double> sv = segment ? doubles_of(*segment) : std::vector<double>();
    auto row = [&](const std::vector<double>& table, const Tensor& t, int32_t id,
                   const char* what) {
      if (id < 0 || id >= t.shape()[0])
        ctx.fail("{} {} is outside the table's {} rows", what, id, t.shape()[0]);
      return table.data() + static_cast<int64_t>(id) * h;
    };
    std::vector<double> sums(static_cast<size_t>(batch * seq * h));
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t s = 0; s < seq; ++s) {
        const int64_t t = b * seq + s;
        const double* w = row(wv, word, ids.data<int32_t>()[t], "input id");
        const int32_t p = position_ids
                              ? position_ids->data<int32_t>()[position_ids->numel() == seq ? s : t]
                              : static_cast<int32_t>(s);
        const double* pr = row(pv, position, p, "position");
        const double* sr =
            segment ? row(sv, *segment, segment_ids->data<int32_t>()[t], "segment id") : nullptr;
        double* e = sums.data() + t * h;
        for (int64_t i = 0; i < h; ++i) e[i] = w[i] + pr[i] + (sr ? sr[i] : 0.0);
      }
    std::vector<double> mean, inv;
    Outputs out = {normalize_rows(sums, h, word.dtype(), {batch, seq, h}, gamma, beta, epsilon_,
                                  /*simplified=*/false, mean, inv)};
    const auto& names = ctx.node().outputs;
    if (names.size() > 1) {
      if (names[1].empty() || mask_index_type_ == 0) {
        out.push_back(Value::none());
      } else {
        Tensor mask_index(DataType::kInt32, {batch});
        for (int64_t b = 0; b < batch && mask; ++b) {
          int32_t count = 0;
          for (int64_t s = 0; s < seq; ++s) count += mask->data<int32_t>()[b * seq + s] == 1;
          mask_index.data<int32_t>()[b] = count;
        }
        out.push_back(std::move(mask_index));
      }
    }
    if (names.size() > 2) {
      if (names[2].empty())
        out.push_back(Value::none());
      else
        out.push_back(dispatch<FloatTypes>(word.dtype(), [&]<typename T>() {
          Tensor e = uninitialized_tensor(word.dtype(), {batch, seq, h});
          for (size_t i = 0; i < sums.size(); ++i) e.data<T>()[i] = narrow<T>(sums[i]);
          return e;
        }));
    }
    return out;
  }

 private:
  double epsilon_;
  int64_t mask_index_type_;
};
PARITY_REF_OP("com.microsoft", "EmbedLayerNormalization", 1, kOpsetMax, EmbedLayerNormalization);

}  // namespace
}  // namespace parity::ref
