#include "layerwise/ulps.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/float_types.h"

namespace parity {

namespace {

// Maps the bits of a floating value to an integer that orders like the values (-0 and +0 are
// both 0), so that the difference of two such integers counts the values between them.
template <typename Bits>
int64_t ordered(Bits bits) {
  constexpr int kWidth = static_cast<int>(sizeof(Bits) * 8);
  const Bits sign = static_cast<Bits>(Bits{1} << (kWidth - 1));
  const auto magnitude = static_cast<int64_t>(bits & static_cast<Bits>(~sign));
  return (bits & sign) ? -magnitude : magnitude;
}

template <typename Bits, typename ToDouble>
UlpStats count(const Tensor& a, const Tensor& b, ToDouble to_double) {
  UlpStats s;
  const auto* pa = static_cast<const Bits*>(a.raw_data());
  const auto* pb = static_cast<const Bits*>(b.raw_data());
  const int64_t n = a.numel();
  for (int64_t i = 0; i < n; ++i) {
    const double x = to_double(pa[i]), y = to_double(pb[i]);
    if (std::isnan(x) || std::isnan(y)) continue;
    // Differences of int64 orderings of 64-bit values can overflow; a double holds them.
    const double d =
        std::fabs(static_cast<double>(ordered(pa[i])) - static_cast<double>(ordered(pb[i])));
    if (d > s.max_ulps) s.max_ulps = d;
    if (std::isfinite(y) && std::fabs(y) > s.max_magnitude) s.max_magnitude = std::fabs(y);
  }
  return s;
}

}  // namespace

std::optional<UlpStats> ulp_stats(const Tensor& out0, const Tensor& out1) {
  if (out0.dtype() != out1.dtype() || out0.numel() != out1.numel()) return std::nullopt;
  switch (out0.dtype()) {
    case DataType::kFloat64:
      return count<uint64_t>(out0, out1, [](uint64_t b) {
        double d;
        std::memcpy(&d, &b, sizeof d);
        return d;
      });
    case DataType::kFloat32:
      return count<uint32_t>(out0, out1, [](uint32_t b) {
        float f;
        std::memcpy(&f, &b, sizeof f);
        return static_cast<double>(f);
      });
    case DataType::kFloat16:
      return count<uint16_t>(out0, out1, [](uint16_t b) {
        return static_cast<double>(float16::from_bits(b).to_float());
      });
    case DataType::kBFloat16:
      return count<uint16_t>(out0, out1, [](uint16_t b) {
        return static_cast<double>(bfloat16::from_bits(b).to_float());
      });
    default:
      return std::nullopt;
  }
}

int significand_bits(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat64:
      return 52;
    case DataType::kFloat32:
      return 23;
    case DataType::kFloat16:
      return 10;
    case DataType::kBFloat16:
      return 7;
    default:
      return 0;
  }
}

double ulp_at(DataType dtype, double magnitude) {
  const int bits = significand_bits(dtype);
  if (bits == 0 || !(magnitude > 0) || !std::isfinite(magnitude)) return 0;
  return std::ldexp(1.0, static_cast<int>(std::floor(std::log2(magnitude))) - bits);
}

}  // namespace parity
