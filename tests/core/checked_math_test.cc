// Checked size arithmetic and the allocation limits (core/checked_math.h, core/limits.h):
// shapes whose element count or byte size overflows 64 bits are refused with a message that
// names the shape and the values, instead of wrapping to a small buffer.
#include "core/checked_math.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "core/limits.h"
#include "core/tensor.h"

namespace parity {
namespace {

constexpr int64_t k2p31 = int64_t{1} << 31, k2p62 = int64_t{1} << 62;

template <typename F>
std::string error_of(F&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(CheckedMath, ArithmeticThatFitsIsExact) {
  EXPECT_EQ(checked_mul(k2p31, k2p31, "x"), k2p62);
  EXPECT_EQ(checked_add(k2p62 - 1, k2p62, "x"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(checked_sub(-k2p62, k2p62, "x"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(checked_numel({}, "x"), 1);
  EXPECT_EQ(checked_numel({k2p62, 0, k2p62}, "x"), 0) << "a 0 dim ends any product";
  EXPECT_EQ(saturating_mul(k2p62, 4), std::numeric_limits<int64_t>::max());
}

TEST(CheckedMath, OverflowNamesTheComputationAndTheValues) {
  std::string m = error_of([] { checked_mul(k2p62, 2, "the output dim"); });
  EXPECT_EQ(m,
            "failed to compute the output dim: 4611686018427387904 * 2 overflows a 64-bit "
            "integer (the largest is 9223372036854775807)");
  m = error_of([] { checked_add(std::numeric_limits<int64_t>::max(), 1, "a sum"); });
  EXPECT_NE(m.find("9223372036854775807 + 1 overflows"), std::string::npos) << m;
  m = error_of([] { checked_numel({k2p31, k2p31, 4}, "input 'x'"); });
  EXPECT_NE(m.find("failed to compute the element count of input 'x' with shape (2147483648, "
                   "2147483648, 4): the product of its dims overflows a 64-bit integer"),
            std::string::npos)
      << m;
}

TEST(CheckedMath, ShapeNumelRefusesOverflowInsteadOfWrapping) {
  // 2^32 * 2^32 wraps to 0 in 64 bits: a "valid" empty tensor before the check.
  EXPECT_NE(error_of([] {
              shape_numel({int64_t{1} << 32, int64_t{1} << 32});
            }).find("overflows"),
            std::string::npos);
  EXPECT_NE(error_of([] { shape_numel({k2p62, 4}); }).find("overflows"), std::string::npos);
}

TEST(CheckedMath, TensorsWithOverflowingShapesAreRefusedForEveryType) {
  for (DataType t : {DataType::kFloat32, DataType::kInt8, DataType::kBool, DataType::kString}) {
    std::string m = error_of([t] { Tensor x(t, {k2p31, k2p31, 4}); });
    EXPECT_NE(m.find("overflows"), std::string::npos) << dtype_name(t) << ": " << m;
    // 2^62 elements are representable, and far above the element limit.
    m = error_of([t] { Tensor x(t, {k2p31, k2p31}); });
    EXPECT_NE(m.find("elements exceed the limit"), std::string::npos) << dtype_name(t) << ": " << m;
    m = error_of([t] { Tensor x(t, {k2p62, 4}); });
    EXPECT_NE(m.find("overflows"), std::string::npos) << dtype_name(t) << ": " << m;
  }
  // A borrowed buffer must be described by a representable shape too.
  float one = 1;
  std::string m = error_of([&] { Tensor::borrow(DataType::kFloat32, {k2p62, 4}, &one); });
  EXPECT_NE(m.find("overflows"), std::string::npos) << m;
}

TEST(CheckedMath, StorageBytesOfHugeCountsDoNotWrap) {
  // n * bits overflows 64 bits for these counts; the byte count itself does not.
  EXPECT_EQ(dtype_storage_bytes(DataType::kInt4, size_t{1} << 62), size_t{1} << 61);
  EXPECT_EQ(dtype_storage_bytes(DataType::kBool, size_t{1} << 62), size_t{1} << 62);
  EXPECT_EQ(dtype_storage_bytes(DataType::kInt4, 7), 4u);
  EXPECT_EQ(dtype_storage_bytes(DataType::kFloat16, 7), 14u);
}

TEST(Limits, ATensorAboveTheElementLimitIsRefusedBeforeAllocating) {
  // 2^40 float32 elements: 4 TiB, representable, far above the default limit.
  std::string m = error_of([] {
    Tensor x(DataType::kFloat32, {int64_t{1} << 20, int64_t{1} << 20});
  });
  EXPECT_NE(m.find("failed to create a float32 tensor of shape (1048576, 1048576): its "
                   "1099511627776 elements exceed the limit of 536870912 elements per tensor; "
                   "raise it with --limit-tensor-elements"),
            std::string::npos)
      << m;
}

TEST(Limits, ARunScopeAppliesItsOwnLimitsAndCountsWhatTheRunHolds) {
  ResourceLimits limits;
  limits.max_tensor_elements = 100;
  limits.max_memory_bytes = 1000;
  size_t held = 600;
  {
    AllocationScope scope(limits, &held);
    EXPECT_NE(error_of([] { Tensor x(DataType::kInt8, {101}); }).find("limit of 100 elements"),
              std::string::npos);
    Tensor fits(DataType::kFloat32, {100});  // 400 bytes: 1000 with what is held
    std::string m = error_of([] { Tensor x(DataType::kFloat64, {51}); });
    EXPECT_NE(m.find("(408 bytes): with the 600 bytes the run already holds it exceeds the "
                     "memory limit of 1000 bytes; raise it with --limit-memory"),
              std::string::npos)
        << m;
  }
  // Outside the scope the process-wide defaults apply again.
  Tensor again(DataType::kInt8, {101});
  EXPECT_EQ(again.numel(), 101);
}

TEST(Limits, FormatsBytesInBinaryUnits) {
  EXPECT_EQ(format_bytes(512), "512 bytes");
  EXPECT_EQ(format_bytes(4.0 * (1 << 30)), "4.00 GiB");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
}

}  // namespace
}  // namespace parity
