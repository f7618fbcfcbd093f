// ai.onnx.ml ops on maps (core/value.h's MapValue): ZipMap makes a sequence of maps from rows
// of scores; DictVectorizer and CastMap turn a map into a [1, D] tensor.
#include <cerrno>
#include <cstdlib>

#include "backend/ref/ops/ml_util.h"

namespace parity::ref::ml {
namespace {

const MapValue& input_map(const Inputs& in, size_t i, std::string_view name, RunContext& ctx) {
  if (i >= in.size() || !in[i].is_map())
    ctx.fail("input '{}' is {}; it must be a map", name,
             i < in.size() ? in[i].kind_name() : "absent");
  return in[i].map;
}

// The class labels of ZipMap / the vocabulary of DictVectorizer: exactly one of two
// attributes, as a 1-D int64 or string tensor.
Tensor one_key_list(const OpContext& ctx, const std::string& ints, const std::string& strings) {
  const bool has_ints = ctx.has_attr(ints), has_strings = ctx.has_attr(strings);
  if (has_ints == has_strings)
    ctx.fail("exactly one of attributes '{}' and '{}' must be set; {} are", ints, strings,
             has_ints ? "both" : "neither");
  if (has_ints) {
    auto v = ctx.attr_ints(ints);
    return Tensor::from_vector<int64_t>({int64_t(v.size())}, v);
  }
  auto v = ctx.attr_strings(strings);
  return Tensor::from_vector<std::string>({int64_t(v.size())}, v);
}

// One map per row of X [N, C] (or [C]): class label k -> X[n, k].
class ZipMap : public Kernel {
 public:
  explicit ZipMap(const OpContext& ctx)
      : labels_(one_key_list(ctx, "classlabels_int64s", "classlabels_strings")) {}
  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    if (x.dtype() != DataType::kFloat32)
      ctx.fail("input X has element type {}; it must be float32", dtype_name(x.dtype()));
    if (x.rank() < 1 || x.rank() > 2)
      ctx.fail("input X has shape {}; it must be [N, C] or [C]", shape_str(x.shape()));
    const int64_t c = x.shape().back(), n = x.rank() == 1 ? 1 : x.shape()[0];
    if (c != labels_.numel())
      ctx.fail("input X has {} columns for {} class labels; there must be one column per label", c,
               labels_.numel());
    std::vector<MapValue> maps;
    for (int64_t i = 0; i < n; ++i) {
      Tensor row(DataType::kFloat32, {c});
      for (int64_t k = 0; k < c; ++k) row.data<float>()[k] = x.data<float>()[i * c + k];
      maps.push_back(sorted_map_from_entries(labels_, row));
    }
    return {Value::make_map_sequence(std::move(maps), labels_.dtype(), DataType::kFloat32)};
  }

 private:
  Tensor labels_;
};
PARITY_REF_OP(kDomain, "ZipMap", 1, kOpsetMax, ZipMap);

// Y[1, V]: Y[0, j] = X[vocabulary[j]], or zero (an empty string) when the map has no such key.
class DictVectorizer : public Kernel {
 public:
  explicit DictVectorizer(const OpContext& ctx)
      : vocabulary_(one_key_list(ctx, "int64_vocabulary", "string_vocabulary")) {}
  Outputs run(const Inputs& in, RunContext& ctx) override {
    const MapValue& m = input_map(in, 0, "X", ctx);
    if (m.keys.dtype() != vocabulary_.dtype())
      ctx.fail("input X has {} keys but the vocabulary is {}; they must be of one type",
               dtype_name(m.keys.dtype()), dtype_name(vocabulary_.dtype()));
    const int64_t v = vocabulary_.numel();
    return {dispatch_storage(
        m.values.dtype(),
        [&]<typename S>() {
          Tensor y(m.values.dtype(), {1, v});
          S* out = static_cast<S*>(y.raw_data());
          const S* values = static_cast<const S*>(m.values.raw_data());
          for (int64_t j = 0; j < v; ++j) {
            int64_t at = -1;
            for (int64_t k = 0; k < m.size() && at < 0; ++k)
              if (vocabulary_.dtype() == DataType::kInt64
                      ? m.keys.data<int64_t>()[k] == vocabulary_.data<int64_t>()[j]
                      : m.keys.data<std::string>()[k] == vocabulary_.data<std::string>()[j])
                at = k;
            if (at >= 0) out[j] = values[at];
          }
          return y;
        },
        "the values of input X")};
  }

 private:
  Tensor vocabulary_;
};
PARITY_REF_OP(kDomain, "DictVectorizer", 1, kOpsetMax, DictVectorizer);

// map(int64 -> string | float) to a [1, D] tensor of floats, int64s or strings. DENSE: the
// values in key order (D = the map's size); SPARSE: position k holds the value of key k for
// k in [0, max_map), a missing key giving 0 ("0.f" for strings, ONNX Runtime's pad).
class CastMap : public Kernel {
 public:
  explicit CastMap(const OpContext& ctx)
      : cast_to_(ctx.attr_string("cast_to", "TO_FLOAT")),
        map_form_(ctx.attr_string("map_form", "DENSE")),
        max_map_(ctx.attr_int("max_map", 1)) {
    if (cast_to_ == "TO_FLOAT")
      out_type_ = DataType::kFloat32;
    else if (cast_to_ == "TO_INT64")
      out_type_ = DataType::kInt64;
    else if (cast_to_ == "TO_STRING")
      out_type_ = DataType::kString;
    else
      ctx.fail("attribute 'cast_to' is '{}'; it must be one of TO_FLOAT, TO_STRING, TO_INT64",
               cast_to_);
    if (map_form_ != "DENSE" && map_form_ != "SPARSE")
      ctx.fail("attribute 'map_form' is '{}'; it must be DENSE or SPARSE", map_form_);
    if (map_form_ == "SPARSE" && max_map_ < 1)
      ctx.fail("attribute 'max_map' is {}; with map_form SPARSE it must be >= 1", max_map_);
  }
  Outputs run(const Inputs& in, RunContext& ctx) override {
    const MapValue& m = input_map(in, 0, "X", ctx);
    if (m.keys.dtype() != DataType::kInt64 ||
        (m.values.dtype() != DataType::kFloat32 && m.values.dtype() != DataType::kString))
      ctx.fail("input X is map({}, {}); it must be map(int64, string) or map(int64, float32)",
               dtype_name(m.keys.dtype()), dtype_name(m.values.dtype()));
    const bool dense = map_form_ == "DENSE";
    const int64_t d = dense ? m.size() : max_map_;
    Tensor y(out_type_, {1, d});
    if (out_type_ == DataType::kString)
      for (int64_t j = 0; j < d; ++j) y.data<std::string>()[j] = "0.f";
    const int64_t* keys = m.keys.data<int64_t>();
    for (int64_t k = 0; k < m.size(); ++k) {
      if (!dense && keys[k] < 0)
        ctx.fail("input X has key {}; with map_form SPARSE keys must be >= 0", keys[k]);
      const int64_t j = dense ? k : keys[k];
      if (j >= d) continue;  // a sparse key beyond max_map has no place
      convert(m.values, k, y, j, ctx);
    }
    return {y};
  }

 private:
  static void convert(const Tensor& values, int64_t k, Tensor& y, int64_t j, RunContext& ctx) {
    if (values.dtype() == DataType::kFloat32) {
      const float v = values.data<float>()[k];
      if (y.dtype() == DataType::kFloat32)
        y.data<float>()[j] = v;
      else if (y.dtype() == DataType::kInt64)
        y.data<int64_t>()[j] = narrow<int64_t>(v);
      else
        y.data<std::string>()[j] = fmt::format("{:f}", double(v));  // C's %f, as std::to_string
      return;
    }
    const std::string& s = values.data<std::string>()[k];
    if (y.dtype() == DataType::kString) {
      y.data<std::string>()[j] = s;
      return;
    }
    char* end = nullptr;
    errno = 0;
    if (y.dtype() == DataType::kFloat32)
      y.data<float>()[j] = std::strtof(s.c_str(), &end);
    else
      y.data<int64_t>()[j] = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE)
      ctx.fail("the value '{}' of input X is not a {} number", s,
               y.dtype() == DataType::kFloat32 ? "float" : "int64");
  }

  std::string cast_to_, map_form_;
  int64_t max_map_;
  DataType out_type_ = DataType::kFloat32;
};
PARITY_REF_OP(kDomain, "CastMap", 1, kOpsetMax, CastMap);

}  // namespace
}  // namespace parity::ref::ml
