// Resource limits: how large a tensor may be, how much memory a run may hold, how many
// iterations a Loop may run and how long a run may take.
//
// Hostile or broken models ask for runaway work (a shape value of 2^40, a Loop with a trip
// count of 10^15, a kernel far larger than its input); without limits Parity runs for hours or
// is killed by the kernel's OOM killer. Every buffer a Tensor owns is checked before it is
// allocated (check_tensor_allocation, called by Tensor's constructor and the reference
// kernels' allocator), against the limits of the run in progress on this thread (an
// AllocationScope installed by the reference executor) or else the process-wide defaults,
// which the command line sets (--limit-tensor-elements, --limit-memory, ...).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace parity {

struct ResourceLimits {
  // 2^29 elements: 2 GiB of float32 in one tensor. Real models stay far below; a broken shape
  // goes far above.
  static constexpr int64_t kDefaultMaxTensorElements = int64_t{1} << 29;
  static constexpr int64_t kDefaultMaxLoopIterations = 10'000'000;

  int64_t max_tensor_elements = kDefaultMaxTensorElements;
  // Bytes the reference backend may hold in live values at once; 0 means three quarters of
  // the machine's physical memory.
  int64_t max_memory_bytes = 0;
  // Iterations of one Loop node (one run of it), whatever its trip count and condition say.
  int64_t max_loop_iterations = kDefaultMaxLoopIterations;
  // Wall-clock seconds one run of the reference backend may take; 0 means no limit.
  double max_run_seconds = 0;

  // max_memory_bytes with 0 resolved to three quarters of physical memory.
  int64_t memory_bytes() const;
};

// The limits used where no run installs its own: what the command line sets.
ResourceLimits& default_limits();

// Installed on the running thread by the reference executor for one run: allocations on this
// thread are checked against `limits`, counting the bytes `live_bytes` already holds.
class AllocationScope {
 public:
  AllocationScope(const ResourceLimits& limits, const size_t* live_bytes);
  ~AllocationScope();
  AllocationScope(const AllocationScope&) = delete;
  AllocationScope& operator=(const AllocationScope&) = delete;

  const ResourceLimits& limits() const { return limits_; }
  size_t live_bytes() const { return live_bytes_ ? *live_bytes_ : 0; }
  // Throws Error when the run has taken longer than limits().max_run_seconds.
  void check_time() const;

 private:
  ResourceLimits limits_;
  const size_t* live_bytes_;
  std::chrono::steady_clock::time_point start_;
  AllocationScope* previous_;
};

// The scope of the run in progress on this thread, or null.
const AllocationScope* current_allocation_scope();
// The limits that apply on this thread now: the scope's, else default_limits().
const ResourceLimits& active_limits();

// Checks that a buffer of `dtype` with `shape` can be allocated: every dim 0 or more, the
// element count and byte size representable, both within the active limits. Returns the
// storage bytes. Throws Error naming the shape, the values and the flag that raises the limit.
size_t check_tensor_allocation(DataType dtype, const std::vector<int64_t>& shape);

// Checks a kernel's scratch buffer of `count` items of `item_bytes` each (a padded copy of
// the input, packed weights) against the active memory limit; `what` names it.
void check_scratch_allocation(int64_t count, size_t item_bytes, const std::string& what);

// "4.00 GiB": bytes in the largest binary unit that keeps the value at or above 1.
std::string format_bytes(double bytes);

}  // namespace parity
