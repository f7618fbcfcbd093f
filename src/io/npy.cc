// .npy files: the header is a Python dict literal ({'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }) after a magic string, version and length; the data follows, C order.
//
// Types NumPy does not have (bfloat16, float8, int4/uint4) are refused when writing: NumPy
// without ml_dtypes cannot load them, and ml_dtypes itself saves them as an anonymous '<V2' or
// '|V1' that says nothing about the type. Callers that must save such tensors cast them to
// float32 (exact for all of them) first.
#include "io/npy.h"
#include "io/utf8.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "io/json.h"

namespace parity::io {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr size_t kAlign = 64;
// NumPy pads the header so that an array's first axis can grow to this many digits in place.
constexpr size_t kGrowthAxisMaxDigits = 21;

// ----- Unicode between NumPy's UTF-32 ('<U') and our UTF-8 strings -----

std::u32string utf8_to_utf32(const std::string& s) {
  std::u32string out;
  size_t i = 0;
  auto bad = [&]() -> void {
    fail(
        "failed to encode string {:?} as .npy text: byte {} is not valid UTF-8; strings must "
        "be UTF-8",
        s, i);
  };
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    int len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > s.size()) bad();
    uint32_t cp = len == 1 ? c : c & (0x7F >> len);
    for (int k = 1; k < len; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) bad();
      cp = (cp << 6) | (cc & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000)) bad();
    out += static_cast<char32_t>(cp);
    i += len;
  }
  return out;
}

// ----- writing -----

std::string header_dict(const std::string& descr, const Shape& shape) {
  std::string shape_text = shape_str(shape);
  std::string dict =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, shape_text);
  if (!shape.empty()) dict.append(kGrowthAxisMaxDigits - std::to_string(shape[0]).size(), ' ');
  return dict;
}

// Magic, version and length, then the dict padded with spaces and a newline so that the data
// starts at a multiple of 64, exactly as numpy.lib.format writes it.
std::string wrap_header(const std::string& dict) {
  size_t hlen = dict.size() + 1;
  // Version 1.0 stores the length in 16 bits; longer headers need version 2.0.
  size_t pad = kAlign - (kMagicLen + 4 + hlen) % kAlign;
  bool v1 = hlen + pad <= 65535;
  if (!v1) pad = kAlign - (kMagicLen + 6 + hlen) % kAlign;
  size_t total = hlen + pad;
  std::string out(kMagic, kMagicLen);
  out += static_cast<char>(v1 ? 1 : 2);
  out += '\0';
  for (size_t i = 0; i < (v1 ? 2u : 4u); ++i) out += static_cast<char>((total >> (8 * i)) & 0xFF);
  out += dict;
  out.append(pad, ' ');
  out += '\n';
  return out;
}

std::string encode_strings(const Tensor& t) {
  const auto* s = t.data<std::string>();
  auto n = static_cast<size_t>(t.numel());
  std::vector<std::u32string> wide(n);
  size_t width = 1;  // NumPy's narrowest unicode type is '<U1'
  for (size_t i = 0; i < n; ++i) {
    wide[i] = utf8_to_utf32(s[i]);
    width = std::max(width, wide[i].size());
  }
  std::string out = wrap_header(header_dict(fmt::format("<U{}", width), t.shape()));
  size_t start = out.size();
  out.resize(start + n * width * 4, '\0');
  char* dst = out.data() + start;
  for (size_t i = 0; i < n; ++i)
    for (size_t k = 0; k < wide[i].size(); ++k) {
      auto cp = static_cast<uint32_t>(wide[i][k]);
      for (int b = 0; b < 4; ++b) dst[(i * width + k) * 4 + b] = static_cast<char>(cp >> (8 * b));
    }
  return out;
}

// ----- reading -----

// A cursor over the header's Python literal.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : s_(text) {}

  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n')) ++i_;
  }
  bool accept(char c) {
    skip_space();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!accept(c)) error(fmt::format("'{}'", c));
  }
  std::string string() {
    skip_space();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) error("a quoted string");
    char q = s_[i_++];
    size_t end = s_.find(q, i_);
    if (end == std::string_view::npos) error("the end of a string");
    std::string r(s_.substr(i_, end - i_));
    i_ = end + 1;
    return r;
  }
  bool boolean() {
    skip_space();
    for (auto [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      size_t n = std::strlen(word);
      if (s_.substr(i_, n) == word) {
        i_ += n;
        return value;
      }
    }
    error("True or False");
  }
  Shape tuple() {
    expect('(');
    Shape shape;
    while (!accept(')')) {
      skip_space();
      size_t start = i_;
      int64_t v = 0;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
        int digit = s_[i_++] - '0';
        if (v > (std::numeric_limits<int64_t>::max() - digit) / 10)
          error("a dimension that fits in 64 bits");
        v = v * 10 + digit;
      }
      if (i_ == start) error("a dimension (a whole number of 0 or more)");
      if (i_ < s_.size() && s_[i_] == 'L') ++i_;  // Python 2 long
      shape.push_back(v);
      if (!accept(',')) {
        expect(')');
        break;
      }
    }
    return shape;
  }
  [[noreturn]] void error(const std::string& wanted) const {
    fail(
        "failed to read .npy header {:?} at offset {}: expected {}; a header is a dict with "
        "'descr', 'fortran_order' and 'shape'",
        std::string(s_), i_, wanted);
  }

 private:
  std::string_view s_;
  size_t i_ = 0;
};

struct Header {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
  size_t data_offset = 0;
};

uint32_t read_le(const std::string& b, size_t at, int bytes) {
  uint32_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= static_cast<uint32_t>(static_cast<unsigned char>(b[at + i])) << (8 * i);
  return v;
}

Header parse_header(const std::string& bytes) {
  if (bytes.size() < kMagicLen + 4 || bytes.compare(0, kMagicLen, kMagic, kMagicLen) != 0)
    fail(
        "failed to read .npy data of {} bytes: it does not start with the magic string "
        "\\x93NUMPY; expected a file written by numpy.save",
        bytes.size());
  int major = static_cast<unsigned char>(bytes[6]);
  int minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    fail(
        "failed to read .npy data with format version {}.{}: unsupported version; versions "
        "1.0, 2.0 and 3.0 are read",
        major, minor);
  int len_bytes = major == 1 ? 2 : 4;
  size_t prefix = kMagicLen + 2 + len_bytes;
  if (bytes.size() < prefix)
    fail(
        "failed to read .npy data of {} bytes: truncated in the header length; the file is "
        "incomplete",
        bytes.size());
  size_t hlen = read_le(bytes, kMagicLen + 2, len_bytes);
  if (bytes.size() - prefix < hlen)
    fail(
        "failed to read .npy header of {} bytes from data of {} bytes: truncated; the file is "
        "incomplete",
        hlen, bytes.size());
  // Version 3.0 headers are UTF-8, which the parser handles byte-wise like latin-1.
  HeaderParser p(std::string_view(bytes).substr(prefix, hlen));
  Header h;
  bool has_descr = false, has_order = false, has_shape = false;
  p.expect('{');
  while (!p.accept('}')) {
    std::string key = p.string();
    p.expect(':');
    if (key == "descr") {
      p.skip_space();
      if (p.accept('['))
        fail(
            "failed to read .npy data with a structured dtype: record arrays are not "
            "supported; save plain numeric, bool or unicode arrays");
      h.descr = p.string();
      has_descr = true;
    } else if (key == "fortran_order") {
      h.fortran_order = p.boolean();
      has_order = true;
    } else if (key == "shape") {
      h.shape = p.tuple();
      has_shape = true;
    } else {
      p.error("one of 'descr', 'fortran_order', 'shape'");
    }
    if (!p.accept(',')) {
      p.expect('}');
      break;
    }
  }
  if (!has_descr || !has_order || !has_shape)
    p.error("all of 'descr', 'fortran_order' and 'shape'");
  h.data_offset = prefix + hlen;
  return h;
}

// Reverses the bytes of each element of `size` bytes (big-endian data).
void byteswap(char* data, size_t count, size_t size) {
  for (size_t i = 0; i < count; ++i) std::reverse(data + i * size, data + (i + 1) * size);
}

// Column-major data to row-major: element (i0..in) sits at the column-major offset.
void fortran_to_c(const char* src, char* dst, const Shape& shape, size_t elem) {
  size_t rank = shape.size();
  auto n = static_cast<size_t>(shape_numel(shape));
  std::vector<int64_t> index(rank, 0);
  std::vector<size_t> fstride(rank, 1);
  for (size_t d = 1; d < rank; ++d) fstride[d] = fstride[d - 1] * static_cast<size_t>(shape[d - 1]);
  for (size_t i = 0; i < n; ++i) {
    size_t off = 0;
    for (size_t d = 0; d < rank; ++d) off += static_cast<size_t>(index[d]) * fstride[d];
    std::memcpy(dst + i * elem, src + off * elem, elem);
    for (size_t d = rank; d-- > 0;) {  // next row-major index
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

// The element count, checked against the bytes available so a hostile shape cannot make us
// allocate more than the file holds.
size_t checked_numel(const Header& h, size_t elem_size, size_t available) {
  size_t n = 1;
  for (int64_t d : h.shape) {
    if (d == 0) return 0;
    auto ud = static_cast<size_t>(d);
    if (n > available / ud)
      n = available + 1;  // saturate: reported below
    else
      n *= ud;
  }
  if (elem_size > 0 && n > available / elem_size)
    fail(
        "failed to read .npy array of shape {} and dtype '{}': the data holds {} bytes, fewer "
        "than the shape needs; the file is truncated",
        shape_str(h.shape), h.descr, available);
  return n;
}

Tensor decode_strings(const std::string& bytes, const Header& h, char order, char kind,
                      size_t width) {
  size_t char_size = kind == 'U' ? 4 : 1;
  size_t elem = width * char_size;
  size_t available = bytes.size() - h.data_offset;
  size_t n = checked_numel(h, elem, available);
  std::string raw = bytes.substr(h.data_offset, n * elem);
  if (h.fortran_order && n > 0) {
    std::string c(raw.size(), '\0');
    fortran_to_c(raw.data(), c.data(), h.shape, elem);
    raw.swap(c);
  }
  if (order == '>' && char_size == 4) byteswap(raw.data(), n * width, 4);
  Tensor t(DataType::kString, h.shape);
  auto* out = t.data<std::string>();
  for (size_t i = 0; i < n; ++i) {
    std::string& s = out[i];
    if (char_size == 1) {
      s.assign(raw.data() + i * elem, width);  // bytes ('S') are kept as they are
    } else {
      for (size_t k = 0; k < width; ++k) {
        uint32_t cp = read_le(raw, i * elem + k * 4, 4);
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000))
          fail(
              "failed to read .npy unicode array element {} with code point {:#x}: not a "
              "Unicode scalar value; text must be UTF-32",
              i, cp);
        append_utf8(s, cp);
      }
    }
    // NumPy strips trailing NULs from fixed-width strings.
    s.erase(s.find_last_not_of('\0') == std::string::npos ? 0 : s.find_last_not_of('\0') + 1);
  }
  return t;
}

}  // namespace

std::string npy_encode(const Tensor& t) {
  if (!t.defined())
    fail(
        "failed to encode a tensor as .npy with dtype undefined: the tensor is empty; pass a "
        "tensor with data");
  if (t.dtype() == DataType::kString) return encode_strings(t);
  auto descr = dtype_numpy_descr(t.dtype());
  if (!descr)
    fail(
        "failed to encode a tensor as .npy with dtype {}: NumPy has no {} type, so no .npy "
        "reader could load it; cast it to float32 (exact for bfloat16 and float8) or to "
        "int8/uint8 (for int4/uint4) first",
        dtype_name(t.dtype()), dtype_name(t.dtype()));
  std::string out = wrap_header(header_dict(*descr, t.shape()));
  out.append(static_cast<const char*>(t.raw_data()), t.nbytes());
  return out;
}

Tensor npy_decode(const std::string& bytes) {
  Header h = parse_header(bytes);
  std::string_view d = h.descr;
  char order = '=';
  if (!d.empty() && (d[0] == '<' || d[0] == '>' || d[0] == '=' || d[0] == '|')) {
    order = d[0];
    d.remove_prefix(1);
  }
  if (!d.empty() && (d[0] == 'U' || d[0] == 'S')) {
    size_t width = 0;
    for (char c : d.substr(1)) {
      if (c < '0' || c > '9' || width > 100000000) {
        width = 0;
        break;
      }
      width = width * 10 + static_cast<size_t>(c - '0');
    }
    if (width == 0)
      fail(
          "failed to read .npy string array with dtype '{}': the width must be a positive "
          "whole number",
          h.descr);
    return decode_strings(bytes, h, order, d[0], width);
  }
  std::string little(1, '<');  // the byte order was taken off above
  little += d;
  auto dtype = dtype_from_numpy_descr(little);
  if (!dtype)
    fail(
        "failed to read .npy array with dtype '{}': unsupported dtype; supported are bool, "
        "int8-64, uint8-64, float16/32/64, complex64/128 and unicode ('<U')",
        h.descr);
  size_t elem = dtype_storage_bytes(*dtype, 1);
  size_t available = bytes.size() - h.data_offset;
  size_t n = checked_numel(h, elem, available);
  Tensor t(*dtype, h.shape);
  const char* src = bytes.data() + h.data_offset;
  auto* dst = static_cast<char*>(t.raw_data());
  if (n > 0) {
    if (h.fortran_order)
      fortran_to_c(src, dst, h.shape, elem);
    else
      std::memcpy(dst, src, n * elem);
  }
  if (order == '>' && elem > 1) {
    // Complex numbers are two floats, each swapped on its own.
    bool complex = *dtype == DataType::kComplex64 || *dtype == DataType::kComplex128;
    size_t part = complex ? elem / 2 : elem;
    byteswap(dst, n * elem / part, part);
  }
  if (*dtype == DataType::kBool)
    for (size_t i = 0; i < n; ++i) dst[i] = dst[i] != 0;  // a bool is 0 or 1
  return t;
}

Tensor npy_decode_in_place(std::shared_ptr<std::string> bytes) {
  const Header h = parse_header(*bytes);
  std::string_view d = h.descr;
  if (h.fortran_order || d.size() < 2 || !(d[0] == '<' || d[0] == '|')) return npy_decode(*bytes);
  const auto dtype = dtype_from_numpy_descr(std::string("<") += d.substr(1));
  if (!dtype || *dtype == DataType::kString) return npy_decode(*bytes);
  const size_t elem = dtype_storage_bytes(*dtype, 1);
  if (elem == 0) return npy_decode(*bytes);
  const size_t n = checked_numel(h, elem, bytes->size() - h.data_offset);
  char* data = bytes->data() + h.data_offset;
  if (reinterpret_cast<uintptr_t>(data) % std::min<size_t>(elem, alignof(std::max_align_t)) != 0)
    return npy_decode(*bytes);  // a view must be aligned for its element type
  if (*dtype == DataType::kBool)
    for (size_t i = 0; i < n; ++i) data[i] = data[i] != 0;  // a bool is 0 or 1
  return Tensor::borrow(*dtype, h.shape, data, std::move(bytes));
}

void save_npy(const std::string& path, const Tensor& t) { write_file(path, npy_encode(t)); }

Tensor load_npy(const std::string& path) {
  std::string bytes = read_file(path);
  try {
    return npy_decode(bytes);
  } catch (const Error& e) {
    fail("failed to load {}: {}", path, e.what());
  }
}

}  // namespace parity::io
