// Standard base64 (RFC 4648 alphabet, '=' padding, no line breaks), as Python's
// base64.b64encode writes and base64.b64decode(validate=True) accepts.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace parity::io {

// Appends the base64 text of `bytes` to `out` (no intermediate copy for large arrays).
void base64_append(std::string& out, std::string_view bytes);
std::string base64_encode(std::string_view bytes);
// The decoded bytes, or nothing when `text` is not valid base64 by the rules of Python's
// b64decode(validate=True): a character outside the alphabet, misplaced or missing padding,
// or a length that no encoding produces.
// `consumed`, when given, is called with n as the first n characters of `text` are decoded
// (every few MiB), so that a caller can give their memory back while a large string decodes.
std::optional<std::string> base64_decode(std::string_view text,
                                         const std::function<void(size_t)>& consumed = nullptr);

}  // namespace parity::io
