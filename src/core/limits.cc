#include "core/limits.h"

#include <unistd.h>

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "core/checked_math.h"
#include "core/error.h"
#include "core/tensor.h"

namespace parity {

namespace {

thread_local AllocationScope* g_scope = nullptr;

int64_t physical_memory_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(pages) * page;
}

}  // namespace

int64_t ResourceLimits::memory_bytes() const {
  if (max_memory_bytes > 0) return max_memory_bytes;
  static const int64_t three_quarters = physical_memory_bytes() / 4 * 3;
  return three_quarters;
}

ResourceLimits& default_limits() {
  static ResourceLimits limits;
  return limits;
}

AllocationScope::AllocationScope(const ResourceLimits& limits, const size_t* live_bytes)
    : limits_(limits),
      live_bytes_(live_bytes),
      start_(std::chrono::steady_clock::now()),
      previous_(g_scope) {
  g_scope = this;
}

AllocationScope::~AllocationScope() { g_scope = previous_; }

void AllocationScope::check_time() const {
  if (limits_.max_run_seconds <= 0) return;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (elapsed > limits_.max_run_seconds)
    fail(
        "stopped after {:.1f} s: the run took longer than the limit of {} s per run; raise it "
        "with --limit-run-seconds (0 means no limit)",
        elapsed, limits_.max_run_seconds);
}

const AllocationScope* current_allocation_scope() { return g_scope; }

const ResourceLimits& active_limits() { return g_scope ? g_scope->limits() : default_limits(); }

std::string format_bytes(double bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) {
    bytes /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} bytes", bytes) : fmt::format("{:.2f} {}", bytes, units[u]);
}

size_t check_tensor_allocation(DataType dtype, const std::vector<int64_t>& shape) {
  for (int64_t d : shape)
    if (d < 0)
      fail("failed to create a tensor of shape {}: every dimension must be 0 or more",
           shape_str(shape));
  const std::string what = fmt::format("a {} tensor", dtype_name(dtype));
  const int64_t numel = checked_numel(shape, what);
  const ResourceLimits& limits = active_limits();
  if (numel > limits.max_tensor_elements)
    fail(
        "failed to create a {} tensor of shape {}: its {} elements exceed the limit of {} "
        "elements per tensor; raise it with --limit-tensor-elements",
        dtype_name(dtype), shape_str(shape), numel, limits.max_tensor_elements);
  size_t bytes;
  if (dtype == DataType::kString) {
    bytes = checked_size_mul(static_cast<size_t>(numel), sizeof(std::string), what);
  } else {
    // (numel * bits + 7) / 8 without forming numel * bits, which can overflow.
    const size_t n = static_cast<size_t>(numel), bits = dtype_bits(dtype);
    bytes = checked_size_mul(n / 8, bits, what) + ((n % 8) * bits + 7) / 8;
  }
  const size_t held = g_scope ? g_scope->live_bytes() : 0;
  const int64_t budget = limits.memory_bytes();
  if (bytes > static_cast<size_t>(budget) || held > static_cast<size_t>(budget) - bytes)
    fail(
        "failed to create a {} tensor of shape {} ({}): with the {} the run already holds it "
        "exceeds the memory limit of {}; raise it with --limit-memory",
        dtype_name(dtype), shape_str(shape), format_bytes(static_cast<double>(bytes)),
        format_bytes(static_cast<double>(held)), format_bytes(static_cast<double>(budget)));
  return bytes;
}

void check_scratch_allocation(int64_t count, size_t item_bytes, const std::string& what) {
  const size_t bytes =
      checked_size_mul(static_cast<size_t>(std::max<int64_t>(count, 0)), item_bytes, what);
  const size_t held = g_scope ? g_scope->live_bytes() : 0;
  const int64_t budget = active_limits().memory_bytes();
  if (bytes > static_cast<size_t>(budget) || held > static_cast<size_t>(budget) - bytes)
    fail(
        "failed to allocate {} for {}: with the {} the run already holds it exceeds the "
        "memory limit of {}; raise it with --limit-memory",
        format_bytes(static_cast<double>(bytes)), what, format_bytes(static_cast<double>(held)),
        format_bytes(static_cast<double>(budget)));
}

}  // namespace parity
