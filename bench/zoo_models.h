// Generators of ONNX model zoo architectures (issue #14's model table): the zoo's layer
// structure with seeded random weights, so no model files are shipped. Each returns a
// serialized ModelProto; CNNs take image[1,3,224,224] and are opset 13.
#pragma once

#include <string>

namespace parity::bench {

// ResNet-50 v1: stem Conv 7x7/2 + BN + Relu + MaxPool 3x3/2, 3-4-6-3 bottlenecks (1x1, 3x3,
// 1x1 x4; stride on the first 1x1 as in the zoo's MXNet resnet50-v1) -> GAP -> Gemm(1000).
std::string resnet50_model_bytes();

// DenseNet-121: stem, dense blocks of 6-12-24-16 layers (BN-Relu-Conv1x1(128)-BN-Relu-
// Conv3x3(32), Concat), transitions halving channels + AvgPool 2x2 -> GAP -> Gemm -> Softmax.
std::string densenet121_model_bytes();

// Inception v1 (bvlc GoogLeNet): Conv 7x7/2, LRN, Conv 1x1 + 3x3, LRN, nine inception modules
// (1x1 | 1x1-3x3 | 1x1-5x5 | MaxPool-1x1, Concat) -> AvgPool 7x7 -> Gemm -> Softmax.
std::string inception_v1_model_bytes();

// Inception v2 (BN-Inception): every Conv followed by BN + Relu; modules with 1x1 | 1x1-3x3 |
// 1x1-3x3-3x3 | pool-1x1 branches, two stride-2 modules (3c, 4e) -> AvgPool 7x7 -> Gemm -> Softmax.
std::string inception_v2_model_bytes();

// SqueezeNet 1.1: Conv 3x3/2 (64), eight fire modules (squeeze 1x1, expand 1x1 | 3x3 Concat)
// between MaxPools -> Conv 1x1 (1000) + Relu -> GAP -> Flatten.
std::string squeezenet11_model_bytes();

// ShuffleNet v1, groups = 3 (240-480-960 channels, 4-8-4 units): grouped 1x1 Conv, channel
// shuffle (Reshape/Transpose/Reshape), depthwise 3x3, grouped 1x1; Add or AvgPool-Concat.
std::string shufflenet_v1_model_bytes();

// VGG-19: 16 Conv 3x3 + Relu in five blocks (64, 128, 256, 512, 512) with MaxPool 2x2 ->
// Gemm 25088->4096 -> 4096 -> 1000 -> Softmax.
std::string vgg19_model_bytes();

// AlexNet (bvlc): Conv 11x11/4 (96), LRN, MaxPool, grouped Conv 5x5 (256), LRN, MaxPool,
// Conv 3x3 384, 384 (2 groups), 256 (2 groups), MaxPool -> Gemm 9216->4096->4096->1000 -> Softmax.
std::string alexnet_model_bytes();

// ZFNet-512: Conv 7x7/2 (96), LRN, MaxPool, Conv 5x5/2 (256), LRN, MaxPool, Conv 3x3 512, 1024,
// 512, MaxPool -> Gemm 18432->4096->4096->1000 -> Softmax.
std::string zfnet512_model_bytes();

// x[32,1,256] (seq, batch, input) -> two stacked forward LSTMs of hidden size 512 (the ONNX
// LSTM op, opset 14) -> y[32,1,512], the second layer's hidden states.
std::string lstm_model_bytes();

}  // namespace parity::bench
