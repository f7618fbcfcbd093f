#include "core/large_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace parity {

namespace {

constexpr size_t kHugePage = size_t{2} << 20;
// Below this a buffer has too few whole huge pages for the advice to matter.
constexpr size_t kLargeBuffer = size_t{4} << 20;

// Advises huge pages for the whole 2 MiB blocks inside [data, data + size).
void advise_huge_pages(char* data, size_t size) {
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t last = (begin + size) & ~(kHugePage - 1);
  if (last > first)
    ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);  // advice only
}

}  // namespace

void release_pages(const char* data, size_t size) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t first = (begin + page - 1) & ~(page - 1);
  const uintptr_t last = (begin + size) & ~(page - 1);
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

void reserve_large(std::string& s, size_t size) {
  s.reserve(size);  // allocated, not yet touched
  if (size >= kLargeBuffer) advise_huge_pages(s.data(), size);
}

std::string large_zeroed_string(size_t size) {
  std::string bytes;
  reserve_large(bytes, size);
  bytes.resize(size);
  return bytes;
}

}  // namespace parity
