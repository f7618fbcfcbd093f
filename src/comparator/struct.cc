#include "comparator/struct.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/logger.h"
#include "core/py_format.h"

namespace parity {

void RunResults::add(std::vector<IterationResult> iterations, const std::string& runner_name) {
  entries_.emplace_back(runner_name, std::move(iterations));
}

void RunResults::set(const std::string& runner_name, std::vector<IterationResult> iterations) {
  for (auto& [name, its] : entries_)
    if (name == runner_name) {
      its = std::move(iterations);
      return;
    }
  add(std::move(iterations), runner_name);
}

const std::vector<IterationResult>& RunResults::at(const std::string& runner_name) const {
  for (const auto& [name, its] : entries_)
    if (name == runner_name) return its;
  std::vector<std::string> quoted;
  for (const auto& k : keys()) quoted.push_back(fmt::format("'{}'", k));
  fail("{} does not exist in this RunResults instance. Note: Available runners: [{}]",
       pad_name(runner_name), fmt::join(quoted, ", "));
}

const RunResults::Entry& RunResults::operator[](size_t i) const {
  if (i >= entries_.size())
    throw std::out_of_range(fmt::format("RunResults index {} is out of range: it has {} runner(s)",
                                        i, entries_.size()));
  return entries_[i];
}

bool RunResults::contains(const std::string& runner_name) const {
  for (const auto& e : entries_)
    if (e.first == runner_name) return true;
  return false;
}

std::vector<std::string> RunResults::keys() const {
  std::vector<std::string> r;
  for (const auto& e : entries_) r.push_back(e.first);
  return r;
}

std::string OutputCompareResult::str() const {
  // Python prints these floats with repr(): "1e-05", "1.0".
  return fmt::format("(atol={}, rtol={})", format_repr(max_absdiff), format_repr(max_reldiff));
}

static bool iteration_passed(const IterationCompareResult& it) {
  for (const auto& [name, r] : it)
    if (!r.passed) return false;
  return true;
}

AccuracyResult::operator bool() const {
  for (const auto& [pair, iterations] : entries)
    for (const auto& it : iterations)
      if (!iteration_passed(it)) return false;
  return true;
}

std::tuple<size_t, size_t, size_t> AccuracyResult::stats(const Pair& pair) const {
  for (const auto& [p, iterations] : entries)
    if (p == pair) {
      size_t passed = 0;
      for (const auto& it : iterations) passed += iteration_passed(it) ? 1 : 0;
      return {passed, iterations.size() - passed, iterations.size()};
    }
  fail("failed to find the comparison of '{}' and '{}': no such pair was compared", pair.first,
       pair.second);
}

double AccuracyResult::percentage(const Pair& pair) const {
  if (entries.empty()) return 1.0;
  auto [passed, failed, total] = stats(pair);
  return total == 0 ? 1.0 : static_cast<double>(passed) / static_cast<double>(total);
}

}  // namespace parity
