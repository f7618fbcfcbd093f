// ConvTranspose's two kernels, shared by the op (conv_transpose.cc) and the tests that check
// them against each other bit for bit.
//
// Both compute, for every output element y[n, m, o], the sum in double of
// x[n, c, i] * w[c, m % mg, t] over the input channels c of m's group (outer) and the kernel
// taps t in increasing flat index (inner), taking the terms with o = i * stride + t * dilation
// - pad_begin, starting from +0; then add the bias and round once to the element type. The
// order of the sum is what fixes the bits, so both kernels keep it.
#pragma once

#include <optional>
#include <vector>

#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {

// Everything the kernels need besides the tensors: the spatial geometry (in, out, kernel,
// strides, dilations, pad_begin; pads may be negative when output_shape asks for more than the
// full result) and the group count.
struct ConvTransposeShape {
  WindowGeometry g;
  int64_t group = 1;
};

// The taps of W that reach the outputs of one stride phase r (per dim, (o + pad_begin) % stride
// == r): those with (t * dilation) % stride == r in every dim, in increasing flat index.
struct TransposePhase {
  std::vector<int64_t> r;
  std::vector<int64_t> taps;
};
std::vector<TransposePhase> transpose_phases(const std::vector<int64_t>& kernel,
                                             const std::vector<int64_t>& strides,
                                             const std::vector<int64_t>& dilations);

// W [C, mg, k...] in double, packed per phase and group in panels of kGemmMR output channels,
// each panel k-major over k = (input channel of the group, tap of the phase).
struct ConvTransposeWeights {
  DataType dtype = DataType::kFloat32;
  Shape shape;
  std::vector<int64_t> strides, dilations;
  int64_t group = 1, panels = 0;  // panels per group
  std::vector<TransposePhase> phases;
  std::vector<int64_t> phase_start;  // where each phase's panels begin in values
  std::vector<double> values;
  bool finite = true;  // every value of W is finite (else the direct kernel runs)
};
ConvTransposeWeights pack_conv_transpose_weights(const Tensor& w, int64_t group,
                                                 const std::vector<int64_t>& strides,
                                                 const std::vector<int64_t>& dilations);

// The GEMM path: per stride phase, the outputs are a stride-1 correlation of the input with
// that phase's taps, computed on gemm_kernel.h's exact micro-kernel reading the zero-padded
// input in place. The padding adds terms 0 * w, which leave a sum that starts at +0 unchanged
// when w is finite. `packed` (W packed for these strides and dilations) may be null. Returns
// nothing where it cannot give the direct kernel's bits (a non-finite weight: the padding's
// 0 * inf would add a NaN the direct kernel never forms) or would need a padded copy far
// larger than input and output (pads of millions).
std::optional<Tensor> conv_transpose_gemm(const Tensor& x, const Tensor& w, const Tensor* bias,
                                          const ConvTransposeShape& shape,
                                          const ConvTransposeWeights* packed);

// The direct kernel: every input element scatters its products into a double plane per
// (batch, output channel), input channel by input channel, tap by tap. Any number of spatial
// dims.
Tensor conv_transpose_direct(const Tensor& x, const Tensor& w, const Tensor* bias,
                             const ConvTransposeShape& shape);

}  // namespace parity::ref
