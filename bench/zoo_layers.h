// The layers the model-zoo architectures (zoo_models*.cc) are assembled from, each a few ONNX
// nodes with seeded weights. Each returns the name of its output.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "graph_builder.h"

namespace parity::bench::zoo {

// He-like scale, so that a ReLU network's activations keep their magnitude layer after layer
// (finite outputs at every depth, and Softmax inputs that are not all saturated).
inline float he_scale(int64_t fan_in) { return std::sqrt(2.0f / static_cast<float>(fan_in)); }

// Square kernel k, stride s, pad p on every side; with_bias is false where a
// BatchNormalization follows (as in the zoo's ResNet, DenseNet and BN-Inception).
inline std::string conv(GraphBuilder& g, const std::string& x, const std::string& name, int64_t cin,
                        int64_t cout, int64_t k, int64_t s, int64_t p, int64_t groups = 1,
                        bool with_bias = true) {
  std::vector<std::string> inputs = {
      x, g.weight(name + ".w", {cout, cin / groups, k, k}, he_scale(cin / groups * k * k))};
  if (with_bias) inputs.push_back(g.weight(name + ".b", {cout}, 0.01f));
  auto* n = g.node("Conv", inputs, name);
  GraphBuilder::attr(n, "kernel_shape", {k, k});
  GraphBuilder::attr(n, "strides", {s, s});
  GraphBuilder::attr(n, "pads", {p, p, p, p});
  if (groups != 1) GraphBuilder::attr(n, "group", groups);
  return name;
}

inline std::string relu(GraphBuilder& g, const std::string& x, const std::string& name) {
  return g.node("Relu", {x}, name)->output(0);
}

// Constant statistics near the identity: a real BatchNormalization node (not folded into the
// convolution) that neither blows activations up nor shrinks them. A residual branch's last
// one takes gain < 1: each Add sums two branches of equal variance otherwise, and 16 of them
// make ResNet-50's logits so large that float32 rounding alone exceeds parity's 1e-5.
inline std::string batch_norm(GraphBuilder& g, const std::string& x, const std::string& name,
                              int64_t c, float gain = 1.0f) {
  return g
      .node("BatchNormalization",
            {x, g.uniform(name + ".scale", {c}, 0.8f * gain, 1.2f * gain),
             g.weight(name + ".bias", {c}, 0.05f), g.weight(name + ".mean", {c}, 0.05f),
             g.uniform(name + ".var", {c}, 0.8f, 1.2f)},
            name)
      ->output(0);
}

inline std::string conv_relu(GraphBuilder& g, const std::string& x, const std::string& name,
                             int64_t cin, int64_t cout, int64_t k, int64_t s, int64_t p) {
  return relu(g, conv(g, x, name, cin, cout, k, s, p), name + ".relu");
}

inline std::string conv_bn_relu(GraphBuilder& g, const std::string& x, const std::string& name,
                                int64_t cin, int64_t cout, int64_t k, int64_t s, int64_t p) {
  std::string c = conv(g, x, name, cin, cout, k, s, p, 1, /*with_bias=*/false);
  return relu(g, batch_norm(g, c, name + ".bn", cout), name + ".relu");
}

// pads {top, left, bottom, right}: Caffe-born models round pooled sizes up, which the zoo's
// conversions express as one extra row and column of padding at the end ({0, 0, 1, 1}).
inline std::string pool(GraphBuilder& g, const std::string& op, const std::string& x,
                        const std::string& name, int64_t k, int64_t s,
                        const std::vector<int64_t>& pads = {0, 0, 0, 0}) {
  auto* n = g.node(op, {x}, name);
  GraphBuilder::attr(n, "kernel_shape", {k, k});
  GraphBuilder::attr(n, "strides", {s, s});
  GraphBuilder::attr(n, "pads", pads);
  return name;
}
inline std::string max_pool(GraphBuilder& g, const std::string& x, const std::string& name,
                            int64_t k, int64_t s, const std::vector<int64_t>& pads = {0, 0, 0, 0}) {
  return pool(g, "MaxPool", x, name, k, s, pads);
}
inline std::string avg_pool(GraphBuilder& g, const std::string& x, const std::string& name,
                            int64_t k, int64_t s, const std::vector<int64_t>& pads = {0, 0, 0, 0}) {
  return pool(g, "AveragePool", x, name, k, s, pads);
}

// AlexNet's local response normalization, as AlexNet, ZFNet and GoogLeNet use it.
inline std::string lrn(GraphBuilder& g, const std::string& x, const std::string& name) {
  auto* n = g.node("LRN", {x}, name);
  GraphBuilder::attr(n, "size", int64_t{5});
  GraphBuilder::attr(n, "alpha", 1e-4f);
  GraphBuilder::attr(n, "beta", 0.75f);
  GraphBuilder::attr(n, "bias", 1.0f);
  return name;
}

inline std::string concat(GraphBuilder& g, const std::vector<std::string>& xs,
                          const std::string& name) {
  auto* n = g.node("Concat", xs, name);
  GraphBuilder::attr(n, "axis", int64_t{1});
  return name;
}

// Fully connected layer as the zoo's converted models write it: Gemm with W[out, in], transB.
inline std::string fc(GraphBuilder& g, const std::string& x, const std::string& name, int64_t cin,
                      int64_t cout) {
  auto* n = g.node(
      "Gemm",
      {x, g.weight(name + ".w", {cout, cin}, he_scale(cin)), g.weight(name + ".b", {cout}, 0.01f)},
      name);
  GraphBuilder::attr(n, "transB", int64_t{1});
  return name;
}

inline std::string flatten(GraphBuilder& g, const std::string& x, const std::string& name) {
  return g.node("Flatten", {x}, name)->output(0);
}

inline std::string softmax(GraphBuilder& g, const std::string& x, const std::string& name) {
  auto* n = g.node("Softmax", {x}, name);
  GraphBuilder::attr(n, "axis", int64_t{1});
  return name;
}

}  // namespace parity::bench::zoo
