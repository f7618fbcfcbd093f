// Polygraphy's JSON files. Writing reproduces Python's json.dumps(obj, indent=4) byte for byte
// (4-space indent, "," at line ends, ": " after keys, ASCII-only strings, floats as repr()),
// with the keys in the order Polygraphy's encoders produce them and "polygraphy_class" last,
// so the files Parity saves are identical to the ones Polygraphy saves for the same data.
// Reading follows Polygraphy's decoder (json/serde.py): a class marker or the legacy
// "__polygraphy_encoded_<Type>" key selects the type; array payloads are base64 of an .npy or
// .npz file, or for old files the .npy bytes as latin-1 text.
#include "io/json.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backend/value_tensors.h"
#include "core/error.h"
#include "core/file_util.h"
#include "io/base64.h"
#include "io/json_parser.h"
#include "io/npy.h"

namespace parity::io {

namespace {

using Json = nlohmann::ordered_json;

constexpr char kClassKey[] = "polygraphy_class";
constexpr char kLegacyPrefix[] = "__polygraphy_encoded_";
constexpr char kLegacyMarker[] = "polygraphy_serialized_json_type";
constexpr char kDatasetIndexKey[] = "parity_dataset_index";
constexpr char kErrorKey[] = "parity_error";

// ----- writing, as Python's json.dumps(obj, indent=4) -----

class PyJsonWriter {
 public:
  std::string out;

  void begin(char bracket) {
    out += bracket;
    empty_.push_back(true);
  }
  void end(char bracket) {
    bool was_empty = empty_.back();
    empty_.pop_back();
    if (!was_empty) newline();  // Python writes empty containers as {} and []
    out += bracket;
  }
  // Starts the next element of the innermost list.
  void element() {
    if (!empty_.back()) out += ',';
    empty_.back() = false;
    newline();
  }
  void key(std::string_view name) {
    element();
    string(name);
    out += ": ";
  }
  void string(std::string_view utf8);
  void number(double v);
  void null() { out += "null"; }
  void integer(uint64_t v) { out += std::to_string(v); }
  // Continues a document written elsewhere: `open` says, per open container, whether something
  // was written in it already (streamed iterations are written into an open list this way).
  void resume(std::vector<bool> nonempty) {
    empty_.clear();
    for (bool b : nonempty) empty_.push_back(!b);
  }
  // The innermost container already holds an element (the next element() writes a comma).
  void mark_nonempty() { empty_.back() = false; }

 private:
  void newline() {
    out += '\n';
    out.append(4 * empty_.size(), ' ');
  }
  std::vector<bool> empty_;  // per open container: nothing written in it yet
};

// ensure_ascii: printable ASCII as is, the usual short escapes, everything else as \uXXXX
// (UTF-16 surrogate pairs above U+FFFF), lower-case hex as Python writes it.
void PyJsonWriter::string(std::string_view s) {
  out += '"';
  auto escape = [&](uint32_t unit) { out += fmt::format("\\u{:04x}", unit); };
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        default:
          if (c < 0x20 || c == 0x7F)
            escape(c);
          else
            out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    int len = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    uint32_t cp = len ? (c & (0x7F >> len)) : 0;
    bool valid = len && i + len <= s.size();
    for (int k = 1; valid && k < len; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      valid = (cc & 0xC0) == 0x80;
      cp = (cp << 6) | (cc & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (!valid || cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000))
      fail(
          "failed to write JSON string {:?} with byte {:#04x} at offset {}: not valid UTF-8; "
          "names must be UTF-8",
          std::string(s), c, i);
    if (cp >= 0x10000) {
      cp -= 0x10000;
      escape(0xD800 + (cp >> 10));
      escape(0xDC00 + (cp & 0x3FF));
    } else {
      escape(cp);
    }
    i += len;
  }
  out += '"';
}

// Python's repr(float): the shortest text that reads back to the same double, in exponent
// form below 1e-4 and from 1e16 on, always with a '.' or an exponent. fmt's "{}" picks the
// same digits and the same switch to exponents; only the ".0" of whole numbers differs.
void PyJsonWriter::number(double v) {
  if (std::isnan(v)) {
    out += "NaN";
    return;
  }
  if (std::isinf(v)) {
    out += v > 0 ? "Infinity" : "-Infinity";
    return;
  }
  std::string text = fmt::format("{}", v);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  out += text;
}

void write_array(PyJsonWriter& w, const Tensor& t) {
  w.begin('{');
  w.key("array");
  w.out += '"';
  base64_append(w.out, npy_encode(t));
  w.out += '"';
  w.key(kClassKey);
  w.string("ndarray");
  w.end('}');
}

// One element of a map's value tensor as Python's json.dumps writes the Python value ONNX
// Runtime's binding returns (a float, an int or a str).
void write_scalar(PyJsonWriter& w, const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kString:
      w.string(t.data<std::string>()[i]);
      return;
    case DataType::kInt64:
      w.out += std::to_string(t.data<int64_t>()[i]);
      return;
    case DataType::kFloat32:
      w.number(t.data<float>()[i]);
      return;
    case DataType::kFloat64:
      w.number(t.data<double>()[i]);
      return;
    default:
      fail(
          "failed to write a map with values of element type {}: maps hold string, int64, "
          "float32 or float64 values",
          dtype_name(t.dtype()));
  }
}

// A map is a JSON object (keys as text: JSON keys are strings, so int64 keys are written in
// decimal as json.dumps does); sequences are lists.
void write_map(PyJsonWriter& w, const MapValue& m) {
  w.begin('{');
  for (int64_t i = 0; i < m.size(); ++i) {
    w.key(m.keys.dtype() == DataType::kInt64 ? std::to_string(m.keys.data<int64_t>()[i])
                                             : m.keys.data<std::string>()[i]);
    write_scalar(w, m.values, i);
  }
  w.end('}');
}

// An output in Polygraphy's encoding: an ndarray, or the plain JSON Python's json module
// makes of a list (sequences) or a dict (maps) that ONNX Runtime's binding returns.
void write_output_value(PyJsonWriter& w, const Value& v) {
  if (v.is_tensor()) return write_array(w, v.tensor);
  if (v.is_map()) return write_map(w, v.map);
  w.begin('[');
  for (const Tensor& t : v.sequence) {
    w.element();
    write_array(w, t);
  }
  for (const MapValue& m : v.maps) {
    w.element();
    write_map(w, m);
  }
  w.end(']');
}

void write_iteration(PyJsonWriter& w, const IterationResult& it) {
  w.begin('{');
  w.key("outputs");
  w.begin('{');
  // Sequences and maps travel as tensors under derived names (backend/value_tensors.h);
  // Polygraphy writes them as lists and dicts.
  for (const auto& [name, value] : group_value_tensors(it.outputs)) {
    w.key(name);
    w.begin('{');
    w.key("values");
    write_output_value(w, value);
    w.key(kClassKey);
    w.string("LazyArray");
    w.end('}');
  }
  w.end('}');
  w.key("runtime");
  if (it.runtime)
    w.number(*it.runtime);
  else
    w.null();
  w.key("runner_name");
  w.string(it.runner_name);
  // Parity's keys for dataset runs; Polygraphy's decoder reads only the keys above.
  if (it.dataset_index) {
    w.key(kDatasetIndexKey);
    w.integer(*it.dataset_index);
  }
  if (!it.error.empty()) {
    w.key(kErrorKey);
    w.string(it.error);
  }
  w.key(kClassKey);
  w.string("IterationResult");
  w.end('}');
}

// ----- reading -----

// The Polygraphy type of a decoded JSON object: its class marker, or a legacy marker key;
// empty for a plain dict.
std::string class_of(const Json& j) {
  if (!j.is_object()) return "";
  auto it = j.find(kClassKey);
  if (it != j.end() && it->is_string()) return it->get<std::string>();
  for (const auto& [key, value] : j.items())
    if (key.starts_with(kLegacyPrefix) && value.is_string() && value == kLegacyMarker)
      return key.substr(std::strlen(kLegacyPrefix));
  return "";
}

// What Python's type() would print for the decoded value, for Polygraphy's messages.
std::string python_type(const Json& j) {
  if (j.is_object()) {
    std::string c = class_of(j);
    return c.empty() ? "<class 'collections.OrderedDict'>" : fmt::format("<class '{}'>", c);
  }
  if (j.is_array()) return "<class 'list'>";
  if (j.is_string()) return "<class 'str'>";
  if (j.is_boolean()) return "<class 'bool'>";
  if (j.is_number_float()) return "<class 'float'>";
  if (j.is_number()) return "<class 'int'>";
  return "<class 'NoneType'>";
}

[[noreturn]] void unknown_class(const std::string& name) {
  fail(
      "Could not decode serialized type: {}. This could be because a required module is "
      "missing.",
      name);
}

const Json& member(const Json& obj, const char* key, const std::string& what) {
  auto it = obj.find(key);
  if (it == obj.end())
    fail(
        "failed to read {} without the key '{}': the key is required; the file is not one "
        "Polygraphy or Parity wrote",
        what, key);
  return *it;
}

// An .npy file, or an .npz archive of which the first array counts (old Polygraphy files).
Tensor load_array_bytes(const std::string& bytes) {
  if (!is_npz(bytes)) return npy_decode(bytes);
  auto arrays = npz_decode(bytes);
  if (arrays.empty())
    fail(
        "failed to read an array from an .npz payload with no members: the archive is empty; "
        "it must hold at least one array");
  return std::move(arrays.front().second);
}

// Old files hold the .npy bytes as text, one character per byte.
std::optional<std::string> latin1_bytes(const std::string& utf8) {
  std::string out;
  out.reserve(utf8.size());
  for (size_t i = 0; i < utf8.size(); ++i) {
    auto c = static_cast<unsigned char>(utf8[i]);
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if ((c == 0xC2 || c == 0xC3) && i + 1 < utf8.size()) {
      out += static_cast<char>(((c & 0x03) << 6) | (static_cast<unsigned char>(utf8[++i]) & 0x3F));
    } else {
      return std::nullopt;  // a character past U+00FF is no byte
    }
  }
  return out;
}

// The payloads the parser decoded for the document being read (run_results_from_json and
// inputs_from_json set it for their parse): arrays are viewed in those buffers, not copied.
thread_local const DecodedPayloads* t_payloads = nullptr;

struct PayloadScope {
  DecodedPayloads payloads;
  const DecodedPayloads* outer = t_payloads;
  PayloadScope() { t_payloads = &payloads; }
  ~PayloadScope() { t_payloads = outer; }
  PayloadScope(const PayloadScope&) = delete;
  PayloadScope& operator=(const PayloadScope&) = delete;
};

std::shared_ptr<std::string> decoded_buffer(const Json& payload) {
  if (!t_payloads || !payload.is_binary()) return nullptr;
  const auto& id = payload.get_binary();
  if (!id.has_subtype() || id.subtype() != DecodedPayloads::kSubtype || id.size() != 8)
    return nullptr;
  uint64_t index = 0;
  for (int b = 0; b < 8; ++b) index |= static_cast<uint64_t>(id[static_cast<size_t>(b)]) << (8 * b);
  return index < t_payloads->buffers.size() ? t_payloads->buffers[index] : nullptr;
}

Tensor decode_payload(const Json& obj, const std::string& what) {
  const Json& payload = member(obj, "array", what);
  if (std::shared_ptr<std::string> bytes = decoded_buffer(payload)) {
    try {
      return is_npz(*bytes) ? load_array_bytes(*bytes) : npy_decode_in_place(std::move(bytes));
    } catch (const Error& e) {
      fail("failed to read {}: as base64, {}; the payload must be base64 of an .npy or .npz file",
           what, e.what());
    }
  }
  if (!payload.is_string())
    fail("failed to read {} with an \"array\" of JSON type {}: it must be a string", what,
         payload.type_name());
  const auto& text = payload.get_ref<const std::string&>();
  std::string first_error;
  if (auto bytes = base64_decode(text)) {
    try {
      return load_array_bytes(*bytes);
    } catch (const Error& e) {
      first_error = e.what();
    }
  } else {
    first_error = "the payload is not valid base64";
  }
  auto raw = latin1_bytes(text);
  if (!raw)
    fail(
        "failed to read {}: {}, and as latin-1 text it holds characters past U+00FF; the "
        "payload must be base64 of an .npy or .npz file",
        what, first_error);
  try {
    return load_array_bytes(*raw);
  } catch (const Error& e) {
    fail("failed to read {}: as base64, {}; as latin-1 text, {}", what, first_error, e.what());
  }
}

// An ndarray, possibly inside a LazyArray (or its old name LazyNumpyArray).
Tensor decode_array(const Json& j, const std::string& what) {
  std::string cls = class_of(j);
  if (cls == "ndarray") return decode_payload(j, what);
  if (cls == "LazyArray" || cls == "LazyNumpyArray")
    return decode_array(member(j, "values", what), what);
  if (!cls.empty() && cls != "IterationResult" && cls != "RunResults") unknown_class(cls);
  fail(
      "failed to read {} from a JSON value decoded into a {}: expected an array (an object "
      "with \"polygraphy_class\": \"ndarray\")",
      what, python_type(j));
}

// A map from a plain JSON object: keys that all read as integers are int64 keys (json.dumps
// wrote them from Python ints), other keys strings; values are float32 for JSON floats (ONNX
// Runtime's maps hold float32), int64 for integers, strings for strings.
MapValue decode_map(const Json& j, const std::string& what) {
  const int64_t n = static_cast<int64_t>(j.size());
  bool int_keys = n > 0, floats = false, ints = false, strings = false;
  for (const auto& [key, value] : j.items()) {
    char* end = nullptr;
    errno = 0;
    std::strtoll(key.c_str(), &end, 10);
    if (key.empty() || *end != '\0' || errno == ERANGE) int_keys = false;
    if (value.is_number_float())
      floats = true;
    else if (value.is_number())
      ints = true;
    else if (value.is_string())
      strings = true;
    else
      fail(
          "failed to read {}: the map's value for key '{}' is of JSON type {}; map values must "
          "be numbers or strings",
          what, key, value.type_name());
  }
  if (strings && (floats || ints))
    fail("failed to read {}: the map mixes string and number values", what);
  const DataType vtype = strings  ? DataType::kString
                         : floats ? DataType::kFloat32
                                  : DataType::kInt64;
  Tensor keys(int_keys ? DataType::kInt64 : DataType::kString, {n});
  Tensor values(vtype, {n});
  int64_t i = 0;
  for (const auto& [key, value] : j.items()) {
    if (int_keys)
      keys.data<int64_t>()[i] = std::strtoll(key.c_str(), nullptr, 10);
    else
      keys.data<std::string>()[i] = key;
    if (vtype == DataType::kString)
      values.data<std::string>()[i] = value.get<std::string>();
    else if (vtype == DataType::kFloat32)
      values.data<float>()[i] = value.get<float>();
    else
      values.data<int64_t>()[i] = value.get<int64_t>();
    ++i;
  }
  return sorted_map_from_entries(keys, values);
}

// An output: an ndarray (LazyArray), or a list (a sequence of arrays or of maps) or a dict (a
// map) as Polygraphy writes what ONNX Runtime returns for sequence and map outputs; those are
// spelled as tensors under derived names (backend/value_tensors.h).
// `values` is the list, dict or array itself (for inputs, the value Polygraphy's JSON holds
// for a list or dict fed to a runner; for outputs, the LazyArray's "values"); `j` is what to
// decode as an array when it is neither.
void decode_value(const Json& j, const Json* values, const std::string& name,
                  const std::string& what, TensorMap& out) {
  if (values->is_array()) {
    std::vector<Tensor> tensors;
    std::vector<MapValue> maps;
    for (size_t k = 0; k < values->size(); ++k) {
      const Json& item = (*values)[k];
      const std::string item_what = fmt::format("item {} of {}", k, what);
      if (item.is_object() && class_of(item).empty())
        maps.push_back(decode_map(item, item_what));
      else
        tensors.push_back(decode_array(item, item_what));
    }
    if (!maps.empty() && !tensors.empty())
      fail("failed to read {}: the list mixes maps and arrays", what);
    if (!maps.empty()) {
      const DataType key = maps.front().keys.dtype(), val = maps.front().values.dtype();
      add_value_tensors(out, name, Value::make_map_sequence(std::move(maps), key, val));
    } else {
      const DataType elem = tensors.empty() ? DataType::kFloat32 : tensors.front().dtype();
      add_value_tensors(out, name, Value::make_sequence(std::move(tensors), elem));
    }
    return;
  }
  if (values->is_object() && class_of(*values).empty() && !values->empty()) {
    add_value_tensors(out, name, Value::make_map(decode_map(*values, what)));
    return;
  }
  out.set(name, decode_array(j, what));
}

void decode_output(const Json& j, const std::string& name, const std::string& what,
                   TensorMap& out) {
  // Only inside a LazyArray, where Polygraphy puts every output.
  const std::string cls = class_of(j);
  if (cls != "LazyArray" && cls != "LazyNumpyArray") {
    out.set(name, decode_array(j, what));
    return;
  }
  decode_value(j, &member(j, "values", what), name, what, out);
}

IterationResult decode_iteration(const Json& j, const std::string& what) {
  std::string cls = class_of(j);
  if (cls != "IterationResult") {
    if (!cls.empty() && cls != "ndarray" && cls != "LazyArray" && cls != "LazyNumpyArray" &&
        cls != "RunResults")
      unknown_class(cls);
    fail("failed to read {} from a JSON value decoded into a {}: expected an IterationResult", what,
         python_type(j));
  }
  IterationResult it;
  const Json& outputs = member(j, "outputs", what);
  if (!outputs.is_object())
    fail("failed to read {} with \"outputs\" of JSON type {}: it must be an object", what,
         outputs.type_name());
  for (const auto& [name, value] : outputs.items())
    decode_output(value, name, fmt::format("output '{}' of {}", name, what), it.outputs);
  const Json& runtime = member(j, "runtime", what);
  if (runtime.is_number())
    it.runtime = runtime.get<double>();
  else if (!runtime.is_null())
    fail("failed to read {} with a runtime of JSON type {}: it must be a number or null", what,
         runtime.type_name());
  const Json& runner = member(j, "runner_name", what);
  if (!runner.is_string())
    fail("failed to read {} with a runner_name of JSON type {}: it must be a string", what,
         runner.type_name());
  it.runner_name = runner.get<std::string>();
  if (auto index = j.find(kDatasetIndexKey); index != j.end()) {
    if (!index->is_number_unsigned() && !(index->is_number_integer() && *index >= 0))
      fail("failed to read {} with a {} of {}: it must be a non-negative integer", what,
           kDatasetIndexKey, index->dump());
    it.dataset_index = index->get<size_t>();
  }
  if (auto error = j.find(kErrorKey); error != j.end()) {
    if (!error->is_string())
      fail("failed to read {} with a {} of JSON type {}: it must be a string", what, kErrorKey,
           error->type_name());
    it.error = error->get<std::string>();
  }
  return it;
}

}  // namespace

std::string run_results_to_json(const RunResults& results) {
  PyJsonWriter w;
  w.begin('{');
  w.key("lst");
  w.begin('[');
  for (const auto& [runner, iterations] : results) {
    w.element();
    w.begin('[');
    w.element();
    w.string(runner);
    w.element();
    w.begin('[');
    for (const auto& it : iterations) {
      w.element();
      write_iteration(w, it);
    }
    w.end(']');
    w.end(']');
  }
  w.end(']');
  w.key(kClassKey);
  w.string("RunResults");
  w.end('}');
  return std::move(w.out);
}

namespace {

// `text_is_a_file_read_here`: the text is the caller's copy of a file, read no more after the
// parse, so the parser may give back the pages of decoded arrays (DecodedPayloads).
RunResults run_results_from_text(const std::string& text, bool text_is_a_file_read_here) {
  PayloadScope scope;
  scope.payloads.release_decoded_text = text_is_a_file_read_here;
  Json j = parse_json(text, &scope.payloads);
  std::string cls = class_of(j);
  if (cls != "RunResults") {
    if (!cls.empty() && cls != "ndarray" && cls != "LazyArray" && cls != "LazyNumpyArray" &&
        cls != "IterationResult")
      unknown_class(cls);
    fail("Provided JSON cannot be decoded into a RunResults.\nNote: JSON was decoded into a {}",
         python_type(j));
  }
  const Json& lst = member(j, "lst", "RunResults");
  if (!lst.is_array())
    fail(
        "failed to read RunResults with \"lst\" of JSON type {}: it must be a list of "
        "[runner name, iterations] pairs",
        lst.type_name());
  RunResults results;
  for (size_t i = 0; i < lst.size(); ++i) {
    const Json& pair = lst[i];
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_array())
      fail(
          "failed to read RunResults entry {}: it must be a pair [runner name, list of "
          "IterationResult]",
          i);
    std::string runner = pair[0].get<std::string>();
    std::vector<IterationResult> iterations;
    for (size_t k = 0; k < pair[1].size(); ++k)
      iterations.push_back(
          decode_iteration(pair[1][k], fmt::format("iteration {} of runner '{}'", k, runner)));
    results.append({std::move(runner), std::move(iterations)});
  }
  return results;
}

}  // namespace

RunResults run_results_from_json(const std::string& text) {
  return run_results_from_text(text, /*text_is_a_file_read_here=*/false);
}

std::string inputs_to_json(const std::vector<TensorMap>& feeds) {
  PyJsonWriter w;
  w.begin('[');
  for (const auto& feed : feeds) {
    w.element();
    w.begin('{');
    // A sequence or map input (derived tensors, backend/value_tensors.h) is written as the
    // list or dict Polygraphy's JSON holds for one fed to a runner.
    for (const auto& [name, value] : group_value_tensors(feed)) {
      w.key(name);
      write_output_value(w, value);
    }
    w.end('}');
  }
  w.end(']');
  return std::move(w.out);
}

namespace {

std::vector<TensorMap> inputs_from_text(const std::string& text, bool text_is_a_file_read_here) {
  PayloadScope scope;
  scope.payloads.release_decoded_text = text_is_a_file_read_here;
  Json j = parse_json(text, &scope.payloads);
  if (!j.is_array()) {
    std::string cls = class_of(j);
    if (!cls.empty() && cls != "ndarray" && cls != "LazyArray" && cls != "LazyNumpyArray" &&
        cls != "IterationResult" && cls != "RunResults")
      unknown_class(cls);
    fail(
        "failed to read input data decoded into a {}: expected a list with one object of "
        "input name → array per iteration",
        python_type(j));
  }
  std::vector<TensorMap> feeds;
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_object() || !class_of(j[i]).empty())
      fail(
          "failed to read input data iteration {} decoded into a {}: each iteration must be "
          "an object of input name → array",
          i, python_type(j[i]));
    TensorMap feed;
    for (const auto& [name, value] : j[i].items()) {
      const std::string what = fmt::format("input '{}' of iteration {}", name, i);
      const std::string cls = class_of(value);
      if (cls == "LazyArray" || cls == "LazyNumpyArray")
        decode_output(value, name, what, feed);
      else
        decode_value(value, &value, name, what, feed);  // an array, a list or a dict
    }
    feeds.push_back(std::move(feed));
  }
  return feeds;
}

}  // namespace

std::vector<TensorMap> inputs_from_json(const std::string& text) {
  return inputs_from_text(text, /*text_is_a_file_read_here=*/false);
}

struct RunResultsStream::Section {
  std::string runner;
  std::FILE* file = nullptr;
  PyJsonWriter w;
  bool in_iteration = false;

  ~Section() {
    if (file) std::fclose(file);
  }
  // Moves what the writer holds to the file.
  void flush() {
    if (!w.out.empty() && std::fwrite(w.out.data(), 1, w.out.size(), file) != w.out.size())
      fail("failed to write inference results to a temporary file: {}", std::strerror(errno));
    w.out.clear();
  }
};

// A writer nested as run_results_to_json's is inside runner k's list of iterations; `out`
// then holds what comes before that list's first element (the head of the file for k = 0).
static PyJsonWriter writer_at_runner(size_t k, const std::string& runner) {
  PyJsonWriter w;
  w.begin('{');
  w.key("lst");
  w.begin('[');
  if (k > 0) {
    w.mark_nonempty();
    w.out.clear();
  }
  w.element();
  w.begin('[');
  w.element();
  w.string(runner);
  w.element();
  w.begin('[');
  return w;
}

RunResultsStream::RunResultsStream(std::string path, size_t runners) : path_(std::move(path)) {
  for (size_t k = 0; k < runners; ++k) {
    auto s = std::make_unique<Section>();
    s->file = std::tmpfile();
    if (!s->file)
      fail("failed to save inference results to {}: no temporary file: {}", path_,
           std::strerror(errno));
    s->w = writer_at_runner(k, "");
    s->w.out.clear();  // the head is written by finish(), with the runner's name
    sections_.push_back(std::move(s));
  }
}

RunResultsStream::RunResultsStream(std::string path, const std::vector<std::string>& runner_names)
    : RunResultsStream(std::move(path), runner_names.size()) {
  for (size_t k = 0; k < runner_names.size(); ++k) set_runner_name(k, runner_names[k]);
}

void RunResultsStream::add(size_t runner, const IterationResult& iteration) {
  Section& s = *sections_.at(runner);
  PARITY_ENFORCE(!s.in_iteration, "an iteration of runner {} is open", runner);
  s.w.element();
  write_iteration(s.w, iteration);
  s.flush();
}

void RunResultsStream::set_runner_name(size_t runner, std::string name) {
  sections_.at(runner)->runner = std::move(name);
}

RunResultsStream::~RunResultsStream() = default;

void RunResultsStream::begin_iteration(size_t runner) {
  Section& s = *sections_.at(runner);
  PARITY_ENFORCE(!s.in_iteration, "an iteration of runner {} is already open", runner);
  s.in_iteration = true;
  s.w.element();
  s.w.begin('{');
  s.w.key("outputs");
  s.w.begin('{');
  s.flush();
}

void RunResultsStream::add(size_t runner, const std::string& name, const Tensor& tensor) {
  Section& s = *sections_.at(runner);
  PARITY_ENFORCE(s.in_iteration, "no iteration of runner {} is open", runner);
  s.w.key(name);
  s.w.begin('{');
  s.w.key("values");
  write_array(s.w, tensor);
  s.w.key(kClassKey);
  s.w.string("LazyArray");
  s.w.end('}');
  s.flush();
}

void RunResultsStream::end_iteration(size_t runner, std::optional<double> runtime,
                                     const std::string& runner_name) {
  Section& s = *sections_.at(runner);
  PARITY_ENFORCE(s.in_iteration, "no iteration of runner {} is open", runner);
  s.in_iteration = false;
  s.w.end('}');
  s.w.key("runtime");
  if (runtime)
    s.w.number(*runtime);
  else
    s.w.null();
  s.w.key("runner_name");
  s.w.string(runner_name);
  s.w.key(kClassKey);
  s.w.string("IterationResult");
  s.w.end('}');
  s.flush();
}

void RunResultsStream::finish() {
  for (size_t k = 0; k < sections_.size(); ++k) {
    Section& s = *sections_[k];
    PARITY_ENFORCE(!s.in_iteration, "an iteration of runner {} is still open", k);
    s.w.end(']');
    s.w.end(']');
    if (k + 1 == sections_.size()) {
      s.w.end(']');
      s.w.key(kClassKey);
      s.w.string("RunResults");
      s.w.end('}');
    }
    s.flush();
  }
  if (sections_.empty()) return write_file(path_, run_results_to_json(RunResults{}));
  write_file_atomically_streamed(
      path_,
      [&](const std::function<void(std::string_view)>& write) {
        std::string chunk(size_t{1} << 20, '\0');
        for (size_t k = 0; k < sections_.size(); ++k) {
          Section* s = sections_[k].get();
          write(writer_at_runner(k, s->runner).out);
          std::rewind(s->file);
          size_t n = 0;
          while ((n = std::fread(chunk.data(), 1, chunk.size(), s->file)) > 0)
            write(std::string_view(chunk.data(), n));
          if (std::ferror(s->file))
            fail("failed to read back a temporary file of inference results: {}",
                 std::strerror(errno));
        }
      },
      "inference results");
}

void save_run_results(const std::string& path, const RunResults& results) {
  write_file(path, run_results_to_json(results));
}

RunResults load_run_results(const std::string& path) {
  std::string text = read_file(path);
  try {
    return run_results_from_text(text, /*text_is_a_file_read_here=*/true);
  } catch (const Error& e) {
    fail("failed to load inference results from {}: {}", path, e.what());
  }
}

void save_inputs(const std::string& path, const std::vector<TensorMap>& feeds) {
  write_file(path, inputs_to_json(feeds));
}

std::vector<TensorMap> load_inputs(const std::string& path) {
  std::string text = read_file(path);
  try {
    return inputs_from_text(text, /*text_is_a_file_read_here=*/true);
  } catch (const Error& e) {
    fail("failed to load input data from {}: {}", path, e.what());
  }
}

std::string read_file(const std::string& path) {
  return read_regular_file(path, fmt::format("read file {}", path));
}

void write_file(const std::string& path, const std::string& bytes) {
  write_file_atomically(path, bytes);
}

}  // namespace parity::io
