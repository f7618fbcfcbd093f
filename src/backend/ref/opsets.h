// The opsets the reference backend implements.
#pragma once

#include <cstdint>

namespace parity::ref {

// The highest opset of the default ONNX domain (ai.onnx) whose ops the reference backend
// implements: the ops new in opsets 23 and 24 (Attention, RMSNormalization, RotaryEmbedding,
// TensorScatter, Swish) have kernels, and the element types FLOAT4E2M1 and FLOAT8E8M0 run in
// Cast (with opset 25's round_mode), CastLike, QuantizeLinear / DequantizeLinear and the
// data-movement ops (docs/mx-types.md). A model importing a later opset still runs
// (registrations end at kOpsetMax) but the executor warns that ops changed after it run with
// their older meaning.
constexpr int64_t kHighestOnnxOpset = 24;

}  // namespace parity::ref
