#include "onnx/external_data.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <onnx/onnx_pb.h>

#include "core/error.h"
#include "core/file_util.h"

namespace fs = std::filesystem;

namespace parity::onnx_io {

MappedFile::~MappedFile() {
  if (data) munmap(data, size);
}

namespace {

// True when `inner` is `outer` or lies below it (both already canonical).
bool is_within(const fs::path& outer, const fs::path& inner) {
  auto [o, i] = std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
  return o == outer.end();
}

int64_t parse_size(const std::string& text, const std::string& key, const std::string& tensor) {
  int64_t v = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0)
    fail(
        "failed to load external data of tensor '{}' with {} '{}': the value must be a "
        "non-negative integer",
        tensor, key, text);
  return v;
}

// Bytes an element's address must be a multiple of for the tensor to borrow the mapping.
size_t element_alignment(DataType dtype) {
  size_t bytes = dtype_bits(dtype) / 8;
  return bytes == 0 ? 1 : bytes;
}

}  // namespace

Tensor zero_tensor(DataType dtype, const Shape& shape) {
  constexpr size_t kMapAbove = size_t{1} << 20;
  const size_t bytes = dtype_storage_bytes(dtype, static_cast<size_t>(shape_numel(shape)));
  if (dtype == DataType::kString || bytes < kMapAbove) return Tensor(dtype, shape);
  void* p = mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    fail("failed to reserve {} bytes of zeros for a tensor of shape {}: {}", bytes,
         shape_str(shape), std::strerror(errno));
  auto zeros = std::make_shared<MappedFile>();
  zeros->path = "(zeros)";
  zeros->data = p;
  zeros->size = bytes;
  return Tensor::borrow(dtype, shape, p, zeros);
}

std::shared_ptr<MappedFile> ExternalDataStore::map(const std::string& location,
                                                   const std::string& tensor) {
  fs::path rel(location);
  if (location.empty())
    fail(
        "failed to load external data of tensor '{}' with an empty location: the location "
        "must name a file in the model's folder",
        tensor);
  if (location.find('\0') != std::string::npos) {
    // Printed as it is, the NUL would cut the message (and the path) short.
    std::string shown;
    for (char c : location) shown += c == '\0' ? std::string("\\0") : std::string(1, c);
    fail(
        "failed to load external data of tensor '{}' with location '{}': the location "
        "contains a NUL character; it must be a plain relative file name",
        tensor, shown);
  }
  if (rel.is_absolute())
    fail(
        "failed to load external data of tensor '{}' with location '{}': absolute locations "
        "are refused; the location must be relative to the model's folder '{}'",
        tensor, location, dir_);
  for (const auto& part : rel)
    if (part == "..")
      fail(
          "failed to load external data of tensor '{}' with location '{}': locations with "
          "'..' are refused; the file must be inside the model's folder '{}'",
          tensor, location, dir_);

  std::error_code ec;
  fs::path base = fs::weakly_canonical(fs::absolute(dir_.empty() ? "." : dir_), ec);
  fs::path full = fs::path(dir_.empty() ? "." : dir_) / rel;
  if (!fs::exists(full, ec))
    fail(
        "failed to load external data of tensor '{}' with location '{}': the file '{}' does "
        "not exist; external data files must sit in the model's folder or in "
        "--external-data-dir",
        tensor, location, full.string());
  fs::path resolved = fs::canonical(full, ec);
  if (ec || !is_within(base, resolved))
    fail(
        "failed to load external data of tensor '{}' with location '{}': it resolves to '{}', "
        "outside the folder '{}'; external data must stay inside the model's folder",
        tensor, location, ec ? full.string() : resolved.string(), base.string());

  const std::string key = resolved.string();
  if (auto it = files_.find(key); it != files_.end()) return it->second;

  // Opened without blocking and checked to be a regular file: a FIFO would block for ever.
  int64_t size = 0;
  int fd = open_regular_file(
      key,
      fmt::format("load external data of tensor '{}' with location '{}' from '{}'", tensor,
                  location, key),
      &size);
  auto file = std::make_shared<MappedFile>();
  file->path = key;
  file->size = static_cast<size_t>(size);
  if (file->size > 0) {
    // Read-only and private: the file is never written, and a mapping outlives the fd.
    void* p = mmap(nullptr, file->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      fail("failed to map external data file '{}' of tensor '{}': {}", key, tensor,
           std::strerror(err));
    }
    file->data = p;
  }
  ::close(fd);
  files_.emplace(key, file);
  return file;
}

Tensor ExternalDataStore::load(const ::onnx::TensorProto& proto, DataType dtype,
                               const Shape& shape) {
  const std::string& name = proto.name();
  if (dtype == DataType::kString)
    fail(
        "failed to load tensor '{}' with external data of type string: string tensors must "
        "be stored inside the model",
        name);
  std::string location, offset_text, length_text;
  for (const auto& kv : proto.external_data()) {
    if (kv.key() == "location")
      location = kv.value();
    else if (kv.key() == "offset")
      offset_text = kv.value();
    else if (kv.key() == "length")
      length_text = kv.value();
  }
  auto file = map(location, name);
  const size_t needed = dtype_storage_bytes(dtype, static_cast<size_t>(shape_numel(shape)));
  const size_t offset = offset_text.empty() ? 0 : parse_size(offset_text, "offset", name);
  if (offset > file->size)
    fail(
        "failed to load external data of tensor '{}' with offset {}: the file '{}' holds only "
        "{} bytes",
        name, offset, file->path, file->size);
  const size_t length =
      length_text.empty() ? file->size - offset : parse_size(length_text, "length", name);
  if (offset + length > file->size)
    fail(
        "failed to load external data of tensor '{}' with offset {} and length {}: the file "
        "'{}' holds only {} bytes (truncated?)",
        name, offset, length, file->path, file->size);
  if (length < needed || (!length_text.empty() && length != needed))
    fail(
        "failed to load external data of tensor '{}' with length {}: shape {} of {} needs "
        "{} bytes",
        name, length, shape_str(shape), dtype_name(dtype), needed);

  auto* bytes = static_cast<uint8_t*>(file->data) + offset;
  if (needed == 0) return Tensor(dtype, shape);
  if (reinterpret_cast<uintptr_t>(bytes) % element_alignment(dtype) == 0)
    return Tensor::borrow(dtype, shape, bytes, file);
  Tensor copy(dtype, shape);  // misaligned for the element type: copy once
  std::memcpy(copy.raw_data(), bytes, needed);
  return copy;
}

}  // namespace parity::onnx_io
