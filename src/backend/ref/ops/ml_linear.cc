// ai.onnx.ml linear models: LinearRegressor and LinearClassifier. Scores are X · Wᵀ + b
// accumulated in double, then the post_transform; outputs are float.
#include "backend/ref/ops/ml_util.h"

namespace parity::ref::ml {
namespace {

// The [N, E] scores of rows X against E coefficient rows.
std::vector<double> linear_scores(const Rows& x, const std::vector<double>& w,
                                  const std::vector<double>& b, int64_t e, RunContext& ctx) {
  if (int64_t(w.size()) != e * x.c)
    ctx.fail(
        "attribute 'coefficients' has {} values; with {} features it must have {} ({} "
        "rows of {})",
        w.size(), x.c, e * x.c, e, x.c);
  std::vector<double> s(size_t(x.n * e));
  for (int64_t i = 0; i < x.n; ++i)
    for (int64_t k = 0; k < e; ++k) {
      double acc = b.empty() ? 0.0 : b[size_t(k)];
      for (int64_t j = 0; j < x.c; ++j) acc += x.row(i)[j] * w[size_t(k * x.c + j)];
      s[size_t(i * e + k)] = acc;
    }
  return s;
}

// Y[N, targets] = post_transform(X · Wᵀ + intercepts).
class LinearRegressor : public Kernel {
 public:
  explicit LinearRegressor(const OpContext& ctx)
      : w_(attr_doubles(ctx, "coefficients")),
        b_(attr_doubles(ctx, "intercepts")),
        targets_(ctx.attr_int("targets", 1)),
        transform_(read_post_transform(ctx)) {
    if (targets_ < 1) ctx.fail("attribute 'targets' is {}; it must be >= 1", targets_);
    if (!b_.empty()) check_length(ctx, "intercepts", b_.size(), size_t(targets_), "one per target");
  }
  Outputs run(const Inputs& in, RunContext& ctx) override {
    Rows x = read_rows(input_tensor(in, 0, "X"), "X");
    std::vector<double> s = linear_scores(x, w_, b_, targets_, ctx);
    Tensor y(DataType::kFloat32, {x.n, targets_});
    for (int64_t i = 0; i < x.n; ++i)
      apply_post_transform(transform_, &s[size_t(i * targets_)], targets_);
    for (size_t k = 0; k < s.size(); ++k) y.data<float>()[k] = float(s[k]);
    return {y};
  }

 private:
  std::vector<double> w_, b_;
  int64_t targets_;
  PostTransform transform_;
};
PARITY_REF_OP(kDomain, "LinearRegressor", 1, kOpsetMax, LinearRegressor);

// Y[N] labels, Z[N, E] scores for E coefficient rows (E = number of intercepts). The label is
// that of the highest raw score (the first on a tie). One row with two labels is a binary
// model: its score s gives the label labels[1] when s > 0 and Z = [1 - p, p] with
// p = post_transform(s); one row without two labels gives labels 1 / 0 and Z = [p].
class LinearClassifier : public Kernel {
 public:
  explicit LinearClassifier(const OpContext& ctx)
      : w_(attr_doubles(ctx, "coefficients")),
        b_(attr_doubles(ctx, "intercepts")),
        int_labels_(ctx.attr_ints("classlabels_ints", {})),
        string_labels_(ctx.attr_strings("classlabels_strings", {})),
        transform_(read_post_transform(ctx)) {
    if (!int_labels_.empty() && !string_labels_.empty())
      ctx.fail(
          "attributes 'classlabels_ints' and 'classlabels_strings' are both set; at most "
          "one may be");
    if (b_.empty()) ctx.fail("attribute 'intercepts' is empty; it must have one value per class");
    const size_t labels = std::max(int_labels_.size(), string_labels_.size());
    if (b_.size() > 1 && labels != b_.size())
      ctx.fail(
          "there are {} class labels for {} intercepts; there must be one label per "
          "intercept",
          labels, b_.size());
  }
  Outputs run(const Inputs& in, RunContext& ctx) override {
    Rows x = read_rows(input_tensor(in, 0, "X"), "X");
    const int64_t e = int64_t(b_.size());
    std::vector<double> s = linear_scores(x, w_, b_, e, ctx);
    const bool strings = !string_labels_.empty();
    const bool binary = e == 1 && std::max(int_labels_.size(), string_labels_.size()) == 2;
    const int64_t columns = binary ? 2 : e;
    Tensor y(strings ? DataType::kString : DataType::kInt64, {x.n});
    Tensor z(DataType::kFloat32, {x.n, columns});
    for (int64_t i = 0; i < x.n; ++i) {
      double* row = &s[size_t(i * e)];
      int64_t best = 0;
      if (e == 1) {
        best = row[0] > 0 ? 1 : 0;
      } else {
        for (int64_t k = 1; k < e; ++k)
          if (row[k] > row[best]) best = k;
      }
      // One row without two labels: the labels are 1 and 0 (ONNX Runtime's convention).
      const bool numbered = (e == 1 && !binary) || (!strings && int_labels_.empty());
      if (strings)
        y.data<std::string>()[i] = numbered ? std::to_string(best) : string_labels_[size_t(best)];
      else
        y.data<int64_t>()[i] = numbered ? best : int_labels_[size_t(best)];
      apply_post_transform(transform_, row, e);
      float* out = z.data<float>() + i * columns;
      if (binary) {
        out[0] = float(1 - row[0]);
        out[1] = float(row[0]);
      } else {
        for (int64_t k = 0; k < e; ++k) out[k] = float(row[k]);
      }
    }
    return {y, z};
  }

 private:
  std::vector<double> w_, b_;
  std::vector<int64_t> int_labels_;
  std::vector<std::string> string_labels_;
  PostTransform transform_;
};
PARITY_REF_OP(kDomain, "LinearClassifier", 1, kOpsetMax, LinearClassifier);

}  // namespace
}  // namespace parity::ref::ml
