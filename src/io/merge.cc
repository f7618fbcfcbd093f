// Joining the saved results of the shards of one dataset run (io/json.h).
#include <map>
#include <regex>

#include <fmt/format.h>

#include "core/error.h"
#include "io/json.h"

namespace parity::io {

namespace {

// A runner's name without the time it was made at: Polygraphy's default names end in
// "-N<k>-<date>-<time>", which differ between the shards of one run.
std::string runner_kind(const std::string& name) {
  static const std::regex stamp(R"(-N\d+-\d\d/\d\d/\d\d-\d\d:\d\d:\d\d$)");
  return std::regex_replace(name, stamp, "");
}

std::vector<std::string> runner_kinds(const std::vector<std::string>& names) {
  std::vector<std::string> kinds;
  for (const std::string& n : names) kinds.push_back(runner_kind(n));
  return kinds;
}

}  // namespace

RunResults merge_dataset_results(const std::vector<std::string>& paths) {
  if (paths.empty())
    fail_usage("failed to merge results: no file was given; give the shards' files");
  std::vector<std::string> runners;
  // Per runner: dataset index -> (iteration, the file it came from).
  std::vector<std::map<size_t, std::pair<IterationResult, size_t>>> iterations;
  for (size_t f = 0; f < paths.size(); ++f) {
    RunResults shard = load_run_results(paths[f]);
    if (f == 0) {
      runners = shard.keys();
      iterations.resize(runners.size());
    } else if (runner_kinds(shard.keys()) != runner_kinds(runners)) {
      fail(
          "failed to merge {} with {}: it holds the runners [{}], the first file [{}]; shards of "
          "one run hold the same runners",
          paths[f], paths[0], fmt::join(shard.keys(), ", "), fmt::join(runners, ", "));
    }
    for (size_t r = 0; r < shard.size(); ++r) {
      const auto& [runner, its] = shard[r];
      for (size_t k = 0; k < its.size(); ++k) {
        const IterationResult& it = its[k];
        if (!it.dataset_index)
          fail(
              "failed to merge {}: iteration {} of runner '{}' has no dataset index; merge "
              "the files that dataset runs saved (--dataset or --shard with --save-outputs)",
              paths[f], k, runner);
        auto [at, inserted] = iterations[r].emplace(*it.dataset_index, std::make_pair(it, f));
        if (!inserted)
          fail(
              "failed to merge {}: iteration {} of the dataset (runner '{}') is in {} too; "
              "shards of one run must not overlap (give each file once, with one --shard "
              "INDEX/COUNT per run)",
              paths[f], *it.dataset_index, runner, paths[at->second.second]);
      }
    }
  }
  // The merged file names the runners as the first file does.
  RunResults merged;
  for (size_t r = 0; r < runners.size(); ++r) {
    std::vector<IterationResult> its;
    its.reserve(iterations[r].size());
    for (auto& [index, entry] : iterations[r]) {
      entry.first.runner_name = runners[r];
      its.push_back(std::move(entry.first));
    }
    merged.add(std::move(its), runners[r]);
  }
  return merged;
}

}  // namespace parity::io
