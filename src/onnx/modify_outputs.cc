// Marking and unmarking graph outputs (Polygraphy's ModifyOutputs: mark_outputs,
// mark_layerwise, unmark_outputs), on a copy so the loaded model stays as it was.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include <onnx/onnx_pb.h>

#include "core/error.h"
#include "onnx/model_io.h"

namespace parity::onnx_io {

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// Polygraphy's message, with the available names nearest to the missing ones first when
// there are too many to list them all.
[[noreturn]] void fail_not_found(const std::vector<std::string>& missing,
                                 std::vector<std::string> available) {
  constexpr size_t kListAll = 20, kNearest = 10;
  std::vector<std::string> quoted;
  for (const auto& m : missing) quoted.push_back(fmt::format("'{}'", m));
  std::string more;
  if (available.size() > kListAll) {
    auto distance = [&](const std::string& name) {
      size_t best = SIZE_MAX;
      for (const auto& m : missing) best = std::min(best, edit_distance(m, name));
      return best;
    };
    std::stable_sort(available.begin(), available.end(),
                     [&](const auto& x, const auto& y) { return distance(x) < distance(y); });
    more = fmt::format("\n\t... and {} more", available.size() - kNearest);
    available.resize(kNearest);
  }
  fail("The following outputs were not found: {{{}}}.\nNote: Available tensors:\n\t{}{}",
       fmt::join(quoted, ", "), fmt::join(available, "\n\t"), more);
}

// Outputs of every node except Constant nodes, in topological order, each once.
std::vector<std::string> markable_tensors(const ir::Graph& graph) {
  std::vector<std::string> names;
  std::unordered_set<std::string> seen;
  for (const auto& node : graph.nodes) {
    if (node.op_type == "Constant" && node.domain.empty()) continue;
    for (const auto& o : node.outputs)
      if (!o.empty() && seen.insert(o).second) names.push_back(o);
  }
  return names;
}

// The ValueInfoProto the file gives for `name` (value_info or an old output), or one with the
// name alone. (Polygraphy writes an empty tensor type, i.e. element type 0, which ONNX allows
// but ONNX Runtime refuses: "Invalid tensor data type 0".)
::onnx::ValueInfoProto output_proto(const ::onnx::GraphProto& g, const std::string& name) {
  for (const auto& v : g.output())
    if (v.name() == name && v.has_type()) return v;
  for (const auto& v : g.value_info())
    if (v.name() == name && v.has_type()) return v;
  ::onnx::ValueInfoProto v;
  v.set_name(name);
  return v;
}

}  // namespace

std::shared_ptr<ir::Model> modify_outputs(const ir::Model& model,
                                          const std::vector<std::string>& outputs, bool mark_all,
                                          const std::vector<std::string>& exclude) {
  std::vector<std::string> names;
  if (mark_all || !outputs.empty()) {
    const std::vector<std::string> available = markable_tensors(model.graph);
    if (mark_all) {
      names = available;
    } else {
      std::unordered_set<std::string> valid(available.begin(), available.end());
      std::vector<std::string> missing;
      std::unordered_set<std::string> seen;
      for (const auto& o : outputs) {
        if (!valid.count(o))
          missing.push_back(o);
        else if (seen.insert(o).second)
          names.push_back(o);
      }
      if (!missing.empty()) fail_not_found(missing, available);
    }
  } else {
    for (const auto& v : model.graph.outputs) names.push_back(v.name);
  }

  if (!exclude.empty()) {
    std::unordered_set<std::string> current(names.begin(), names.end());
    std::vector<std::string> missing;
    for (const auto& e : exclude)
      if (!current.count(e)) missing.push_back(e);
    if (!missing.empty()) fail_not_found(missing, names);
    std::unordered_set<std::string> drop(exclude.begin(), exclude.end());
    std::erase_if(names, [&](const std::string& n) { return drop.count(n) > 0; });
  }

  auto out = copy_model(model);
  std::vector<ir::ValueInfo> ir_outputs;
  for (const auto& n : names) {
    const ir::ValueType* type = model.graph.find_type(n);
    ir_outputs.push_back(ir::ValueInfo{n, type ? *type : ir::ValueType{}});
  }
  out->graph.outputs = std::move(ir_outputs);
  if (out->proto) {
    auto* g = out->proto->mutable_graph();
    std::vector<::onnx::ValueInfoProto> protos;
    for (const auto& n : names) protos.push_back(output_proto(model.proto->graph(), n));
    g->clear_output();
    for (auto& p : protos) *g->add_output() = std::move(p);
  }
  return out;
}

}  // namespace parity::onnx_io
