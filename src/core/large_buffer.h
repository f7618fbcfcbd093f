// Large byte buffers on transparent huge pages.
//
// A 200 MB results file read into ordinary 4 KiB pages takes 50,000 page faults, and the arrays
// decoded from it as many again; on this kind of load the faults cost more than the read and the
// decoding together (bench/README.md, "Loading results files"). Asking for huge pages before the
// buffer is first touched makes them 100 faults. Where the kernel does not grant them (THP set to
// "never", or no 2 MiB block free) the buffer is an ordinary one: the advice changes speed only.
#pragma once

#include <cstddef>
#include <string>

namespace parity {

// Capacity for `size` bytes in `s` (empty), not yet touched; from a few MiB up, advised onto
// huge pages where the kernel allows. Fill it by appending.
void reserve_large(std::string& s, size_t size);
// A string of `size` zero bytes, likewise.
std::string large_zeroed_string(size_t size);

// Gives the whole pages inside [data, data + size) back to the kernel, for a buffer its owner
// will not read again there (the text of a decoded payload): they read as zeros afterwards. The
// memory must be the caller's own writable heap memory.
void release_pages(const char* data, size_t size);

}  // namespace parity
