// Cast and CastLike between every pair of element types: floating (float8 included), integer
// (int4/uint4 included), bool and string.
//
// Rules, from the spec and its reference implementation (NumPy's astype):
// - to a floating type: rounded once to nearest even; to float8, `saturate` (opset 19) clamps
//   out-of-range values to the largest finite value, else they become inf or NaN;
// - floating to an integer: truncated toward zero, clamped to the type's range, NaN gives 0;
//   integer to integer wraps (two's complement);
// - to int4/uint4 (opset 21): clamped to the 4-bit range, then rounded half to even;
// - to float4e2m1 (opset 23): rounded to nearest even, saturating at +-6 whatever `saturate`
//   says (the attribute is for float8), NaN gives +6 (core/float_types.h);
// - to float8e8m0 (opset 24): by magnitude, rounded per `round_mode` (opset 25; "up" before),
//   past 2^127 saturating or NaN per `saturate` (core/float_types.h);
// - to bool: value != 0; from bool: 0 or 1;
// - from string: decimal or scientific text, "INF", "+INF", "-INF", "NaN" in any case;
//   text that is no number is an error naming it;
// - to string: integers in decimal, bools as True/False, floating values as NumPy prints them
//   (the shortest text that reads back to the same value; positional for 1e-4 <= |v| < 1e16,
//   scientific otherwise: 0.6048455, 123456790.0, 1e-05, 1.5e+16).
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backend/ref/ops/mx_util.h"

namespace parity::ref {
namespace {

using CastTypes = Concat<Concat<AllTypes, Float8Types>,
                         TypeList<std::string, Int4, UInt4, Float4E2M1, float8e8m0>>;

// What a cast to float8 types reads from the node: `saturate` (float8, float8e8m0) and
// `round_mode` (float8e8m0 only).
struct CastRules {
  bool saturate = true;
  E8M0Rounding round_mode = E8M0Rounding::kUp;
};

// ---------------------------------------------------------------------------------------------
// Numbers to text

// The shortest decimal digits that read back to `v` in type T, and the power of ten of the
// first digit.
struct Decimal {
  std::string digits;
  int exponent = 0;
};

// Splits printf/to_chars scientific text "d.ddde±XX" into digits and exponent.
Decimal split_scientific(std::string_view text) {
  Decimal d;
  size_t e = text.find('e');
  for (char c : text.substr(0, e))
    if (c >= '0' && c <= '9') d.digits.push_back(c);
  d.exponent = std::atoi(std::string(text.substr(e + 1)).c_str());
  while (d.digits.size() > 1 && d.digits.back() == '0') d.digits.pop_back();
  return d;
}

// The bits of v in T, rounded to nearest (float8e8m0's default rounding is up).
template <typename T>
auto round_trip_bits(double v) {
  if constexpr (std::is_same_v<T, float8e8m0>)
    return T::from_double(v, true, E8M0Rounding::kNearest).bits;
  else
    return T::from_double(v).bits;
}

template <typename T>
Decimal shortest_digits(double magnitude) {
  char buf[64];
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    auto r = std::to_chars(buf, buf + sizeof buf, static_cast<T>(magnitude),
                           std::chars_format::scientific);
    return split_scientific(std::string_view(buf, r.ptr - buf));
  } else {
    // Narrow types: the fewest significant digits whose correctly rounded text reads back to
    // the same bits (the closest such text, as NumPy's Dragon4 picks).
    for (int precision = 0; precision < 17; ++precision) {
      std::snprintf(buf, sizeof buf, "%.*e", precision, magnitude);
      if (round_trip_bits<T>(std::strtod(buf, nullptr)) == round_trip_bits<T>(magnitude)) break;
    }
    return split_scientific(buf);
  }
}

template <typename T>
std::string float_to_string(T v) {
  const double x = mx_value_as_double(v);
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  std::string sign = std::signbit(x) ? "-" : "";
  const double mag = std::fabs(x);
  if (mag == 0) return sign + "0.0";
  Decimal d = shortest_digits<T>(mag);
  const int n = static_cast<int>(d.digits.size()), e = d.exponent;
  if (mag >= 1e-4 && mag < 1e16) {
    if (e >= n - 1) return sign + d.digits + std::string(e - (n - 1), '0') + ".0";
    if (e >= 0) return sign + d.digits.substr(0, e + 1) + "." + d.digits.substr(e + 1);
    return sign + "0." + std::string(-e - 1, '0') + d.digits;
  }
  std::string mantissa = n == 1 ? d.digits : d.digits.substr(0, 1) + "." + d.digits.substr(1);
  return fmt::format("{}{}e{}{:02d}", sign, mantissa, e < 0 ? '-' : '+', std::abs(e));
}

template <typename S>
std::string to_text(const S& v) {
  if constexpr (std::is_same_v<S, bool>)
    return v ? "True" : "False";
  else if constexpr (std::is_integral_v<S>)
    return std::to_string(v);
  else
    return float_to_string(v);
}

// ---------------------------------------------------------------------------------------------
// Text to numbers

bool equals_ignore_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  auto lower = [](char c) { return std::tolower(static_cast<unsigned char>(c)); };
  for (size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

[[noreturn]] void fail_parse(const std::string& s, DataType to) {
  fail(
      "failed to cast string '{}' to {}: it is not a number; strings must hold decimal or "
      "scientific numbers, INF, +INF, -INF or NaN",
      s, dtype_name(to));
}

// Whole-string parses with strtod/strtof/strtoll: only trailing spaces may be left over.
template <typename N, typename Parse>
bool parse_whole(const std::string& s, Parse parse, N& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  out = parse(s.c_str(), &end);
  while (*end == ' ' || *end == '\t' || *end == '\n') ++end;
  return end != s.c_str() && *end == '\0';
}

template <typename D>
D from_text(const std::string& s) {
  constexpr DataType kTo = elem_dtype<D>();
  // The spec's special literals, case-insensitively (strtod would also accept "infinity").
  std::string_view t = s;
  double special = 0;
  if (equals_ignore_case(t, "inf") || equals_ignore_case(t, "+inf"))
    special = std::numeric_limits<double>::infinity();
  else if (equals_ignore_case(t, "-inf"))
    special = -std::numeric_limits<double>::infinity();
  else if (equals_ignore_case(t, "nan"))
    special = std::numeric_limits<double>::quiet_NaN();
  const bool is_special = special != 0;

  if constexpr (std::is_same_v<D, float>) {
    if (is_special) return static_cast<float>(special);
    float f;
    if (!parse_whole(
            s, [](const char* p, char** e) { return std::strtof(p, e); }, f))
      fail_parse(s, kTo);
    return f;  // strtof rounds the decimal text once, directly to float
  } else if constexpr (std::is_integral_v<D>) {
    using Wide = std::conditional_t<std::is_same_v<D, uint64_t>, unsigned long long, long long>;
    Wide i;
    auto parse_int = [](const char* p, char** e) {
      if constexpr (std::is_same_v<Wide, long long>)
        return std::strtoll(p, e, 10);
      else
        return std::strtoull(p, e, 10);
    };
    if (!is_special && parse_whole(s, parse_int, i) && errno == 0) {
      if constexpr (std::is_same_v<D, bool>)
        return i != 0;
      else
        return static_cast<D>(i);
    }
    if constexpr (std::is_same_v<D, bool>) {
      if (equals_ignore_case(t, "true")) return true;
      if (equals_ignore_case(t, "false")) return false;
    }
    double v = special;
    if (!is_special && !parse_whole(
                           s, [](const char* p, char** e) { return std::strtod(p, e); }, v))
      fail_parse(s, kTo);
    if constexpr (std::is_same_v<D, bool>)
      return v != 0;
    else
      return narrow<D>(v);  // "100.5" gives 100, as the spec allows
  } else {
    double v = special;
    if (!is_special && !parse_whole(
                           s, [](const char* p, char** e) { return std::strtod(p, e); }, v))
      fail_parse(s, kTo);
    if constexpr (std::is_same_v<D, double>)
      return v;
    else
      return D::from_double(v);  // float16, bfloat16
  }
}

// ---------------------------------------------------------------------------------------------
// Numbers to numbers

// The nearest 4-bit value: clamped to [lo, hi], then rounded half to even.
template <typename S>
int64_t to_4bit(const S& v, double lo, double hi) {
  double x;
  if constexpr (std::is_same_v<S, std::string>)
    x = from_text<double>(v);
  else
    x = mx_value_as_double(v);
  if (std::isnan(x)) return 0;
  return static_cast<int64_t>(std::nearbyint(std::clamp(x, lo, hi)));
}

template <typename D, typename S>
D convert(const S& v, const CastRules& rules) {
  const bool saturate = rules.saturate;
  if constexpr (std::is_same_v<S, std::string>) {
    if constexpr (std::is_same_v<D, std::string>)
      return v;
    else if constexpr (std::is_same_v<D, float8e8m0>)
      return D::from_double(from_text<double>(v), saturate, rules.round_mode);
    else if constexpr (is_float8_v<D>)
      return D::from_double(from_text<double>(v), saturate);
    else
      return from_text<D>(v);
  } else if constexpr (std::is_same_v<D, std::string>) {
    return to_text(v);
  } else if constexpr (std::is_same_v<D, float8e8m0>) {
    return D::from_double(mx_value_as_double(v), saturate, rules.round_mode);
  } else if constexpr (is_float8_v<D>) {
    return D::from_double(mx_value_as_double(v), saturate);
  } else if constexpr (std::is_same_v<D, bool>) {
    return mx_value_as_double(v) != 0.0;  // NaN is true, as in NumPy
  } else if constexpr (std::is_same_v<D, float> || std::is_same_v<D, double>) {
    // 64-bit integers convert directly, so that they round once.
    if constexpr (std::is_same_v<S, int64_t> || std::is_same_v<S, uint64_t>)
      return static_cast<D>(v);
    else
      return static_cast<D>(mx_value_as_double(v));
  } else if constexpr (is_float_like_v<D>) {
    return D::from_double(mx_value_as_double(v));
  } else if constexpr (is_float_like_v<S> || is_float8_v<S> || std::is_same_v<S, float8e8m0>) {
    return narrow<D>(mx_value_as_double(v));  // truncate, clamp, NaN -> 0
  } else {
    return static_cast<D>(v);  // integers and bool: wrap like NumPy's astype
  }
}

// Element k of a 4-bit source, as the value convert() takes: int8 / uint8 for the integers,
// double for float4e2m1 (exact).
template <typename S>
auto load_4bit(const uint8_t* packed, size_t k) {
  if constexpr (std::is_same_v<S, Int4>)
    return int4_get(packed, k);
  else if constexpr (std::is_same_v<S, UInt4>)
    return uint4_get(packed, k);
  else
    return float4e2m1_to_double(uint4_get(packed, k));
}

// Writes element k of a 4-bit destination D from `v` (a 4-bit source's value or any other
// element).
template <typename D, typename S, typename V>
void store_4bit(uint8_t* packed, size_t k, const V& v) {
  if constexpr (std::is_same_v<D, Float4E2M1>) {
    if constexpr (std::is_same_v<S, Float4E2M1>)
      uint4_set(packed, k, float4e2m1_from_double(v));  // the same code
    else if constexpr (std::is_same_v<V, std::string>)
      float4e2m1_set(packed, k, from_text<double>(v));
    else
      float4e2m1_set(packed, k, mx_value_as_double(v));
  } else if constexpr (std::is_same_v<S, Int4> && std::is_same_v<D, UInt4>) {
    uint4_set(packed, k, static_cast<uint8_t>(std::max<int8_t>(v, 0)));
  } else if constexpr (std::is_same_v<S, UInt4> && std::is_same_v<D, Int4>) {
    int4_set(packed, k, static_cast<int8_t>(std::min<uint8_t>(v, 7)));
  } else if constexpr (std::is_same_v<S, D>) {
    if constexpr (std::is_same_v<D, Int4>)
      int4_set(packed, k, v);
    else
      uint4_set(packed, k, v);
  } else if constexpr (std::is_same_v<D, Int4>) {
    int4_set(packed, k, static_cast<int8_t>(to_4bit(v, -8, 7)));
  } else {
    uint4_set(packed, k, static_cast<uint8_t>(to_4bit(v, 0, 15)));
  }
}

// y[i] = convert(x[i]) for every element; 4-bit types are read and written a nibble at a time.
// Chunks hold an even number of elements (kElementwiseGrain is even), so no two chunks write
// the same byte of a packed output.
template <typename S, typename D>
void cast_elements(const Tensor& x, Tensor& y, const CastRules& rules) {
  const void* src = x.raw_data();
  void* dst = y.raw_data();
  parallel_for(x.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const size_t k = static_cast<size_t>(i);
      auto value = [&]() -> decltype(auto) {
        if constexpr (is_packed_v<S>)
          return load_4bit<S>(static_cast<const uint8_t*>(src), k);
        else
          return static_cast<const S*>(src)[i];
      };
      if constexpr (is_packed_v<D>)
        store_4bit<D, S>(static_cast<uint8_t*>(dst), k, value());
      else
        static_cast<D*>(dst)[i] = convert<D>(value(), rules);
    }
  });
}

Tensor cast_tensor(const Tensor& x, DataType to, const CastRules& rules) {
  if (x.dtype() == to) return x;  // values are never written once made: share the buffer
  Tensor y = to == DataType::kString ? Tensor(to, x.shape()) : uninitialized_tensor(to, x.shape());
  if (dtype_is_4bit(to))
    std::memset(y.raw_data(), 0, y.nbytes());  // the unused high nibble of an odd count
  dispatch_elem(
      CastTypes{}, x.dtype(),
      [&]<typename S>() {
        dispatch_elem(
            CastTypes{}, to, [&]<typename D>() { cast_elements<S, D>(x, y, rules); },
            "the target type");
      },
      "input");
  return y;
}

// The `to` attribute: a type number from opset 6, a type name ("FLOAT") before.
DataType read_to(const OpContext& ctx) {
  const ir::Attribute* a = ctx.attr("to");
  if (!a) ctx.fail("attribute 'to' is required but absent");
  if (a->type == ir::Attribute::Type::kString) {
    for (int32_t t = 1; t <= static_cast<int32_t>(kDtypeFloat8E8M0); ++t)
      if (dtype_is_valid(t) && dtype_onnx_name(static_cast<DataType>(t)) == a->s)
        return static_cast<DataType>(t);
    ctx.fail("attribute 'to' is '{}'; it must name a TensorProto data type such as FLOAT, INT64",
             a->s);
  }
  int64_t t = ctx.attr_int("to");
  if (t < 1 || t > 24 || !dtype_is_valid(static_cast<int32_t>(t)) || t == 14 || t == 15)
    ctx.fail(
        "attribute 'to' is {}; it must be a TensorProto data type in [1, 24] other than "
        "complex (14, 15)",
        t);
  return static_cast<DataType>(t);
}

// `saturate` and `round_mode`, checked: saturate is 0 or 1, round_mode one of Cast's three.
CastRules read_rules(const OpContext& ctx) {
  CastRules r;
  const int64_t saturate = ctx.attr_int("saturate", 1);
  if (saturate != 0 && saturate != 1)
    ctx.fail("attribute 'saturate' is {}; it must be 0 or 1", saturate);
  r.saturate = saturate != 0;
  const std::string mode = ctx.attr_string("round_mode", "up");
  if (mode == "up")
    r.round_mode = E8M0Rounding::kUp;
  else if (mode == "down")
    r.round_mode = E8M0Rounding::kDown;
  else if (mode == "nearest")
    r.round_mode = E8M0Rounding::kNearest;
  else
    ctx.fail("attribute 'round_mode' is '{}'; valid choices are 'up', 'down', 'nearest'", mode);
  return r;
}

class Cast : public Kernel {
 public:
  explicit Cast(const OpContext& ctx) : to_(read_to(ctx)), rules_(read_rules(ctx)) {}
  Outputs run(const Inputs& in, RunContext&) override {
    return {cast_tensor(input_tensor(in, 0, "input"), to_, rules_)};
  }

 private:
  DataType to_;
  CastRules rules_;
};
// Versions 1 (`to` as a name), 6, 9 (strings), 13 (bfloat16), 19 (float8, saturate),
// 21 (int4, uint4), 23 (float4e2m1), 24 (float8e8m0), 25 (round_mode).
PARITY_REF_OP("", "Cast", 1, kOpsetMax, Cast);

class CastLike : public Kernel {
 public:
  explicit CastLike(const OpContext& ctx) : rules_(read_rules(ctx)) {}
  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "input");
    const Tensor& like = input_tensor(in, 1, "target_type");
    return {cast_tensor(x, like.dtype(), rules_)};
  }

 private:
  CastRules rules_;
};
// Versions 15, 19 (float8, saturate), 21 (int4, uint4), 23, 24, 25 as Cast.
PARITY_REF_OP("", "CastLike", 15, kOpsetMax, CastLike);

}  // namespace
}  // namespace parity::ref
