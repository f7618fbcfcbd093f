#include "support/value_compare.h"

#include <fmt/format.h>

#include <cmath>
#include <complex>

namespace parity::testing {
namespace {

enum class ElementClass { kFloat, kComplex, kSigned, kUnsigned, kString };

ElementClass element_class(DataType t) {
  if (t == DataType::kString) return ElementClass::kString;
  if (t == DataType::kComplex64 || t == DataType::kComplex128) return ElementClass::kComplex;
  if (dtype_is_float(t)) return ElementClass::kFloat;
  if (dtype_is_signed(t)) return ElementClass::kSigned;
  return ElementClass::kUnsigned;  // unsigned integers and bool
}

double float_at(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat32:
      return t.data<float>()[i];
    case DataType::kFloat64:
      return t.data<double>()[i];
    case DataType::kFloat16:
      return t.data<float16>()[i].to_float();
    case DataType::kBFloat16:
      return t.data<bfloat16>()[i].to_float();
    case DataType::kFloat8E4M3FN:
      return t.data<float8e4m3fn>()[i].to_float();
    case DataType::kFloat8E4M3FNUZ:
      return t.data<float8e4m3fnuz>()[i].to_float();
    case DataType::kFloat8E5M2:
      return t.data<float8e5m2>()[i].to_float();
    case DataType::kFloat8E5M2FNUZ:
      return t.data<float8e5m2fnuz>()[i].to_float();
    default:
      break;
  }
  throw InternalError(fmt::format("float_at called for {}", dtype_name(t.dtype())));
}

std::complex<double> complex_at(const Tensor& t, int64_t i) {
  if (t.dtype() == DataType::kComplex64) return t.data<std::complex<float>>()[i];
  return t.data<std::complex<double>>()[i];
}

int64_t signed_at(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kInt8:
      return t.data<int8_t>()[i];
    case DataType::kInt16:
      return t.data<int16_t>()[i];
    case DataType::kInt32:
      return t.data<int32_t>()[i];
    case DataType::kInt64:
      return t.data<int64_t>()[i];
    case DataType::kInt4:
      return int4_get(static_cast<const uint8_t*>(t.raw_data()), static_cast<size_t>(i));
    default:
      break;
  }
  throw InternalError(fmt::format("signed_at called for {}", dtype_name(t.dtype())));
}

uint64_t unsigned_at(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kBool:
      return t.data<bool>()[i] ? 1 : 0;
    case DataType::kUInt8:
      return t.data<uint8_t>()[i];
    case DataType::kUInt16:
      return t.data<uint16_t>()[i];
    case DataType::kUInt32:
      return t.data<uint32_t>()[i];
    case DataType::kUInt64:
      return t.data<uint64_t>()[i];
    case DataType::kUInt4:
      return uint4_get(static_cast<const uint8_t*>(t.raw_data()), static_cast<size_t>(i));
    default:
      break;
  }
  throw InternalError(fmt::format("unsigned_at called for {}", dtype_name(t.dtype())));
}

// numpy.isclose with equal_nan=True, as assert_allclose uses it.
bool close(double a, double e, const Tolerance& tol) {
  if (std::isnan(a) || std::isnan(e)) return std::isnan(a) && std::isnan(e);
  if (std::isinf(a) || std::isinf(e)) return a == e;
  return std::fabs(a - e) <= tol.atol + tol.rtol * std::fabs(e);
}

std::string index_str(const Shape& shape, int64_t flat) {
  Shape index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] == 0 ? 0 : flat % shape[d];
    flat = shape[d] == 0 ? 0 : flat / shape[d];
  }
  return shape_str(index);
}

// One element's comparison: whether it matches, how far apart the two are (for floats),
// and both values as text.
struct ElementResult {
  bool equal = true;
  double diff = 0;
  std::string actual, expected;
};

ElementResult compare_element(const Tensor& a, const Tensor& e, int64_t i, ElementClass cls,
                              const Tolerance& tol, bool describe) {
  ElementResult r;
  switch (cls) {
    case ElementClass::kFloat: {
      double x = float_at(a, i), y = float_at(e, i);
      r.equal = close(x, y, tol);
      r.diff = std::fabs(x - y);
      if (describe) r.actual = fmt::format("{:.9g}", x), r.expected = fmt::format("{:.9g}", y);
      break;
    }
    case ElementClass::kComplex: {
      std::complex<double> x = complex_at(a, i), y = complex_at(e, i);
      r.equal = close(x.real(), y.real(), tol) && close(x.imag(), y.imag(), tol);
      r.diff = std::abs(x - y);
      if (describe) {
        r.actual = fmt::format("({:.9g}{:+.9g}j)", x.real(), x.imag());
        r.expected = fmt::format("({:.9g}{:+.9g}j)", y.real(), y.imag());
      }
      break;
    }
    case ElementClass::kSigned: {
      int64_t x = signed_at(a, i), y = signed_at(e, i);
      r.equal = x == y;
      if (describe) r.actual = std::to_string(x), r.expected = std::to_string(y);
      break;
    }
    case ElementClass::kUnsigned: {
      uint64_t x = unsigned_at(a, i), y = unsigned_at(e, i);
      r.equal = x == y;
      if (describe) r.actual = std::to_string(x), r.expected = std::to_string(y);
      break;
    }
    case ElementClass::kString: {
      const std::string& x = a.data<std::string>()[i];
      const std::string& y = e.data<std::string>()[i];
      r.equal = x == y;
      if (describe) r.actual = fmt::format("{:?}", x), r.expected = fmt::format("{:?}", y);
      break;
    }
  }
  return r;
}

}  // namespace

std::string compare_tensors(const Tensor& actual, const Tensor& expected,
                            const Tolerance& tolerance) {
  if (actual.dtype() != expected.dtype())
    return fmt::format("element type {} differs from the expected {}", dtype_name(actual.dtype()),
                       dtype_name(expected.dtype()));
  if (actual.shape() != expected.shape())
    return fmt::format("shape {} differs from the expected {}", shape_str(actual.shape()),
                       shape_str(expected.shape()));
  const ElementClass cls = element_class(expected.dtype());
  const int64_t n = expected.numel();
  int64_t first = -1, mismatches = 0;
  double max_diff = 0;
  for (int64_t i = 0; i < n; ++i) {
    ElementResult r = compare_element(actual, expected, i, cls, tolerance, false);
    if (r.equal) continue;
    if (first < 0) first = i;
    ++mismatches;
    if (!std::isnan(r.diff)) max_diff = std::max(max_diff, r.diff);
  }
  if (first < 0) return "";
  ElementResult r = compare_element(actual, expected, first, cls, tolerance, true);
  std::string text = fmt::format("element {} (index {}) is {}, expected {}", first,
                                 index_str(expected.shape(), first), r.actual, r.expected);
  if (cls == ElementClass::kFloat) {
    const double allowed = tolerance.atol + tolerance.rtol * std::fabs(float_at(expected, first));
    text += fmt::format(" (|diff| {:.3g} > allowed {:.3g})", r.diff, allowed);
  }
  text += fmt::format("; {} of {} elements differ", mismatches, n);
  if (cls == ElementClass::kFloat || cls == ElementClass::kComplex)
    text += fmt::format(", max |diff| {:.3g}", max_diff);
  return text;
}

std::string compare_values(const Value& actual, const Value& expected, const Tolerance& tolerance) {
  auto kind_name = [](const Value& v) {
    return v.is_none() ? "an empty optional" : v.is_tensor() ? "a tensor" : "a sequence";
  };
  if (actual.kind != expected.kind)
    return fmt::format("it is {}, expected {}", kind_name(actual), kind_name(expected));
  if (expected.is_tensor()) return compare_tensors(actual.tensor, expected.tensor, tolerance);
  if (expected.is_none()) return "";
  if (actual.sequence.size() != expected.sequence.size())
    return fmt::format("the sequence has {} tensors, expected {}", actual.sequence.size(),
                       expected.sequence.size());
  for (size_t i = 0; i < expected.sequence.size(); ++i) {
    std::string diff = compare_tensors(actual.sequence[i], expected.sequence[i], tolerance);
    if (!diff.empty()) return fmt::format("sequence item {}: {}", i, diff);
  }
  return "";
}

}  // namespace parity::testing
