#include "core/py_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "core/mx_types.h"
#include "core/numeric.h"

namespace parity {

namespace {

// A finite non-zero |value| as digits d0.d1d2... times 10^exp.
struct Digits {
  std::string digits;
  int exp = 0;
};

// Parses printf/to_chars scientific output "d.ddde±XX" (no sign).
Digits parse_scientific(std::string_view s) {
  Digits d;
  size_t e = s.find('e');
  for (char c : s.substr(0, e))
    if (c != '.') d.digits.push_back(c);
  d.exp = std::atoi(std::string(s.substr(e + 1)).c_str());
  return d;
}

// The value after a round trip through `dtype`, so that digits can be tested for uniqueness.
double round_trip(double v, DataType dtype) {
  if (dtype == kDtypeFloat8E8M0)
    return float8e8m0::from_double(v, true, E8M0Rounding::kNearest).to_float();
  if (dtype == kDtypeFloat4E2M1) return float4e2m1_to_double(float4e2m1_from_double(v));
  switch (dtype) {
    case DataType::kFloat16:
      return float16::from_double(v).to_float();
    case DataType::kBFloat16:
      return bfloat16::from_double(v).to_float();
    case DataType::kFloat8E4M3FN:
      return float8e4m3fn::from_double(v).to_float();
    case DataType::kFloat8E4M3FNUZ:
      return float8e4m3fnuz::from_double(v).to_float();
    case DataType::kFloat8E5M2:
      return float8e5m2::from_double(v).to_float();
    case DataType::kFloat8E5M2FNUZ:
      return float8e5m2fnuz::from_double(v).to_float();
    case DataType::kFloat32:
      return static_cast<float>(v);
    default:
      return v;
  }
}

// The shortest digits that identify |v| among the values of `dtype` (Dragon4's "unique" mode).
Digits shortest_digits(double v, DataType dtype) {
  v = std::fabs(v);
  if (v == 0.0) return Digits{"0", 0};
  char buf[64];
  if (dtype == DataType::kFloat64 || dtype == DataType::kFloat32) {
    auto r = dtype == DataType::kFloat32
                 ? std::to_chars(buf, buf + sizeof(buf), static_cast<float>(v),
                                 std::chars_format::scientific)
                 : std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
    return parse_scientific(std::string_view(buf, static_cast<size_t>(r.ptr - buf)));
  }
  for (int p = 1; p < 17; ++p) {
    std::snprintf(buf, sizeof(buf), "%.*e", p - 1, v);
    if (round_trip(std::strtod(buf, nullptr), dtype) == v) return parse_scientific(buf);
  }
  std::snprintf(buf, sizeof(buf), "%.16e", v);
  return parse_scientific(buf);
}

std::string strip_trailing_zeros(std::string s) {
  while (!s.empty() && s.back() == '0') s.pop_back();
  return s;
}

// Positional digits "123.45" (no sign); at most `max_frac` fractional digits, trailing zeros
// trimmed but the point kept ("1.").
std::pair<std::string, std::string> positional_parts(double v, DataType dtype, int max_frac) {
  Digits d = shortest_digits(v, dtype);
  int frac_needed = std::max(0, static_cast<int>(d.digits.size()) - 1 - d.exp);
  if (frac_needed > max_frac) {
    std::string s = fmt::format("{:.{}f}", std::fabs(v), max_frac);
    size_t dot = s.find('.');
    return {s.substr(0, dot), strip_trailing_zeros(s.substr(dot + 1))};
  }
  if (d.exp >= 0) {
    std::string digits = d.digits;
    if (static_cast<int>(digits.size()) < d.exp + 1) digits.append(d.exp + 1 - digits.size(), '0');
    return {digits.substr(0, d.exp + 1), digits.substr(d.exp + 1)};
  }
  return {"0", std::string(-d.exp - 1, '0') + d.digits};
}

// Scientific parts: mantissa integer digit, fraction digits, exponent.
struct SciParts {
  std::string int_part, frac;
  int exp = 0;
};

SciParts scientific_parts(double v, DataType dtype, int max_frac) {
  Digits d = shortest_digits(v, dtype);
  if (static_cast<int>(d.digits.size()) - 1 > max_frac) {
    d = parse_scientific(fmt::format("{:.{}e}", std::fabs(v), max_frac));
    d.digits = strip_trailing_zeros(d.digits);
    if (d.digits.empty()) d.digits = "0";
  }
  return SciParts{d.digits.substr(0, 1), d.digits.substr(1), d.exp};
}

std::string exponent_str(int exp, int digits) {
  std::string e = std::to_string(std::abs(exp));
  if (static_cast<int>(e.size()) < digits) e.insert(0, digits - e.size(), '0');
  return std::string(exp < 0 ? "e-" : "e+") + e;
}

// NumPy's FloatingFormat (floatmode 'maxprec', precision 8, sign '-').
class FloatFormatter {
 public:
  FloatFormatter(const std::vector<double>& values, DataType dtype) : dtype_(dtype) {
    std::vector<double> finite;
    bool neg_inf = false;
    bool any_nonfinite = false;
    double max_abs = 0, min_abs = INFINITY;
    for (double v : values) {
      if (!std::isfinite(v)) {
        any_nonfinite = true;
        neg_inf |= std::isinf(v) && v < 0;
        continue;
      }
      finite.push_back(v);
      if (v != 0) {
        max_abs = std::max(max_abs, std::fabs(v));
        min_abs = std::min(min_abs, std::fabs(v));
      }
    }
    if (min_abs != INFINITY)
      exp_format_ = max_abs >= 1e8 || min_abs < 0.0001 || max_abs / min_abs > 1000.0;
    if (finite.empty()) {
      exp_format_ = false;
    } else if (exp_format_) {
      int exp_len = 0;
      for (double v : finite) {
        SciParts p = scientific_parts(v, dtype_, 8);
        precision_ = std::max(precision_, static_cast<int>(p.frac.size()));
        pad_left_ = std::max(pad_left_, static_cast<int>(p.int_part.size()) + (v < 0 ? 1 : 0));
        exp_len = std::max(exp_len, static_cast<int>(exponent_str(p.exp, 2).size()) - 1);
      }
      exp_size_ = exp_len - 1;
      pad_right_ = exp_size_ + 2 + precision_;
    } else {
      for (double v : finite) {
        auto [ip, fp] = positional_parts(v, dtype_, 8);
        pad_left_ = std::max(pad_left_, static_cast<int>(ip.size()) + (std::signbit(v) ? 1 : 0));
        pad_right_ = std::max(pad_right_, static_cast<int>(fp.size()));
      }
    }
    if (any_nonfinite) {
      int offset = pad_right_ + 1;
      pad_left_ = std::max({pad_left_, 3 - offset, 3 + (neg_inf ? 1 : 0) - offset});
    }
  }

  std::string operator()(double v) const {
    const std::string sign = std::signbit(v) ? "-" : "";
    if (!std::isfinite(v)) {
      std::string s = std::isnan(v) ? "nan" : sign + "inf";
      int width = pad_left_ + pad_right_ + 1;
      return std::string(std::max(0, width - static_cast<int>(s.size())), ' ') + s;
    }
    std::string ip, fp, tail;
    if (exp_format_) {
      SciParts p = scientific_parts(v, dtype_, precision_);
      if (static_cast<int>(p.frac.size()) < precision_) {
        // NumPy's dragon4 with min_digits: the digits after the shortest ones are the exact
        // value's (a float32 0.417022 prints as 4.17021990e-01, not 4.17022000e-01). A float
        // of any type is exact as a double, so the double correctly rounded gives them.
        const std::string exact = fmt::format("{:.{}e}", std::fabs(v), precision_);
        const size_t e = exact.find('e');
        p.int_part = exact.substr(0, 1);
        p.frac = exact.substr(2, e - 2);
        p.exp = std::stoi(exact.substr(e + 1));
      }
      ip = sign + p.int_part;
      fp = p.frac;
      tail = exponent_str(p.exp, exp_size_);
    } else {
      auto parts = positional_parts(v, dtype_, 8);
      ip = sign + parts.first;
      fp = parts.second + std::string(pad_right_ - parts.second.size(), ' ');
    }
    std::string left(std::max(0, pad_left_ - static_cast<int>(ip.size())), ' ');
    return left + ip + "." + fp + tail;
  }

 private:
  DataType dtype_;
  bool exp_format_ = false;
  int precision_ = 0, pad_left_ = 0, pad_right_ = 0, exp_size_ = -1;
};

// NumPy's str() of a 0-d float: positional in [1e-4, 1e16), else scientific ("1e-07").
std::string scalar_float_str(double v, DataType dtype) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  const std::string sign = std::signbit(v) ? "-" : "";
  double a = std::fabs(v);
  if (a == 0 || (a >= 1e-4 && a < 1e16)) {
    auto [ip, fp] = positional_parts(v, dtype, 64);
    return sign + ip + "." + (fp.empty() ? "0" : fp);
  }
  SciParts p = scientific_parts(v, dtype, 64);
  return sign + p.int_part + (p.frac.empty() ? "" : "." + p.frac) + exponent_str(p.exp, 2);
}

std::string int_str(double v) { return fmt::format("{}", static_cast<long long>(v)); }

// NumPy summarises arrays of more than 1000 elements: `edge` items (3 by default) at each end
// of every long axis.
constexpr int64_t kSummaryThreshold = 1000;

// Positions shown along one axis; -1 stands for the "..." marker.
std::vector<int64_t> shown_positions(int64_t len, bool summarise, int64_t edge) {
  std::vector<int64_t> pos;
  if (summarise && len > 2 * edge) {
    for (int64_t i = 0; i < edge; ++i) pos.push_back(i);
    pos.push_back(-1);
    for (int64_t i = len - edge; i < len; ++i) pos.push_back(i);
  } else {
    for (int64_t i = 0; i < len; ++i) pos.push_back(i);
  }
  return pos;
}

// NumPy's _formatArray: 75 columns (by default), separator ' ', hanging indent, optional
// summarisation.
class ArrayLayout {
 public:
  ArrayLayout(const Tensor& t, const ArrayPrintOptions& options)
      : t_(t),
        summarise_(options.edge_items >= 0 && t.numel() > kSummaryThreshold),
        edge_(options.edge_items),
        line_width_(options.line_width < 0
                        ? std::numeric_limits<int>::max() / 2
                        : static_cast<int>(std::min<int64_t>(options.line_width, 1 << 30))) {}

  std::string str() {
    std::vector<int64_t> shown;
    collect(0, 0, shown);
    make_words(shown);
    return recurse(0, 0, " ", line_width_);
  }

 private:
  int64_t stride(size_t axis) const {
    int64_t s = 1;
    for (size_t a = axis + 1; a < t_.shape().size(); ++a) s *= t_.shape()[a];
    return s;
  }

  // The flat indices of the elements that will be printed, in order.
  void collect(size_t axis, int64_t base, std::vector<int64_t>& out) const {
    if (axis == t_.shape().size()) {
      out.push_back(base);
      return;
    }
    for (int64_t p : shown_positions(t_.shape()[axis], summarise_, edge_))
      if (p >= 0) collect(axis + 1, base + p * stride(axis), out);
  }

  // Element strings, padded as NumPy pads them; the format is chosen from the shown elements.
  void make_words(const std::vector<int64_t>& shown) {
    if (t_.dtype() == DataType::kString) {
      const auto* s = t_.data<std::string>();
      for (int64_t i : shown) words_[i] = py_repr(s[i]);
      return;
    }
    // 64-bit integers are printed from their own values: past 2**53 a double would round them.
    if (t_.dtype() == DataType::kInt64 || t_.dtype() == DataType::kUInt64) {
      std::vector<std::string> digits;
      for (int64_t i : shown)
        digits.push_back(t_.dtype() == DataType::kInt64 ? std::to_string(t_.data<int64_t>()[i])
                                                        : std::to_string(t_.data<uint64_t>()[i]));
      size_t width = 0;
      for (const auto& d : digits) width = std::max(width, d.size());
      for (size_t k = 0; k < shown.size(); ++k)
        words_[shown[k]] = fmt::format("{:>{}}", digits[k], width);
      return;
    }
    const std::vector<double> all = tensor_to_doubles(t_);
    std::vector<double> values;
    values.reserve(shown.size());
    for (int64_t i : shown) values.push_back(all[static_cast<size_t>(i)]);
    if (t_.dtype() == DataType::kBool) {
      for (size_t k = 0; k < shown.size(); ++k)
        words_[shown[k]] = values[k] != 0 ? " True" : "False";
    } else if (dtype_is_integer(t_.dtype())) {
      size_t width = 0;
      for (double v : values) width = std::max(width, int_str(v).size());
      for (size_t k = 0; k < shown.size(); ++k)
        words_[shown[k]] = fmt::format("{:>{}}", int_str(values[k]), width);
    } else {
      FloatFormatter format(values, t_.dtype());
      for (size_t k = 0; k < shown.size(); ++k) words_[shown[k]] = format(values[k]);
    }
  }

  std::string recurse(size_t axis, int64_t base, const std::string& hanging, int width) {
    const Shape& shape = t_.shape();
    if (axis == shape.size()) return words_[base];
    const std::string next_hanging = hanging + " ";
    const int next_width = width - 1;
    const std::vector<int64_t> positions = shown_positions(shape[axis], summarise_, edge_);
    std::string s;
    if (axis + 1 == shape.size()) {
      const size_t elem_width = static_cast<size_t>(width - 1);
      std::string line = hanging;
      for (size_t k = 0; k < positions.size(); ++k) {
        std::string word = positions[k] < 0 ? "..."
                                            : recurse(axis + 1, base + positions[k] * stride(axis),
                                                      next_hanging, next_width);
        if (line.size() + word.size() > elem_width && line.size() > hanging.size()) {
          while (!line.empty() && line.back() == ' ') line.pop_back();
          s += line + "\n";
          line = hanging;
        }
        line += word;
        if (k + 1 < positions.size()) line += " ";
      }
      s += line;
    } else {
      const std::string line_sep(shape.size() - axis - 1, '\n');
      for (size_t k = 0; k < positions.size(); ++k) {
        s += hanging + (positions[k] < 0 ? "..."
                                         : recurse(axis + 1, base + positions[k] * stride(axis),
                                                   next_hanging, next_width));
        if (k + 1 < positions.size()) s += line_sep;
      }
    }
    return "[" + s.substr(hanging.size()) + "]";
  }

  const Tensor& t_;
  bool summarise_;
  int64_t edge_;
  int line_width_;
  std::map<int64_t, std::string> words_;
};

}  // namespace

std::string format_g(double v, int precision) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
  return buf;
}

std::string format_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  const std::string sign = std::signbit(v) ? "-" : "";
  if (v == 0) return sign + "0.0";
  Digits d = shortest_digits(v, DataType::kFloat64);
  if (d.exp >= -4 && d.exp < 16) {
    auto [ip, fp] = positional_parts(v, DataType::kFloat64, 64);
    return sign + ip + "." + (fp.empty() ? "0" : fp);
  }
  std::string mantissa = d.digits.substr(0, 1);
  if (d.digits.size() > 1) mantissa += "." + d.digits.substr(1);
  return sign + mantissa + exponent_str(d.exp, 2);
}

std::string format_name_list(const std::vector<std::string>& names) {
  std::vector<std::string> quoted;
  quoted.reserve(names.size());
  for (const auto& n : names) quoted.push_back("'" + n + "'");
  return fmt::format("[{}]", fmt::join(quoted, ", "));
}

std::string numpy_scalar_str(double v, DataType dtype) {
  if (dtype == DataType::kBool) return v != 0 ? "True" : "False";
  if (dtype_is_integer(dtype)) return int_str(v);
  return scalar_float_str(v, dtype);
}

std::string numpy_array_str(const Tensor& t) { return numpy_array_str(t, ArrayPrintOptions{}); }

std::string numpy_array_str(const Tensor& t, const ArrayPrintOptions& options) {
  if (t.numel() == 0) return "[]";
  if (t.rank() == 0) {
    if (t.dtype() == DataType::kString) return t.data<std::string>()[0];
    if (t.dtype() == DataType::kInt64) return std::to_string(t.data<int64_t>()[0]);
    if (t.dtype() == DataType::kUInt64) return std::to_string(t.data<uint64_t>()[0]);
    return numpy_scalar_str(tensor_to_doubles(t)[0], t.dtype());
  }
  return ArrayLayout(t, options).str();
}

std::string py_repr(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (unsigned char c : s) {
    if (c == '\\' || c == static_cast<unsigned char>(quote)) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + quote;
}

// A Python string literal.
std::string py_str(std::string_view s) {
  std::string out = "'";
  for (unsigned char c : s) {
    if (c == '\\' || c == '\'') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "'";
}

// A Python float literal that reads back as the same double.
std::string py_float(double v) {
  if (std::isnan(v)) return "float('nan')";
  if (std::isinf(v)) return v > 0 ? "float('inf')" : "float('-inf')";
  std::string s = fmt::format("{}", v);  // shortest round-trip form
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string py_list(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const auto& s : items) quoted.push_back(py_str(s));
  return fmt::format("[{}]", fmt::join(quoted, ", "));
}

std::string py_bool(bool b) { return b ? "True" : "False"; }

}  // namespace parity
