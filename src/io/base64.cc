#include "io/base64.h"

#include <array>
#include <cstdint>

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
std::optional<std::string> base64_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3 + 2);
  uint32_t acc = 0;
  int quad_pos = 0, pads = 0, bits = 0;
  bool padding = false;
  size_t i = 0;
  // Fast path: whole groups of four alphabet characters, all but the last group.
  for (; i + 4 < text.size(); i += 4) {
    int a = kTable[static_cast<unsigned char>(text[i])];
    int b = kTable[static_cast<unsigned char>(text[i + 1])];
    int c = kTable[static_cast<unsigned char>(text[i + 2])];
    int d = kTable[static_cast<unsigned char>(text[i + 3])];
    if ((a | b | c | d) < 0) break;  // '=' or a stray character: the careful loop decides
    uint32_t v = (uint32_t(a) << 18) | (uint32_t(b) << 12) | (uint32_t(c) << 6) | uint32_t(d);
    char bytes[3] = {static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
    out.append(bytes, 3);
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
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
    quad_pos = (quad_pos + 1) % 4;
  }
  if (quad_pos != 0) return std::nullopt;  // an unpadded partial group
  return out;
}

}  // namespace parity::io
