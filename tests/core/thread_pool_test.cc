// The thread pool's default size follows the process's CPU affinity mask (what `taskset`
// sets), not the machine's CPU count.
#include <gtest/gtest.h>
#include <sched.h>

#include "core/thread_pool.h"

namespace parity {
namespace {

TEST(ThreadPool, DefaultThreadCountFollowsTheAffinityMask) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  int first = -1;
  for (int c = 0; c < CPU_SETSIZE && first < 0; ++c)
    if (CPU_ISSET(c, &saved)) first = c;
  ASSERT_GE(first, 0);
  EXPECT_EQ(affinity_cpus(), CPU_COUNT(&saved));

  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  set_num_threads(0);
  EXPECT_EQ(affinity_cpus(), 1);
  EXPECT_EQ(num_threads(), 1);
  set_num_threads(3);  // an explicit count wins over the mask
  EXPECT_EQ(num_threads(), 3);
  set_num_threads(0);
  ASSERT_EQ(sched_setaffinity(0, sizeof saved, &saved), 0);
  EXPECT_EQ(num_threads(), CPU_COUNT(&saved));
}

}  // namespace
}  // namespace parity
