// ai.onnx.ml support vector machines: SVMRegressor and SVMClassifier (libsvm's model as ONNX
// encodes it). Kernels, sums and votes in double; outputs float.
#include <cmath>

#include "backend/ref/ops/ml_util.h"

namespace parity::ref::ml {
namespace {

// K(x, s) for kernel_type LINEAR, POLY, RBF or SIGMOID with kernel_params [gamma, coef0, degree].
class SvmKernel {
 public:
  explicit SvmKernel(const OpContext& ctx) {
    const std::string type = ctx.attr_string("kernel_type", "LINEAR");
    if (type == "LINEAR")
      type_ = Type::kLinear;
    else if (type == "POLY")
      type_ = Type::kPoly;
    else if (type == "RBF")
      type_ = Type::kRbf;
    else if (type == "SIGMOID")
      type_ = Type::kSigmoid;
    else
      ctx.fail("attribute 'kernel_type' is '{}'; it must be one of LINEAR, POLY, RBF, SIGMOID",
               type);
    std::vector<float> p = ctx.attr_floats("kernel_params", {});
    if (!p.empty() && p.size() != 3)
      ctx.fail("attribute 'kernel_params' has {} values; it must have 3 (gamma, coef0, degree)",
               p.size());
    if (p.size() == 3) {
      gamma_ = p[0];
      coef0_ = p[1];
      degree_ = p[2];
    }
  }
  static double dot(const double* x, const double* s, int64_t c) {
    double v = 0;
    for (int64_t j = 0; j < c; ++j) v += x[j] * s[j];
    return v;
  }
  double operator()(const double* x, const double* s, int64_t c) const {
    double v = 0;
    if (type_ == Type::kRbf) {
      for (int64_t j = 0; j < c; ++j) v += (x[j] - s[j]) * (x[j] - s[j]);
      return std::exp(-gamma_ * v);
    }
    for (int64_t j = 0; j < c; ++j) v += x[j] * s[j];
    if (type_ == Type::kPoly) return std::pow(gamma_ * v + coef0_, degree_);
    if (type_ == Type::kSigmoid) return std::tanh(gamma_ * v + coef0_);
    return v;
  }

 private:
  enum class Type { kLinear, kPoly, kRbf, kSigmoid };
  Type type_ = Type::kLinear;
  double gamma_ = 0, coef0_ = 0, degree_ = 0;
};

std::vector<double> floats_of(const OpContext& ctx, const std::string& name) {
  std::vector<float> v = ctx.attr_floats(name, {});
  return {v.begin(), v.end()};
}

// Y[N, 1] = Σ coefficients[i] · K(x, support_vectors[i]) + rho (n_supports > 0), or
// x · coefficients + rho (n_supports = 0, a linear model); one_class=1 gives ±1.
class SVMRegressor : public Kernel {
 public:
  explicit SVMRegressor(const OpContext& ctx)
      : kernel_(ctx),
        coef_(floats_of(ctx, "coefficients")),
        sv_(floats_of(ctx, "support_vectors")),
        rho_(floats_of(ctx, "rho")),
        supports_(ctx.attr_int("n_supports", 0)),
        one_class_(ctx.attr_int("one_class", 0) != 0),
        transform_(read_post_transform(ctx)) {
    if (rho_.size() != 1) ctx.fail("attribute 'rho' has {} values; it must have 1", rho_.size());
    if (supports_ < 0) ctx.fail("attribute 'n_supports' is {}; it must be >= 0", supports_);
    if (supports_ > 0) {
      check_length(ctx, "coefficients", coef_.size(), size_t(supports_), "one per support vector");
      if (sv_.size() % size_t(supports_) != 0)
        ctx.fail("attribute 'support_vectors' has {} values, not a multiple of n_supports {}",
                 sv_.size(), supports_);
    }
  }
  Outputs run(const Inputs& in, RunContext& ctx) override {
    Rows x = read_rows(input_tensor(in, 0, "X"), "X");
    const int64_t expect = supports_ > 0 ? int64_t(sv_.size()) / supports_ : int64_t(coef_.size());
    if (x.c != expect) ctx.fail("input X has {} features; the model has {}", x.c, expect);
    Tensor y(DataType::kFloat32, {x.n, 1});
    for (int64_t i = 0; i < x.n; ++i) {
      double s = rho_[0];
      if (supports_ > 0)
        for (int64_t k = 0; k < supports_; ++k)
          s += coef_[size_t(k)] * kernel_(x.row(i), &sv_[size_t(k * x.c)], x.c);
      else
        s += SvmKernel::dot(x.row(i), coef_.data(), x.c);
      if (one_class_) s = s > 0 ? 1 : -1;
      apply_post_transform(transform_, &s, 1);
      y.data<float>()[i] = float(s);
    }
    return {y};
  }

 private:
  SvmKernel kernel_;
  std::vector<double> coef_, sv_, rho_;
  int64_t supports_;
  bool one_class_;
  PostTransform transform_;
};
PARITY_REF_OP(kDomain, "SVMRegressor", 1, kOpsetMax, SVMRegressor);

// Pairwise coupling of one-vs-one probabilities r[i][j] into class probabilities p (Wu, Lin
// and Weng 2004, method 2, as libsvm and ONNX Runtime iterate it: at most 100 sweeps, stopping
// when every |(Qp)_i - pᵀQp| < 0.005 / k).
std::vector<double> couple_probabilities(int64_t k, const std::vector<double>& r) {
  std::vector<double> q(size_t(k * k), 0.0), qp(static_cast<size_t>(k), 0.0),
      p(static_cast<size_t>(k), 1.0 / double(k));
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t j = 0; j < i; ++j) {
      q[i * k + i] += r[j * k + i] * r[j * k + i];
      q[i * k + j] = q[j * k + i];
    }
    for (int64_t j = i + 1; j < k; ++j) {
      q[i * k + i] += r[j * k + i] * r[j * k + i];
      q[i * k + j] = -r[j * k + i] * r[i * k + j];
    }
  }
  const double eps = 0.005 / double(k);
  for (int loop = 0; loop < 100; ++loop) {
    double pqp = 0;
    for (int64_t i = 0; i < k; ++i) {
      qp[i] = 0;
      for (int64_t j = 0; j < k; ++j) qp[i] += q[i * k + j] * p[j];
      pqp += p[i] * qp[i];
    }
    double max_error = 0;
    for (int64_t i = 0; i < k; ++i) max_error = std::max(max_error, std::abs(qp[i] - pqp));
    if (max_error < eps) break;
    for (int64_t i = 0; i < k; ++i) {
      const double diff = (-qp[i] + pqp) / q[i * k + i];
      p[i] += diff;
      pqp = (pqp + diff * (diff * q[i * k + i] + 2 * qp[i])) / (1 + diff) / (1 + diff);
      for (int64_t j = 0; j < k; ++j) {
        qp[j] = (qp[j] + diff * q[i * k + j]) / (1 + diff);
        p[j] /= (1 + diff);
      }
    }
  }
  return p;
}

// Y[N] labels and Z scores. With vectors_per_class (libsvm's SVC): one classifier per pair of
// classes i < j, score s = Σ coef · K over both classes' support vectors + rho, a vote for i
// when s > 0 and for j otherwise; the label is the class with the most votes (the first on a
// tie). Z is the pairwise scores [N, k(k-1)/2] (two classes: [-s, s]) after post_transform,
// or with prob_a / prob_b the class probabilities [N, k] from Platt's sigmoid and pairwise
// coupling. Without vectors_per_class (a linear model): Z[n, c] = x · coefficients[c] + rho
// and the label is that of the highest score.
class SVMClassifier : public Kernel {
 public:
  explicit SVMClassifier(const OpContext& ctx)
      : kernel_(ctx),
        coef_(floats_of(ctx, "coefficients")),
        sv_(floats_of(ctx, "support_vectors")),
        rho_(floats_of(ctx, "rho")),
        prob_a_(floats_of(ctx, "prob_a")),
        prob_b_(floats_of(ctx, "prob_b")),
        per_class_(ctx.attr_ints("vectors_per_class", {})),
        int_labels_(ctx.attr_ints("classlabels_ints", {})),
        string_labels_(ctx.attr_strings("classlabels_strings", {})),
        transform_(read_post_transform(ctx)) {
    if (int_labels_.empty() == string_labels_.empty())
      ctx.fail(
          "exactly one of attributes 'classlabels_ints' and 'classlabels_strings' must be "
          "set; {} are",
          int_labels_.empty() ? "neither" : "both");
    k_ = int64_t(std::max(int_labels_.size(), string_labels_.size()));
    check_length(ctx, "prob_b", prob_b_.size(), prob_a_.size(), "as many as prob_a");
    if (per_class_.empty()) {
      if (coef_.empty() || coef_.size() % size_t(k_) != 0)
        ctx.fail(
            "attribute 'coefficients' has {} values; a linear model needs one row per "
            "class ({} classes)",
            coef_.size(), k_);
      features_ = int64_t(coef_.size()) / k_;
      if (rho_.size() != 1 && rho_.size() != size_t(k_))
        ctx.fail("attribute 'rho' has {} values; a linear model needs 1 or one per class ({})",
                 rho_.size(), k_);
      return;
    }
    check_length(ctx, "vectors_per_class", per_class_.size(), size_t(k_), "one per class label");
    for (int64_t c : per_class_) {
      if (c < 0) ctx.fail("attribute 'vectors_per_class' has {}; counts must be >= 0", c);
      start_.push_back(vectors_);
      vectors_ += c;
    }
    if (vectors_ == 0 || sv_.size() % size_t(vectors_) != 0)
      ctx.fail(
          "attribute 'support_vectors' has {} values; it must hold {} vectors of equal "
          "length",
          sv_.size(), vectors_);
    features_ = int64_t(sv_.size()) / vectors_;
    check_length(ctx, "coefficients", coef_.size(), size_t((k_ - 1) * vectors_),
                 "(classes - 1) rows of one value per support vector");
    const size_t pairs = size_t(k_ * (k_ - 1) / 2);
    check_length(ctx, "rho", rho_.size(), pairs, "one per pair of classes");
    if (!prob_a_.empty())
      check_length(ctx, "prob_a", prob_a_.size(), pairs, "one per pair of classes");
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    Rows x = read_rows(input_tensor(in, 0, "X"), "X");
    if (x.c != features_) ctx.fail("input X has {} features; the model has {}", x.c, features_);
    const bool svc = !per_class_.empty(), proba = svc && !prob_a_.empty();
    const int64_t pairs = k_ * (k_ - 1) / 2;
    const int64_t columns = !svc || proba ? k_ : (k_ == 2 ? 2 : pairs);
    Tensor y(string_labels_.empty() ? DataType::kInt64 : DataType::kString, {x.n});
    Tensor z(DataType::kFloat32, {x.n, columns});
    for (int64_t n = 0; n < x.n; ++n) {
      std::vector<double> out;
      int64_t best = 0;
      if (!svc) {
        for (int64_t c = 0; c < k_; ++c)
          out.push_back(SvmKernel::dot(x.row(n), &coef_[size_t(c * features_)], features_) +
                        rho_[rho_.size() == 1 ? 0 : size_t(c)]);
        for (int64_t c = 1; c < k_; ++c)
          if (out[c] > out[best]) best = c;
        apply_post_transform(transform_, out.data(), k_);
      } else {
        std::vector<double> kern(static_cast<size_t>(vectors_));
        for (int64_t v = 0; v < vectors_; ++v)
          kern[v] = kernel_(x.row(n), &sv_[size_t(v * features_)], features_);
        std::vector<double> scores;
        std::vector<int64_t> votes(size_t(k_), 0);
        for (int64_t i = 0, idx = 0; i < k_; ++i)
          for (int64_t j = i + 1; j < k_; ++j, ++idx) {
            double s = rho_[size_t(idx)];
            for (int64_t m = 0; m < per_class_[i]; ++m)
              s += coef_[size_t((j - 1) * vectors_ + start_[i] + m)] * kern[start_[i] + m];
            for (int64_t m = 0; m < per_class_[j]; ++m)
              s += coef_[size_t(i * vectors_ + start_[j] + m)] * kern[start_[j] + m];
            scores.push_back(s);
            ++votes[size_t(s > 0 ? i : j)];
          }
        for (int64_t c = 1; c < k_; ++c)
          if (votes[c] > votes[best]) best = c;
        if (proba) {
          std::vector<double> r(size_t(k_ * k_), 0.0);
          for (int64_t i = 0, idx = 0; i < k_; ++i)
            for (int64_t j = i + 1; j < k_; ++j, ++idx) {
              const double v = 1 / (1 + std::exp(scores[idx] * prob_a_[idx] + prob_b_[idx]));
              const double clamped = std::min(std::max(v, 1e-7), 1 - 1e-7);
              r[i * k_ + j] = clamped;
              r[j * k_ + i] = 1 - clamped;
            }
          out = couple_probabilities(k_, r);
          apply_post_transform(transform_, out.data(), k_);
        } else if (k_ == 2) {
          out = {-scores[0], scores[0]};
          apply_post_transform(transform_, out.data(), 2);
        } else {
          out = scores;
          apply_post_transform(transform_, out.data(), pairs);
        }
      }
      for (int64_t c = 0; c < columns; ++c) z.data<float>()[n * columns + c] = float(out[c]);
      if (string_labels_.empty())
        y.data<int64_t>()[n] = int_labels_[size_t(best)];
      else
        y.data<std::string>()[n] = string_labels_[size_t(best)];
    }
    return {y, z};
  }

 private:
  SvmKernel kernel_;
  std::vector<double> coef_, sv_, rho_, prob_a_, prob_b_;
  std::vector<int64_t> per_class_, start_;
  std::vector<int64_t> int_labels_;
  std::vector<std::string> string_labels_;
  PostTransform transform_;
  int64_t k_ = 0, vectors_ = 0, features_ = 0;
};
PARITY_REF_OP(kDomain, "SVMClassifier", 1, kOpsetMax, SVMClassifier);

}  // namespace
}  // namespace parity::ref::ml
