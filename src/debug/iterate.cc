#include "debug/iterate.h"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/logger.h"
#include "core/py_format.h"
#include "debug/process.h"
#include "io/json.h"
#include "io/json_parser.h"

namespace parity::debug {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

bool check_passed(const CheckOptions& options, const std::vector<std::regex>& regexes,
                  int returncode, const std::string& output) {
  auto contains = [](const std::optional<std::vector<int>>& codes, int code) {
    return codes && std::find(codes->begin(), codes->end(), code) != codes->end();
  };
  if (contains(options.ignore_fail_codes, returncode)) return true;
  std::optional<bool> has_fail_regex;
  if (!regexes.empty()) {
    has_fail_regex = false;
    for (const std::regex& r : regexes)
      if (std::regex_search(output, r)) has_fail_regex = true;
  }
  bool failed = false;
  if (options.fail_codes) {
    // With --fail-code, a failure needs the code and, when given, a matching regex.
    failed = contains(options.fail_codes, returncode) && has_fail_regex.value_or(true);
  } else {
    // Without it, a regex decides alone (even for exit status 0).
    failed = has_fail_regex ? *has_fail_regex : returncode != 0;
  }
  return !failed;
}

namespace {

std::string joined(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

// Polygraphy's interactive prompt: the first letter of the answer, until it is p or f.
bool ask_user(const std::string& iter_artifact) {
  std::string prompt = fmt::format("Did '{}' [p]ass or [f]ail?",
                                   iter_artifact.empty() ? "this iteration" : iter_artifact);
  for (;;) {
    std::cout << ">>> " << prompt << ' ' << std::flush;
    std::string line;
    if (!std::getline(std::cin, line))
      fail(
          "failed to read whether the iteration passed: standard input ended; give a --check "
          "command to run the iterations without asking");
    if (!line.empty() && (std::tolower(line[0]) == 'p' || std::tolower(line[0]) == 'f'))
      return std::tolower(line[0]) == 'p';
    prompt = "Please choose either: 'p' or 'f':";
  }
}

// The message as Python's str.splitlines() sees it: a final newline ends the last line
// instead of starting an empty one.
std::string without_final_newline(std::string s) {
  if (!s.empty() && s.back() == '\n') s.pop_back();
  if (!s.empty() && s.back() == '\r') s.pop_back();
  return s;
}

}  // namespace

Judge check_command_judge(CheckOptions options) {
  std::vector<std::regex> regexes;
  for (const std::string& text : options.fail_regexes) {
    try {
      regexes.emplace_back(text);
    } catch (const std::regex_error& e) {
      fail_usage(
          "failed to parse --fail-regex with value '{}': {}; it must be a regular "
          "expression (ECMAScript syntax)",
          text, e.what());
    }
  }
  if (options.command.empty())
    logger().start(
        "Starting interactive debugging session since no `--check` command was provided");
  return [options = std::move(options), regexes = std::move(regexes)](const std::string& art) {
    if (options.command.empty()) return ask_user(art);
    logger().info("Running check command: {}", joined(options.command));
    const ProcessResult status = run_process(options.command);
    const bool success = check_passed(options, regexes, status.returncode, status.out + status.err);
    if (options.show_output || (!success && !options.hide_fail_output)) {
      logger().info("{}",
                    without_final_newline("========== CAPTURED STDOUT ==========\n" + status.out));
      logger().log(success ? Severity::kWarning : Severity::kError,
                   without_final_newline("========== CAPTURED STDERR ==========\n" + status.err));
    }
    return success;
  };
}

ArtifactSorter::ArtifactSorter(std::vector<std::string> artifacts, std::string dir)
    : artifacts_(std::move(artifacts)), dir_(std::move(dir)) {
  // Python's time.strftime("%x") and ("%X") in the C locale, '/' and ':' made '-'.
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char date[32], time[32];
  std::strftime(date, sizeof date, "%m-%d-%y", &local);
  std::strftime(time, sizeof time, "%H-%M-%S", &local);
  start_date_ = date;
  start_time_ = time;
}

void ArtifactSorter::sort(bool success, const std::string& suffix) const {
  for (const std::string& art : artifacts_) {
    const fs::path path(art);
    const std::string name = fmt::format("{}_{}_{}{}{}", path.stem().string(), start_date_,
                                         start_time_, suffix, path.extension().string());
    const fs::path dest = fs::path(dir_) / (success ? "good" : "bad") / name;
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      logger().error(
          "Artifact: {} does not exist, skipping.\nWas the artifact supposed to be generated?",
          art);
      continue;
    }
    if (fs::exists(dest, ec)) {
      logger().error(
          "Destination path: {} already exists.\nRefusing to overwrite. This artifact will be "
          "skipped!",
          dest.string());
      continue;
    }
    logger().info("Moving {} to {}", art, dest.string());
    fs::create_directories(dest.parent_path(), ec);
    fs::rename(path, dest, ec);
    if (ec) {  // another file system: copy, then remove
      fs::copy(path, dest, fs::copy_options::recursive, ec);
      if (!ec) fs::remove_all(path, ec);
    }
    if (ec) fail("failed to move artifact '{}' to '{}': {}", art, dest.string(), ec.message());
  }
}

Until Until::parse(const std::string& text) {
  Until u;
  if (text == "good" || text == "bad") {
    u.kind = text == "good" ? Kind::kGood : Kind::kBad;
    return u;
  }
  size_t used = 0;
  int64_t count = 0;
  try {
    count = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size())
    fail_usage("--until value must be an integer, 'good', or 'bad', but was: {}", text);
  u.kind = Kind::kCount;
  u.last_index = count - 1;
  return u;
}

const IterationContext* Replay::find(const std::string& key) const {
  for (const auto& [k, c] : entries_)
    if (k == key) return &c;
  return nullptr;
}

void Replay::set(const std::string& key, const IterationContext& context) {
  for (auto& [k, c] : entries_)
    if (k == key) {
      c = context;
      return;
    }
  entries_.emplace_back(key, context);
}

std::string replay_to_json(const Replay& replay) {
  Json root = Json::object();
  for (const auto& [key, context] : replay.entries()) {
    Json state = Json::object();
    for (const auto& [name, value] : context.state) state[name] = value;
    root[key] = Json{{"state", state},
                     {"iteration_info", Json{{"iteration", context.iteration}}},
                     {"success", context.success},
                     {"polygraphy_class", "IterationContext"}};
  }
  return root.dump(4);
}

Replay replay_from_json(const std::string& text, const std::string& path) {
  auto bad = [&](const std::string& why) -> Replay {
    fail(
        "failed to load debug replay '{}': {}; it must be a file written by "
        "--save-debug-replay",
        path, why);
  };
  Json root;
  try {
    root = io::parse_json(text);
  } catch (const Error& e) {
    return bad(e.what());
  }
  if (!root.is_object()) return bad("the top level is not an object");
  Replay replay;
  for (const auto& [key, entry] : root.items()) {
    if (!entry.is_object() || !entry.contains("success") || !entry["success"].is_boolean())
      return bad(fmt::format("entry '{}' has no boolean 'success'", key));
    IterationContext c;
    c.success = entry["success"].get<bool>();
    if (entry.contains("iteration_info") && entry["iteration_info"].contains("iteration") &&
        entry["iteration_info"]["iteration"].is_number_integer())
      c.iteration = entry["iteration_info"]["iteration"].get<int64_t>();
    if (entry.contains("state") && entry["state"].is_object())
      for (const auto& [name, value] : entry["state"].items())
        if (value.is_number_integer()) c.state[name] = value.get<int64_t>();
    replay.set(key, c);
  }
  return replay;
}

Iterator::Iterator(IterateOptions options, Judge judge, const ArtifactSorter* sorter)
    : options_(std::move(options)), judge_(std::move(judge)), sorter_(sorter) {
  std::error_code ec;
  if (!options_.iter_artifact.empty() && fs::exists(options_.iter_artifact, ec))
    logger().critical(
        "{} already exists, refusing to overwrite.\nPlease remove the file manually or specify "
        "a different path with `--intermediate-artifact`.",
        options_.iter_artifact);
}

void Iterator::save_replay(const Replay& replay, bool skip_current) const {
  if (options_.save_debug_replay.empty()) return;
  std::string path = options_.save_debug_replay;
  if (skip_current) {
    // Polygraphy's util.add_file_suffix: before the extension.
    const fs::path p(path);
    path =
        (p.parent_path() / (p.stem().string() + "_skip_current" + p.extension().string())).string();
  } else {
    logger().info("Saving debug replay to {}", path);
  }
  io::write_file(path, replay_to_json(replay));
}

Replay Iterator::iterate(const Callbacks& callbacks, const std::string& suffix,
                         const Replay* initial) {
  Replay replay;
  if (initial) {
    replay = *initial;
  } else if (!options_.load_debug_replay.empty() && !loaded_replay_) {
    logger().info("Loading debug replay from {}", options_.load_debug_replay);
    replay =
        replay_from_json(io::read_file(options_.load_debug_replay), options_.load_debug_replay);
    loaded_replay_ = true;
  }
  auto advance = [&](const IterationContext& c) {
    if (callbacks.advance) return callbacks.advance(c);
    switch (options_.until.kind) {
      case Until::Kind::kGood:
        return !c.success;
      case Until::Kind::kBad:
        return c.success;
      case Until::Kind::kCount:
        return c.iteration < options_.until.last_index;
      case Until::Kind::kNone:
        return true;
    }
    return true;
  };
  auto try_remove = [](const std::string& path) {
    std::error_code ec;
    if (!fs::remove(path, ec)) logger().warning("Could not clean up: {}", path);
  };

  // Polygraphy stops at this many iterations rather than loop forever.
  constexpr int64_t kMaxCount = 100000;
  int64_t index = 0, num_passed = 0;
  bool stopped = false;
  for (; index < kMaxCount; ++index) {
    IterationContext context;
    context.iteration = index;
    Logger::Indent indent;
    const std::optional<int64_t> remaining =
        callbacks.remaining ? callbacks.remaining() : std::nullopt;
    logger().start(
        "RUNNING | Iteration {}{}", index + 1,
        remaining ? fmt::format(" | Approximately {} iteration(s) remaining", *remaining) : "");
    const auto start = std::chrono::steady_clock::now();
    bool cleanup = false;  // the iteration's files are removed when it ends
    auto clean_up = [&] {
      if (!cleanup) return;
      if (!options_.iter_artifact.empty() && options_.remove_intermediate)
        try_remove(options_.iter_artifact);
      if (!options_.iteration_info.empty()) try_remove(options_.iteration_info);
    };
    const std::string key = fmt::format("_N{}{}", index, suffix.empty() ? "" : "_" + suffix);
    if (const IterationContext* saved = replay.find(key)) {
      context = *saved;
      context.iteration = index;
      logger().info("Loading iteration information from debug replay: success={}",
                    py_bool(context.success));
    } else {
      Make make = Make::kCheck;
      if (callbacks.make_artifact) make = callbacks.make_artifact(context);
      if (make == Make::kStop) {
        stopped = true;
        break;
      }
      if (!options_.iteration_info.empty())
        io::write_file(options_.iteration_info, Json{{"iteration", context.iteration}}.dump(4));
      // Saved first as a failure: if the check crashes the session, loading this replay skips
      // the iteration that crashed.
      IterationContext skip_current = context;
      skip_current.success = false;
      replay.set(key, skip_current);
      save_replay(replay, /*skip_current=*/true);
      if (make == Make::kCheck) {
        context.success = judge_(options_.iter_artifact);
        if (sorter_) sorter_->sort(context.success, key);
      } else {
        context.success = make == Make::kSkipPassed;
      }
      replay.set(key, context);
      save_replay(replay, /*skip_current=*/false);
      cleanup = true;
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (context.success) {
      ++num_passed;
      logger().finish("PASSED | Iteration {} | Duration {}s", index + 1, format_repr(seconds));
    } else {
      logger().error("FAILED | Iteration {} | Duration {}s", index + 1, format_repr(seconds));
    }
    const bool go_on = advance(context);
    clean_up();
    if (!go_on) {
      stopped = true;
      break;
    }
  }
  if (!stopped)
    logger().warning(
        "Maximum number of iterations reached: {}.\nIteration has been halted to prevent an "
        "infinite loop!",
        kMaxCount);
  const int64_t total = std::min(index + 1, kMaxCount);
  logger().finish("Finished {} iteration(s) | Passed: {}/{} | Pass Rate: {}%", total, num_passed,
                  total, format_repr(static_cast<double>(num_passed) * 100 / total));
  return replay;
}

}  // namespace parity::debug
