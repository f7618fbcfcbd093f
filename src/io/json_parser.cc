#include "io/json_parser.h"
#include "io/utf8.h"

#include <optional>

#include <charconv>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "core/error.h"
#include "core/large_buffer.h"
#include "io/base64.h"

namespace parity::io {

namespace {

using Json = nlohmann::ordered_json;

// Deeper nesting than any Polygraphy file has; the limit keeps hostile input off the stack.
constexpr int kMaxDepth = 512;

class Parser {
 public:
  Parser(std::string_view text, DecodedPayloads* payloads) : s_(text), payloads_(payloads) {}

  Json document() {
    Json v = value(0);
    skip_space();
    if (i_ != s_.size()) error("the end of the document");
    return v;
  }

 private:
  [[noreturn]] void error(const char* wanted) const {
    size_t line = 1, column = 1;
    for (size_t k = 0; k < i_ && k < s_.size(); ++k) {
      if (s_[k] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string found = i_ < s_.size() ? fmt::format("'{}'", s_.substr(i_, 1)) : "the end";
    fail("failed to parse JSON at line {}, column {} with {}: expected {}", line, column, found,
         wanted);
  }

  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t'))
      ++i_;
  }

  bool accept(char c) {
    skip_space();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }

  bool accept_word(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }

  Json value(int depth) {
    if (depth > kMaxDepth) error("less nesting (at most 512 levels)");
    skip_space();
    if (i_ >= s_.size()) error("a value");
    char c = s_[i_];
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') return string();
    if (accept_word("true")) return true;
    if (accept_word("false")) return false;
    if (accept_word("null")) return nullptr;
    if (accept_word("NaN")) return NAN;
    if (accept_word("Infinity")) return INFINITY;
    if (accept_word("-Infinity")) return -INFINITY;
    return number();
  }

  Json object(int depth) {
    ++i_;  // '{'
    Json obj = Json::object();
    if (accept('}')) return obj;
    do {
      skip_space();
      if (i_ >= s_.size() || s_[i_] != '"') error("a key string");
      std::string key = string();
      if (!accept(':')) error("':'");
      if (payloads_ && key == "array" && decoded_payload(obj[key])) continue;
      obj[std::move(key)] = value(depth + 1);  // a repeated key keeps its last value
    } while (accept(','));
    if (!accept('}')) error("',' or '}'");
    return obj;
  }

  Json array(int depth) {
    ++i_;  // '['
    Json arr = Json::array();
    if (accept(']')) return arr;
    do {
      arr.push_back(value(depth + 1));
    } while (accept(','));
    if (!accept(']')) error("',' or ']'");
    return arr;
  }

  // A string value that is whole valid base64 is decoded into a new buffer of payloads_, and
  // `slot` holds its index; anything else (escapes, latin-1 text of old files) is left to the
  // string parser.
  bool decoded_payload(Json& slot) {
    skip_space();
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    const char* begin = s_.data() + i_ + 1;
    const size_t left = s_.size() - i_ - 1;
    const void* quote = std::memchr(begin, '"', left);
    if (!quote) return false;
    const std::string_view text(begin,
                                static_cast<size_t>(static_cast<const char*>(quote) - begin));
    // Releasing the text as it decodes keeps a load's peak near the file's size.
    size_t released = 0;
    std::function<void(size_t)> release;
    if (payloads_->release_decoded_text)
      release = [&](size_t n) {
        release_pages(text.data() + released, n - released);
        released = n;
      };
    std::optional<std::string> bytes = base64_decode(text, release);
    if (!bytes && released > 0)  // too late for the string parser: that text is gone
      error("a base64 string under \"array\" that is base64 to its end");
    if (!bytes) return false;
    if (release) release(text.size());
    const uint64_t index = payloads_->buffers.size();
    payloads_->buffers.push_back(std::make_shared<std::string>(std::move(*bytes)));
    Json::binary_t::container_type id(8);
    for (int b = 0; b < 8; ++b) id[static_cast<size_t>(b)] = static_cast<uint8_t>(index >> (8 * b));
    slot = Json::binary(std::move(id), DecodedPayloads::kSubtype);
    i_ += text.size() + 2;  // both quotes
    return true;
  }

  uint32_t hex4() {
    if (s_.size() - i_ < 4) error("four hex digits");
    uint32_t v = 0;
    auto [end, ec] = std::from_chars(s_.data() + i_, s_.data() + i_ + 4, v, 16);
    if (ec != std::errc() || end != s_.data() + i_ + 4) error("four hex digits");
    i_ += 4;
    return v;
  }

  std::string string() {
    ++i_;  // opening quote
    std::string out;
    for (;;) {
      // Copy the run up to the next quote or backslash in one piece (base64 has neither).
      const char* start = s_.data() + i_;
      const char* end = s_.data() + s_.size();
      const char* p = start;
      while (p < end && *p != '"' && *p != '\\' && static_cast<unsigned char>(*p) >= 0x20) ++p;
      out.append(start, static_cast<size_t>(p - start));
      i_ += static_cast<size_t>(p - start);
      if (i_ < s_.size() && static_cast<unsigned char>(s_[i_]) < 0x20)
        error("no raw control character");
      if (i_ >= s_.size()) error("the closing '\"' of a string");
      if (s_[i_++] == '"') return out;
      if (i_ >= s_.size()) error("an escape");
      char e = s_[i_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          uint32_t cp = hex4();
          // A surrogate pair is one character; a lone surrogate (which Python can write) is
          // kept as the code point's UTF-8-style bytes, as Python keeps it in a str.
          if (cp >= 0xD800 && cp < 0xDC00 && s_.substr(i_, 2) == "\\u") {
            size_t save = i_;
            i_ += 2;
            uint32_t low = hex4();
            if (low >= 0xDC00 && low < 0xE000)
              cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            else
              i_ = save;
          }
          append_utf8(out, cp);
          break;
        }
        default:
          --i_;
          error("a valid escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
      }
    }
  }

  Json number() {
    size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    auto digits = [&] {
      size_t from = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      return i_ - from;
    };
    size_t int_digits = digits();
    if (int_digits == 0) error("a value");
    if (int_digits > 1 && s_[i_ - int_digits] == '0') error("no leading zero");
    bool is_float = false;
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      is_float = true;
      if (digits() == 0) error("digits after '.'");
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      is_float = true;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (digits() == 0) error("exponent digits");
    }
    const char* first = s_.data() + start;
    const char* last = s_.data() + i_;
    if (!is_float) {
      int64_t v = 0;
      auto [end, ec] = std::from_chars(first, last, v);
      if (ec == std::errc() && end == last) return v;
    }
    double d = 0;
    auto [end, ec] = std::from_chars(first, last, d);
    if (ec == std::errc::result_out_of_range) {
      // Python reads 1e999 as inf and 1e-999 as 0.0.
      std::string_view text(first, static_cast<size_t>(last - first));
      size_t e = text.find_first_of("eE");
      bool tiny = e != std::string_view::npos && text[e + 1] == '-';
      bool negative = *first == '-';
      d = tiny ? (negative ? -0.0 : 0.0) : (negative ? -INFINITY : INFINITY);
    } else if (ec != std::errc() || end != last) {
      error("a number");
    }
    return d;
  }

  std::string_view s_;
  DecodedPayloads* payloads_;
  size_t i_ = 0;
};

}  // namespace

nlohmann::ordered_json parse_json(std::string_view text, DecodedPayloads* payloads) {
  return Parser(text, payloads).document();
}

}  // namespace parity::io
