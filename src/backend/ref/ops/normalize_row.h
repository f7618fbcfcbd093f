// The normalizations' last step on a float32 row (InstanceNormalization, GroupNormalization,
// BatchNormalization), defined in normalization.cc.
#pragma once

#include <cstdint>

namespace parity::ref {

// y[i] = float((double(x[i]) - mean) * a + c) for i < n (x and y distinct), in the widest
// vector lanes the CPU has, with the scalar expression's two roundings.
void normalize_float(const float* x, float* y, int64_t n, double mean, double a, double c);

}  // namespace parity::ref
