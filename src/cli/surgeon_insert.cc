// `parity surgeon insert`: one new node in place of the subgraph between tensors (Polygraphy's
// `surgeon insert`).
#include <algorithm>
#include <charconv>
#include <string>

#include "cli/parse_util.h"
#include "cli/surgeon.h"
#include "core/error.h"
#include "surgeon/insert.h"

namespace parity::cli {

namespace {

// Polygraphy's cast(): a bracketed list of values, an int, a float, else a string (quotes
// stripped, so '53' is the string 53).
struct AttrValue {
  enum class Kind { kInt, kFloat, kString } kind;
  int64_t i = 0;
  double f = 0;
  std::string s;
};

AttrValue cast_value(std::string text) {
  const auto b = text.find_first_not_of(" \t"), e = text.find_last_not_of(" \t");
  text = b == std::string::npos ? "" : text.substr(b, e - b + 1);
  const auto q = text.find_first_not_of("\"'"), r = text.find_last_not_of("\"'");
  AttrValue v{AttrValue::Kind::kString, 0, 0,
              q == std::string::npos ? "" : text.substr(q, r - q + 1)};
  int64_t i = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
  if (ec == std::errc() && end == text.data() + text.size() && !text.empty()) {
    v.kind = AttrValue::Kind::kInt;
    v.i = i;
    return v;
  }
  if (auto f = parse_number(text)) {
    v.kind = AttrValue::Kind::kFloat;
    v.f = *f;
  }
  return v;
}

::onnx::AttributeProto parse_attr(const std::string& token) {
  const size_t eq = token.find('=');
  if (eq == std::string::npos || eq == 0)
    fail_usage(
        "failed to parse --attrs with value '{}': the format is <name>=<value>, e.g. axis=1, "
        "alpha=0.5, mode='constant' or axes=[0,1]",
        token);
  ::onnx::AttributeProto a;
  a.set_name(token.substr(0, eq));
  std::string text = token.substr(eq + 1);
  const auto first = text.find_first_not_of(" "), last = text.find_last_not_of(" ");
  const bool list = first != std::string::npos && text[first] == '[' && text[last] == ']';
  if (!list) {
    const AttrValue v = cast_value(text);
    if (v.kind == AttrValue::Kind::kInt) {
      a.set_type(::onnx::AttributeProto::INT);
      a.set_i(v.i);
    } else if (v.kind == AttrValue::Kind::kFloat) {
      a.set_type(::onnx::AttributeProto::FLOAT);
      a.set_f(static_cast<float>(v.f));
    } else {
      a.set_type(::onnx::AttributeProto::STRING);
      a.set_s(v.s);
    }
    return a;
  }
  std::vector<AttrValue> items;
  const std::string inner = text.substr(first + 1, last - first - 1);
  size_t start = 0;
  while (start <= inner.size()) {
    const size_t comma = inner.find(',', start);
    items.push_back(cast_value(inner.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  const bool all_int = std::all_of(items.begin(), items.end(), [](const AttrValue& v) {
    return v.kind == AttrValue::Kind::kInt;
  });
  const bool all_number = std::all_of(items.begin(), items.end(), [](const AttrValue& v) {
    return v.kind != AttrValue::Kind::kString;
  });
  if (all_int) {
    a.set_type(::onnx::AttributeProto::INTS);
    for (const auto& v : items) a.add_ints(v.i);
  } else if (all_number) {
    a.set_type(::onnx::AttributeProto::FLOATS);
    for (const auto& v : items)
      a.add_floats(static_cast<float>(v.kind == AttrValue::Kind::kInt ? v.i : v.f));
  } else {
    a.set_type(::onnx::AttributeProto::STRINGS);
    for (const auto& v : items) a.add_strings(v.s);
  }
  return a;
}

}  // namespace

CLI::App* setup_surgeon_insert(CLI::App& surgeon, SurgeonInsertArgs& args) {
  CLI::App* sub = surgeon.add_subcommand(
      "insert",
      "[EXPERIMENTAL] Insert a single node into an ONNX model with the specified inputs and "
      "outputs. Any existing subgraph between the inputs and outputs is replaced.");
  add_surgeon_model_args(*sub, args.model);
  const char* group = "Inserted Node";
  sub->add_option("--inputs", args.inputs,
                  "The names of input tensors for the new node. Order will be preserved")
      ->required()
      ->group(group);
  sub->add_option("--outputs", args.outputs,
                  "The names of output tensors for the new node. Order will be preserved. If an "
                  "output tensor is also specified as an input, a new tensor will be generated "
                  "for the output")
      ->required()
      ->group(group);
  sub->add_option("--op", args.op, "The ONNX op to use for the new node")->required()->group(group);
  sub->add_option("--name", args.name, "The name to use for the new node")->group(group);
  sub->add_option("--attrs", args.attrs,
                  "Attributes to set in the new node: <name>=value, e.g. axis=1 keepdims=1. "
                  "Numbers with a decimal point are floats, quoted values strings, bracketed "
                  "values lists")
      ->group(group);
  return sub;
}

int run_surgeon_insert(const SurgeonInsertArgs& args) {
  surgeon::InsertOptions options;
  options.inputs = args.inputs;
  options.outputs = args.outputs;
  options.op = args.op;
  options.name = args.name;
  for (const auto& token : args.attrs) options.attributes.push_back(parse_attr(token));
  (void)args.model.save.options(args.model.model_file);
  surgeon::ModelFile model = args.model.load();
  surgeon::insert_node(*model.proto->mutable_graph(), options);
  args.model.save_model(model);
  return 0;
}

}  // namespace parity::cli
