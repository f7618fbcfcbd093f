// Checked integer arithmetic for sizes, strides, offsets and pads.
//
// Shapes come from files and from tensor values a model computes, so any product or sum of
// dims can overflow 64 bits; a wrapped size then allocates a small buffer that kernels index
// far past its end. Every such computation goes through these helpers, which throw
// parity::Error naming what was computed and the values ("failed to compute the element count
// of shape (2147483648, 2147483648, 4): 4611686018427387904 * 4 overflows a 64-bit integer
// (the largest is 9223372036854775807)"). Inside the reference executor the error gets the
// prefix naming the node.
//
//   int64_t n = checked_mul(a, b, "the output size of Tile");
//   int64_t numel = checked_numel(shape, "the output of ConstantOfShape");
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"

namespace parity {

[[noreturn]] inline void fail_overflow(int64_t a, char op, int64_t b, std::string_view what) {
  fail("failed to compute {}: {} {} {} overflows a 64-bit integer (the largest is {})", what, a, op,
       b, std::numeric_limits<int64_t>::max());
}

inline int64_t checked_mul(int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) [[unlikely]]
    fail_overflow(a, '*', b, what);
  return r;
}

inline int64_t checked_add(int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) [[unlikely]]
    fail_overflow(a, '+', b, what);
  return r;
}

inline int64_t checked_sub(int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) [[unlikely]]
    fail_overflow(a, '-', b, what);
  return r;
}

// The product of dims [begin, end) of `shape`; `what` names the shape in the message.
inline int64_t checked_dims_product(const std::vector<int64_t>& shape, size_t begin, size_t end,
                                    std::string_view what) {
  int64_t n = 1;
  for (size_t d = begin; d < end; ++d) {
    int64_t r;
    if (__builtin_mul_overflow(n, shape[d], &r)) [[unlikely]]
      fail(
          "failed to compute the element count of {} with shape ({}): the product of its "
          "dims overflows a 64-bit integer (the largest is {})",
          what, fmt::join(shape, ", "), std::numeric_limits<int64_t>::max());
    n = r;
  }
  return n;
}

inline int64_t checked_numel(const std::vector<int64_t>& shape, std::string_view what) {
  return checked_dims_product(shape, 0, shape.size(), what);
}

// a * b for a and b of 0 or more, clamped to the largest int64 (for work estimates only).
inline int64_t saturating_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max() : r;
}

// a * b as size_t (byte counts); `what` names the buffer.
inline size_t checked_size_mul(size_t a, size_t b, std::string_view what) {
  size_t r;
  if (__builtin_mul_overflow(a, b, &r)) [[unlikely]]
    fail("failed to compute the byte size of {}: {} * {} overflows a 64-bit size", what, a, b);
  return r;
}

}  // namespace parity
