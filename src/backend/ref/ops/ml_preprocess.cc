// ai.onnx.ml feature preprocessing: Binarizer, Scaler, Normalizer, Imputer,
// ArrayFeatureExtractor, FeatureVectorizer. Floating math in double, rounded once to the
// output type; shapes as ONNX Runtime reads them where the specification leaves them open.
#include <cmath>

#include "backend/ref/ops/ml_util.h"

namespace parity::ref::ml {
namespace {

// Per-feature attribute values: one value for every feature, or one per feature of the last
// axis (`c`).
double per_feature(const std::vector<double>& values, int64_t feature) {
  return values.size() == 1 ? values[0] : values[static_cast<size_t>(feature)];
}
void check_per_feature(RunContext& ctx, std::string_view name, size_t count, int64_t c) {
  if (count != 1 && static_cast<int64_t>(count) != c)
    ctx.fail(
        "attribute '{}' has {} values; it must have 1 or one per feature of the last "
        "axis ({})",
        name, count, c);
}

// Y = X > threshold ? 1 : 0, in X's type (NaN gives 0: it is not greater).
class Binarizer : public Kernel {
 public:
  explicit Binarizer(const OpContext& ctx) : threshold_(ctx.attr_float("threshold", 0.0f)) {}
  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const double t = threshold_;
    return {dispatch<MlNumericTypes>(
        x.dtype(),
        [&]<typename T>() {
          return unary_elementwise<T, T>(x, [t](auto v) { return double(v) > t ? 1.0 : 0.0; });
        },
        "input X")};
  }

 private:
  double threshold_;
};
PARITY_REF_OP(kDomain, "Binarizer", 1, kOpsetMax, Binarizer);

// Y = (X - offset) * scale as float, offset and scale per feature of the last axis.
class Scaler : public Kernel {
 public:
  explicit Scaler(const OpContext& ctx)
      : offset_(attr_doubles(ctx, "offset")), scale_(attr_doubles(ctx, "scale")) {
    if (offset_.empty()) offset_ = {0.0};
    if (scale_.empty()) scale_ = {1.0};
  }
  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const int64_t c = x.rank() == 0 ? 1 : x.shape().back();
    check_per_feature(ctx, "offset", offset_.size(), c);
    check_per_feature(ctx, "scale", scale_.size(), c);
    Tensor y(DataType::kFloat32, x.shape());
    float* out = y.data<float>();
    dispatch<MlNumericTypes>(
        x.dtype(),
        [&]<typename T>() {
          const T* src = x.data<T>();
          for (int64_t i = 0; i < x.numel(); ++i)
            out[i] = static_cast<float>((to_double(src[i]) - per_feature(offset_, i % c)) *
                                        per_feature(scale_, i % c));
        },
        "input X");
    return {y};
  }

 private:
  std::vector<double> offset_, scale_;
};
PARITY_REF_OP(kDomain, "Scaler", 1, kOpsetMax, Scaler);

// Each row divided by its maximum (MAX), the sum of magnitudes (L1) or the Euclidean norm
// (L2); output float.
class Normalizer : public Kernel {
 public:
  explicit Normalizer(const OpContext& ctx) : norm_(ctx.attr_string("norm", "MAX")) {
    if (norm_ != "MAX" && norm_ != "L1" && norm_ != "L2")
      ctx.fail("attribute 'norm' is '{}'; it must be one of MAX, L1, L2", norm_);
  }
  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "X");
    Rows r = read_rows(x, "X");
    Tensor y(DataType::kFloat32, x.shape());
    float* out = y.data<float>();
    for (int64_t i = 0; i < r.n; ++i) {
      const double* row = r.row(i);
      double d = norm_ == "MAX" ? -INFINITY : 0;
      for (int64_t j = 0; j < r.c; ++j) {
        if (norm_ == "MAX")
          d = std::max(d, row[j]);
        else if (norm_ == "L1")
          d += std::abs(row[j]);
        else
          d += row[j] * row[j];
      }
      if (norm_ == "L2") d = std::sqrt(d);
      for (int64_t j = 0; j < r.c; ++j) out[i * r.c + j] = static_cast<float>(row[j] / d);
    }
    return {y};
  }

 private:
  std::string norm_;
};
PARITY_REF_OP(kDomain, "Normalizer", 1, kOpsetMax, Normalizer);

// Replaces every element equal to the replaced value (NaN matches NaN) by the imputed value of
// its feature. Floating inputs use the *_float(s) attributes, integer inputs the *_int64(s).
class Imputer : public Kernel {
 public:
  explicit Imputer(const OpContext& ctx)
      : floats_(attr_doubles(ctx, "imputed_value_floats")),
        ints_(ctx.attr_ints("imputed_value_int64s", {})),
        replaced_float_(ctx.attr_float("replaced_value_float", 0.0f)),
        replaced_int_(ctx.attr_int("replaced_value_int64", 0)) {
    if (floats_.empty() == ints_.empty())
      ctx.fail(
          "exactly one of attributes 'imputed_value_floats' and 'imputed_value_int64s' "
          "must be set; {} are",
          floats_.empty() ? "neither" : "both");
  }
  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const int64_t c = x.rank() == 0 ? 1 : x.shape().back();
    return {dispatch<MlNumericTypes>(
        x.dtype(),
        [&]<typename T>() {
          constexpr bool kFloating = std::is_floating_point_v<T>;
          if (kFloating == floats_.empty())
            ctx.fail(
                "input X has element type {} but only attribute '{}' is set; {} inputs "
                "need '{}'",
                dtype_name(x.dtype()),
                floats_.empty() ? "imputed_value_int64s" : "imputed_value_floats",
                kFloating ? "floating" : "integer",
                kFloating ? "imputed_value_floats" : "imputed_value_int64s");
          std::vector<double> imputed = floats_;
          if (!kFloating) imputed.assign(ints_.begin(), ints_.end());
          check_per_feature(ctx, kFloating ? "imputed_value_floats" : "imputed_value_int64s",
                            imputed.size(), c);
          Tensor y = x.clone();
          T* v = y.data<T>();
          for (int64_t i = 0; i < y.numel(); ++i) {
            bool replace;
            if constexpr (kFloating)
              replace = std::isnan(replaced_float_) ? std::isnan(v[i])
                                                    : v[i] == static_cast<T>(replaced_float_);
            else
              replace = static_cast<int64_t>(v[i]) == replaced_int_;
            if (replace) {
              if constexpr (kFloating)
                v[i] = static_cast<T>(per_feature(imputed, i % c));
              else
                v[i] = static_cast<T>(ints_.size() == 1 ? ints_[0] : ints_[i % c]);
            }
          }
          return y;
        },
        "input X")};
  }

 private:
  std::vector<double> floats_;
  std::vector<int64_t> ints_;
  float replaced_float_;
  int64_t replaced_int_;
};
PARITY_REF_OP(kDomain, "Imputer", 1, kOpsetMax, Imputer);

// Z = X[..., Y]: the elements at indices Y (flattened) of the last axis. A 1-D X gives
// [1, len(Y)], as ONNX Runtime shapes it.
class ArrayFeatureExtractor : public Kernel {
 public:
  explicit ArrayFeatureExtractor(const OpContext&) {}
  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const Tensor& y = input_tensor(in, 1, "Y");
    if (x.rank() < 1) ctx.fail("input X is a scalar; it must have at least one axis");
    if (y.dtype() != DataType::kInt64)
      ctx.fail("input Y has element type {}; it must be int64", dtype_name(y.dtype()));
    const int64_t last = x.shape().back(), count = y.numel();
    const int64_t* idx = y.data<int64_t>();
    for (int64_t k = 0; k < count; ++k)
      if (idx[k] < 0 || idx[k] >= last)
        ctx.fail(
            "index {} (element {} of input Y) is out of range; it must be in [0, {}] for "
            "a last axis of size {}",
            idx[k], k, last - 1, last);
    Shape shape = x.shape();
    if (x.rank() == 1) shape.insert(shape.begin(), 1);
    shape.back() = count;
    const int64_t rows = x.numel() / std::max<int64_t>(last, 1);
    return {dispatch_storage(
        x.dtype(),
        [&]<typename S>() {
          Tensor z(x.dtype(), shape);
          const S* src = static_cast<const S*>(x.raw_data());
          S* dst = static_cast<S*>(z.raw_data());
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t k = 0; k < count; ++k) dst[r * count + k] = src[r * last + idx[k]];
          return z;
        },
        "input X")};
  }
};
PARITY_REF_OP(kDomain, "ArrayFeatureExtractor", 1, kOpsetMax, ArrayFeatureExtractor);

// Concatenates the inputs' features into one float [N, sum(inputdimensions)]: input i gives
// inputdimensions[i] columns, its own features truncated or padded with zeros.
class FeatureVectorizer : public Kernel {
 public:
  explicit FeatureVectorizer(const OpContext& ctx) : dims_(ctx.attr_ints("inputdimensions", {})) {
    if (dims_.size() != ctx.num_inputs())
      ctx.fail("attribute 'inputdimensions' has {} values; it must have one per input ({})",
               dims_.size(), ctx.num_inputs());
    for (int64_t d : dims_)
      if (d < 0) ctx.fail("attribute 'inputdimensions' has {}; every value must be >= 0", d);
  }
  Outputs run(const Inputs& in, RunContext& ctx) override {
    int64_t total = 0, n = -1;
    std::vector<Rows> rows;
    for (size_t i = 0; i < in.size(); ++i) {
      const Tensor& x = input_tensor(in, i, fmt::format("X[{}]", i));
      if (x.rank() < 1) ctx.fail("input {} is a scalar; it must be [N, C] or [C]", i);
      // Rank > 2 keeps the first axis as N and flattens the rest into features.
      Tensor flat = x.rank() <= 2 ? x : x.reshaped({x.shape()[0], x.numel() / x.shape()[0]});
      rows.push_back(read_rows(flat, fmt::format("X[{}]", i)));
      if (n >= 0 && rows.back().n != n)
        ctx.fail("input {} has {} rows but input 0 has {}; every input must have the same N", i,
                 rows.back().n, n);
      n = rows.back().n;
      total += dims_[i];
    }
    Tensor y(DataType::kFloat32, {n, total});
    float* out = y.data<float>();
    for (int64_t r = 0; r < n; ++r) {
      for (size_t i = 0; i < rows.size(); ++i) {
        const int64_t take = std::min(dims_[i], rows[i].c);
        for (int64_t j = 0; j < take; ++j) out[j] = static_cast<float>(rows[i].row(r)[j]);
        out += dims_[i];
      }
    }
    return {y};
  }

 private:
  std::vector<int64_t> dims_;
};
PARITY_REF_OP(kDomain, "FeatureVectorizer", 1, kOpsetMax, FeatureVectorizer);

}  // namespace
}  // namespace parity::ref::ml
