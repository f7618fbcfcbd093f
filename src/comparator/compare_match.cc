#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "comparator/compare.h"
#include "comparator/compare_internal.h"
#include "core/error.h"
#include "core/logger.h"
#include "core/py_format.h"

namespace parity {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

constexpr std::pair<ErrorStat, std::string_view> kErrorStatNames[] = {
    {ErrorStat::kMax, "max"},           {ErrorStat::kMean, "mean"},
    {ErrorStat::kMedian, "median"},     {ErrorStat::kElemwise, "elemwise"},
    {ErrorStat::kQuantile, "quantile"},
};

// Polygraphy's default_find_output_func: a non-exact candidate is skipped when it has an exact
// counterpart among r0's own outputs (it will be compared with that one instead).
std::optional<std::string> find_output(const std::string& name, size_t index,
                                       const IterationResult& r0, const IterationResult& r1) {
  const std::vector<std::string> names1 = r1.outputs.names();
  std::optional<std::string> found = find_str_in_names(name, names1, index);
  if (!found || *found == name) return found;
  if (find_str_in_names(*found, r0.outputs.names()) == *found) {
    logger().verbose("Will not compare {} with {}, since the former already has an exact match: {}",
                     *found, name, *found);
    return std::nullopt;
  }
  logger().warning(
      "Output names did not match exactly. Assuming {} output: {} corresponds to output: {}",
      r1.runner_name, *found, name);
  return found;
}

}  // namespace

std::string_view error_stat_name(ErrorStat s) {
  for (const auto& [stat, name] : kErrorStatNames)
    if (stat == s) return name;
  return "elemwise";
}

ErrorStat error_stat_from_name(std::string_view name) {
  for (const auto& [stat, n] : kErrorStatNames)
    if (n == name) return stat;
  fail_usage(
      "Invalid choice for check_error_stat: {}.\nNote: Valid choices are: ['max', 'mean', "
      "'median', 'elemwise', 'quantile']",
      name);
}

std::optional<std::string> find_str_in_names(const std::string& name,
                                             const std::vector<std::string>& names,
                                             std::optional<size_t> index) {
  for (const auto& n : names)
    if (n == name) return n;
  const std::string lname = lower(name);
  for (const auto& n : names) {
    const std::string ln = lower(n);
    if (ln.find(lname) != std::string::npos || lname.find(ln) != std::string::npos) return n;
  }
  if (index && *index < names.size()) return names[*index];
  return std::nullopt;
}

IterationCompareResult run_comparison(const OutputMatchFunc& match, bool fail_fast,
                                      const IterationResult& r0, const IterationResult& r1) {
  IterationCompareResult status;
  size_t index = 0;
  for (const auto& [out0_name, out0] : r0.outputs) {
    std::optional<std::string> out1_name = find_output(out0_name, index++, r0, r1);
    if (!out1_name) continue;
    const Tensor& out1 = r1.outputs.at(*out1_name);
    logger().start("Comparing Output: '{}' (dtype={}, shape={}) with '{}' (dtype={}, shape={})",
                   out0_name, dtype_name(out0.dtype()), shape_str(out0.shape()), *out1_name,
                   dtype_name(out1.dtype()), shape_str(out1.shape()));
    Logger::Indent indent;
    OutputCompareResult result = match(out0_name, out0, *out1_name, out1);
    // Polygraphy keys results by r0's output name: a repeated pairing overwrites.
    auto it = std::find_if(status.begin(), status.end(),
                           [&name = out0_name](const auto& e) { return e.first == name; });
    if (it != status.end())
      it->second = result;
    else
      status.emplace_back(out0_name, result);
    if (fail_fast && !result.passed) return status;
  }

  std::vector<std::string> mismatched, all;
  for (const auto& [name, result] : status) {
    all.push_back(name);
    if (!result.passed) mismatched.push_back(name);
  }
  if (!mismatched.empty())
    logger().error("FAILED | Mismatched outputs: {}", format_name_list(mismatched));
  else
    logger().finish("PASSED | All outputs matched | Outputs: {}", format_name_list(all));

  // Catches runners whose outputs were lost or renamed beyond recognition.
  if (status.empty() && (!r0.outputs.empty() || !r1.outputs.empty()))
    logger().critical(
        "All outputs were skipped, no common outputs found! Note:\n{} outputs: {}\n{} outputs: {}",
        r0.runner_name, format_name_list(r0.outputs.names()), r1.runner_name,
        format_name_list(r1.outputs.names()));
  return status;
}

}  // namespace parity
