// .npz files: zip archives of .npy members, as numpy.savez (stored) and numpy.savez_compressed
// (deflated) write them. The reader follows the central directory (with ZIP64 sizes and
// offsets, which numpy.savez forces); the writer stores members uncompressed.
#include <zlib.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "core/limits.h"
#include "io/npy.h"

namespace parity::io {

namespace {

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr uint32_t kZip64EndSig = 0x06064b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr uint16_t kZip64ExtraId = 0x0001;

// Bounds-checked little-endian reads from the archive.
class Reader {
 public:
  explicit Reader(const std::string& b) : b_(b) {}
  uint64_t get(size_t at, int bytes) const {
    if (at > b_.size() || b_.size() - at < static_cast<size_t>(bytes))
      fail(
          "failed to read .npz archive of {} bytes at offset {}: the archive is truncated or "
          "its directory points outside it; the file is corrupt",
          b_.size(), at);
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i)
      v |= static_cast<uint64_t>(static_cast<unsigned char>(b_[at + i])) << (8 * i);
    return v;
  }
  uint16_t u16(size_t at) const { return static_cast<uint16_t>(get(at, 2)); }
  uint32_t u32(size_t at) const { return static_cast<uint32_t>(get(at, 4)); }
  uint64_t u64(size_t at) const { return get(at, 8); }
  std::string_view slice(uint64_t at, uint64_t n) const {
    if (at > b_.size() || b_.size() - at < n) get(b_.size(), 1);  // reports the truncation
    return std::string_view(b_).substr(at, n);
  }
  size_t size() const { return b_.size(); }

 private:
  const std::string& b_;
};

struct Member {
  std::string name;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressed = 0, uncompressed = 0, local_offset = 0;
};

// Where the central directory is and how many entries it has (ZIP64 when the classic record
// cannot hold the numbers).
struct Directory {
  uint64_t offset = 0, count = 0;
};

Directory find_directory(const Reader& r) {
  // The end record is the last 22 bytes plus a comment of up to 65535 bytes.
  if (r.size() < 22) r.get(r.size(), 22);
  size_t lowest = r.size() >= 22 + 65535 ? r.size() - 22 - 65535 : 0;
  for (size_t at = r.size() - 22 + 1; at-- > lowest;) {
    if (r.u32(at) != kEndSig) continue;
    Directory d{r.u32(at + 16), r.u16(at + 10)};
    if ((d.offset == 0xFFFFFFFF || d.count == 0xFFFF) && at >= 20 &&
        r.u32(at - 20) == kZip64LocatorSig) {
      uint64_t z = r.u64(at - 20 + 8);
      if (r.u32(z) != kZip64EndSig)
        fail(
            "failed to read .npz archive with a ZIP64 locator pointing at offset {}: no ZIP64 "
            "end record there; the file is corrupt",
            z);
      d.count = r.u64(z + 32);
      d.offset = r.u64(z + 48);
    }
    return d;
  }
  fail(
      "failed to read .npz archive of {} bytes: no end-of-central-directory record; the file "
      "is not a complete zip archive",
      r.size());
}

std::vector<Member> read_directory(const Reader& r) {
  Directory d = find_directory(r);
  std::vector<Member> members;
  uint64_t at = d.offset;
  for (uint64_t i = 0; i < d.count; ++i) {
    if (r.u32(at) != kCentralSig)
      fail(
          "failed to read .npz central directory entry {} at offset {}: bad signature; the "
          "file is corrupt",
          i, at);
    Member m;
    m.method = r.u16(at + 10);
    m.crc = r.u32(at + 16);
    m.compressed = r.u32(at + 20);
    m.uncompressed = r.u32(at + 24);
    uint16_t name_len = r.u16(at + 28), extra_len = r.u16(at + 30), comment_len = r.u16(at + 32);
    m.local_offset = r.u32(at + 42);
    m.name = std::string(r.slice(at + 46, name_len));
    // ZIP64 extra field: the 64-bit values of the fields set to 0xFFFFFFFF, in this order.
    uint64_t e = at + 46 + name_len, end = e + extra_len;
    while (e + 4 <= end) {
      uint16_t id = r.u16(e), len = r.u16(e + 2);
      if (id == kZip64ExtraId) {
        uint64_t f = e + 4;
        for (uint64_t* field : {&m.uncompressed, &m.compressed, &m.local_offset}) {
          if (*field != 0xFFFFFFFF) continue;
          if (f + 8 > e + 4 + len)
            fail("failed to read .npz member '{}' with a short ZIP64 field: the file is corrupt",
                 m.name);
          *field = r.u64(f);
          f += 8;
        }
      }
      e += 4 + len;
    }
    members.push_back(std::move(m));
    at = end + comment_len;
  }
  return members;
}

// Up to `limit` bytes of the member's inflated start (enough for the .npy header), or less
// when the stream ends first.
std::string inflate_prefix(std::string_view packed, size_t limit) {
  std::string out(limit, '\0');
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return {};
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
  z.avail_in = static_cast<uInt>(std::min<size_t>(packed.size(), 1u << 30));
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(limit);
  while (z.avail_out > 0 && inflate(&z, Z_NO_FLUSH) == Z_OK) {
  }
  out.resize(limit - z.avail_out);
  inflateEnd(&z);
  return out;
}

// The element size a .npy header's descr names ('<f4' -> 4, '|b1' -> 1, '<c16' -> 16), read
// from the start of the member; 1 when the header cannot be read (the decoder reports that).
size_t npy_item_size(std::string_view head) {
  size_t at = head.find("'descr'");
  if (at == std::string_view::npos) return 1;
  at = head.find('\'', at + 7);
  size_t end = at == std::string_view::npos ? at : head.find('\'', at + 1);
  if (end == std::string_view::npos) return 1;
  std::string_view descr = head.substr(at + 1, end - at - 1);
  size_t digits = descr.find_first_of("0123456789");
  if (digits == std::string_view::npos) return 1;
  size_t n = 0;
  for (char c : descr.substr(digits))
    if (c >= '0' && c <= '9' && n < 1000) n = n * 10 + static_cast<size_t>(c - '0');
  return std::max<size_t>(n, 1);
}

// A member is inflated whole, so a decompression bomb (gigabytes of zeros in a few megabytes)
// is refused by the resource limits before anything is allocated: its element count from the
// announced size and the header's element size must be within the elements per tensor, its
// bytes within the memory limit.
void check_member_size(const Member& m, std::string_view packed) {
  const ResourceLimits& limits = active_limits();
  const std::string head = inflate_prefix(packed, std::min<uint64_t>(m.uncompressed, 4096));
  const size_t item = npy_item_size(head);
  // The header ends with its first newline; the data follows.
  const size_t header_end = head.find('\n') == std::string::npos ? 0 : head.find('\n') + 1;
  const uint64_t elements =
      (m.uncompressed - std::min<uint64_t>(m.uncompressed, header_end)) / item;
  if (elements > static_cast<uint64_t>(limits.max_tensor_elements) ||
      m.uncompressed > static_cast<uint64_t>(limits.memory_bytes()))
    fail(
        "failed to inflate .npz member '{}': it announces {} ({} elements of {} bytes) from {} "
        "compressed, above the limits of {} elements per tensor and {} of memory; raise them "
        "with --limit-tensor-elements and --limit-memory if the data is genuine",
        m.name, format_bytes(static_cast<double>(m.uncompressed)), elements, item,
        format_bytes(static_cast<double>(packed.size())), limits.max_tensor_elements,
        format_bytes(static_cast<double>(limits.memory_bytes())));
}

std::string inflate_member(const Member& m, std::string_view packed) {
  // Deflate cannot expand data more than about 1032 times: a larger announced size is a lie
  // that must not turn into a huge allocation.
  if (m.uncompressed / 1032 > packed.size() + 1)
    fail(
        "failed to inflate .npz member '{}' announcing {} bytes from {}: more than deflate can "
        "produce; the file is corrupt",
        m.name, m.uncompressed, packed.size());
  check_member_size(m, packed);
  std::string out(m.uncompressed, '\0');
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK)  // raw deflate, as zip stores it
    fail("failed to inflate .npz member '{}': zlib could not start", m.name);
  // zlib counts in 32 bits: feed and drain in pieces for members past 4 GiB.
  size_t in_done = 0, out_done = 0;
  int rc = Z_OK;
  while (rc == Z_OK) {
    size_t in_chunk = std::min<size_t>(packed.size() - in_done, 1u << 30);
    size_t out_chunk = std::min<size_t>(out.size() - out_done, 1u << 30);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data() + in_done));
    z.avail_in = static_cast<uInt>(in_chunk);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + out_done);
    z.avail_out = static_cast<uInt>(out_chunk);
    rc = inflate(&z, Z_NO_FLUSH);
    in_done += in_chunk - z.avail_in;
    out_done += out_chunk - z.avail_out;
    if (rc == Z_OK && in_chunk - z.avail_in == 0 && out_chunk - z.avail_out == 0) rc = Z_BUF_ERROR;
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END || out_done != out.size())
    fail(
        "failed to inflate .npz member '{}' with {} compressed bytes: the deflate stream is "
        "damaged or shorter than the {} bytes the directory announces",
        m.name, packed.size(), m.uncompressed);
  return out;
}

uint32_t crc_of(std::string_view bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (size_t at = 0; at < bytes.size(); at += 1u << 30) {
    size_t n = std::min<size_t>(bytes.size() - at, 1u << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data() + at), static_cast<uInt>(n));
  }
  return static_cast<uint32_t>(crc);
}

void put(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

}  // namespace

bool is_npz(const std::string& bytes) {
  return bytes.size() >= 4 && Reader(bytes).u32(0) == kLocalSig;
}

std::vector<std::pair<std::string, Tensor>> npz_decode(const std::string& bytes) {
  Reader r(bytes);
  std::vector<std::pair<std::string, Tensor>> arrays;
  for (const Member& m : read_directory(r)) {
    if (r.u32(m.local_offset) != kLocalSig)
      fail(
          "failed to read .npz member '{}' at offset {}: bad local header signature; the file "
          "is corrupt",
          m.name, m.local_offset);
    uint64_t data = m.local_offset + 30 + r.u16(m.local_offset + 26) + r.u16(m.local_offset + 28);
    std::string_view packed = r.slice(data, m.compressed);
    std::string content;
    if (m.method == 0) {
      if (m.compressed != m.uncompressed)
        fail(
            "failed to read stored .npz member '{}' with sizes {} and {}: a stored member's "
            "sizes must be equal; the file is corrupt",
            m.name, m.compressed, m.uncompressed);
      content = std::string(packed);
    } else if (m.method == 8) {
      content = inflate_member(m, packed);
    } else {
      fail(
          "failed to read .npz member '{}' with compression method {}: unsupported; members "
          "must be stored (0) or deflated (8)",
          m.name, m.method);
    }
    if (crc_of(content) != m.crc)
      fail("failed to read .npz member '{}': its CRC-32 does not match; the file is corrupt",
           m.name);
    std::string name = m.name;
    if (name.size() > 4 && name.ends_with(".npy")) name.resize(name.size() - 4);
    try {
      arrays.emplace_back(std::move(name), npy_decode(content));
    } catch (const Error& e) {
      fail("failed to read .npz member '{}': {}", m.name, e.what());
    }
  }
  return arrays;
}

std::string npz_encode(const std::vector<std::pair<std::string, Tensor>>& arrays) {
  std::string out, directory;
  for (const auto& [name, tensor] : arrays) {
    std::string file = name + ".npy";
    std::string content = npy_encode(tensor);
    if (content.size() >= 0xFFFFFFFF || out.size() >= 0xFFFFFFFF)
      fail(
          "failed to write .npz member '{}' of {} bytes: archives past 4 GiB need ZIP64, which "
          "this writer does not produce; save large arrays as separate .npy files",
          file, content.size());
    uint32_t crc = crc_of(content);
    uint64_t offset = out.size();
    // Local header: version 2.0, no flags, stored, DOS time 1980-01-01 00:00 (reproducible).
    put(out, kLocalSig, 4);
    put(out, 20, 2);
    put(out, 0, 2);
    put(out, 0, 2);
    put(out, 0, 2);
    put(out, 0x21, 2);
    put(out, crc, 4);
    put(out, content.size(), 4);
    put(out, content.size(), 4);
    put(out, file.size(), 2);
    put(out, 0, 2);
    out += file;
    out += content;
    put(directory, kCentralSig, 4);
    put(directory, 20, 2);  // made by
    put(directory, 20, 2);  // needed
    put(directory, 0, 2);
    put(directory, 0, 2);
    put(directory, 0, 2);
    put(directory, 0x21, 2);
    put(directory, crc, 4);
    put(directory, content.size(), 4);
    put(directory, content.size(), 4);
    put(directory, file.size(), 2);
    put(directory, 0, 2);              // extra
    put(directory, 0, 2);              // comment
    put(directory, 0, 2);              // disk
    put(directory, 0, 2);              // internal attributes
    put(directory, 0x81A4u << 16, 4);  // external: a regular file, rw-r--r--
    put(directory, offset, 4);
    directory += file;
  }
  if (arrays.size() > 0xFFFF || out.size() >= 0xFFFFFFFF)
    fail(
        "failed to write .npz archive of {} arrays and {} bytes: past 65535 members or 4 GiB "
        "ZIP64 is needed, which this writer does not produce; split the arrays",
        arrays.size(), out.size());
  uint64_t dir_offset = out.size();
  out += directory;
  put(out, kEndSig, 4);
  put(out, 0, 2);
  put(out, 0, 2);
  put(out, arrays.size(), 2);
  put(out, arrays.size(), 2);
  put(out, directory.size(), 4);
  put(out, dir_offset, 4);
  put(out, 0, 2);
  return out;
}

}  // namespace parity::io
