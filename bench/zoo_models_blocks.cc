// The zoo's networks built of repeated blocks: ResNet-50, DenseNet-121, ShuffleNet v1, and the
// stacked LSTM. The plain and inception CNNs are in zoo_models.cc.
#include <cmath>
#include <string>
#include <vector>

#include "zoo_layers.h"
#include "zoo_models.h"

namespace parity::bench {

using namespace zoo;

namespace {

constexpr int kCnnOpset = 13;

// Conv 7x7/2 + BN + Relu + MaxPool 3x3/2: 224x224 -> 56x56 (ResNet's and DenseNet's stem).
std::string stem(GraphBuilder& g, int64_t channels) {
  std::string x = conv_bn_relu(g, "data", "conv0", 3, channels, 7, 2, 3);
  return max_pool(g, x, "pool0", 3, 2, {1, 1, 1, 1});
}

std::string conv_bn(GraphBuilder& g, const std::string& x, const std::string& name, int64_t cin,
                    int64_t cout, int64_t k, int64_t s, int64_t p, int64_t groups = 1,
                    float gain = 1.0f) {
  return batch_norm(g, conv(g, x, name, cin, cout, k, s, p, groups, /*with_bias=*/false),
                    name + ".bn", cout, gain);
}

// The gain of a residual branch's last BatchNormalization (see zoo::batch_norm).
constexpr float kResidualGain = 0.2f;

std::string classifier(GraphBuilder& g, const std::string& x, int64_t channels) {
  std::string pooled = g.node("GlobalAveragePool", {x}, "pool")->output(0);
  return fc(g, flatten(g, pooled, "flatten"), "fc", channels, 1000);
}

std::string bottleneck(GraphBuilder& g, const std::string& x, const std::string& name, int64_t cin,
                       int64_t mid, int64_t stride) {
  const int64_t cout = 4 * mid;
  std::string a = relu(g, conv_bn(g, x, name + ".conv1", cin, mid, 1, stride, 0), name + ".relu1");
  a = relu(g, conv_bn(g, a, name + ".conv2", mid, mid, 3, 1, 1), name + ".relu2");
  a = conv_bn(g, a, name + ".conv3", mid, cout, 1, 1, 0, 1, kResidualGain);
  std::string shortcut = x;
  if (stride != 1 || cin != cout) shortcut = conv_bn(g, x, name + ".down", cin, cout, 1, stride, 0);
  return relu(g, g.node("Add", {a, shortcut}, name + ".add")->output(0), name + ".out");
}

// DenseNet's pre-activation order: BN + Relu before each convolution.
std::string bn_relu_conv(GraphBuilder& g, const std::string& x, const std::string& name,
                         int64_t cin, int64_t cout, int64_t k, int64_t p) {
  std::string a = relu(g, batch_norm(g, x, name + ".bn", cin), name + ".relu");
  return conv(g, a, name, cin, cout, k, 1, p, 1, /*with_bias=*/false);
}

// Reshape [1, c, h, w] -> [1, groups, c / groups, h, w], swap the two channel axes, and
// flatten back, so the next grouped convolution sees channels from every group.
std::string channel_shuffle(GraphBuilder& g, const std::string& x, const std::string& name,
                            int64_t c, int64_t h, int64_t w, int64_t groups) {
  std::string split = g.node("Reshape", {x, g.ints(name + ".split", {1, groups, c / groups, h, w})},
                             name + ".grouped")
                          ->output(0);
  auto* t = g.node("Transpose", {split}, name + ".swapped");
  GraphBuilder::attr(t, "perm", {0, 2, 1, 3, 4});
  return g.node("Reshape", {t->output(0), g.ints(name + ".merge", {1, c, h, w})}, name)->output(0);
}

// One ShuffleNet v1 unit on an h x w input. Stride 2 concatenates an AvgPool of the input, so
// its own branch makes cout - cin channels.
std::string shuffle_unit(GraphBuilder& g, const std::string& x, const std::string& name,
                         int64_t cin, int64_t cout, int64_t stride, int64_t h, int64_t w,
                         bool group_first_conv) {
  const int64_t groups = 3, mid = cout / 4, branch_out = stride == 2 ? cout - cin : cout;
  std::string a = conv_bn(g, x, name + ".gconv1", cin, mid, 1, 1, 0, group_first_conv ? groups : 1);
  a = channel_shuffle(g, relu(g, a, name + ".relu1"), name + ".shuffle", mid, h, w, groups);
  a = conv_bn(g, a, name + ".dwconv", mid, mid, 3, stride, 1, /*groups=*/mid);
  a = conv_bn(g, a, name + ".gconv2", mid, branch_out, 1, 1, 0, groups, kResidualGain);
  std::string merged =
      stride == 2
          ? concat(g, {avg_pool(g, x, name + ".shortcut", 3, 2, {1, 1, 1, 1}), a}, name + ".cat")
          : g.node("Add", {x, a}, name + ".add")->output(0);
  return relu(g, merged, name + ".out");
}

std::string lstm_layer(GraphBuilder& g, const std::string& x, const std::string& name,
                       int64_t input, int64_t hidden) {
  // PyTorch's default LSTM initialization, uniform in +-1/sqrt(hidden): gates neither
  // saturate nor vanish.
  const float k = 1.0f / std::sqrt(static_cast<float>(hidden));
  auto* n = g.node("LSTM",
                   {x, g.uniform(name + ".W", {1, 4 * hidden, input}, -k, k),
                    g.uniform(name + ".R", {1, 4 * hidden, hidden}, -k, k),
                    g.uniform(name + ".B", {1, 8 * hidden}, -k, k)},
                   name + ".Y");
  GraphBuilder::attr(n, "hidden_size", hidden);
  // Y is [seq, num_directions = 1, batch, hidden]; drop the direction axis.
  return g.node("Squeeze", {n->output(0), g.ints(name + ".axes", {1})}, name)->output(0);
}

}  // namespace

std::string resnet50_model_bytes() {
  GraphBuilder g("resnet50_v1", kCnnOpset);
  g.input("data", {1, 3, 224, 224});
  std::string x = stem(g, 64);
  const int blocks[] = {3, 4, 6, 3};
  int64_t channels = 64;
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t mid = int64_t{64} << stage;
    for (int b = 0; b < blocks[stage]; ++b) {
      const int64_t stride = (stage > 0 && b == 0) ? 2 : 1;
      x = bottleneck(g, x, "stage" + std::to_string(stage + 1) + "." + std::to_string(b), channels,
                     mid, stride);
      channels = 4 * mid;
    }
  }
  g.output(classifier(g, x, channels), {1, 1000});
  return g.bytes();
}

std::string densenet121_model_bytes() {
  GraphBuilder g("densenet121", kCnnOpset);
  g.input("data", {1, 3, 224, 224});
  const int64_t growth = 32, bottleneck_width = 4 * growth;
  const int layers[] = {6, 12, 24, 16};
  std::string x = stem(g, 64);
  int64_t channels = 64;
  for (int block = 0; block < 4; ++block) {
    const std::string prefix = "block" + std::to_string(block + 1);
    for (int l = 0; l < layers[block]; ++l) {
      const std::string name = prefix + ".layer" + std::to_string(l + 1);
      std::string y = bn_relu_conv(g, x, name + ".conv1", channels, bottleneck_width, 1, 0);
      y = bn_relu_conv(g, y, name + ".conv2", bottleneck_width, growth, 3, 1);
      x = concat(g, {x, y}, name + ".concat");
      channels += growth;
    }
    if (block < 3) {
      x = bn_relu_conv(g, x, prefix + ".transition", channels, channels / 2, 1, 0);
      x = avg_pool(g, x, prefix + ".transition.pool", 2, 2);
      channels /= 2;
    }
  }
  x = relu(g, batch_norm(g, x, "final.bn", channels), "final.relu");
  g.output(softmax(g, classifier(g, x, channels), "prob"), {1, 1000});
  return g.bytes();
}

std::string shufflenet_v1_model_bytes() {
  GraphBuilder g("shufflenet_v1_g3", kCnnOpset);
  g.input("data", {1, 3, 224, 224});
  std::string x = relu(g, conv_bn(g, "data", "conv1", 3, 24, 3, 2, 1), "conv1.relu");  // 112
  x = max_pool(g, x, "pool1", 3, 2, {1, 1, 1, 1});                                     // 56
  const int64_t widths[] = {240, 480, 960};
  const int units[] = {4, 8, 4};
  int64_t channels = 24, size = 56;
  for (int stage = 0; stage < 3; ++stage) {
    for (int u = 0; u < units[stage]; ++u) {
      const int64_t stride = u == 0 ? 2 : 1;
      // The paper leaves stage 2's first 1x1 ungrouped: 24 input channels are too few.
      x = shuffle_unit(g, x, "stage" + std::to_string(stage + 2) + "." + std::to_string(u),
                       channels, widths[stage], stride, size, size, stage > 0 || u > 0);
      channels = widths[stage];
      size /= stride;
    }
  }
  g.output(classifier(g, x, channels), {1, 1000});
  return g.bytes();
}

std::string lstm_model_bytes() {
  const int64_t seq = 32, batch = 1, input = 256, hidden = 512;
  GraphBuilder g("lstm2x512", 14);
  g.input("x", {seq, batch, input});
  g.output(lstm_layer(g, lstm_layer(g, "x", "lstm1", input, hidden), "lstm2", hidden, hidden),
           {seq, batch, hidden});
  return g.bytes();
}

}  // namespace parity::bench
