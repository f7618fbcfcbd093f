#include "core/names.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace parity {

size_t edit_distance(const std::string& a, const std::string& b) {
  auto lower = [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t substitute = prev[j - 1] + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, substitute});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string> nearest_names(const std::string& name,
                                       const std::vector<std::string>& candidates, size_t count) {
  std::vector<std::pair<size_t, std::string>> scored;
  for (const auto& c : candidates) scored.emplace_back(edit_distance(name, c), c);
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> result;
  for (size_t i = 0; i < scored.size() && i < count; ++i) result.push_back(scored[i].second);
  return result;
}

std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates) {
  if (candidates.empty()) return "";
  const std::vector<std::string> nearest = nearest_names(name, candidates, 1);
  const size_t limit = std::max<size_t>(2, name.size() / 3);
  if (edit_distance(name, nearest[0]) <= limit)
    return fmt::format("; did you mean '{}'?", nearest[0]);
  std::vector<std::string> shown;
  for (size_t i = 0; i < candidates.size() && i < 10; ++i)
    shown.push_back("'" + candidates[i] + "'");
  return fmt::format("; valid names are [{}{}]", fmt::join(shown, ", "),
                     candidates.size() > 10 ? ", ..." : "");
}

}  // namespace parity
