#include "io/base64.h"

#include <array>
#include <cstdint>

#include "core/large_buffer.h"

namespace parity::io {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Character → 6-bit value, or -1 for characters outside the alphabet.
constexpr std::array<int8_t, 256> make_table() {
  std::array<int8_t, 256> t{};
  for (auto& v : t) v = -1;
  for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int8_t>(i);
  return t;
}
constexpr auto kTable = make_table();

// The same table with each value already shifted into its place in a 24-bit group, for the
// fast path: four look-ups and three ORs make three bytes. kInvalid marks characters outside
// the alphabet ('=' included), so one test covers a whole group.
constexpr uint32_t kInvalid = 1u << 31;
constexpr std::array<uint32_t, 256> make_shifted(int shift) {
  std::array<uint32_t, 256> t{};
  for (int c = 0; c < 256; ++c)
    t[c] = kTable[c] < 0 ? kInvalid : static_cast<uint32_t>(kTable[c]) << shift;
  return t;
}
constexpr auto kShift18 = make_shifted(18);
constexpr auto kShift12 = make_shifted(12);
constexpr auto kShift6 = make_shifted(6);
constexpr auto kShift0 = make_shifted(0);

inline uint32_t group(const unsigned char* p) {
  return kShift18[p[0]] | kShift12[p[1]] | kShift6[p[2]] | kShift0[p[3]];
}

}  // namespace

void base64_append(std::string& out, std::string_view bytes) {
  size_t n = bytes.size();
  size_t start = out.size();
  out.resize(start + (n + 2) / 3 * 4);
  char* dst = out.data() + start;
  const auto* src = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    uint32_t v = (uint32_t{src[i]} << 16) | (uint32_t{src[i + 1]} << 8) | src[i + 2];
    *dst++ = kAlphabet[v >> 18];
    *dst++ = kAlphabet[(v >> 12) & 63];
    *dst++ = kAlphabet[(v >> 6) & 63];
    *dst++ = kAlphabet[v & 63];
  }
  if (i < n) {
    uint32_t v = uint32_t{src[i]} << 16;
    if (i + 1 < n) v |= uint32_t{src[i + 1]} << 8;
    *dst++ = kAlphabet[v >> 18];
    *dst++ = kAlphabet[(v >> 12) & 63];
    *dst++ = i + 1 < n ? kAlphabet[(v >> 6) & 63] : '=';
    *dst++ = '=';
  }
}

std::string base64_encode(std::string_view bytes) {
  std::string out;
  base64_append(out, bytes);
  return out;
}

// Python's strict decoder, rule for rule: no leading '=', nothing but padding once padding
// has started, nothing after the padding that completes a group, and the last group either
// whole or padded. Padding after a whole group is ignored, as Python ignores it.
std::optional<std::string> base64_decode(std::string_view text,
                                         const std::function<void(size_t)>& consumed) {
  constexpr size_t kReportEvery = size_t{4} << 20;  // characters
  size_t next_report = consumed ? kReportEvery : SIZE_MAX;
  // Bytes are decoded into a small staging block and appended from there, so the output's
  // pages are touched as it fills rather than zeroed up front: a caller releasing the text as
  // it goes (`consumed`) then holds about one copy of the data, not the text and the output.
  std::string out;
  reserve_large(out, text.size() / 4 * 3);
  constexpr size_t kStage = 48 << 10;  // a multiple of 6, in L1/L2
  char stage[kStage];
  char* dst = stage;
  auto flush = [&] {
    out.append(stage, static_cast<size_t>(dst - stage));
    dst = stage;
  };
  uint32_t acc = 0;
  int quad_pos = 0, pads = 0, bits = 0;
  bool padding = false;
  size_t i = 0;
  const auto* src = reinterpret_cast<const unsigned char*>(text.data());
  // Fast path: whole groups of four alphabet characters, all but the last group, two groups
  // per step (a quarter of the loop's tests); a stray or '=' character leaves it for the
  // careful loop below, which decides.
  for (; i + 8 < text.size(); i += 8) {
    const uint32_t a = group(src + i), b = group(src + i + 4);
    if ((a | b) & kInvalid) break;
    dst[0] = static_cast<char>(a >> 16);
    dst[1] = static_cast<char>(a >> 8);
    dst[2] = static_cast<char>(a);
    dst[3] = static_cast<char>(b >> 16);
    dst[4] = static_cast<char>(b >> 8);
    dst[5] = static_cast<char>(b);
    dst += 6;
    if (dst == stage + kStage) flush();
    if (i + 8 >= next_report) {
      consumed(i + 8);
      next_report += kReportEvery;
    }
  }
  flush();  // the rest is at most a group and the final one: 6 bytes, well within the stage
  for (; i + 4 < text.size(); i += 4) {
    const uint32_t v = group(src + i);
    if (v & kInvalid) break;
    out.push_back(static_cast<char>(v >> 16));
    out.push_back(static_cast<char>(v >> 8));
    out.push_back(static_cast<char>(v));
  }
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '=') {
      if (i == 0) return std::nullopt;
      padding = true;
      if (quad_pos >= 2 && quad_pos + ++pads >= 4) {
        if (i + 1 < text.size()) return std::nullopt;  // data after the padding
        return out;
      }
      continue;
    }
    int v = kTable[static_cast<unsigned char>(c)];
    if (v < 0 || padding) return std::nullopt;
    acc = ((acc << 6) | static_cast<uint32_t>(v)) & 0xFFFFFF;
    bits += 6;
    if (bits >= 8) {  // a whole byte is known; bits a padded group leaves over are dropped
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
    quad_pos = (quad_pos + 1) % 4;
  }
  if (quad_pos != 0) return std::nullopt;  // an unpadded partial group
  return out;
}

}  // namespace parity::io
