// Generators of the two networks the reference backend is measured on (no model files are
// shipped): a ResNet-18-style convolution network and a BERT-base-style transformer encoder
// block, with seeded random weights.
#pragma once

#include <string>

namespace parity::bench {

// image[1,3,224,224] -> stem (Conv 7x7/2 + Relu + MaxPool 3x3/2) -> 4 stages of 2 basic
// residual blocks (64, 128, 256, 512 channels; Conv 3x3 + Relu + Conv 3x3 + Add + Relu, with
// a 1x1/2 projection where the shape changes) -> GlobalAveragePool -> Flatten -> Gemm(1000).
std::string resnet_style_model_bytes();

// x[1,128,768] -> self-attention with 12 heads (MatMul projections, Reshape/Transpose,
// scaled Softmax) -> Add + LayerNormalization -> FFN 768->3072->768 with exact Gelu
// (Erf form) -> Add + LayerNormalization. Opset 17.
std::string transformer_block_model_bytes();

}  // namespace parity::bench
