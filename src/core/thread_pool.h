// A process-wide pool of worker threads for kernels.
//
// parallel_for splits [0, n) into chunks whose boundaries depend only on n and `grain`,
// never on the number of threads, so a kernel whose chunks each compute their own outputs
// produces the same bits on 1 thread and on many.
#pragma once

#include <cstdint>
#include <functional>

namespace parity {

// 0 means "the CPUs this process may run on" (its affinity mask, so `taskset -c 0` gives one
// thread). Takes effect for the next parallel_for.
void set_num_threads(int n);
int num_threads();
// The number of CPUs in the process's affinity mask (at least 1).
int affinity_cpus();

void parallel_for(int64_t n, int64_t grain,
                  const std::function<void(int64_t begin, int64_t end)>& fn);

}  // namespace parity
