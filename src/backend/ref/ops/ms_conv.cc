// FusedConv, domain com.microsoft (docs/ContribOperators.md of the onnxruntime repository):
// ONNX Runtime's Conv with its bias, an added tensor and an activation folded in, written by
// its Conv + [Add] + activation fusions. Y = activation(Conv(X, W) + B + Z).
//
// Attributes: Conv's (auto_pad, dilations, group, kernel_shape, pads, strides), `activation`
// (one of Relu, Tanh, Sigmoid, LeakyRelu, Clip, HardSigmoid; absent: none) and
// `activation_params` (LeakyRelu: alpha; Clip: min, max; HardSigmoid: alpha, beta). Inputs
// X, W, optional B [M] and optional Z (the sum, Y's shape). The convolution, the additions and
// the activation are all done in double (conv_util.h's direct convolution), rounded once.
#include <cmath>

#include "backend/ref/ops/conv_util.h"
#include "backend/ref/ops/elementwise_util.h"

namespace parity::ref {
namespace {

enum class Activation { kNone, kRelu, kTanh, kSigmoid, kLeakyRelu, kClip, kHardSigmoid };

class FusedConv : public Kernel {
 public:
  explicit FusedConv(const OpContext& ctx) : attrs_(read_conv_attrs(ctx)) {
    const std::string name = ctx.attr_string("activation", "");
    params_ = ctx.attr_floats("activation_params", {});
    struct Known {
      const char* name;
      Activation kind;
      size_t params;
    };
    const Known known[] = {
        {"Relu", Activation::kRelu, 0},       {"Tanh", Activation::kTanh, 0},
        {"Sigmoid", Activation::kSigmoid, 0}, {"LeakyRelu", Activation::kLeakyRelu, 1},
        {"Clip", Activation::kClip, 2},       {"HardSigmoid", Activation::kHardSigmoid, 2}};
    if (name.empty()) return;
    for (const Known& k : known)
      if (name == k.name) {
        kind_ = k.kind;
        if (params_.size() != k.params)
          ctx.fail("attribute 'activation_params' has {} values; activation {} takes {}",
                   params_.size(), name, k.params);
        return;
      }
    ctx.fail(
        "attribute 'activation' is '{}'; it must be one of Relu, Tanh, Sigmoid, LeakyRelu, "
        "Clip, HardSigmoid",
        name);
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const Tensor& w = input_tensor(in, 1, "W");
    const Tensor* bias = optional_input(in, 2, "B");
    const Tensor* sum = optional_input(in, 3, "Z");
    for (const Tensor* t : {&w, bias, sum})
      if (t) check_same_dtype(x, *t, ctx, "X", t == &w ? "W" : (t == bias ? "B" : "Z"));
    const WindowGeometry geometry = conv_geometry(attrs_, x.shape(), w.shape(), ctx);
    const int64_t batch = x.shape()[0], channels = x.shape()[1], maps = w.shape()[0];
    if (bias && bias->numel() != maps)
      ctx.fail("B has shape {}; it must hold one value per output channel ({})",
               shape_str(bias->shape()), maps);
    Shape out_shape = {batch, maps};
    out_shape.insert(out_shape.end(), geometry.out.begin(), geometry.out.end());
    if (sum && sum->shape() != out_shape)
      ctx.fail("Z has shape {}; it must equal the convolution's output shape {}",
               shape_str(sum->shape()), shape_str(out_shape));
    return {dispatch<FloatTypes>(
        x.dtype(),
        [&]<typename T>() {
          const std::vector<double> xv = converted<T, double>(x), wv = converted<T, double>(w);
          Tensor y = uninitialized_tensor(x.dtype(), out_shape);
          const int64_t plane = shape_numel(geometry.out);
          const T* pb = bias ? bias->data<T>() : nullptr;
          const T* pz = sum ? sum->data<T>() : nullptr;
          T* py = y.data<T>();
          direct_conv<double>(geometry, batch, channels, maps, attrs_.group, xv.data(), wv.data(),
                              [&](int64_t n, int64_t m, const double* acc) {
                                const int64_t base = (n * maps + m) * plane;
                                const double bv = pb ? to_double(pb[m]) : 0.0;
                                for (int64_t i = 0; i < plane; ++i) {
                                  double v = acc[i] + bv;
                                  if (pz) v += to_double(pz[base + i]);
                                  py[base + i] = narrow<T>(activate(v));
                                }
                              });
          return y;
        },
        "input X")};
  }

 private:
  double activate(double v) const {
    switch (kind_) {
      case Activation::kNone:
        return v;
      case Activation::kRelu:
        return v < 0 ? 0.0 : v;
      case Activation::kTanh:
        return std::tanh(v);
      case Activation::kSigmoid:
        return 1.0 / (1.0 + std::exp(-v));
      case Activation::kLeakyRelu:
        return v < 0 ? static_cast<double>(params_[0]) * v : v;
      case Activation::kClip:
        return std::min(std::max(v, static_cast<double>(params_[0])),
                        static_cast<double>(params_[1]));
      case Activation::kHardSigmoid:
        return std::max(0.0, std::min(1.0, static_cast<double>(params_[0]) * v +
                                               static_cast<double>(params_[1])));
    }
    return v;
  }

  ConvAttrs attrs_;
  Activation kind_ = Activation::kNone;
  std::vector<float> params_;
};
PARITY_REF_OP("com.microsoft", "FusedConv", 1, kOpsetMax, FusedConv);

}  // namespace
}  // namespace parity::ref
