#include "backend/runner.h"

#include <ctime>
#include <map>
#include <mutex>

#include "backend/value_tensors.h"
#include "core/logger.h"

namespace parity {

namespace {

std::string default_name(const std::string& prefix) {
  static std::mutex mutex;
  static std::map<std::string, int> counters;
  int count;
  {
    std::lock_guard lock(mutex);
    count = counters[prefix]++;
  }
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%m/%d/%y-%H:%M:%S", &local);
  return fmt::format("{}-N{}-{}", prefix, count, stamp);
}

// Python-set-like rendering used in Polygraphy's messages: {'a', 'b'}.
std::string name_set(const std::vector<std::string>& names) {
  std::vector<std::string> quoted;
  for (const auto& n : names) quoted.push_back(fmt::format("'{}'", n));
  return fmt::format("{{{}}}", fmt::join(quoted, ", "));
}

}  // namespace

Runner::Runner(std::string name, const std::string& prefix)
    : name_(name.empty() ? default_name(prefix) : std::move(name)) {}

Runner::~Runner() {
  if (active_)
    logger().warning("{} | Was activated but never deactivated. This could cause a memory leak!",
                     pad_name(name_));
}

void Runner::activate() {
  if (active_) {
    logger().warning(
        "{} | Already active; will not activate again. If you really want to "
        "activate this runner again, call activate_impl() directly",
        pad_name(name_));
    return;
  }
  activate_impl();
  active_ = true;
}

void Runner::deactivate() {
  if (!active_) {
    logger().warning(
        "{} | Not active; will not deactivate. If you really want to deactivate "
        "this runner, call deactivate_impl() directly",
        pad_name(name_));
    return;
  }
  inference_time_.reset();
  active_ = false;
  deactivate_impl();
}

TensorMetadata Runner::input_metadata() {
  if (!active_)
    logger().critical("{} | Must be activated prior to calling input_metadata()", pad_name(name_));
  return input_metadata_impl();
}

TensorMap Runner::infer(const TensorMap& feed, bool check_inputs) {
  if (!active_)
    logger().critical("{} | Must be activated prior to calling infer()", pad_name(name_));
  if (check_inputs) check_feed(name_, feed, input_metadata_impl());
  return infer_impl(feed);
}

std::optional<bool> Runner::supports(const ir::Node&, int64_t) const { return std::nullopt; }

std::optional<double> Runner::last_inference_time() const {
  if (!inference_time_)
    logger().log_once(Severity::kWarning,
                      fmt::format("{} | `inference_time` was not set. Inference time will be "
                                  "incorrect! To correctly compare runtimes, please set the "
                                  "`inference_time` attribute in `infer_impl()`",
                                  pad_name(name_)));
  return inference_time_;
}

void check_feed(const std::string& runner_name, const TensorMap& feed,
                const TensorMetadata& expected) {
  std::vector<std::string> missing, extra;
  // A sequence or map input (one without a tensor type) may come as its derived tensors
  // (backend/value_tensors.h).
  auto value_input_of = [&](const std::string& tensor_name) -> const TensorMeta* {
    for (const auto& meta : expected)
      if (!meta.dtype && is_value_tensor_of(tensor_name, meta.name)) return &meta;
    return nullptr;
  };
  for (const auto& meta : expected) {
    bool found = feed.contains(meta.name);
    for (const auto& entry : feed)
      found = found || (!meta.dtype && is_value_tensor_of(entry.first, meta.name));
    if (!found) missing.push_back(meta.name);
  }
  for (const auto& [name, t] : feed)
    if (!expected.find(name) && !value_input_of(name)) extra.push_back(name);
  auto note = [&] {
    return fmt::format("Note: All inputs are: {}, but inputs provided were: {}",
                       name_set(expected.names()), name_set(feed.names()));
  };
  if (!missing.empty())
    logger().critical("The following inputs were not found in input data: {}.\n{}",
                      name_set(missing), note());
  if (!extra.empty())
    logger().critical("Extra inputs in input data: {}.\n{}", name_set(extra), note());

  for (const auto& [name, t] : feed) {
    const TensorMeta* meta = expected.find(name);
    if (!meta) continue;  // an item of a sequence or map input
    if (meta->dtype && *meta->dtype != t.dtype())
      logger().critical(
          "Input tensor: {} | Received unexpected dtype: {}.\nNote: Expected type: {}", name,
          dtype_name(t.dtype()), dtype_name(*meta->dtype));
    if (meta->shape && !dims_accept(*meta->shape, t.shape()))
      logger().critical(
          "Input tensor: {} | Received incompatible shape: {}.\nNote: Expected a shape "
          "compatible with: {}",
          name, shape_str(t.shape()), dims_str(*meta->shape));
  }
  (void)runner_name;
}

namespace {

// What a sequence or map type holds, for the data loader; nullopt for other types.
std::optional<ValueMeta> value_meta(const ir::ValueType& type) {
  using K = ir::ValueType::Kind;
  auto map_meta = [](const ir::ValueType& map, ValueMeta::Kind kind) {
    ValueMeta m;
    m.kind = kind;
    m.key_type = map.elem_type;
    if (map.inner && map.inner->kind == K::kTensor) m.elem_type = map.inner->elem_type;
    return m;
  };
  if (type.kind == K::kMap) return map_meta(type, ValueMeta::Kind::kMap);
  if (type.kind != K::kSequence || !type.inner) return std::nullopt;
  if (type.inner->kind == K::kMap) return map_meta(*type.inner, ValueMeta::Kind::kMapSequence);
  if (type.inner->kind != K::kTensor) return std::nullopt;
  ValueMeta m;
  m.elem_type = type.inner->elem_type;
  m.elem_shape = type.inner->shape;
  return m;
}

}  // namespace

TensorMetadata model_input_metadata(const ir::Model& model) {
  TensorMetadata meta;
  for (const auto& in : model.graph.inputs) {
    if (auto value = value_meta(in.type)) {
      meta.add_value(in.name, std::move(*value));
      continue;
    }
    std::optional<DataType> dtype;
    std::optional<DimList> shape;
    if (in.type.kind == ir::ValueType::Kind::kTensor) {
      dtype = in.type.elem_type;
      shape = in.type.shape;
    }
    meta.add(in.name, dtype, shape);
  }
  return meta;
}

}  // namespace parity
