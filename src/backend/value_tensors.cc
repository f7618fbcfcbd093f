#include "backend/value_tensors.h"

#include <optional>

#include <fmt/format.h>

#include "core/error.h"

namespace parity {

namespace {

void add_map(TensorMap& out, const std::string& prefix, const MapValue& m) {
  out.set(prefix + ".keys", m.keys);
  out.set(prefix + ".values", m.values);
}

MapValue map_from(const TensorMap& feed, const std::string& prefix) {
  const Tensor* keys = feed.find(prefix + ".keys");
  const Tensor* values = feed.find(prefix + ".values");
  if (!keys || !values)
    fail(
        "failed to find the map '{0}' in the feed: it needs the tensors '{0}.keys' and "
        "'{0}.values'",
        prefix);
  return sorted_map_from_entries(*keys, *values);
}

}  // namespace

void add_value_tensors(TensorMap& out, const std::string& name, const Value& value) {
  switch (value.kind) {
    case Value::Kind::kTensor:
      out.set(name, value.tensor);
      return;
    case Value::Kind::kMap:
      add_map(out, name, value.map);
      return;
    case Value::Kind::kSequence:
      if (value.sequence.empty()) out.set(name + "[]", Tensor(value.elem_type, {0}));
      for (size_t i = 0; i < value.sequence.size(); ++i)
        out.set(fmt::format("{}[{}]", name, i), value.sequence[i]);
      return;
    case Value::Kind::kMapSequence:
      if (value.maps.empty()) out.set(name + "[]", Tensor(value.elem_type, {0}));
      for (size_t i = 0; i < value.maps.size(); ++i)
        add_map(out, fmt::format("{}[{}]", name, i), value.maps[i]);
      return;
    case Value::Kind::kNone:
      fail("failed to return the output '{}': it is an empty optional, which has no tensors", name);
  }
}

Value value_from_tensors(const TensorMap& feed, const std::string& name, Value::Kind kind) {
  if (kind == Value::Kind::kTensor) return Value(feed.at(name));
  if (kind == Value::Kind::kMap) return Value::make_map(map_from(feed, name));
  const Tensor* empty = feed.find(name + "[]");
  std::vector<Tensor> tensors;
  std::vector<MapValue> maps;
  for (size_t i = 0;; ++i) {
    const std::string item = fmt::format("{}[{}]", name, i);
    if (kind == Value::Kind::kSequence) {
      const Tensor* t = feed.find(item);
      if (!t) break;
      tensors.push_back(*t);
    } else {
      if (!feed.find(item + ".keys")) break;
      maps.push_back(map_from(feed, item));
    }
  }
  if (tensors.empty() && maps.empty() && !empty)
    fail(
        "failed to find the sequence '{0}' in the feed: it needs the tensors '{0}[0]', "
        "'{0}[1]', ... (or '{0}[]' for an empty sequence)",
        name);
  if (kind == Value::Kind::kSequence) {
    DataType elem = tensors.empty() ? empty->dtype() : tensors.front().dtype();
    return Value::make_sequence(std::move(tensors), elem);
  }
  DataType key = maps.empty() ? DataType::kString : maps.front().keys.dtype();
  DataType val = maps.empty() ? empty->dtype() : maps.front().values.dtype();
  return Value::make_map_sequence(std::move(maps), key, val);
}

std::vector<std::pair<std::string, Value>> value_inputs(const TensorMap& feed,
                                                        const std::vector<std::string>& inputs,
                                                        TensorMap& rest) {
  std::vector<std::pair<std::string, Value>> values;
  std::vector<bool> used(feed.size(), false);
  for (const std::string& name : inputs) {
    if (feed.contains(name)) continue;
    TensorMap parts;
    for (size_t i = 0; i < feed.size(); ++i)
      if (!used[i] && is_value_tensor_of(feed[i].first, name)) {
        parts.set(feed[i].first, feed[i].second);
        used[i] = true;
      }
    if (parts.empty()) continue;  // the runner reports the missing input
    Value::Kind kind = Value::Kind::kSequence;
    if (parts.contains(name + ".keys") || parts.contains(name + ".values"))
      kind = Value::Kind::kMap;
    else if (parts.contains(name + "[0].keys") || parts.contains(name + "[0].values"))
      kind = Value::Kind::kMapSequence;
    values.emplace_back(name, value_from_tensors(parts, name, kind));
  }
  for (size_t i = 0; i < feed.size(); ++i)
    if (!used[i]) rest.set(feed[i].first, feed[i].second);
  return values;
}

bool is_value_tensor_of(const std::string& tensor_name, const std::string& name) {
  if (tensor_name.size() <= name.size() || tensor_name.compare(0, name.size(), name) != 0)
    return false;
  const char next = tensor_name[name.size()];
  return next == '[' || tensor_name.substr(name.size()) == ".keys" ||
         tensor_name.substr(name.size()) == ".values";
}

namespace {

// "z[3].keys" -> ("z", 3, ".keys"); "m.values" -> ("m", -1, ".values"); "s[2]" -> ("s", 2, "").
struct DerivedName {
  std::string base;
  int64_t index = -1;
  std::string part;  // "", ".keys" or ".values"
};
std::optional<DerivedName> parse_derived(const std::string& name) {
  DerivedName d;
  std::string rest = name;
  for (const char* part : {".keys", ".values"}) {
    const std::string p = part;
    if (rest.size() > p.size() && rest.compare(rest.size() - p.size(), p.size(), p) == 0) {
      d.part = p;
      rest.resize(rest.size() - p.size());
      break;
    }
  }
  if (!rest.empty() && rest.back() == ']') {
    const size_t open = rest.rfind('[');
    const std::string digits =
        open == std::string::npos ? "" : rest.substr(open + 1, rest.size() - open - 2);
    if (!digits.empty() && digits.size() < 10 &&
        digits.find_first_not_of("0123456789") == std::string::npos) {
      d.index = std::stoll(digits);
      d.base = rest.substr(0, open);
      return d.base.empty() ? std::nullopt : std::optional(d);
    }
  }
  if (d.part.empty() || rest.empty()) return std::nullopt;
  d.base = rest;
  return d;
}

}  // namespace

std::vector<std::pair<std::string, Value>> group_value_tensors(const TensorMap& tensors) {
  std::vector<std::pair<std::string, Value>> out;
  std::vector<bool> used(tensors.size(), false);
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (used[i]) continue;
    const auto& [name, tensor] = tensors[i];
    std::optional<DerivedName> d = parse_derived(name);
    std::optional<Value> value;
    if (d && d->index < 0) {  // a map
      if (tensors.contains(d->base + ".keys") && tensors.contains(d->base + ".values")) {
        try {
          value = value_from_tensors(tensors, d->base, Value::Kind::kMap);
        } catch (const Error&) {
        }
      }
    } else if (d && d->index == 0) {  // a sequence, of maps when its item 0 is a map
      const Value::Kind kind = d->part.empty() ? Value::Kind::kSequence : Value::Kind::kMapSequence;
      try {
        value = value_from_tensors(tensors, d->base, kind);
      } catch (const Error&) {
      }
    }
    if (!value) {
      out.emplace_back(name, Value(tensor));
      continue;
    }
    for (size_t k = i; k < tensors.size(); ++k)
      if (is_value_tensor_of(tensors[k].first, d->base)) used[k] = true;
    out.emplace_back(d->base, std::move(*value));
  }
  return out;
}

}  // namespace parity
