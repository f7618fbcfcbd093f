// Comparing values the way ONNX's backend test runner does (onnx/backend/test/runner):
// the element type and shape must be equal; strings, integers and booleans must be equal;
// floating elements pass when |actual - expected| <= atol + rtol * |expected| (asymmetric:
// scaled by the expected value), NaN equals NaN and infinities must match exactly; sequences
// are compared element by element; an empty optional equals only an empty optional.
#pragma once

#include <string>

#include "core/value.h"

namespace parity::testing {

struct Tolerance {
  double atol = 1e-7;  // ONNX's defaults for every node test
  double rtol = 1e-3;
};

// An empty string when `actual` matches `expected`; otherwise one line saying how it differs
// (element type, shape, or the first mismatching element with both values and the number of
// mismatches).
std::string compare_tensors(const Tensor& actual, const Tensor& expected,
                            const Tolerance& tolerance = {});
std::string compare_values(const Value& actual, const Value& expected,
                           const Tolerance& tolerance = {});

}  // namespace parity::testing
