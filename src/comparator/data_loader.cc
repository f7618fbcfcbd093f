// DataLoader: Polygraphy's synthetic inputs, reproduced draw for draw.
//
// For feed i, one NumpyRandomState(seed + i) generates every input in metadata order, exactly as
// polygraphy.comparator.DataLoader.__getitem__ does: integers and bools through
// randint(low, high + 1, size=shape, dtype=dtype), everything else through
// random_sample(size=shape) * scale + shift in float64 and then a cast. Shapes come from the
// model, overridden by the user's metadata (names may be fnmatch patterns), with dynamic
// dimensions set to 1. The messages are Polygraphy's, so users recognise them.
//
// Sequence and map inputs, which Polygraphy cannot generate, are generated in the same stream
// (each tensor of a sequence, each map's values, as an input of that type and shape would be)
// and spelled as their derived tensors (backend/value_tensors.h).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string_view>

#include "backend/value_tensors.h"
#include "comparator/data_loader.h"
#include "core/error.h"
#include "core/logger.h"
#include "core/py_format.h"

namespace parity {

namespace {

// Python's fnmatch.fnmatchcase: '*' any run, '?' one character, '[seq]' / '[!seq]' a set with
// a-z ranges; a '[' without its ']' is literal. Names are compared case-sensitively (POSIX).
bool glob_match(std::string_view name, std::string_view pattern) {
  size_t n = 0, p = 0;
  size_t star_p = std::string_view::npos, star_n = 0;  // where to resume after the last '*'
  while (n < name.size()) {
    bool advanced = false;
    if (p < pattern.size()) {
      char c = pattern[p];
      if (c == '*') {
        star_p = ++p;
        star_n = n;
        continue;
      }
      if (c == '?') {
        ++p, ++n;
        advanced = true;
      } else if (c == '[') {
        size_t i = p + 1;
        bool negate = i < pattern.size() && pattern[i] == '!';
        if (negate) ++i;
        size_t close = pattern.find(']', i < pattern.size() && pattern[i] == ']' ? i + 1 : i);
        if (close == std::string_view::npos) {
          // No closing bracket: '[' stands for itself.
          if (name[n] == '[') ++p, ++n, advanced = true;
        } else {
          bool in_set = false;
          for (size_t k = i; k < close; ++k) {
            auto byte = [](char ch) { return static_cast<unsigned char>(ch); };
            if (k + 2 < close && pattern[k + 1] == '-') {
              in_set |= byte(pattern[k]) <= byte(name[n]) && byte(name[n]) <= byte(pattern[k + 2]);
              k += 2;
            } else {
              in_set |= pattern[k] == name[n];
            }
          }
          if (in_set != negate) p = close + 1, ++n, advanced = true;
        }
      } else if (c == name[n]) {
        ++p, ++n;
        advanced = true;
      }
    }
    if (advanced) continue;
    if (star_p == std::string_view::npos) return false;
    p = star_p;  // let the last '*' swallow one more character
    n = ++star_n;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool contains_wildcard(std::string_view s) { return s.find_first_of("*?[") != s.npos; }

// Polygraphy's find_str_in_iterable: exact, then case-insensitive substring either way.
std::optional<std::string> close_match(const std::string& name,
                                       const std::vector<std::string>& names) {
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const std::string lname = lower(name);
  for (const std::string& candidate : names) {
    if (candidate == name) return candidate;
  }
  for (const std::string& candidate : names) {
    const std::string lc = lower(candidate);
    if (lc.find(lname) != lc.npos || lname.find(lc) != lname.npos) return candidate;
  }
  return std::nullopt;
}

// Python's repr of a float (0.0, 5.5, inf, 1e-05), which Polygraphy's messages show.
std::string py_float(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".ein") == s.npos) s += ".0";
  return s;
}

// A Python set of strings as repr() shows it, sorted so that messages are reproducible.
std::string py_set(std::vector<std::string> items) {
  if (items.empty()) return "set()";
  std::sort(items.begin(), items.end());
  std::vector<std::string> quoted;
  for (const std::string& s : items) quoted.push_back(fmt::format("'{}'", s));
  return fmt::format("{{{}}}", fmt::join(quoted, ", "));
}

// NumPy prints an integer array as "[1 2 3]".
std::string numpy_int_array_str(const std::vector<int64_t>& values) {
  return fmt::format("[{}]", fmt::join(values, " "));
}

// Polygraphy's shapes: BoundedShape-like tuples for metadata, lists for a generated shape.
std::string shape_list_str(const Shape& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

// The dtypes NumPy can hold; Polygraphy's loader stops at any other one.
bool numpy_can_hold(DataType t) {
  switch (t) {
    case DataType::kFloat16:
    case DataType::kFloat32:
    case DataType::kFloat64:
    case DataType::kBool:
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kUInt8:
    case DataType::kUInt16:
    case DataType::kUInt32:
    case DataType::kUInt64:
      return true;
    default:
      return false;
  }
}

void check_numpy_dtype(const std::string& name, std::optional<DataType> dtype) {
  if (!dtype || numpy_can_hold(*dtype)) return;
  logger().critical(
      "Could not convert data type: {} to numpy, so the default data loader cannot generate a "
      "numpy array for input: {}. Please use a custom data loader to provide inputs. ",
      dtype_name(*dtype), name);
}

// Polygraphy's is_valid_shape_override: same rank, and every static model dim kept. A model
// input of unknown rank accepts any shape.
bool is_valid_shape_override(const DimList& user, const std::optional<DimList>& model) {
  if (!model) return true;
  if (model->size() != user.size()) return false;
  for (size_t i = 0; i < user.size(); ++i)
    if ((*model)[i].is_fixed() && (*model)[i] != user[i]) return false;
  return true;
}

// Polygraphy's shape-tensor heuristic (for old TensorRT): a user entry with this exact name whose
// static "shape" has as many values as the 1-D integer input has elements gives the input's
// values, not its shape.
bool is_shape_tensor(const TensorMeta& input, std::optional<DataType> dtype,
                     const TensorMetadata& user) {
  const TensorMeta* exact = user.find(input.name);
  if (!exact || !exact->shape) return false;
  if (dtype && !dtype_is_integer(*dtype)) return false;
  if (!input.shape || !dims_are_fixed(*input.shape) || input.shape->size() != 1) return false;
  return dims_are_fixed(*exact->shape) &&
         static_cast<int64_t>(exact->shape->size()) == input.shape->front().value;
}

// For each input, the user entry that applies to it: the one with its exact name, else the
// first pattern that matches it. Warns about user entries that match no input.
std::vector<const TensorMeta*> match_user_metadata(const TensorMetadata& user,
                                                   const TensorMetadata& inputs) {
  std::vector<const TensorMeta*> matched(inputs.size(), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i) {
    matched[i] = user.find(inputs[i].name);
    for (size_t j = 0; !matched[i] && j < user.size(); ++j)
      if (glob_match(inputs[i].name, user[j].name)) matched[i] = &user[j];
  }
  const std::vector<std::string> names = inputs.names();
  for (const TensorMeta& entry : user) {
    bool used = false;
    for (const std::string& name : names)
      used |= name == entry.name || glob_match(name, entry.name);
    if (used) continue;
    if (contains_wildcard(entry.name)) {
      logger().warning(
          "Input tensor wildcard: {} | Metadata was provided, but none of the matched "
          "inputs exist in one or more runners.",
          entry.name);
    } else {
      std::string msg = fmt::format(
          "Input tensor: {} | Metadata was provided, but the input does "
          "not exist in one or more runners.",
          entry.name);
      if (auto close = close_match(entry.name, names))
        msg += fmt::format("\nMaybe you meant to set: {}?", *close);
      logger().warning("{}", msg);
    }
  }
  return matched;
}

// What to generate for one input once dtype and shape are settled.
struct InputPlan {
  std::optional<DataType> dtype;  // unknown: float64, as NumPy's astype(None)
  Shape shape;
  bool shape_tensor = false;
};

InputPlan plan_input(const TensorMeta& input, const TensorMeta* user_entry,
                     const TensorMetadata& user) {
  const std::string& name = input.name;
  const std::string model_shape = input.shape ? bounded_shape_str(*input.shape) : "None";
  check_numpy_dtype(name, input.dtype);

  InputPlan plan;
  plan.dtype = input.dtype;
  std::optional<DimList> dims = input.shape;
  if (user_entry) {
    if (user_entry->dtype) plan.dtype = user_entry->dtype;
    check_numpy_dtype(name, plan.dtype);
    if (user_entry->shape) {
      const DimList& user_dims = *user_entry->shape;
      plan.shape_tensor = is_shape_tensor(input, plan.dtype, user);
      if (!dims_are_fixed(user_dims)) {
        logger().warning(
            "Input tensor: {} [shape={}] | Provided input shape: {} is dynamic.\nDynamic shapes "
            "cannot be used to generate inference data. Will use default shape instead.\nTo avoid "
            "this, please provide a fixed shape to the data loader. ",
            name, model_shape, bounded_shape_str(user_dims));
      } else if (!is_valid_shape_override(user_dims, dims) && !plan.shape_tensor) {
        logger().log_once(Severity::kWarning,
                          fmt::format("Input tensor: {} [shape={}] | Cannot use provided custom "
                                      "shape: {} to override tensor shape. Will use default shape "
                                      "instead.",
                                      name, model_shape, bounded_shape_str(user_dims)));
      } else {
        dims = user_dims;
      }
    }
  }

  if (!dims)
    fail(
        "failed to generate input {} with shape None: its rank is unknown; give its shape with "
        "--input-shapes {}:[...]",
        name, name);
  for (const Dim& d : *dims) plan.shape.push_back(d.is_fixed() ? d.value : 1);
  if (!dims_are_fixed(*dims)) {
    logger().log_once(Severity::kWarning,
                      fmt::format("Input tensor: {} [shape={}] | Will generate data of shape: {}.\n"
                                  "If this is incorrect, please provide a custom data loader.",
                                  name, bounded_shape_str(*dims), shape_list_str(plan.shape)));
  }
  return plan;
}

// Polygraphy's value_or_from_dict(val_range, name, (0.0, 1.0)); an unset end is its default.
std::pair<double, double> value_range(const DataLoaderOptions& options, const std::string& name) {
  auto it = options.val_range.find(name);
  if (it == options.val_range.end()) it = options.val_range.find("");
  if (it == options.val_range.end()) return {0.0, 1.0};
  return {it->second.min.value_or(0.0), it->second.max.value_or(1.0)};
}

// Python's int(x) for a float bound: truncation; inf and NaN cannot become integers.
double python_int(double x, const std::string& name, double min, double max) {
  if (!std::isfinite(x))
    fail(
        "failed to generate input {} with val_range [{}, {}]: an integer input needs finite "
        "bounds (Python's int() rejects {}); give finite values in --val-range",
        name, py_float(min), py_float(max), py_float(x));
  return std::trunc(x) + 0.0;  // + 0.0 turns -0 into 0, as int(-0.5) is 0
}

// The limits NumPy's randint accepts for a dtype, as doubles: every limit is exact except the
// 64-bit maxima, so `max` is checked as "high < max_exclusive" (2^63 and 2^64 are exact).
struct RandintLimits {
  double min, max_exclusive;
};

RandintLimits randint_limits(DataType t) {
  switch (t) {
    case DataType::kBool:
      return {0, 2};
    case DataType::kInt8:
      return {-128.0, 128.0};
    case DataType::kInt16:
      return {-32768.0, 32768.0};
    case DataType::kInt32:
      return {-2147483648.0, 2147483648.0};
    case DataType::kInt64:
      return {-9223372036854775808.0, 9223372036854775808.0};
    case DataType::kUInt8:
      return {0, 256.0};
    case DataType::kUInt16:
      return {0, 65536.0};
    case DataType::kUInt32:
      return {0, 4294967296.0};
    default:
      return {0, 18446744073709551616.0};  // uint64
  }
}

// An integer-valued double within [-2^63, 2^64) as NumPy's 64-bit offset (two's complement).
uint64_t as_wrapped_uint64(double v) {
  return v < 0 ? static_cast<uint64_t>(static_cast<int64_t>(v)) : static_cast<uint64_t>(v);
}

Tensor generate_integers(const std::string& name, DataType dtype, const Shape& shape,
                         const DataLoaderOptions& options, NumpyRandomState& rng) {
  auto [min, max] = dtype != DataType::kBool && options.int_range ? *options.int_range
                                                                  : value_range(options, name);
  double low, high;
  if (dtype == DataType::kBool) {
    low = min != 0.0;  // Python's bool(); NaN is true
    high = max != 0.0;
    logger().log_once(Severity::kVerbose,
                      fmt::format("Input tensor: {} | Generating input data in range: [{}, {}]",
                                  name, low ? "True" : "False", high ? "True" : "False"));
  } else {
    low = python_int(min, name, min, max);
    high = python_int(max, name, min, max);
    logger().log_once(Severity::kVerbose,
                      fmt::format("Input tensor: {} | Generating input data in range: [{:.0f}, "
                                  "{:.0f}]",
                                  name, low, high));
  }
  Tensor out(dtype, shape);
  if (out.numel() == 0) return out;  // NumPy returns an empty array before checking the bounds

  const RandintLimits limits = randint_limits(dtype);
  const std::string_view type = dtype_name(dtype);
  if (low < limits.min)
    fail(
        "failed to generate input {} with val_range [{}, {}]: low is out of bounds for {}; the "
        "range must fit in {}",
        name, py_float(min), py_float(max), type, type);
  if (high >= limits.max_exclusive)
    fail(
        "failed to generate input {} with val_range [{}, {}]: high is out of bounds for {}; the "
        "range must fit in {}",
        name, py_float(min), py_float(max), type, type);
  if (low > high)
    fail(
        "failed to generate input {} with val_range [{}, {}]: low > high; give the minimum "
        "first",
        name, py_float(min), py_float(max));
  const uint64_t off = as_wrapped_uint64(low);
  rng.bounded_fill(dtype, off, as_wrapped_uint64(high) - off, out.raw_data(),
                   static_cast<size_t>(out.numel()));
  return out;
}

Tensor generate_floats(const std::string& name, std::optional<DataType> dtype, const Shape& shape,
                       const DataLoaderOptions& options, NumpyRandomState& rng) {
  auto [min, max] = options.float_range ? *options.float_range : value_range(options, name);
  logger().log_once(Severity::kVerbose,
                    fmt::format("Input tensor: {} | Generating input data in range: [{}, {}]", name,
                                py_float(min), py_float(max)));
  // Infinite bounds scale the sample instead of shifting it, so that they survive (inf - inf
  // would be NaN); Polygraphy's ArraySampler.sample_float does the same.
  double scale = max - min, shift = min;
  if (std::isinf(min)) scale = min, shift = 0.0;
  if (std::isinf(max)) scale = max;

  Tensor out(dtype.value_or(DataType::kFloat64), shape);
  const size_t count = static_cast<size_t>(out.numel());
  // Two roundings in float64 (multiply, then add) and one cast, as NumPy's array arithmetic.
  auto value = [&] {
    double product = rng.random_sample() * scale;
    return product + shift;
  };
  switch (out.dtype()) {
    case DataType::kFloat64: {
      double* data = out.data<double>();
      for (size_t i = 0; i < count; ++i) data[i] = value();
      break;
    }
    case DataType::kFloat32: {
      float* data = out.data<float>();
      for (size_t i = 0; i < count; ++i) data[i] = static_cast<float>(value());
      break;
    }
    default: {  // float16: NumPy rounds float64 to half directly, once
      float16* data = out.data<float16>();
      for (size_t i = 0; i < count; ++i) data[i] = float16::from_double(value());
      break;
    }
  }
  return out;
}

Tensor generate_shape_tensor(const std::string& name, std::optional<DataType> dtype,
                             const Shape& values) {
  std::vector<int64_t> v(values.begin(), values.end());
  logger().log_once(
      Severity::kInfo,
      fmt::format("Assuming {} is a shape tensor. Setting input values to: {}. If these values are "
                  "not correct, please set it correctly in 'input_metadata' or by providing "
                  "--input-shapes",
                  name, numpy_int_array_str(v)));
  // np.array(shape, dtype=None) holds Python ints as int64.
  Tensor out(dtype.value_or(DataType::kInt64), {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) {
    switch (out.dtype()) {
      case DataType::kInt8:
        out.data<int8_t>()[i] = static_cast<int8_t>(v[i]);
        break;
      case DataType::kInt16:
        out.data<int16_t>()[i] = static_cast<int16_t>(v[i]);
        break;
      case DataType::kInt32:
        out.data<int32_t>()[i] = static_cast<int32_t>(v[i]);
        break;
      case DataType::kUInt8:
        out.data<uint8_t>()[i] = static_cast<uint8_t>(v[i]);
        break;
      case DataType::kUInt16:
        out.data<uint16_t>()[i] = static_cast<uint16_t>(v[i]);
        break;
      case DataType::kUInt32:
        out.data<uint32_t>()[i] = static_cast<uint32_t>(v[i]);
        break;
      case DataType::kUInt64:
        out.data<uint64_t>()[i] = static_cast<uint64_t>(v[i]);
        break;
      default:
        out.data<int64_t>()[i] = v[i];
        break;
    }
  }
  return out;
}

// One tensor as a tensor input of this plan would get it.
Tensor generate_tensor(const std::string& name, const InputPlan& plan,
                       const DataLoaderOptions& options, NumpyRandomState& rng) {
  if (plan.shape_tensor) return generate_shape_tensor(name, plan.dtype, plan.shape);
  if (plan.dtype && (dtype_is_integer(*plan.dtype) || *plan.dtype == DataType::kBool))
    return generate_integers(name, *plan.dtype, plan.shape, options, rng);
  return generate_floats(name, plan.dtype, plan.shape, options, rng);
}

// A map of `size` entries: keys 0, 1, ... of the key type, values drawn as a 1-D input of the
// value type.
MapValue generate_map(const std::string& name, const ValueMeta& meta, int64_t size,
                      const DataLoaderOptions& options, NumpyRandomState& rng) {
  const std::string type = meta.str();
  if (!meta.key_type || (*meta.key_type != DataType::kInt64 && *meta.key_type != DataType::kString))
    fail(
        "failed to generate input {} of type {}: the data loader generates map keys of type "
        "int64 or string only; provide the input with --load-inputs or a data loader script",
        name, type);
  if (!meta.elem_type)
    fail(
        "failed to generate input {} of type {}: the model does not declare the map's value "
        "type; provide the input with --load-inputs or a data loader script",
        name, type);
  check_numpy_dtype(name, meta.elem_type);
  Tensor keys(*meta.key_type, {size});
  for (int64_t k = 0; k < size; ++k) {
    if (*meta.key_type == DataType::kString)
      keys.data<std::string>()[k] = std::to_string(k);
    else
      keys.data<int64_t>()[k] = k;
  }
  InputPlan values;
  values.dtype = meta.elem_type;
  values.shape = {size};
  return sorted_map_from_entries(keys, generate_tensor(name, values, options, rng));
}

// A sequence or map input, as its derived tensors.
void generate_value(TensorMap& feed, const TensorMeta& input, const TensorMeta* user_entry,
                    const TensorMetadata& user, const DataLoaderOptions& options,
                    NumpyRandomState& rng) {
  const ValueMeta& meta = *input.value;
  const std::string& name = input.name;
  const std::string type = meta.str();
  const int64_t length = options.sequence_length, size = options.map_size;
  Value value;
  switch (meta.kind) {
    case ValueMeta::Kind::kSequence: {
      if (!meta.elem_type)
        fail(
            "failed to generate input {} of type {}: the model does not declare the sequence's "
            "element type; provide the input with --load-inputs or a data loader script",
            name, type);
      // Each tensor as a tensor input of the element's type and shape (--input-shapes for the
      // sequence's name gives the shape of its tensors).
      const InputPlan plan = plan_input(
          TensorMeta{name, meta.elem_type, meta.elem_shape, std::nullopt}, user_entry, user);
      std::vector<Tensor> items;
      for (int64_t i = 0; i < length; ++i)
        items.push_back(generate_tensor(name, plan, options, rng));
      logger().log_once(Severity::kWarning,
                        fmt::format("Input tensor: {} [type={}] | Will generate a sequence of {} "
                                    "tensor(s) of shape: {}.\nIf this is incorrect, please "
                                    "provide a custom data loader.",
                                    name, type, length, shape_list_str(plan.shape)));
      value = Value::make_sequence(std::move(items), plan.dtype.value_or(DataType::kFloat64));
      break;
    }
    case ValueMeta::Kind::kMap:
      value = Value::make_map(generate_map(name, meta, size, options, rng));
      logger().log_once(Severity::kWarning,
                        fmt::format("Input tensor: {} [type={}] | Will generate a map of {} "
                                    "entr(ies) with keys 0 to {}.\nIf this is incorrect, please "
                                    "provide a custom data loader.",
                                    name, type, size, size - 1));
      break;
    case ValueMeta::Kind::kMapSequence: {
      std::vector<MapValue> maps;
      for (int64_t i = 0; i < length; ++i)
        maps.push_back(generate_map(name, meta, size, options, rng));
      logger().log_once(Severity::kWarning,
                        fmt::format("Input tensor: {} [type={}] | Will generate a sequence of {} "
                                    "map(s) of {} entr(ies) with keys 0 to {}.\nIf this is "
                                    "incorrect, please provide a custom data loader.",
                                    name, type, length, size, size - 1));
      value = Value::make_map_sequence(std::move(maps), *meta.key_type, *meta.elem_type);
      break;
    }
  }
  add_value_tensors(feed, name, value);
}

void warn_unused_val_ranges(const DataLoaderOptions& options, const TensorMetadata& inputs) {
  std::vector<std::string> expected = inputs.names();
  expected.push_back("");
  std::vector<std::string> provided, extra;
  for (const auto& [key, range] : options.val_range) {
    provided.push_back(key);
    if (std::find(expected.begin(), expected.end(), key) == expected.end()) extra.push_back(key);
  }
  if (extra.empty()) return;
  logger().warning(
      "Extra items in val_range: {}.\nNote: All items are: {}, but items provided "
      "were: {}",
      py_set(extra), py_set(expected), py_set(provided));
}

}  // namespace

DataLoader::DataLoader(DataLoaderOptions options) : options_(std::move(options)) {
  if (options_.sequence_length < 0)
    fail_usage(
        "failed to create a data loader with sequence_length={}: a sequence cannot have a "
        "negative length; give 0 or more",
        options_.sequence_length);
  if (options_.map_size < 0)
    fail_usage(
        "failed to create a data loader with map_size={}: a map cannot have a negative size; "
        "give 0 or more",
        options_.map_size);
  if (!options_.input_metadata.empty())
    logger().info("Will generate inference input data according to provided TensorMetadata: {}",
                  options_.input_metadata.str());
}

const TensorMetadata* DataLoader::input_metadata() const {
  if (has_model_metadata_) return &metadata_;
  return options_.input_metadata.size() ? &options_.input_metadata : nullptr;
}

void DataLoader::set_input_metadata(const TensorMetadata& metadata) {
  metadata_ = metadata;
  has_model_metadata_ = true;
}

std::optional<TensorMap> DataLoader::get(size_t index) {
  if (options_.iterations <= 0 || index >= static_cast<uint64_t>(options_.iterations))
    return std::nullopt;
  const uint64_t seed = static_cast<uint64_t>(options_.seed) + index;
  if (seed > UINT32_MAX)
    fail(
        "failed to generate inputs with seed {} (seed {} + iteration {}): NumPy's RandomState "
        "takes seeds from 0 to 2**32 - 1; use a smaller --seed",
        seed, options_.seed, index);
  logger().verbose("Generating data using numpy seed: {}", seed);
  NumpyRandomState rng(static_cast<uint32_t>(seed));

  const TensorMetadata& user = options_.input_metadata;
  const TensorMetadata& inputs = has_model_metadata_ ? metadata_ : user;
  const std::vector<const TensorMeta*> overrides = match_user_metadata(user, inputs);

  TensorMap feed;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorMeta& input = inputs[i];
    if (input.value) {
      generate_value(feed, input, overrides[i], user, options_, rng);
      continue;
    }
    feed.set(input.name,
             generate_tensor(input.name, plan_input(input, overrides[i], user), options_, rng));
  }
  warn_unused_val_ranges(options_, inputs);
  return feed;
}

}  // namespace parity
