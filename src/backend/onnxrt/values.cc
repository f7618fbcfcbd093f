#include "backend/onnxrt/values.h"

#include <fmt/format.h>

#include "core/error.h"

namespace parity {

namespace {

int kind_of(const ort::Api& api, const ort::Value* v) {
  int kind = ort::kTypeUnknown;
  ort::check(api, api.GetValueType(v, &kind), "inspect an output");
  return kind;
}

OrtValuePtr item_of(const OrtRuntime& runtime, const ort::Value* v, int index) {
  const ort::Api& api = runtime.api();
  ort::Value* raw = nullptr;
  ort::check(api, api.GetValue(v, index, runtime.allocator(), &raw), "read an item of an output");
  return OrtValuePtr(raw, OrtValueRelease{api.ReleaseValue});
}

size_t count_of(const ort::Api& api, const ort::Value* v) {
  size_t n = 0;
  ort::check(api, api.GetValueCount(v, &n), "count the items of an output");
  return n;
}

MapValue map_from_ort(const OrtRuntime& runtime, const ort::Value* v, const std::string& name) {
  // The tensors GetValue returns are copies, owned by the Tensors made from them.
  Tensor keys = from_ort_value(runtime, item_of(runtime, v, 0), name + ".keys");
  Tensor values = from_ort_value(runtime, item_of(runtime, v, 1), name + ".values");
  return sorted_map_from_entries(keys.reshaped({keys.numel()}), values.reshaped({values.numel()}));
}

OrtValuePtr create(const OrtRuntime& runtime, const std::vector<OrtValuePtr>& items, int type,
                   const std::string& name) {
  const ort::Api& api = runtime.api();
  std::vector<const ort::Value*> raw;
  for (const auto& item : items) raw.push_back(item.get());
  ort::Value* out = nullptr;
  ort::check(api, api.CreateValue(raw.data(), raw.size(), type, &out),
             fmt::format("create the input {}", name));
  return OrtValuePtr(out, OrtValueRelease{api.ReleaseValue});
}

OrtValuePtr map_to_ort(const OrtRuntime& runtime, const MapValue& m, const std::string& name) {
  std::vector<OrtValuePtr> parts;
  parts.push_back(to_ort_value(runtime, m.keys, name + ".keys"));
  parts.push_back(to_ort_value(runtime, m.values, name + ".values"));
  return create(runtime, parts, ort::kTypeMap, name);
}

}  // namespace

Value value_from_ort(const OrtRuntime& runtime, OrtValuePtr value, const std::string& name) {
  const ort::Api& api = runtime.api();
  const int kind = kind_of(api, value.get());
  if (kind == ort::kTypeTensor) return Value(from_ort_value(runtime, std::move(value), name));
  if (kind == ort::kTypeMap) return Value::make_map(map_from_ort(runtime, value.get(), name));
  if (kind != ort::kTypeSequence)
    fail(
        "failed to read the output '{}' of ONNX Runtime: it is of ONNX kind {}; Parity reads "
        "tensors, sequences and maps",
        name, kind);
  const size_t n = count_of(api, value.get());
  std::vector<Tensor> tensors;
  std::vector<MapValue> maps;
  for (size_t i = 0; i < n; ++i) {
    OrtValuePtr item = item_of(runtime, value.get(), static_cast<int>(i));
    const std::string item_name = fmt::format("{}[{}]", name, i);
    const int item_kind = kind_of(api, item.get());
    if (item_kind == ort::kTypeMap)
      maps.push_back(map_from_ort(runtime, item.get(), item_name));
    else
      tensors.push_back(from_ort_value(runtime, std::move(item), item_name));
  }
  if (!maps.empty() && !tensors.empty())
    fail("failed to read the output '{}' of ONNX Runtime: a sequence mixes maps and tensors", name);
  // An empty sequence says nothing of its element type here; float32 stands in.
  if (!maps.empty()) {
    const DataType key = maps.front().keys.dtype(), val = maps.front().values.dtype();
    return Value::make_map_sequence(std::move(maps), key, val);
  }
  DataType elem = tensors.empty() ? DataType::kFloat32 : tensors.front().dtype();
  return Value::make_sequence(std::move(tensors), elem);
}

OrtValuePtr value_to_ort(const OrtRuntime& runtime, const Value& value, const std::string& name) {
  switch (value.kind) {
    case Value::Kind::kTensor:
      return to_ort_value(runtime, value.tensor, name);
    case Value::Kind::kMap:
      return map_to_ort(runtime, value.map, name);
    case Value::Kind::kSequence: {
      std::vector<OrtValuePtr> items;
      for (size_t i = 0; i < value.sequence.size(); ++i)
        items.push_back(to_ort_value(runtime, value.sequence[i], fmt::format("{}[{}]", name, i)));
      return create(runtime, items, ort::kTypeSequence, name);
    }
    case Value::Kind::kMapSequence: {
      std::vector<OrtValuePtr> items;
      for (size_t i = 0; i < value.maps.size(); ++i)
        items.push_back(map_to_ort(runtime, value.maps[i], fmt::format("{}[{}]", name, i)));
      return create(runtime, items, ort::kTypeSequence, name);
    }
    case Value::Kind::kNone:
      break;
  }
  fail("failed to pass the input '{}' to ONNX Runtime: it is an empty optional", name);
}

}  // namespace parity
