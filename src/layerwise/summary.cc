// The terminal summary of a layer-wise comparison: the answer to "where do they diverge?" in a
// few lines, after the one line per tensor.
#include <algorithm>
#include <cmath>
#include <iterator>

#include "core/logger.h"
#include "core/py_format.h"
#include "layerwise/layerwise.h"
#include "layerwise/ulps.h"

namespace parity {

namespace {

constexpr size_t kTopLocal = 10;

std::string tensor_list(const LayerwiseResult& r, const std::vector<size_t>& indices,
                        CompareMetric metric) {
  std::vector<std::string> parts;
  for (size_t i : indices) {
    const TensorErrorStats& s = r.tensors[i];
    parts.push_back(fmt::format("'{}' {} ({})", s.name, s.passed ? "passes" : "fails",
                                format_error_summary(s, metric)));
  }
  return parts.empty() ? "none compared" : fmt::format("{}", fmt::join(parts, "; "));
}

// For failing float16/bfloat16 tensors: how far they are in ulps, and which tolerance accepts
// one ulp (a difference rounding alone makes in those types). One ulp relative to a normal
// value x is at most 2^-bits; in absolute terms it is one ulp at the largest magnitude.
void log_half_precision_hint(const LayerwiseResult& r) {
  for (DataType dtype : {DataType::kFloat16, DataType::kBFloat16}) {
    size_t failing = 0;
    double max_ulps = 0, magnitude = 0;
    for (const auto& t : r.tensors) {
      if (!t.compared || t.passed || t.dtype0 != dtype || !t.max_ulps) continue;
      ++failing;
      max_ulps = std::max(max_ulps, *t.max_ulps);
      magnitude = std::max(magnitude, t.max_magnitude);
    }
    if (failing == 0) continue;
    const int bits = significand_bits(dtype);
    logger().info(
        "{} failing {} tensor(s) differ by at most {} ulp(s); one {} ulp needs --rtol {} "
        "(2^-{}) or --atol {} (one ulp at the largest magnitude, {})",
        failing, dtype_name(dtype), format_g(max_ulps, 6), dtype_name(dtype),
        format_g(std::ldexp(1.0, -bits), 3), bits, format_g(ulp_at(dtype, magnitude), 3),
        format_g(magnitude, 5));
  }
}

}  // namespace

std::string format_bytes(size_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes) / 1024;
  size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(units)) v /= 1024, ++u;
  return fmt::format("{:.1f} {}", v, units[u]);
}

std::string format_error_summary(const TensorErrorStats& s, CompareMetric metric) {
  if (!s.compared) return "not compared: " + s.note;
  if (!s.note.empty() && s.count == 0 && s.ratio > 1) return s.note;
  std::string text;
  switch (metric) {
    case CompareMetric::kSimple:
      text = fmt::format("max-abs={}, max-rel={}", format_g(s.max_abs, 5), format_g(s.max_rel, 5));
      break;
    case CompareMetric::kDistance:
      text = fmt::format("l2={}, cosine={}", format_g(s.l2, 5), format_g(s.cosine, 6));
      break;
    case CompareMetric::kQuality:
      text = fmt::format("psnr={} dB, snr={} dB", format_g(s.psnr, 5), format_g(s.snr, 5));
      break;
  }
  if (s.max_ulps) text += fmt::format(", max-ulps={}", format_g(*s.max_ulps, 6));
  if (!s.note.empty()) text += ", " + s.note;
  return text + fmt::format(", error/tolerance={}", format_g(s.ratio, 3));
}

void log_layerwise_summary(const LayerwiseResult& r, const LayerwiseOptions& options) {
  const CompareMetric metric = options.compare.metric;
  size_t failed = 0;
  for (const auto& t : r.tensors) failed += t.compared && !t.passed ? 1 : 0;
  const std::string head = fmt::format(
      "Layer-wise Summary | {} vs. {} | {}/{} tensors passed | {} batch(es), peak {} of a {} "
      "budget",
      options.other_is_first ? options.other_name : options.reference_name,
      options.other_is_first ? options.reference_name : options.other_name,
      r.tensors.size() - failed, r.tensors.size(), r.batches, format_bytes(r.peak_batch_bytes),
      format_bytes(options.budget_bytes));
  if (failed == 0)
    logger().finish("{}", head);
  else
    logger().error("{}", head);
  Logger::Indent indent;
  if (!r.missing.empty())
    logger().warning("{} marked tensor(s) were not provided by {}: {}", r.missing.size(),
                     options.other_name, format_name_list(r.missing));
  if (r.first_divergence) {
    const NodeResult& n = r.nodes[*r.first_divergence];
    logger().error("First divergence: node '{}' ({}), node {} of {}", n.name, n.op_type,
                   n.index + 1, r.total_nodes);
    Logger::Indent details;
    logger().info("Inputs: {}", tensor_list(r, n.inputs, metric));
    logger().info("Outputs: {}", tensor_list(r, n.outputs, metric));
    if (n.local_ratio)
      logger().info(
          "Local error (its inputs from {}, recomputed on {}): error/tolerance={}{}",
          options.other_name, options.reference_name, format_g(*n.local_ratio, 3),
          n.local_max_ulps ? fmt::format(", max-ulps={}", format_g(*n.local_max_ulps, 6)) : "");
    if (n.local_max_ulps && *n.local_max_ulps >= 1 && !n.local_passed.value_or(true))
      logger().error(
          "Finding: from the same inputs, {}'s {} {} differs by up to {} ulp(s) from the "
          "reference's result, which is computed in double and rounded once (correctly "
          "rounded): {}'s {} {} is not correctly rounded",
          options.other_name, dtype_name(n.local_dtype), n.op_type, format_g(*n.local_max_ulps, 6),
          options.other_name, dtype_name(n.local_dtype), n.op_type);
    if (!r.path.empty()) logger().info("Path from the input: {}", fmt::join(r.path, " -> "));
  } else if (failed > 0) {
    logger().warning(
        "No first divergence: every failing node inherits its error (its local error passes, "
        "or it has a failing input compared before it: a marked tensor is missing, or a graph "
        "input differs)");
  }
  constexpr size_t kRoundingShown = 10;
  size_t rounding = 0;
  for (const NodeResult& n : r.nodes) {
    if (!n.rounds_inherited || ++rounding > kRoundingShown) continue;
    logger().info(
        "Rounding of inherited error, not a divergence: node '{}' ({}): its inputs pass ({}), "
        "its outputs fail ({}), and recomputed from {}'s inputs it passes (local "
        "error/tolerance={})",
        n.name, n.op_type, tensor_list(r, n.inputs, metric), tensor_list(r, n.outputs, metric),
        options.other_name, format_g(n.local_ratio.value_or(0), 3));
  }
  if (rounding > kRoundingShown)
    logger().info("... and {} more node(s) that round inherited error", rounding - kRoundingShown);
  log_half_precision_hint(r);
  if (!r.top_local.empty()) {
    logger().info(
        "Largest local errors (what each node adds, the other backend's inputs "
        "recomputed on {}):",
        options.reference_name);
    Logger::Indent list;
    for (size_t k = 0; k < r.top_local.size() && k < kTopLocal; ++k) {
      const NodeResult& n = r.nodes[r.top_local[k]];
      logger().info("{}. '{}' ({}) | local error/tolerance={} | total error/tolerance={} | {}",
                    k + 1, n.name, n.op_type, format_g(*n.local_ratio, 3), format_g(n.ratio, 3),
                    node_status_name(n.status));
    }
  }
  size_t inherited = 0, diverging = 0;
  for (const auto& n : r.nodes) {
    inherited += n.status == NodeStatus::kInherited ? 1 : 0;
    diverging += n.status == NodeStatus::kDiverges ? 1 : 0;
  }
  if (failed > 0)
    logger().info("{} failing node(s) add error of their own; {} only inherit it", diverging,
                  inherited);
}

}  // namespace parity
