// The zoo's plain and inception CNNs: AlexNet, ZFNet-512, VGG-19, SqueezeNet 1.1, GoogLeNet
// and BN-Inception. Networks built of repeated blocks (ResNet-50, DenseNet-121, ShuffleNet) and
// the LSTM are in zoo_models_blocks.cc.
#include <string>
#include <utility>
#include <vector>

#include "zoo_layers.h"
#include "zoo_models.h"

namespace parity::bench {

using namespace zoo;

namespace {

constexpr int kCnnOpset = 13;
// Caffe's ceil-rounded pooling, as the zoo's converted models pad it (see zoo::pool).
const std::vector<int64_t> kCeilPads = {0, 0, 1, 1};

// fc6 -> Relu -> fc7 -> Relu -> fc8 -> Softmax (the Dropouts between them are identities at
// inference and left out).
std::string alexnet_classifier(GraphBuilder& g, const std::string& x, int64_t features) {
  std::string h = relu(g, fc(g, flatten(g, x, "flatten"), "fc6", features, 4096), "fc6.relu");
  h = relu(g, fc(g, h, "fc7", 4096, 4096), "fc7.relu");
  return softmax(g, fc(g, h, "fc8", 4096, 1000), "prob");
}

// Concat of 1x1 | 1x1 -> 3x3 | 1x1 -> 5x5 | MaxPool 3x3/1 -> 1x1 (GoogLeNet's module).
std::string inception_v1_module(GraphBuilder& g, const std::string& x, const std::string& name,
                                int64_t cin, int64_t c1, int64_t c3r, int64_t c3, int64_t c5r,
                                int64_t c5, int64_t pool_proj) {
  std::string b1 = conv_relu(g, x, name + ".1x1", cin, c1, 1, 1, 0);
  std::string b3 = conv_relu(g, x, name + ".3x3_reduce", cin, c3r, 1, 1, 0);
  b3 = conv_relu(g, b3, name + ".3x3", c3r, c3, 3, 1, 1);
  std::string b5 = conv_relu(g, x, name + ".5x5_reduce", cin, c5r, 1, 1, 0);
  b5 = conv_relu(g, b5, name + ".5x5", c5r, c5, 5, 1, 2);
  std::string bp = max_pool(g, x, name + ".pool", 3, 1, {1, 1, 1, 1});
  bp = conv_relu(g, bp, name + ".pool_proj", cin, pool_proj, 1, 1, 0);
  return concat(g, {b1, b3, b5, bp}, name + ".output");
}

// One BN-Inception module. c1 == 0: no 1x1 branch; stride 2: the 3x3 branches end with
// stride 2 and the pool branch is a MaxPool 3x3/2 passed through without projection.
struct InceptionV2Module {
  int64_t c1, c3r, c3, d3r, d3;
  bool max_pool;  // the pool branch's kind where stride is 1
  int64_t pool_proj;
  int64_t stride;
  int64_t out(int64_t cin) const { return c1 + c3 + d3 + (stride == 2 ? cin : pool_proj); }
};

std::string inception_v2_module(GraphBuilder& g, const std::string& x, const std::string& name,
                                int64_t cin, const InceptionV2Module& m) {
  std::vector<std::string> branches;
  if (m.c1 > 0) branches.push_back(conv_bn_relu(g, x, name + ".1x1", cin, m.c1, 1, 1, 0));
  std::string b3 = conv_bn_relu(g, x, name + ".3x3_reduce", cin, m.c3r, 1, 1, 0);
  branches.push_back(conv_bn_relu(g, b3, name + ".3x3", m.c3r, m.c3, 3, m.stride, 1));
  std::string d3 = conv_bn_relu(g, x, name + ".double_3x3_reduce", cin, m.d3r, 1, 1, 0);
  d3 = conv_bn_relu(g, d3, name + ".double_3x3_1", m.d3r, m.d3, 3, 1, 1);
  branches.push_back(conv_bn_relu(g, d3, name + ".double_3x3_2", m.d3, m.d3, 3, m.stride, 1));
  if (m.stride == 2) {
    branches.push_back(max_pool(g, x, name + ".pool", 3, 2, kCeilPads));
  } else {
    std::string bp = m.max_pool ? max_pool(g, x, name + ".pool", 3, 1, {1, 1, 1, 1})
                                : avg_pool(g, x, name + ".pool", 3, 1, {1, 1, 1, 1});
    branches.push_back(conv_bn_relu(g, bp, name + ".pool_proj", cin, m.pool_proj, 1, 1, 0));
  }
  return concat(g, branches, name + ".output");
}

}  // namespace

std::string alexnet_model_bytes() {
  GraphBuilder g("alexnet", kCnnOpset);
  g.input("data", {1, 3, 224, 224});
  std::string x = conv_relu(g, "data", "conv1", 3, 96, 11, 4, 0);  // 54x54
  x = max_pool(g, lrn(g, x, "norm1"), "pool1", 3, 2, kCeilPads);   // 27x27
  x = relu(g, conv(g, x, "conv2", 96, 256, 5, 1, 2, /*groups=*/2), "conv2.relu");
  x = max_pool(g, lrn(g, x, "norm2"), "pool2", 3, 2);  // 13x13
  x = conv_relu(g, x, "conv3", 256, 384, 3, 1, 1);
  x = relu(g, conv(g, x, "conv4", 384, 384, 3, 1, 1, 2), "conv4.relu");
  x = relu(g, conv(g, x, "conv5", 384, 256, 3, 1, 1, 2), "conv5.relu");
  x = max_pool(g, x, "pool5", 3, 2);  // 6x6
  g.output(alexnet_classifier(g, x, 256 * 6 * 6), {1, 1000});
  return g.bytes();
}

std::string zfnet512_model_bytes() {
  GraphBuilder g("zfnet512", kCnnOpset);
  g.input("data", {1, 3, 224, 224});
  std::string x = conv_relu(g, "data", "conv1", 3, 96, 7, 2, 1);  // 110x110
  x = max_pool(g, lrn(g, x, "norm1"), "pool1", 3, 2, kCeilPads);  // 55x55
  x = conv_relu(g, x, "conv2", 96, 256, 5, 2, 0);                 // 26x26
  x = max_pool(g, lrn(g, x, "norm2"), "pool2", 3, 2, kCeilPads);  // 13x13
  x = conv_relu(g, x, "conv3", 256, 512, 3, 1, 1);
  x = conv_relu(g, x, "conv4", 512, 1024, 3, 1, 1);
  x = conv_relu(g, x, "conv5", 1024, 512, 3, 1, 1);
  x = max_pool(g, x, "pool5", 3, 2, kCeilPads);  // 6x6
  g.output(alexnet_classifier(g, x, 512 * 6 * 6), {1, 1000});
  return g.bytes();
}

std::string vgg19_model_bytes() {
  GraphBuilder g("vgg19", kCnnOpset);
  g.input("data", {1, 3, 224, 224});
  const int64_t widths[] = {64, 128, 256, 512, 512};
  const int convs_per_block[] = {2, 2, 4, 4, 4};
  std::string x = "data";
  int64_t channels = 3;
  for (int block = 0; block < 5; ++block) {
    for (int i = 0; i < convs_per_block[block]; ++i) {
      std::string name = "conv" + std::to_string(block + 1) + "_" + std::to_string(i + 1);
      x = conv_relu(g, x, name, channels, widths[block], 3, 1, 1);
      channels = widths[block];
    }
    x = max_pool(g, x, "pool" + std::to_string(block + 1), 2, 2);
  }
  g.output(alexnet_classifier(g, x, 512 * 7 * 7), {1, 1000});  // 7x7 after five halvings
  return g.bytes();
}

std::string squeezenet11_model_bytes() {
  GraphBuilder g("squeezenet1.1", kCnnOpset);
  g.input("data", {1, 3, 224, 224});
  auto fire = [&](const std::string& x, const std::string& name, int64_t cin, int64_t squeeze,
                  int64_t expand) {
    std::string s = conv_relu(g, x, name + ".squeeze1x1", cin, squeeze, 1, 1, 0);
    return concat(g,
                  {conv_relu(g, s, name + ".expand1x1", squeeze, expand, 1, 1, 0),
                   conv_relu(g, s, name + ".expand3x3", squeeze, expand, 3, 1, 1)},
                  name + ".concat");
  };
  std::string x = conv_relu(g, "data", "conv1", 3, 64, 3, 2, 0);  // 111x111
  x = max_pool(g, x, "pool1", 3, 2);                              // 55x55
  x = fire(fire(x, "fire2", 64, 16, 64), "fire3", 128, 16, 64);
  x = max_pool(g, x, "pool3", 3, 2);  // 27x27
  x = fire(fire(x, "fire4", 128, 32, 128), "fire5", 256, 32, 128);
  x = max_pool(g, x, "pool5", 3, 2);  // 13x13
  x = fire(fire(x, "fire6", 256, 48, 192), "fire7", 384, 48, 192);
  x = fire(fire(x, "fire8", 384, 64, 256), "fire9", 512, 64, 256);
  x = conv_relu(g, x, "conv10", 512, 1000, 1, 1, 0);
  x = g.node("GlobalAveragePool", {x}, "pool10")->output(0);
  g.output(flatten(g, x, "flatten"), {1, 1000});
  return g.bytes();
}

std::string inception_v1_model_bytes() {
  GraphBuilder g("inception_v1", kCnnOpset);
  g.input("data", {1, 3, 224, 224});
  std::string x = conv_relu(g, "data", "conv1", 3, 64, 7, 2, 3);  // 112x112
  x = lrn(g, max_pool(g, x, "pool1", 3, 2, kCeilPads), "norm1");  // 56x56
  x = conv_relu(g, x, "conv2.3x3_reduce", 64, 64, 1, 1, 0);
  x = conv_relu(g, x, "conv2.3x3", 64, 192, 3, 1, 1);
  x = max_pool(g, lrn(g, x, "norm2"), "pool2", 3, 2, kCeilPads);  // 28x28
  x = inception_v1_module(g, x, "3a", 192, 64, 96, 128, 16, 32, 32);
  x = inception_v1_module(g, x, "3b", 256, 128, 128, 192, 32, 96, 64);
  x = max_pool(g, x, "pool3", 3, 2, kCeilPads);  // 14x14
  x = inception_v1_module(g, x, "4a", 480, 192, 96, 208, 16, 48, 64);
  x = inception_v1_module(g, x, "4b", 512, 160, 112, 224, 24, 64, 64);
  x = inception_v1_module(g, x, "4c", 512, 128, 128, 256, 24, 64, 64);
  x = inception_v1_module(g, x, "4d", 512, 112, 144, 288, 32, 64, 64);
  x = inception_v1_module(g, x, "4e", 528, 256, 160, 320, 32, 128, 128);
  x = max_pool(g, x, "pool4", 3, 2, kCeilPads);  // 7x7
  x = inception_v1_module(g, x, "5a", 832, 256, 160, 320, 32, 128, 128);
  x = inception_v1_module(g, x, "5b", 832, 384, 192, 384, 48, 128, 128);
  x = avg_pool(g, x, "pool5", 7, 1);
  g.output(softmax(g, fc(g, flatten(g, x, "flatten"), "loss3.classifier", 1024, 1000), "prob"),
           {1, 1000});
  return g.bytes();
}

std::string inception_v2_model_bytes() {
  GraphBuilder g("inception_v2", kCnnOpset);
  g.input("data", {1, 3, 224, 224});
  std::string x = conv_bn_relu(g, "data", "conv1", 3, 64, 7, 2, 3);  // 112x112
  x = max_pool(g, x, "pool1", 3, 2, kCeilPads);                      // 56x56
  x = conv_bn_relu(g, x, "conv2.3x3_reduce", 64, 64, 1, 1, 0);
  x = conv_bn_relu(g, x, "conv2.3x3", 64, 192, 3, 1, 1);
  x = max_pool(g, x, "pool2", 3, 2, kCeilPads);  // 28x28
  // The paper's table: 1x1, 3x3 reduce, 3x3, double 3x3 reduce, double 3x3, pool + proj.
  const std::pair<const char*, InceptionV2Module> modules[] = {
      {"3a", {64, 64, 64, 64, 96, false, 32, 1}},
      {"3b", {64, 64, 96, 64, 96, false, 64, 1}},
      {"3c", {0, 128, 160, 64, 96, true, 0, 2}},  // -> 14x14
      {"4a", {224, 64, 96, 96, 128, false, 128, 1}},
      {"4b", {192, 96, 128, 96, 128, false, 128, 1}},
      {"4c", {160, 128, 160, 128, 160, false, 128, 1}},
      {"4d", {96, 128, 192, 160, 192, false, 128, 1}},
      {"4e", {0, 128, 192, 192, 256, true, 0, 2}},  // -> 7x7
      {"5a", {352, 192, 320, 160, 224, false, 128, 1}},
      {"5b", {352, 192, 320, 192, 224, true, 128, 1}},
  };
  int64_t channels = 192;
  for (const auto& [name, m] : modules) {
    x = inception_v2_module(g, x, name, channels, m);
    channels = m.out(channels);
  }
  x = avg_pool(g, x, "pool5", 7, 1);
  g.output(softmax(g, fc(g, flatten(g, x, "flatten"), "fc", channels, 1000), "prob"), {1, 1000});
  return g.bytes();
}

}  // namespace parity::bench
