#include "core/thread_pool.h"

#include "core/limits.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace parity {

namespace {

class Pool {
 public:
  // Never destroyed: workers may still wait on it while the process exits. A child made by
  // fork() has none of the parent's workers, so it gets a fresh pool (the old one is left as it
  // is: destroying it would join threads that do not exist in the child).
  static Pool& get() {
    static const bool registered = [] {
      pthread_atfork(&Pool::before_fork, &Pool::after_fork_parent, &Pool::after_fork_child);
      return true;
    }();
    (void)registered;
    return *instance();
  }

  void set_threads(int n) {
    std::lock_guard run_lock(run_mutex_);
    stop_workers();
    requested_ = n;
  }

  int threads() const {
    if (requested_ > 0) return requested_;
    return affinity_cpus();
  }

  void run(int64_t chunks, const std::function<void(int64_t)>& body) {
    int want = std::min<int64_t>(threads(), chunks);
    if (want <= 1) {
      for (int64_t c = 0; c < chunks; ++c) body(c);
      return;
    }
    // One parallel region at a time; a nested parallel_for runs inline.
    std::unique_lock run_lock(run_mutex_, std::try_to_lock);
    if (!run_lock.owns_lock() || in_worker_) {
      for (int64_t c = 0; c < chunks; ++c) body(c);
      return;
    }
    start_workers(threads() - 1);
    {
      std::lock_guard lock(mutex_);
      body_ = &body;
      total_ = chunks;
      next_ = 0;
      pending_ = static_cast<int>(workers_.size());
      error_ = nullptr;
      ++generation_;
    }
    cv_.notify_all();
    work();
    std::unique_lock lock(mutex_);
    done_cv_.wait(lock, [&] { return pending_ == 0; });
    body_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  static Pool*& instance() {
    static Pool* pool = new Pool;
    return pool;
  }
  // No parallel region (and no worker holding the pool's lock) may be under way across fork().
  static void before_fork() {
    instance()->run_mutex_.lock();
    instance()->mutex_.lock();
  }
  static void after_fork_parent() {
    instance()->mutex_.unlock();
    instance()->run_mutex_.unlock();
  }
  static void after_fork_child() {
    Pool* old = instance();
    old->mutex_.unlock();
    old->run_mutex_.unlock();
    Pool* fresh = new Pool;
    fresh->requested_ = old->requested_;
    fresh->left_behind_ = old;  // reachable, so not a leak, and never destroyed (see get())
    instance() = fresh;
  }

  void work() {
    for (;;) {
      int64_t c = next_.fetch_add(1);
      if (c >= total_) return;
      try {
        (*body_)(c);
      } catch (...) {
        std::lock_guard lock(mutex_);
        if (!error_) error_ = std::current_exception();
        next_ = total_;
      }
    }
  }

  void start_workers(int n) {
    if (static_cast<int>(workers_.size()) == n) return;
    stop_workers();
    stopping_ = false;
    // A new worker must wait for the next generation, not take the last one (whose pending_
    // count is already settled) for new work: it would count itself twice.
    const uint64_t current = generation_;
    for (int i = 0; i < n; ++i)
      workers_.emplace_back([this, current] {
        in_worker_ = true;
        uint64_t seen = current;
        for (;;) {
          {
            std::unique_lock lock(mutex_);
            cv_.wait(lock, [&] { return stopping_ || generation_ != seen; });
            if (stopping_) return;
            seen = generation_;
          }
          work();
          std::lock_guard lock(mutex_);
          if (--pending_ == 0) done_cv_.notify_all();
        }
      });
  }

  void stop_workers() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
  }

  int requested_ = 0;
  Pool* left_behind_ = nullptr;  // the parent's pool, in a child made by fork()
  std::mutex run_mutex_;
  std::mutex mutex_;
  std::condition_variable cv_, done_cv_;
  std::vector<std::thread> workers_;
  bool stopping_ = false;
  uint64_t generation_ = 0;
  const std::function<void(int64_t)>* body_ = nullptr;
  std::atomic<int64_t> next_{0};
  int64_t total_ = 0;
  int pending_ = 0;
  std::exception_ptr error_;
  static thread_local bool in_worker_;
};

thread_local bool Pool::in_worker_ = false;

}  // namespace

int affinity_cpus() {
  // hardware_concurrency() counts the machine's CPUs, not the ones this process may use.
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void set_num_threads(int n) { Pool::get().set_threads(n); }
int num_threads() { return Pool::get().threads(); }

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  int64_t chunks = (n + grain - 1) / grain;
  if (chunks == 1) {
    fn(0, n);
    return;
  }
  // The run's time limit is checked before every chunk, on whichever thread takes it, so that
  // one long node stops near the limit too (the executor checks it between nodes).
  const AllocationScope* scope = current_allocation_scope();
  Pool::get().run(chunks, [&](int64_t c) {
    if (scope) scope->check_time();
    fn(c * grain, std::min(n, (c + 1) * grain));
  });
}

}  // namespace parity
