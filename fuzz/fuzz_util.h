// What every fuzz target shares: input bytes as a string, a folder with an external-data file
// for models to point at, and the rule that parity::Error is the expected answer to bad input
// (anything else escaping, a crash, a sanitizer report or a hang is a finding).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace parity::fuzz {

inline std::string bytes_of(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// A folder holding "w.bin" (4 KiB) and "sub/x.bin" (256 bytes), made once per process.
const std::string& external_data_folder();

// Small resource limits for the whole process, so that a fuzzed size means a quick Error, not
// a multi-gigabyte allocation (libFuzzer's -rss_limit_mb would report that as a finding).
void use_small_limits();

}  // namespace parity::fuzz
