#include "core/tensor.h"

#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "core/checked_math.h"
#include "core/limits.h"

namespace parity {

int64_t shape_numel(const Shape& shape) { return checked_numel(shape, "a tensor"); }

std::string shape_str(const Shape& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

namespace {

constexpr size_t kAlignment = 64;

// Owned storage: aligned bytes, or constructed std::string objects for string tensors.
std::shared_ptr<const void> allocate(DataType dtype, size_t numel, size_t bytes, void** data) {
  if (dtype == DataType::kString) {
    auto* strings = new std::string[numel > 0 ? numel : 1];
    *data = strings;
    return std::shared_ptr<const void>(
        strings, [](const void* p) { delete[] static_cast<const std::string*>(p); });
  }
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0) rounded = kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (!p) fail("failed to allocate {} bytes for a tensor: out of memory", bytes);
  std::memset(p, 0, rounded);
  *data = p;
  return std::shared_ptr<const void>(p, [](const void* q) { std::free(const_cast<void*>(q)); });
}

}  // namespace

Tensor::Tensor(DataType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  size_t bytes = check_tensor_allocation(dtype_, shape_);
  storage_ = allocate(dtype_, static_cast<size_t>(numel()), bytes, &data_);
}

Tensor Tensor::borrow(DataType dtype, Shape shape, void* data,
                      std::shared_ptr<const void> keep_alive) {
  // The buffer exists already, so no limit applies; the shape must still describe it.
  for (int64_t d : shape)
    if (d < 0)
      fail("failed to create a tensor of shape {}: every dimension must be 0 or more",
           shape_str(shape));
  checked_numel(shape, fmt::format("a {} tensor", dtype_name(dtype)));
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.data_ = data;
  t.storage_ = std::move(keep_alive);
  return t;
}

Tensor Tensor::clone() const {
  if (!defined()) return {};
  Tensor t(dtype_, shape_);
  if (dtype_ == DataType::kString) {
    const auto* src = static_cast<const std::string*>(data_);
    auto* dst = static_cast<std::string*>(t.data_);
    for (int64_t i = 0; i < numel(); ++i) dst[i] = src[i];
  } else if (nbytes() > 0) {
    std::memcpy(t.data_, data_, nbytes());
  }
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  if (shape_numel(shape) != numel())
    fail("failed to reshape a tensor of shape {} to {}: the element counts must be equal",
         shape_str(shape_), shape_str(shape));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

bool Tensor::equals(const Tensor& o) const {
  if (dtype_ != o.dtype_ || shape_ != o.shape_) return false;
  if (dtype_ == DataType::kString) {
    const auto* a = static_cast<const std::string*>(data_);
    const auto* b = static_cast<const std::string*>(o.data_);
    for (int64_t i = 0; i < numel(); ++i)
      if (a[i] != b[i]) return false;
    return true;
  }
  return nbytes() == 0 || std::memcmp(data_, o.data_, nbytes()) == 0;
}

void Tensor::check_type(DataType requested) const {
  if (requested != dtype_)
    throw InternalError(fmt::format("internal error: a {} tensor was read as {}",
                                    dtype_name(dtype_), dtype_name(requested)));
}

void TensorMap::set(const std::string& name, Tensor t) {
  if (Tensor* existing = find(name)) {
    *existing = std::move(t);
    return;
  }
  index_.emplace(name, entries_.size());
  entries_.emplace_back(name, std::move(t));
}

const Tensor* TensorMap::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

Tensor* TensorMap::find(const std::string& name) {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

const Tensor& TensorMap::at(const std::string& name) const {
  if (const Tensor* t = find(name)) return *t;
  fail("failed to find tensor '{}': it is not among [{}]", name, fmt::join(names(), ", "));
}

bool TensorMap::erase(const std::string& name) {
  auto it = index_.find(name);
  if (it == index_.end()) return false;
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(it->second));
  index_.clear();
  for (size_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].first, i);
  return true;
}

std::vector<std::string> TensorMap::names() const {
  std::vector<std::string> r;
  r.reserve(entries_.size());
  for (const auto& e : entries_) r.push_back(e.first);
  return r;
}

}  // namespace parity
