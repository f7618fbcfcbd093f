// ai.onnx.ml category encoders: OneHotEncoder, CategoryMapper, LabelEncoder (ml opsets 1, 2
// and 4). Keys are looked up exactly; a floating key NaN matches any NaN.
#include <cmath>
#include <map>
#include <variant>

#include "backend/ref/ops/ml_util.h"

namespace parity::ref::ml {
namespace {

// One row of floats per element of X: 1 at the element's category, zeros elsewhere. Numeric
// inputs are truncated to int64 and matched against cats_int64s; strings against
// cats_strings. An unknown category gives a zero row (zeros=1) or an error (zeros=0).
class OneHotEncoder : public Kernel {
 public:
  explicit OneHotEncoder(const OpContext& ctx)
      : ints_(ctx.attr_ints("cats_int64s", {})),
        strings_(ctx.attr_strings("cats_strings", {})),
        zeros_(ctx.attr_int("zeros", 1) != 0) {
    if (ints_.empty() == strings_.empty())
      ctx.fail("exactly one of attributes 'cats_int64s' and 'cats_strings' must be set; {} are",
               ints_.empty() ? "neither" : "both");
    for (size_t i = 0; i < ints_.size(); ++i) int_index_.emplace(ints_[i], i);
    for (size_t i = 0; i < strings_.size(); ++i) string_index_.emplace(strings_[i], i);
  }
  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const int64_t cats = static_cast<int64_t>(ints_.empty() ? strings_.size() : ints_.size());
    Shape shape = x.shape();
    shape.push_back(cats);
    Tensor y(DataType::kFloat32, shape);
    float* out = y.data<float>();
    auto place = [&](int64_t i, auto found, const auto& value) {
      if (found >= 0)
        out[i * cats + found] = 1.0f;
      else if (!zeros_)
        ctx.fail(
            "element {} of input X is {}, which is not a category; with zeros=0 every "
            "element must be one of the {} categories",
            i, value, cats);
    };
    if (x.dtype() == DataType::kString) {
      if (strings_.empty())
        ctx.fail(
            "input X holds strings but only 'cats_int64s' is set; strings need "
            "'cats_strings'");
      const std::string* v = x.data<std::string>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        auto it = string_index_.find(v[i]);
        place(i, it == string_index_.end() ? int64_t{-1} : int64_t(it->second),
              fmt::format("'{}'", v[i]));
      }
      return {y};
    }
    if (ints_.empty())
      ctx.fail(
          "input X has element type {} but only 'cats_strings' is set; numbers need "
          "'cats_int64s'",
          dtype_name(x.dtype()));
    dispatch<MlNumericTypes>(
        x.dtype(),
        [&]<typename T>() {
          const T* v = x.data<T>();
          for (int64_t i = 0; i < x.numel(); ++i) {
            // A float is truncated to its int64 category; NaN, or one past int64 (whose cast
            // is undefined), is no category.
            if constexpr (std::is_floating_point_v<T>)
              if (!(std::abs(v[i]) < T(0x1p63))) {
                place(i, int64_t{-1}, v[i]);
                continue;
              }
            auto it = int_index_.find(static_cast<int64_t>(v[i]));
            place(i, it == int_index_.end() ? int64_t{-1} : int64_t(it->second), v[i]);
          }
        },
        "input X");
    return {y};
  }

 private:
  std::vector<int64_t> ints_;
  std::vector<std::string> strings_;
  bool zeros_;
  std::map<int64_t, size_t> int_index_;  // first occurrence wins
  std::map<std::string, size_t> string_index_;
};
PARITY_REF_OP(kDomain, "OneHotEncoder", 1, kOpsetMax, OneHotEncoder);

// Strings to int64 and back through two parallel lists; unknown values give the default.
class CategoryMapper : public Kernel {
 public:
  explicit CategoryMapper(const OpContext& ctx)
      : ints_(ctx.attr_ints("cats_int64s", {})),
        strings_(ctx.attr_strings("cats_strings", {})),
        default_int_(ctx.attr_int("default_int64", -1)),
        default_string_(ctx.attr_string("default_string", "_Unused")) {
    if (ints_.size() != strings_.size())
      ctx.fail(
          "attributes 'cats_int64s' ({} values) and 'cats_strings' ({} values) must have "
          "the same length",
          ints_.size(), strings_.size());
    for (size_t i = 0; i < ints_.size(); ++i) {
      to_int_.emplace(strings_[i], ints_[i]);
      to_string_.emplace(ints_[i], strings_[i]);
    }
  }
  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    if (x.dtype() == DataType::kString) {
      Tensor y(DataType::kInt64, x.shape());
      for (int64_t i = 0; i < x.numel(); ++i) {
        auto it = to_int_.find(x.data<std::string>()[i]);
        y.data<int64_t>()[i] = it == to_int_.end() ? default_int_ : it->second;
      }
      return {y};
    }
    if (x.dtype() != DataType::kInt64)
      ctx.fail("input X has element type {}; it must be string or int64", dtype_name(x.dtype()));
    Tensor y(DataType::kString, x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) {
      auto it = to_string_.find(x.data<int64_t>()[i]);
      y.data<std::string>()[i] = it == to_string_.end() ? default_string_ : it->second;
    }
    return {y};
  }

 private:
  std::vector<int64_t> ints_;
  std::vector<std::string> strings_;
  int64_t default_int_;
  std::string default_string_;
  std::map<std::string, int64_t> to_int_;
  std::map<int64_t, std::string> to_string_;
};
PARITY_REF_OP(kDomain, "CategoryMapper", 1, kOpsetMax, CategoryMapper);

// A key or value of LabelEncoder: an integer, a floating value or a string. Floating keys
// are ordered with every NaN equal to every other NaN (and greater than any number); the
// kernel looks NaN up only from ml opset 4, which added "a NaN key matches any NaN".
using Label = std::variant<int64_t, double, std::string>;
struct LabelLess {
  bool operator()(const Label& a, const Label& b) const {
    if (a.index() != b.index()) return a.index() < b.index();
    if (const double* x = std::get_if<double>(&a)) {
      const double y = std::get<double>(b);
      if (std::isnan(*x) || std::isnan(y)) return !std::isnan(*x) && std::isnan(y);
      return *x < y;
    }
    return a < b;
  }
};
bool is_nan_label(const Label& v) {
  const double* d = std::get_if<double>(&v);
  return d && std::isnan(*d);
}

// The labels of one list: a tensor's elements, with the element type they had.
struct LabelList {
  DataType dtype = DataType::kUndefined;
  std::vector<Label> labels;
};

LabelList labels_of(const Tensor& t, std::string_view what) {
  LabelList list{t.dtype(), {}};
  if (t.dtype() == DataType::kString) {
    for (int64_t i = 0; i < t.numel(); ++i) list.labels.emplace_back(t.data<std::string>()[i]);
    return list;
  }
  dispatch<TypeList<float, double, int64_t, int32_t, int16_t>>(
      t.dtype(),
      [&]<typename T>() {
        for (int64_t i = 0; i < t.numel(); ++i) {
          if constexpr (std::is_floating_point_v<T>)
            list.labels.emplace_back(double(t.data<T>()[i]));
          else
            list.labels.emplace_back(int64_t(t.data<T>()[i]));
        }
      },
      what);
  return list;
}

// The one list among <prefix>_strings / _int64s / _floats / _tensor (the last from opset 4).
LabelList read_label_list(const OpContext& ctx, const std::string& prefix) {
  std::vector<LabelList> found;
  if (ctx.has_attr(prefix + "_strings")) {
    auto v = ctx.attr_strings(prefix + "_strings");
    found.push_back(labels_of(Tensor::from_vector<std::string>({int64_t(v.size())}, v), ""));
  }
  if (ctx.has_attr(prefix + "_int64s")) {
    auto v = ctx.attr_ints(prefix + "_int64s");
    found.push_back(labels_of(Tensor::from_vector<int64_t>({int64_t(v.size())}, v), ""));
  }
  if (ctx.has_attr(prefix + "_floats")) {
    auto v = ctx.attr_floats(prefix + "_floats");
    found.push_back(labels_of(Tensor::from_vector<float>({int64_t(v.size())}, v), ""));
  }
  if (ctx.opset() >= 4 && ctx.has_attr(prefix + "_tensor"))
    found.push_back(
        labels_of(ctx.attr_tensor(prefix + "_tensor"), "attribute '" + prefix + "_tensor'"));
  if (found.size() != 1)
    ctx.fail(
        "exactly one of attributes '{0}_strings', '{0}_int64s', '{0}_floats'{1} must be "
        "set; {2} are",
        prefix, ctx.opset() >= 4 ? fmt::format(", '{}_tensor'", prefix) : "",
        found.empty() ? "none" : fmt::format("{}", found.size()));
  return found.front();
}

// Maps each element of X through keys -> values; an unknown key gives the default of the
// values' type. Opset 1 had one list (classes_strings): strings map to their index, int64
// indices to their string.
class LabelEncoder : public Kernel {
 public:
  explicit LabelEncoder(const OpContext& ctx) {
    if (ctx.opset() < 2) {
      auto classes = ctx.attr_strings("classes_strings", {});
      for (size_t i = 0; i < classes.size(); ++i) {
        string_keys_.labels.emplace_back(classes[i]);
        index_values_.labels.emplace_back(int64_t(i));
      }
      string_keys_.dtype = DataType::kString;
      index_values_.dtype = DataType::kInt64;
      default_int_ = ctx.attr_int("default_int64", -1);
      default_string_ = ctx.attr_string("default_string", "_Unused");
      return;
    }
    LabelList keys = read_label_list(ctx, "keys"), values = read_label_list(ctx, "values");
    if (keys.labels.size() != values.labels.size())
      ctx.fail("the keys ({} values) and the values ({} values) must have the same length",
               keys.labels.size(), values.labels.size());
    key_type_ = keys.dtype;
    value_type_ = values.dtype;
    nan_matches_ = ctx.opset() >= 4;
    // A repeated key: the last one takes precedence (opset 4's rule).
    for (size_t i = 0; i < keys.labels.size(); ++i)
      table_.insert_or_assign(keys.labels[i], values.labels[i]);
    if (ctx.opset() >= 4 && ctx.has_attr("default_tensor")) {
      LabelList d = labels_of(ctx.attr_tensor("default_tensor"), "attribute 'default_tensor'");
      if (d.labels.size() != 1 || d.dtype != value_type_)
        ctx.fail(
            "attribute 'default_tensor' has {} {} values; it must hold one value of the "
            "values' type {}",
            d.labels.size(), dtype_name(d.dtype), dtype_name(value_type_));
      default_ = d.labels[0];
    } else if (value_type_ == DataType::kString) {
      default_ = ctx.attr_string("default_string", "_Unused");
    } else if (value_type_ == DataType::kFloat32 || value_type_ == DataType::kFloat64) {
      default_ = double(ctx.attr_float("default_float", -0.0f));
    } else {
      default_ = ctx.attr_int("default_int64", -1);
    }
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    if (value_type_ == DataType::kUndefined) return {run_opset1(x, ctx)};
    if (x.dtype() != key_type_)
      ctx.fail("input X has element type {}; it must match the keys' type {}",
               dtype_name(x.dtype()), dtype_name(key_type_));
    LabelList in_labels = labels_of(x, "input X");
    Tensor y(value_type_, x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) {
      const Label& key = in_labels.labels[static_cast<size_t>(i)];
      // Before opset 4, NaN equals nothing, so it is never a known key.
      auto it = nan_matches_ || !is_nan_label(key) ? table_.find(key) : table_.end();
      write(y, i, it == table_.end() ? default_ : it->second);
    }
    return {y};
  }

 private:
  static void write(Tensor& y, int64_t i, const Label& v) {
    if (y.dtype() == DataType::kString) {
      y.data<std::string>()[i] = std::get<std::string>(v);
      return;
    }
    dispatch<TypeList<float, double, int64_t, int32_t, int16_t>>(y.dtype(), [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>)
        y.data<T>()[i] = static_cast<T>(std::get<double>(v));
      else
        y.data<T>()[i] = static_cast<T>(std::get<int64_t>(v));
    });
  }

  Tensor run_opset1(const Tensor& x, RunContext& ctx) const {
    const auto& classes = string_keys_.labels;
    if (x.dtype() == DataType::kString) {
      Tensor y(DataType::kInt64, x.shape());
      for (int64_t i = 0; i < x.numel(); ++i) {
        y.data<int64_t>()[i] = default_int_;
        for (size_t k = 0; k < classes.size(); ++k)
          if (std::get<std::string>(classes[k]) == x.data<std::string>()[i]) {
            y.data<int64_t>()[i] = int64_t(k);
            break;
          }
      }
      return y;
    }
    if (x.dtype() != DataType::kInt64)
      ctx.fail("input X has element type {}; it must be string or int64", dtype_name(x.dtype()));
    Tensor y(DataType::kString, x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t k = x.data<int64_t>()[i];
      y.data<std::string>()[i] = k >= 0 && k < int64_t(classes.size())
                                     ? std::get<std::string>(classes[size_t(k)])
                                     : default_string_;
    }
    return y;
  }

  DataType key_type_ = DataType::kUndefined, value_type_ = DataType::kUndefined;
  bool nan_matches_ = false;
  std::map<Label, Label, LabelLess> table_;
  Label default_;
  LabelList string_keys_, index_values_;  // opset 1
  int64_t default_int_ = -1;
  std::string default_string_;
};
PARITY_REF_OP(kDomain, "LabelEncoder", 1, kOpsetMax, LabelEncoder);

}  // namespace
}  // namespace parity::ref::ml
