// Decompression bombs in .npz files (issue 15): a member's announced size is checked against
// the resource limits before it is inflated, so megabytes of deflated zeros never become
// gigabytes in memory. Genuine data within the limits still loads.
#include <gtest/gtest.h>

#include "core/limits.h"
#include "io/io_test_helpers.h"
#include "io/npy.h"

namespace parity::io {
namespace {

using testing::python_in;
using testing::read_text;
using testing::TempDir;

// Lowers the process-wide element limit for one test.
class ElementLimit {
 public:
  explicit ElementLimit(int64_t n) : saved_(default_limits()) {
    default_limits().max_tensor_elements = n;
  }
  ~ElementLimit() { default_limits() = saved_; }

 private:
  ResourceLimits saved_;
};

TEST(NpzLimits, ABombAboveTheElementLimitIsRefusedBeforeInflating) {
  TempDir dir;
  ASSERT_TRUE(python_in(dir, R"(
np.savez_compressed(D + '/bomb.npz', zeros=np.zeros(1_000_000, np.float32), small=np.arange(5))
)"));
  const std::string bytes = read_text(dir.file("bomb.npz"));
  ASSERT_LT(bytes.size(), 20000u) << "the archive should be a few kilobytes of deflated zeros";
  ElementLimit limit(100'000);
  std::string message;
  try {
    npz_decode(bytes);
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("failed to inflate .npz member 'zeros.npy': it announces 3.81 MiB "
                         "(1000000 elements of 4 bytes)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("above the limits of 100000 elements per tensor"), std::string::npos)
      << message;
}

TEST(NpzLimits, DataWithinTheLimitsLoads) {
  TempDir dir;
  ASSERT_TRUE(python_in(dir, R"(
np.savez_compressed(D + '/ok.npz', a=np.arange(1000, dtype=np.int64).reshape(10, 100))
)"));
  ElementLimit limit(1000);
  auto arrays = npz_decode(read_text(dir.file("ok.npz")));
  ASSERT_EQ(arrays.size(), 1u);
  EXPECT_EQ(arrays[0].second.shape(), (Shape{10, 100}));
  EXPECT_EQ(arrays[0].second.data<int64_t>()[999], 999);
}

}  // namespace
}  // namespace parity::io
