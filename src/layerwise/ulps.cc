#include "layerwise/ulps.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

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

// One pass over the bits alone (integer work the compiler vectorises): NaN and finiteness come
// from the magnitude bits against those of infinity; the largest finite magnitude is kept as
// bits and converted once.
template <typename Bits, typename ToDouble>
UlpStats count(const Tensor& a, const Tensor& b, Bits infinity, ToDouble to_double) {
  constexpr int kWidth = static_cast<int>(sizeof(Bits) * 8);
  const Bits sign = static_cast<Bits>(Bits{1} << (kWidth - 1));
  const auto* pa = static_cast<const Bits*>(a.raw_data());
  const auto* pb = static_cast<const Bits*>(b.raw_data());
  const int64_t n = a.numel();
  // 64-bit orderings can differ by more than int64 holds: a double holds their difference.
  using Diff = std::conditional_t<(sizeof(Bits) < 8), int64_t, double>;
  Diff max_ulps = 0;
  Bits max_magnitude = 0;
  for (int64_t i = 0; i < n; ++i) {
    const Bits ma = pa[i] & static_cast<Bits>(~sign), mb = pb[i] & static_cast<Bits>(~sign);
    const bool nan = ma > infinity || mb > infinity;  // NaN pairs are skipped
    Diff d = static_cast<Diff>(ordered(pa[i])) - static_cast<Diff>(ordered(pb[i]));
    d = d < 0 ? -d : d;
    d = nan ? Diff{0} : d;
    max_ulps = d > max_ulps ? d : max_ulps;
    const Bits m = mb < infinity ? mb : Bits{0};
    max_magnitude = m > max_magnitude ? m : max_magnitude;
  }
  return UlpStats{static_cast<double>(max_ulps), to_double(max_magnitude)};
}

}  // namespace

std::optional<UlpStats> ulp_stats(const Tensor& out0, const Tensor& out1) {
  if (out0.dtype() != out1.dtype() || out0.numel() != out1.numel()) return std::nullopt;
  switch (out0.dtype()) {
    case DataType::kFloat64:
      return count<uint64_t>(out0, out1, 0x7FF0000000000000ull, [](uint64_t b) {
        double d;
        std::memcpy(&d, &b, sizeof d);
        return d;
      });
    case DataType::kFloat32:
      return count<uint32_t>(out0, out1, 0x7F800000u, [](uint32_t b) {
        float f;
        std::memcpy(&f, &b, sizeof f);
        return static_cast<double>(f);
      });
    case DataType::kFloat16:
      return count<uint16_t>(out0, out1, uint16_t{0x7C00}, [](uint16_t b) {
        return static_cast<double>(float16::from_bits(b).to_float());
      });
    case DataType::kBFloat16:
      return count<uint16_t>(out0, out1, uint16_t{0x7F80}, [](uint16_t b) {
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
