#include "cli/parse_util.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "core/error.h"

namespace parity::cli {

std::pair<std::string, std::string> split_last_colon(const std::string& token) {
  size_t pos = token.rfind(':');
  if (pos == std::string::npos) return {"", token};
  return {token.substr(0, pos), token.substr(pos + 1)};
}

std::optional<double> parse_number(const std::string& text) {
  std::string t = text;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
  size_t start = 0;
  while (start < t.size() && std::isspace(static_cast<unsigned char>(t[start]))) ++start;
  t = t.substr(start);
  if (t.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size()) return std::nullopt;
  // strtod accepts hex floats and "infinity"; Python's float() accepts "infinity" too.
  return v;
}

PerOutput<double> parse_per_output_number(const std::string& flag,
                                          const std::vector<std::string>& tokens) {
  PerOutput<double> result;
  for (const auto& token : tokens) {
    auto [name, value] = split_last_colon(token);
    auto v = parse_number(value);
    if (!v)
      fail_usage(
          "failed to parse {} with value '{}': '{}' is not a number; expected "
          "[<output>:]<number>, e.g. {} 1e-5 out0:1e-3",
          flag, token, value, flag);
    result.values[name] = *v;
  }
  return result;
}

PerOutput<int64_t> parse_per_output_int(const std::string& flag,
                                        const std::vector<std::string>& tokens) {
  PerOutput<int64_t> result;
  for (const auto& token : tokens) {
    auto [name, value] = split_last_colon(token);
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || end != value.c_str() + value.size() || errno == ERANGE)
      fail_usage(
          "failed to parse {} with value '{}': '{}' is not an integer; expected "
          "[<output>:]<integer>, e.g. {} 1 out0:2",
          flag, token, value, flag);
    result.values[name] = v;
  }
  return result;
}

PerOutput<ErrorStat> parse_per_output_error_stat(const std::vector<std::string>& tokens) {
  PerOutput<ErrorStat> result;
  for (const auto& token : tokens) {
    auto [name, value] = split_last_colon(token);
    result.values[name] = error_stat_from_name(value);
  }
  return result;
}

namespace {

std::string strip(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

// "[a,b,c]" -> {"a","b","c"}; nullopt when the brackets are missing.
std::optional<std::vector<std::string>> bracket_list(const std::string& text) {
  std::string t = strip(text);
  if (t.size() < 2 || t.front() != '[' || t.back() != ']') return std::nullopt;
  std::vector<std::string> items;
  std::string inner = t.substr(1, t.size() - 2);
  if (strip(inner).empty()) return items;
  size_t start = 0;
  for (;;) {
    size_t comma = inner.find(',', start);
    items.push_back(strip(inner.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

}  // namespace

DimList parse_dims(const std::string& flag, const std::string& token, const std::string& text) {
  auto items = bracket_list(text);
  if (!items)
    fail_usage(
        "failed to parse {} with value '{}': the shape must be a bracketed list, e.g. "
        "{} input:[1,3,224,224]",
        flag, token, flag);
  DimList dims;
  for (const auto& item : *items) {
    if (item.empty())
      fail_usage("failed to parse {} with value '{}': a dimension is empty", flag, token);
    char* end = nullptr;
    long long v = std::strtoll(item.c_str(), &end, 10);
    if (end == item.c_str() + item.size()) {
      dims.push_back(v >= 0 ? Dim::fixed(v) : Dim::unknown());
      continue;
    }
    std::string name = item;
    if (name.size() >= 2 && (name.front() == '\'' || name.front() == '"') &&
        name.back() == name.front())
      name = name.substr(1, name.size() - 2);
    dims.push_back(Dim::symbolic(name));
  }
  return dims;
}

TensorMetadata parse_input_shapes(const std::string& flag, const std::vector<std::string>& tokens) {
  TensorMetadata meta;
  for (const auto& token : tokens) {
    auto [name, shape] = split_last_colon(token);
    if (name.empty())
      fail_usage(
          "failed to parse {} with value '{}': expected <input>:<shape>, e.g. "
          "{} input:[1,3,224,224]",
          flag, token, flag);
    meta.add(name, std::nullopt, parse_dims(flag, token, shape));
  }
  return meta;
}

std::map<std::string, ValueRange> parse_val_ranges(const std::vector<std::string>& tokens) {
  std::map<std::string, ValueRange> ranges;
  for (const auto& token : tokens) {
    auto [name, text] = split_last_colon(token);
    auto items = bracket_list(text);
    if (!items || items->size() != 2)
      fail_usage(
          "failed to parse --val-range with value '{}': expected [<input>:][min,max], "
          "e.g. --val-range [0,1] input0:[-1,1]",
          token);
    ValueRange r;
    std::optional<double>* ends[2] = {&r.min, &r.max};
    for (int i = 0; i < 2; ++i) {
      const std::string& item = (*items)[i];
      if (item == "None") continue;
      auto v = parse_number(item);
      if (!v)
        fail_usage("failed to parse --val-range with value '{}': '{}' is not a number", token,
                   item);
      *ends[i] = *v;
    }
    if (r.min && r.max && *r.min > *r.max)
      fail_usage(
          "failed to parse --val-range with value '{}': the minimum must not exceed "
          "the maximum",
          token);
    ranges[name] = r;
  }
  return ranges;
}

TopKOptions parse_top_k(const std::vector<std::string>& tokens) {
  TopKOptions options;
  for (const auto& token : tokens) {
    auto [name, spec] = split_last_colon(token);
    auto bad = [&] {
      fail_usage(
          "failed to parse --postprocess with value '{}': expected [<output>:]top-<K>"
          "[,axis=<A>], e.g. --postprocess top-5 logits:top-1,axis=1",
          token);
    };
    if (spec.rfind("top-", 0) != 0) bad();
    std::string rest = spec.substr(4);
    int64_t axis = -1;
    if (size_t comma = rest.find(','); comma != std::string::npos) {
      std::string axis_part = rest.substr(comma + 1);
      rest = rest.substr(0, comma);
      if (axis_part.rfind("axis=", 0) != 0) bad();
      char* end = nullptr;
      std::string a = axis_part.substr(5);
      axis = std::strtoll(a.c_str(), &end, 10);
      if (a.empty() || end != a.c_str() + a.size()) bad();
    }
    char* end = nullptr;
    int64_t k = std::strtoll(rest.c_str(), &end, 10);
    if (rest.empty() || end != rest.c_str() + rest.size() || k <= 0) bad();
    options.k.values[name] = {k, axis};
  }
  return options;
}

size_t parse_byte_size(const std::string& flag, const std::string& text, bool allow_zero) {
  size_t digits = 0;
  while (digits < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.'))
    ++digits;
  std::string unit = text.substr(digits);
  std::transform(unit.begin(), unit.end(), unit.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  const std::optional<double> value = parse_number(text.substr(0, digits));
  const std::pair<const char*, double> units[] = {
      {"", 1},         {"b", 1},       {"k", 0x1p10},   {"kb", 0x1p10}, {"kib", 0x1p10},
      {"m", 0x1p20},   {"mb", 0x1p20}, {"mib", 0x1p20}, {"g", 0x1p30},  {"gb", 0x1p30},
      {"gib", 0x1p30}, {"t", 0x1p40},  {"tb", 0x1p40},  {"tib", 0x1p40}};
  for (const auto& [name, scale] : units)
    if (value && digits > 0 && unit == name && *value * scale >= (allow_zero ? 0 : 1) &&
        *value * scale < 0x1p62)
      return static_cast<size_t>(*value * scale);
  fail_usage(
      "failed to parse {} with value '{}': a size is a {} number of bytes with an "
      "optional unit; valid units are K, M, G, T (powers of 1024, also KB/KiB...)",
      flag, text, allow_zero ? "non-negative" : "positive");
}

}  // namespace parity::cli
