// The iteration machinery of Polygraphy's `debug` tools (its CheckCmdArgs, ArtifactSortArgs and
// IterativeDebugArgs): run a check on each iteration's artifact, decide pass or fail from the
// exit status and output, move the tracked artifacts into good/ and bad/, and keep a debug
// replay so that a later session can skip the iterations already decided.
//
//   Iterator it(iterate_options, check, &sorter);
//   Replay replay = it.iterate({.make_artifact = ..., .advance = ..., .remaining = ...},
//                              "outputs", previous_replay);
//
// Lines are Polygraphy's: "RUNNING | Iteration 1 | Approximately 3 iteration(s) remaining",
// "Running check command: ...", "PASSED | Iteration 1 | Duration 0.29s", "Finished 3
// iteration(s) | Passed: 1/3 | Pass Rate: 33.333333333333336%".
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace parity::debug {

// How a --check command's result is judged (Polygraphy's CheckCmdArgs).
struct CheckOptions {
  std::vector<std::string> command;            // empty: ask the user whether each iteration passed
  std::optional<std::vector<int>> fail_codes;  // only these exit statuses fail
  std::optional<std::vector<int>> ignore_fail_codes;  // these exit statuses pass
  std::vector<std::string> fail_regexes;              // a failure needs one of these in the output
  bool show_output = false;                           // show the output of passing iterations too
  bool hide_fail_output = false;                      // hide the output of failing iterations
};

// The verdict rule on its own: whether a command that exited with `returncode` and printed
// `output` (stdout then stderr) passed. `regexes` are the compiled fail_regexes.
bool check_passed(const CheckOptions& options, const std::vector<std::regex>& regexes,
                  int returncode, const std::string& output);

// Whether an iteration passed: by the --check command, or another judge (the in-process
// comparison of `debug reduce` without --check).
using Judge = std::function<bool(const std::string& iter_artifact)>;

// A judge running the check command (UsageError for a regex that does not compile).
Judge check_command_judge(CheckOptions options);

// Moves the --artifacts into <dir>/good or <dir>/bad after each iteration, named
// "<stem>_<date>_<time><suffix><ext>" (date and time of the session's start).
class ArtifactSorter {
 public:
  ArtifactSorter(std::vector<std::string> artifacts, std::string dir);
  void sort(bool success, const std::string& suffix) const;
  const std::vector<std::string>& artifacts() const { return artifacts_; }

 private:
  std::vector<std::string> artifacts_;
  std::string dir_;
  std::string start_date_, start_time_;
};

// What one iteration knows: state the tool writes for its own use (num_nodes for reduce), the
// index, and the verdict. Saved in the debug replay.
struct IterationContext {
  std::map<std::string, int64_t> state;
  int64_t iteration = 0;
  bool success = true;
};
// Keyed "_N<index>" plus "_<suffix>" when the tool gave one; kept in the order the iterations
// ran (the order Polygraphy writes them).
class Replay {
 public:
  const IterationContext* find(const std::string& key) const;
  void set(const std::string& key, const IterationContext& context);
  const std::vector<std::pair<std::string, IterationContext>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string, IterationContext>> entries_;
};

// --until: a number of iterations, or until the first good or bad one.
struct Until {
  enum class Kind { kNone, kCount, kGood, kBad };
  Kind kind = Kind::kNone;
  int64_t last_index = 0;  // kCount: the index of the last iteration
  // Parses "good", "bad" or a count (UsageError otherwise, in Polygraphy's words).
  static Until parse(const std::string& text);
};

struct IterateOptions {
  std::string iter_artifact;  // the per-iteration artifact ("" when the tool makes none)
  bool remove_intermediate = true;
  std::string iteration_info;  // where to write {"iteration": i} during each iteration
  Until until;
  std::string load_debug_replay;
  std::string save_debug_replay = "polygraphy_debug_replay.json";  // "" saves none
};

class Iterator {
 public:
  enum class Make { kCheck, kSkipPassed, kSkipFailed, kStop };
  struct Callbacks {
    // Writes the iteration's artifact; may record state; returns whether to check it.
    std::function<Make(IterationContext&)> make_artifact;
    // After the verdict: false stops. Without it, --until decides.
    std::function<bool(const IterationContext&)> advance;
    std::function<std::optional<int64_t>()> remaining;
  };

  // UsageError when the iteration artifact already exists (it would be overwritten).
  Iterator(IterateOptions options, Judge judge, const ArtifactSorter* sorter);
  // Runs iterations until a callback stops them. `initial` carries the replay of an earlier
  // call in the same session (a tool that iterates twice); the first call loads
  // --load-debug-replay.
  Replay iterate(const Callbacks& callbacks, const std::string& suffix = "",
                 const Replay* initial = nullptr);

 private:
  void save_replay(const Replay& replay, bool skip_current) const;

  IterateOptions options_;
  Judge judge_;
  const ArtifactSorter* sorter_;
  bool loaded_replay_ = false;
};

// The replay as Polygraphy's JSON (IterationContext objects with "polygraphy_class"), and back.
std::string replay_to_json(const Replay& replay);
Replay replay_from_json(const std::string& text, const std::string& path);

}  // namespace parity::debug
