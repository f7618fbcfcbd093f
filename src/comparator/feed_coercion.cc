#include "comparator/feed_coercion.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "backend/value_tensors.h"
#include "comparator/compare_internal.h"
#include "core/logger.h"
#include "core/numeric.h"
#include "core/py_format.h"

namespace parity {

namespace {

std::string py_shape(const Shape& s) {
  if (s.size() == 1) return fmt::format("({},)", s[0]);
  return fmt::format("({})", fmt::join(s, ", "));
}

// The range of an element type, for the out-of-range warning of a cast.
std::optional<std::pair<double, double>> type_range(DataType t) {
  switch (t) {
    case DataType::kInt8:
      return std::pair<double, double>{-128, 127};
    case DataType::kUInt8:
      return std::pair<double, double>{0, 255};
    case DataType::kInt16:
      return std::pair<double, double>{-32768, 32767};
    case DataType::kUInt16:
      return std::pair<double, double>{0, 65535};
    case DataType::kInt32:
      return std::pair<double, double>{-2147483648.0, 2147483647.0};
    case DataType::kUInt32:
      return std::pair<double, double>{0, 4294967295.0};
    case DataType::kInt64:
      return std::pair<double, double>{-0x1p63, 0x1p63};
    case DataType::kUInt64:
      return std::pair<double, double>{0, 0x1p64};
    case DataType::kFloat16:
      return std::pair<double, double>{-65504, 65504};
    case DataType::kFloat32:
      return std::pair<double, double>{-std::numeric_limits<float>::max(),
                                       std::numeric_limits<float>::max()};
    default:
      return std::nullopt;
  }
}

// A copy of `t` with its axes permuted: output axis i is input axis perm[i].
Tensor permuted(const Tensor& t, const std::vector<size_t>& perm) {
  const Shape& in = t.shape();
  Shape out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out[i] = in[perm[i]];
  Tensor result(t.dtype(), out);
  const size_t elem = dtype_bits(t.dtype()) / 8;
  std::vector<int64_t> in_strides(in.size(), 1);
  for (size_t i = in.size(); i-- > 1;) in_strides[i - 1] = in_strides[i] * in[i];
  std::vector<int64_t> index(out.size(), 0);
  const auto* src = static_cast<const unsigned char*>(t.raw_data());
  auto* dst = static_cast<unsigned char*>(result.raw_data());
  for (int64_t flat = 0; flat < result.numel(); ++flat) {
    int64_t offset = 0;
    for (size_t i = 0; i < out.size(); ++i) offset += index[i] * in_strides[perm[i]];
    std::memcpy(dst + static_cast<size_t>(flat) * elem, src + static_cast<size_t>(offset) * elem,
                elem);
    for (size_t i = out.size(); i-- > 0;) {
      if (++index[i] < out[i]) break;
      index[i] = 0;
    }
  }
  return result;
}

bool rank_same(const Tensor& t, const DimList& dims) { return t.shape().size() == dims.size(); }

// The shape try_match_shape works towards, printed as Polygraphy prints it: the input's
// metadata (a BoundedShape) until its dynamic dims are frozen from the array, a list after.
struct TargetShape {
  DimList dims;
  bool frozen = false;
  std::string str() const {
    if (!frozen) return bounded_shape_str(dims);
    std::vector<int64_t> sizes;
    for (const Dim& d : dims) sizes.push_back(d.value);
    return fmt::format("[{}]", fmt::join(sizes, ", "));
  }
};

Tensor try_reshape(const Tensor& t, const TargetShape& target) {
  Shape wanted;
  bool fixed = true;
  for (const Dim& d : target.dims) {
    fixed &= d.is_fixed();
    wanted.push_back(d.value);
  }
  // NumPy cannot view an array as a shape with names or None in it, nor with another count.
  if (!fixed || shape_numel(wanted) != t.numel()) {
    logger().warning("Could not reshape array from shape: {} to {}. Skipping reshape.",
                     py_shape(t.shape()), target.str());
    return t;
  }
  if (wanted == t.shape()) return t;
  logger().info("Reshaped array from shape: {} to: {}", py_shape(t.shape()), py_shape(wanted));
  return t.reshaped(wanted);
}

Tensor try_permute(const Tensor& t, const DimList& dims) {
  Shape wanted;
  for (const Dim& d : dims) {
    if (!d.is_fixed()) return t;
    wanted.push_back(d.value);
  }
  Shape a = t.shape(), b = wanted;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  if (a != b || dtype_bits(t.dtype()) % 8 != 0 || t.dtype() == DataType::kString) return t;
  // Each wanted size takes the first unused axis of that size.
  std::vector<bool> used(t.shape().size(), false);
  std::vector<size_t> perm;
  for (int64_t size : wanted)
    for (size_t i = 0; i < used.size(); ++i)
      if (!used[i] && t.shape()[i] == size) {
        used[i] = true;
        perm.push_back(i);
        break;
      }
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == i;
  if (identity) return t;
  Tensor p = permuted(t, perm);
  logger().info("Permuted array of shape: {} to: {} using permutation [{}]", py_shape(t.shape()),
                py_shape(p.shape()), fmt::join(perm, ", "));
  return p;
}

// Polygraphy's util.try_match_shape.
Tensor try_match_shape(const Tensor& t, const DimList& dims) {
  if (dims_accept(dims, t.shape()) && rank_same(t, dims) && dims_are_fixed(dims)) return t;
  TargetShape target{dims};
  size_t dynamic = 0;
  for (const Dim& d : dims) dynamic += d.is_fixed() ? 0 : 1;
  if (dynamic == 1) {
    int64_t fixed = 1;
    for (const Dim& d : dims) fixed *= d.is_fixed() ? d.value : 1;
    for (Dim& d : target.dims)
      if (!d.is_fixed()) d = Dim::fixed(fixed == 0 ? 0 : t.numel() / fixed);
    target.frozen = true;
  } else if (dynamic > 1 && rank_same(t, dims)) {
    for (size_t i = 0; i < dims.size(); ++i)
      if (!dims[i].is_fixed()) target.dims[i] = Dim::fixed(t.shape()[i]);
    target.frozen = true;
  }
  Tensor out = t;
  if (!rank_same(out, target.dims)) out = try_reshape(out, target);
  if (rank_same(out, target.dims)) out = try_permute(out, target.dims);
  return try_reshape(out, target);
}

}  // namespace

TensorMap coerce_feed(const TensorMap& cached, const TensorMetadata& meta) {
  if (meta.empty()) return cached;
  TensorMap feed;
  const std::vector<std::string> names = cached.names();
  for (size_t index = 0; index < meta.size(); ++index) {
    const TensorMeta& m = meta[index];
    if (!m.dtype && !cached.contains(m.name)) {
      // A sequence or map input fed as its derived tensors (backend/value_tensors.h): as given.
      bool derived = false;
      for (const auto& [name, t] : cached)
        if (is_value_tensor_of(name, m.name)) {
          feed.set(name, t);
          derived = true;
        }
      if (derived) continue;
    }
    std::optional<std::string> found = find_str_in_names(m.name, names, index);
    if (!found) continue;  // the runner reports the missing input
    if (*found != m.name)
      logger().warning(
          "Input tensor: {} | Buffer name ({}) does not match expected input name ({}).", m.name,
          *found, m.name);
    Tensor buffer = cached.at(*found);
    if (m.dtype && *m.dtype != buffer.dtype() && dtype_is_numeric(buffer.dtype()) &&
        dtype_is_numeric(*m.dtype)) {
      logger().warning(
          "Input tensor: {} | Buffer dtype ({}) does not match expected input dtype ({}), "
          "attempting to cast. ",
          m.name, dtype_name(buffer.dtype()), dtype_name(*m.dtype));
      if (const auto range = type_range(*m.dtype)) {
        bool out_of_range = false;
        for (double v : tensor_to_doubles(buffer))
          out_of_range |= v < range->first || v > range->second;
        if (out_of_range)
          logger().warning(
              "Some values in this input are out of range of {}. Unexpected "
              "behavior may ensue!",
              dtype_name(*m.dtype));
      }
      buffer = cast_tensor(buffer, *m.dtype);
    }
    if (m.shape && !(rank_same(buffer, *m.shape) && dims_accept(*m.shape, buffer.shape()))) {
      logger().warning(
          "Input tensor: {} | Buffer shape ({}) does not match expected input shape ({}). "
          "Attempting to transpose/reshape. ",
          m.name, py_shape(buffer.shape()), bounded_shape_str(*m.shape));
      buffer = try_match_shape(buffer, *m.shape);
    }
    const bool fits =
        (!m.dtype || *m.dtype == buffer.dtype()) &&
        (!m.shape || (rank_same(buffer, *m.shape) && dims_accept(*m.shape, buffer.shape())));
    if (!fits) {
      // Polygraphy's cache gives up on the buffer and reloads the iteration from the data
      // loader: what a file or a generated loader gives again is the buffer as loaded, under
      // the input's own name (the runner then refuses it), and nothing under another name.
      logger().log(Severity::kCritical,
                   fmt::format("Input tensor: {} | Cannot reuse input data due to mismatch in "
                               "shape or data type.\nNote: Cached input: [dtype={}, shape={}], "
                               "Requested input: [dtype={}, shape={}]",
                               m.name, dtype_name(buffer.dtype()), py_shape(buffer.shape()),
                               m.dtype ? dtype_name(*m.dtype) : "None",
                               m.shape ? bounded_shape_str(*m.shape) : "None"));
      logger().warning(
          "Could not use buffer previously cached from data loader for input: {}. Attempting "
          "to reload inputs from the data loader.\nNote that this will only work if the data "
          "loader supports random access.\nPlease refer to warnings above for details on why "
          "the previously generated input buffer didn't work. ",
          m.name);
      if (!cached.contains(m.name))
        logger().critical(
            "Could not reload inputs from data loader. Are the runners running the same model? "
            "If not, please rewrite the data loader to support random access.");
      buffer = cached.at(m.name);
    }
    feed.set(m.name, buffer);
  }
  return feed;
}

}  // namespace parity
