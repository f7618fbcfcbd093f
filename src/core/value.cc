#include "core/value.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace parity {

std::string Value::type_str() const {
  auto map_str = [&] {
    return fmt::format("map({}, {})", dtype_name(key_type), dtype_name(elem_type));
  };
  switch (kind) {
    case Kind::kTensor:
      return fmt::format("tensor({})", dtype_name(tensor.dtype()));
    case Kind::kSequence:
      return fmt::format("seq(tensor({}))", dtype_name(elem_type));
    case Kind::kMap:
      return map_str();
    case Kind::kMapSequence:
      return "seq(" + map_str() + ")";
    case Kind::kNone:
      break;
  }
  return "optional";
}

MapValue sorted_map_from_entries(const Tensor& keys, const Tensor& values) {
  if (keys.rank() != 1 || values.rank() != 1 || keys.numel() != values.numel())
    fail("failed to make a map from keys {} and values {}: both must be 1-D of the same length",
         shape_str(keys.shape()), shape_str(values.shape()));
  if (keys.dtype() != DataType::kInt64 && keys.dtype() != DataType::kString)
    fail("failed to make a map with keys of element type {}: map keys must be int64 or string",
         dtype_name(keys.dtype()));
  const size_t n = static_cast<size_t>(keys.numel());
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  auto less = [&](size_t a, size_t b) {
    if (keys.dtype() == DataType::kInt64) return keys.data<int64_t>()[a] < keys.data<int64_t>()[b];
    return keys.data<std::string>()[a] < keys.data<std::string>()[b];
  };
  auto equal = [&](size_t a, size_t b) { return !less(a, b) && !less(b, a); };
  std::stable_sort(order.begin(), order.end(), less);
  // Of equal keys (adjacent, in input order after the stable sort) keep the last.
  std::vector<size_t> kept;
  for (size_t i = 0; i < n; ++i)
    if (i + 1 == n || !equal(order[i], order[i + 1])) kept.push_back(order[i]);
  const int64_t m = static_cast<int64_t>(kept.size());
  MapValue out{Tensor(keys.dtype(), {m}), Tensor(values.dtype(), {m})};
  const size_t value_bytes =
      values.dtype() == DataType::kString ? 0 : values.nbytes() / std::max<size_t>(n, 1);
  for (int64_t i = 0; i < m; ++i) {
    const size_t src = kept[static_cast<size_t>(i)];
    if (keys.dtype() == DataType::kInt64)
      out.keys.data<int64_t>()[i] = keys.data<int64_t>()[src];
    else
      out.keys.data<std::string>()[i] = keys.data<std::string>()[src];
    if (values.dtype() == DataType::kString)
      out.values.data<std::string>()[i] = values.data<std::string>()[src];
    else
      std::memcpy(static_cast<char*>(out.values.raw_data()) + i * value_bytes,
                  static_cast<const char*>(values.raw_data()) + src * value_bytes, value_bytes);
  }
  return out;
}

}  // namespace parity
