// Tensor: an element type, a shape and a contiguous row-major buffer. The buffer is either
// owned (64-byte aligned, zero-filled) or borrowed from someone else (a mapped file, a NumPy
// array, an ONNX Runtime value), in which case `keep_alive` holds whatever keeps it valid.
// Copies of a Tensor share the buffer; clone() makes a deep copy.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "core/float_types.h"

namespace parity {

using Shape = std::vector<int64_t>;

// Number of elements; 1 for a scalar (rank 0).
int64_t shape_numel(const Shape& shape);
// NumPy's tuple spelling, as Polygraphy prints shapes: "(1, 3, 224, 224)", "(5,)", "()".
std::string shape_str(const Shape& shape);

// Maps a C++ element type to its DataType (compile error for types without one).
template <typename T>
struct DTypeOf;
#define PARITY_DTYPE_OF(T, D)                      \
  template <>                                      \
  struct DTypeOf<T> {                              \
    static constexpr DataType value = DataType::D; \
  };
PARITY_DTYPE_OF(float, kFloat32)
PARITY_DTYPE_OF(double, kFloat64)
PARITY_DTYPE_OF(int8_t, kInt8)
PARITY_DTYPE_OF(int16_t, kInt16)
PARITY_DTYPE_OF(int32_t, kInt32)
PARITY_DTYPE_OF(int64_t, kInt64)
PARITY_DTYPE_OF(uint8_t, kUInt8)
PARITY_DTYPE_OF(uint16_t, kUInt16)
PARITY_DTYPE_OF(uint32_t, kUInt32)
PARITY_DTYPE_OF(uint64_t, kUInt64)
PARITY_DTYPE_OF(bool, kBool)
PARITY_DTYPE_OF(std::string, kString)
PARITY_DTYPE_OF(float16, kFloat16)
PARITY_DTYPE_OF(bfloat16, kBFloat16)
PARITY_DTYPE_OF(float8e4m3fn, kFloat8E4M3FN)
PARITY_DTYPE_OF(float8e4m3fnuz, kFloat8E4M3FNUZ)
PARITY_DTYPE_OF(float8e5m2, kFloat8E5M2)
PARITY_DTYPE_OF(float8e5m2fnuz, kFloat8E5M2FNUZ)
PARITY_DTYPE_OF(std::complex<float>, kComplex64)
PARITY_DTYPE_OF(std::complex<double>, kComplex128)
#undef PARITY_DTYPE_OF
template <typename T>
inline constexpr DataType dtype_of = DTypeOf<T>::value;

class Tensor {
 public:
  Tensor() = default;
  // An owned, zero-filled tensor (strings are empty).
  Tensor(DataType dtype, Shape shape);

  // A view of memory owned elsewhere. `data` must hold dtype_storage_bytes(dtype, numel) bytes
  // and stay valid while `keep_alive` (or the caller, if null) lives. String tensors cannot be
  // borrowed from raw bytes: pass a buffer of std::string objects.
  static Tensor borrow(DataType dtype, Shape shape, void* data,
                       std::shared_ptr<const void> keep_alive = nullptr);

  template <typename T>
  static Tensor from_vector(Shape shape, const std::vector<T>& values) {
    Tensor t(dtype_of<T>, std::move(shape));
    if (static_cast<size_t>(t.numel()) != values.size())
      fail("failed to create a tensor of shape {} from {} values: the counts must be equal",
           shape_str(t.shape()), values.size());
    T* dst = t.data<T>();
    for (size_t i = 0; i < values.size(); ++i) dst[i] = values[i];
    return t;
  }
  template <typename T>
  static Tensor scalar(T value) {
    return from_vector<T>({}, {value});
  }

  bool defined() const { return dtype_ != DataType::kUndefined; }
  DataType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const { return shape_numel(shape_); }
  size_t nbytes() const { return dtype_storage_bytes(dtype_, static_cast<size_t>(numel())); }

  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }

  // Typed access; throws if T does not match the element type.
  template <typename T>
  T* data() {
    check_type(dtype_of<T>);
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* data() const {
    check_type(dtype_of<T>);
    return static_cast<const T*>(data_);
  }

  // A deep copy with its own buffer.
  Tensor clone() const;
  // The same buffer seen with another shape of the same element count.
  Tensor reshaped(Shape shape) const;
  // True when both have the same dtype, shape and bytes (strings compared by value).
  bool equals(const Tensor& other) const;

 private:
  void check_type(DataType requested) const;

  DataType dtype_ = DataType::kUndefined;
  Shape shape_;
  std::shared_ptr<const void> storage_;  // owns or keeps alive the buffer
  void* data_ = nullptr;
};

// An ordered name → tensor map: graph outputs and feed dicts keep the model's order. Look-ups
// go through a hash index, so a map of thousands of marked outputs stays linear to build.
class TensorMap {
 public:
  using Entry = std::pair<std::string, Tensor>;

  void set(const std::string& name, Tensor t);  // replaces an existing entry in place
  const Tensor* find(const std::string& name) const;
  Tensor* find(const std::string& name);
  const Tensor& at(const std::string& name) const;  // throws Error listing the names
  bool contains(const std::string& name) const { return find(name) != nullptr; }
  bool erase(const std::string& name);
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  std::vector<std::string> names() const;

  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }
  // Mutable iteration may change tensors, never names (the index would go stale).
  auto begin() { return entries_.begin(); }
  auto end() { return entries_.end(); }
  const Entry& operator[](size_t i) const { return entries_.at(i); }

 private:
  std::vector<Entry> entries_;
  std::unordered_map<std::string, size_t> index_;  // name -> position in entries_
};

}  // namespace parity
