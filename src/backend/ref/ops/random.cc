// Random ops: RandomUniform, RandomNormal, RandomUniformLike, RandomNormalLike, Multinomial,
// Bernoulli, and Dropout (whose inference mode is deterministic: the identity and a mask of
// true).
//
// Draws come from a 64-bit Mersenne Twister that restarts from the node's seed at every run,
// so a node gives the same values on every run and any thread count (draws are taken in
// row-major order on one thread). The seed is the `seed` attribute; without one the spec lets
// the implementation generate it, and this backend derives it from the node's name and first
// output (FNV-1a), so that the reference stays reproducible (the same inputs give the same
// bits) while different nodes draw different streams. The numbers cannot equal another
// runtime's: the spec leaves the generator to the implementation.
#include <cmath>
#include <cstring>
#include <numbers>
#include <random>
#include <string_view>

#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {
namespace {

using RandomOutputTypes = TypeList<float, double, float16>;
using RandomInputTypes = TypeList<float, double, float16>;

class RandomSource {
 public:
  // The seed attribute is a float (an int for Dropout): a float's bits seed the generator, so
  // 1.5 and 1.25 differ.
  explicit RandomSource(const OpContext& ctx) {
    const ir::Attribute* seed = ctx.attr("seed");
    if (!seed) {
      seed_ = node_hash(ctx.node());
    } else if (seed->type == ir::Attribute::Type::kInt) {
      seed_ = static_cast<uint64_t>(seed->i);
    } else {
      const float value = ctx.attr_float("seed");
      uint32_t bits = 0;
      std::memcpy(&bits, &value, sizeof bits);
      seed_ = bits;
    }
  }

  std::mt19937_64 generator() const { return std::mt19937_64(seed_); }

 private:
  static uint64_t node_hash(const ir::Node& node) {
    uint64_t h = 0xcbf29ce484222325ull;
    auto add = [&h](std::string_view s) {
      for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
      h = (h ^ 0xff) * 0x100000001b3ull;  // separator
    };
    add(node.name);
    add(node.outputs.empty() ? std::string_view() : std::string_view(node.outputs[0]));
    return h;
  }

  uint64_t seed_ = 0;
};

// Uniform in [0, 1) from the top 53 bits of one draw.
inline double uniform01(std::mt19937_64& gen) {
  return static_cast<double>(gen() >> 11) * 0x1.0p-53;
}

// Standard normal by the Box-Muller transform (two uniform draws per value: simple and
// stateless, so a value depends only on its position in the stream).
inline double standard_normal(std::mt19937_64& gen) {
  const double u1 = 1.0 - uniform01(gen);  // in (0, 1]: log stays finite
  const double u2 = uniform01(gen);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

enum class Distribution { kUniform, kNormal };

// The element type named by a `dtype` attribute, or `dflt` when absent.
DataType read_dtype(const OpContext& ctx, std::optional<DataType> dflt) {
  if (!ctx.has_attr("dtype")) {
    if (!dflt) ctx.fail("attribute 'dtype' is required but absent");
    return *dflt;
  }
  const int64_t code = ctx.attr_int("dtype");
  if (code < 1 || code > 22 || !dtype_is_valid(static_cast<int32_t>(code)))
    ctx.fail("attribute 'dtype' is {}; it must be a TensorProto data type", code);
  return static_cast<DataType>(code);
}

// RandomUniform / RandomNormal (shape from the attribute) and the *Like forms (shape, and by
// default the element type, from the input).
template <Distribution kDist, bool kLike>
class RandomTensor : public Kernel {
 public:
  explicit RandomTensor(const OpContext& ctx) : source_(ctx) {
    if (kDist == Distribution::kUniform) {
      a_ = ctx.attr_float("low", 0.0f);
      b_ = ctx.attr_float("high", 1.0f);
    } else {
      a_ = ctx.attr_float("mean", 0.0f);
      b_ = ctx.attr_float("scale", 1.0f);
    }
    if (!kLike) {
      dtype_ = read_dtype(ctx, DataType::kFloat32);
      shape_ = ctx.attr_ints("shape");
      for (int64_t d : shape_)
        if (d < 0) ctx.fail("attribute 'shape' holds {}; dims must be >= 0", d);
    } else if (ctx.has_attr("dtype")) {
      dtype_ = read_dtype(ctx, std::nullopt);
    }
    if (dtype_) check_output_type(*dtype_, "attribute 'dtype'");
  }

  Outputs run(const Inputs& in, RunContext&) override {
    Shape shape = shape_;
    DataType dtype = dtype_.value_or(DataType::kFloat32);
    if (kLike) {
      const Tensor& x = input_tensor(in, 0, "input");
      shape = x.shape();
      if (!dtype_) {
        dtype = x.dtype();
        check_output_type(dtype, "the input (the output takes its type)");
      }
    }
    return {dispatch<RandomOutputTypes>(dtype, [&]<typename T>() {
      Tensor y = uninitialized_tensor(dtype, shape);
      T* out = y.data<T>();
      std::mt19937_64 gen = source_.generator();
      for (int64_t i = 0; i < y.numel(); ++i) {
        const double v = kDist == Distribution::kUniform ? a_ + (b_ - a_) * uniform01(gen)
                                                         : a_ + b_ * standard_normal(gen);
        out[i] = narrow<T>(v);
      }
      return y;
    })};
  }

 private:
  static void check_output_type(DataType dtype, std::string_view what) {
    dispatch<RandomOutputTypes>(
        dtype, []<typename T>() {}, what);
  }

  RandomSource source_;
  double a_ = 0, b_ = 1;  // low/high or mean/scale
  std::optional<DataType> dtype_;
  Shape shape_;
};
using RandomUniform = RandomTensor<Distribution::kUniform, false>;
using RandomNormal = RandomTensor<Distribution::kNormal, false>;
using RandomUniformLike = RandomTensor<Distribution::kUniform, true>;
using RandomNormalLike = RandomTensor<Distribution::kNormal, true>;
PARITY_REF_OP("", "RandomUniform", 1, kOpsetMax, RandomUniform);
PARITY_REF_OP("", "RandomNormal", 1, kOpsetMax, RandomNormal);
PARITY_REF_OP("", "RandomUniformLike", 1, kOpsetMax, RandomUniformLike);
PARITY_REF_OP("", "RandomNormalLike", 1, kOpsetMax, RandomNormalLike);

// Multinomial: `sample_size` class indices per batch row, drawn with probabilities
// softmax(row) (the input holds unnormalised log-probabilities).
class Multinomial : public Kernel {
 public:
  explicit Multinomial(const OpContext& ctx)
      : source_(ctx),
        dtype_(read_dtype(ctx, DataType::kInt32)),
        sample_size_(ctx.attr_int("sample_size", 1)) {
    if (dtype_ != DataType::kInt32 && dtype_ != DataType::kInt64)
      ctx.fail("attribute 'dtype' is {}; valid choices: int32 (6), int64 (7)", dtype_name(dtype_));
    if (sample_size_ < 1) ctx.fail("attribute 'sample_size' is {}; it must be >= 1", sample_size_);
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "input");
    if (x.rank() != 2)
      ctx.fail("input has shape {}; it must be [batch_size, class_size]", shape_str(x.shape()));
    const int64_t batch = x.shape()[0], classes = x.shape()[1];
    if (classes == 0 && batch > 0)
      ctx.fail("input has shape {}; class_size must be >= 1", shape_str(x.shape()));
    std::vector<double> cdf(static_cast<size_t>(classes));
    std::vector<int64_t> picks(static_cast<size_t>(batch * sample_size_));
    std::mt19937_64 gen = source_.generator();
    dispatch<RandomInputTypes>(
        x.dtype(),
        [&]<typename T>() {
          const T* p = x.data<T>();
          for (int64_t b = 0; b < batch; ++b) {
            const T* row = p + b * classes;
            double max = -INFINITY;
            for (int64_t k = 0; k < classes; ++k) max = std::max(max, to_double(row[k]));
            double total = 0;
            for (int64_t k = 0; k < classes; ++k)
              cdf[k] = total += std::exp(to_double(row[k]) - max);
            for (int64_t s = 0; s < sample_size_; ++s) {
              const double u = uniform01(gen) * total;
              // The first class whose cumulative weight exceeds u.
              auto it = std::upper_bound(cdf.begin(), cdf.end(), u);
              picks[b * sample_size_ + s] = std::min<int64_t>(it - cdf.begin(), classes - 1);
            }
          }
        },
        "input");
    Tensor y = uninitialized_tensor(dtype_, {batch, sample_size_});
    for (size_t i = 0; i < picks.size(); ++i) {
      if (dtype_ == DataType::kInt32)
        y.data<int32_t>()[i] = static_cast<int32_t>(picks[i]);
      else
        y.data<int64_t>()[i] = picks[i];
    }
    return {std::move(y)};
  }

 private:
  RandomSource source_;
  DataType dtype_;
  int64_t sample_size_;
};
PARITY_REF_OP("", "Multinomial", 7, kOpsetMax, Multinomial);

// Bernoulli: 1 where a uniform draw in [0, 1) is below the input probability, else 0 (the
// function body of the spec: Greater(input, RandomUniformLike(input)), cast to dtype).
class Bernoulli : public Kernel {
 public:
  explicit Bernoulli(const OpContext& ctx) : source_(ctx) {
    if (ctx.has_attr("dtype")) {
      dtype_ = read_dtype(ctx, std::nullopt);
      dispatch<AllTypes>(
          *dtype_, []<typename T>() {}, "attribute 'dtype'");
    }
  }

  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "input");
    const DataType out_type = dtype_.value_or(x.dtype());
    std::vector<uint8_t> bits(static_cast<size_t>(x.numel()));
    std::mt19937_64 gen = source_.generator();
    dispatch<RandomInputTypes>(
        x.dtype(),
        [&]<typename T>() {
          const T* p = x.data<T>();
          for (size_t i = 0; i < bits.size(); ++i) bits[i] = to_double(p[i]) > uniform01(gen);
        },
        "input");
    return {dispatch<AllTypes>(
        out_type,
        [&]<typename T>() {
          Tensor y = uninitialized_tensor(out_type, x.shape());
          T* out = y.data<T>();
          for (size_t i = 0; i < bits.size(); ++i) out[i] = narrow<T>(bits[i] ? 1.0 : 0.0);
          return y;
        },
        "attribute 'dtype'")};
  }

 private:
  RandomSource source_;
  std::optional<DataType> dtype_;
};
PARITY_REF_OP("", "Bernoulli", 15, kOpsetMax, Bernoulli);

// Dropout. Inference (is_test set before 7; always from 7 to 11; training_mode absent or false
// from 12): output = data and mask = all kept. Training: an element is kept when a uniform
// draw is >= ratio, and kept elements are scaled by 1 / (1 - ratio). The mask is of the data's
// type before 10 and bool from 10.
// The mask in inference mode, per opset: 1 and 6 say it "is not filled" when is_test is set
// (any value is allowed; ones are written); 7 to 11 only say the output is a copy of the
// input, and 12 on define output = scale * data * mask, which a copy satisfies only with
// every element kept; ONNX's reference implementation returns ones at every opset. So the
// mask is all ones. ONNX Runtime writes zeros at opsets 7 to 11: a departure, listed in
// docs/onnxruntime-departures.md (dropout-inference-mask).
template <int kVersion>
class Dropout : public Kernel {
 public:
  explicit Dropout(const OpContext& ctx) : source_(ctx) {
    if (kVersion < 12) ratio_ = ctx.attr_float("ratio", 0.5f);
    if (kVersion < 7) training_ = ctx.attr_int("is_test", 0) == 0;
    num_outputs_ = ctx.num_outputs();
    has_mask_ = num_outputs_ > 1 && !ctx.node().outputs[1].empty();
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "data");
    double ratio = ratio_;
    bool training = training_;
    if (kVersion >= 12) {
      if (const Tensor* r = optional_input(in, 1, "ratio")) {
        dispatch<RandomInputTypes>(
            r->dtype(), []<typename T>() {}, "input 'ratio'");
        ratio = read_scalar(*r, "input 'ratio'");
      }
      if (const Tensor* t = optional_input(in, 2, "training_mode")) {
        if (t->dtype() != DataType::kBool || t->numel() != 1)
          ctx.fail("input 'training_mode' is {} {}; it must be one bool", dtype_name(t->dtype()),
                   shape_str(t->shape()));
        training = t->data<bool>()[0];
      }
    }
    if (training && !(ratio >= 0 && ratio < 1))
      ctx.fail("ratio is {}; it must be in [0, 1)", ratio);
    using Types = std::conditional_t<kVersion >= 13, FloatTypes, RandomInputTypes>;
    return dispatch<Types>(
        x.dtype(), [&]<typename T>() { return compute<T>(x, ratio, training); }, "input 'data'");
  }

 private:
  template <typename T>
  Outputs compute(const Tensor& x, double ratio, bool training) const {
    using MaskT = std::conditional_t<kVersion >= 10, bool, T>;
    Outputs out(num_outputs_);
    if (!training || ratio == 0) {
      out[0] = x;  // the identity shares the input's buffer
      if (has_mask_) {
        Tensor mask = uninitialized_tensor(dtype_of<MaskT>, x.shape());
        std::fill_n(mask.data<MaskT>(), mask.numel(), narrow<MaskT>(1.0));
        out[1] = std::move(mask);
      }
    } else {
      Tensor y = uninitialized_tensor(x.dtype(), x.shape());
      Tensor mask = uninitialized_tensor(dtype_of<MaskT>, x.shape());
      const T* src = x.data<T>();
      T* dst = y.data<T>();
      MaskT* m = mask.data<MaskT>();
      const double scale = 1.0 / (1.0 - ratio);
      std::mt19937_64 gen = source_.generator();
      for (int64_t i = 0; i < x.numel(); ++i) {
        const bool keep = uniform01(gen) >= ratio;
        m[i] = narrow<MaskT>(keep ? 1.0 : 0.0);
        dst[i] = narrow<T>(keep ? to_double(src[i]) * scale : 0.0);
      }
      out[0] = std::move(y);
      if (has_mask_) out[1] = std::move(mask);
    }
    return out;
  }

  RandomSource source_;
  double ratio_ = 0.5;
  bool training_ = false;
  size_t num_outputs_ = 1;
  bool has_mask_ = false;
};
PARITY_REF_OP("", "Dropout", 1, 6, Dropout<1>);
PARITY_REF_OP("", "Dropout", 7, 9, Dropout<7>);
PARITY_REF_OP("", "Dropout", 10, 11, Dropout<10>);
PARITY_REF_OP("", "Dropout", 12, 12, Dropout<12>);
PARITY_REF_OP("", "Dropout", 13, kOpsetMax, Dropout<13>);

}  // namespace
}  // namespace parity::ref
