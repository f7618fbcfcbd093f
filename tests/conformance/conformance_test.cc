// The ONNX node tests (libonnx-testdata) run through the reference backend, one gtest per test
// folder, compared with ONNX's own rule (support/value_compare.h). Which tests may fail is
// listed in expected_failures.txt; see README.md for the rules and the environment variables.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <thread>

#include "backend/ref/executor.h"
#include "backend/ref/registry.h"
#include "onnx/model_io.h"
#include "support/onnx_values.h"
#include "support/test_util.h"
#include "support/value_compare.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Where Debian's libonnx-testdata puts the node tests; PARITY_ONNX_TESTDATA overrides it.
constexpr const char* kDefaultNodeTestRoot = "/usr/share/libonnx-testdata/data/node";
constexpr int64_t kDefaultTimeLimitSeconds = 60;
// A kernel that never returns cannot be stopped between nodes: after this much more time the
// watchdog ends the process rather than let the run hang.
constexpr auto kHardLimitGrace = std::chrono::seconds(30);

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

std::string node_test_root() { return env_or("PARITY_ONNX_TESTDATA", kDefaultNodeTestRoot); }

// Seconds each test may take: PARITY_CONFORMANCE_TIME_LIMIT, or 60.
std::chrono::seconds time_limit() {
  static const std::chrono::seconds limit = [] {
    const std::string text = env_or("PARITY_CONFORMANCE_TIME_LIMIT", "");
    if (text.empty()) return std::chrono::seconds(kDefaultTimeLimitSeconds);
    size_t used = 0;
    int64_t seconds = -1;
    try {
      seconds = std::stoll(text, &used);
    } catch (const std::exception&) {
    }
    if (used != text.size() || seconds < 0)
      fail_usage(
          "failed to use PARITY_CONFORMANCE_TIME_LIMIT with '{}': it must be a whole "
          "number of seconds, 0 or more",
          text);
    return std::chrono::seconds(seconds);
  }();
  return limit;
}

// Every folder under the root that holds a model.onnx, sorted by name.
std::vector<std::string> discover_tests(const std::string& root) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec))
    if (entry.is_directory() && fs::exists(entry.path() / "model.onnx"))
      names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// ---------------------------------------------------------------------------------------------
// The expected-failure list

struct ExpectedFailures {
  std::map<std::string, std::string> reasons;  // test name -> reason
  std::vector<std::string> problems;           // malformed or duplicate lines
};

std::string trim(std::string s) {
  const char* space = " \t\r";
  s.erase(0, s.find_first_not_of(space));
  s.erase(s.find_last_not_of(space) + 1);
  return s;
}

ExpectedFailures read_expected_failures(const std::string& path) {
  ExpectedFailures list;
  std::ifstream in(path);
  if (!in) {
    list.problems.push_back(fmt::format("{} cannot be opened", path));
    return list;
  }
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::string name = trim(line.substr(0, line.find('#')));
    std::string reason =
        line.find('#') == std::string::npos ? "" : trim(line.substr(line.find('#') + 1));
    if (name.empty()) continue;  // a blank or comment line
    if (name.find_first_of(" \t") != std::string::npos || reason.empty())
      list.problems.push_back(fmt::format("line {}: '{}' is not of the form 'test_name  # reason'",
                                          number, trim(line)));
    else if (!list.reasons.emplace(name, reason).second)
      list.problems.push_back(fmt::format("line {}: {} is listed twice", number, name));
  }
  return list;
}

std::string expected_failures_path() {
  return source_path("tests/conformance/expected_failures.txt");
}

// ---------------------------------------------------------------------------------------------
// Running one node test

// Ops of the graph and its bodies that have no kernel for the model's opset ("Op", or
// "Op-<opset>" when the op has kernels for other opsets only).
void collect_missing_ops(const ir::Model& model, const ir::Graph& graph,
                         std::set<std::string>& missing) {
  const auto& registry = ref::Registry::global();
  for (const auto& node : graph.nodes) {
    int64_t opset = model.opset(node.domain);
    if (!registry.find(node.domain, node.op_type, opset > 0 ? opset : ref::kOpsetMax))
      missing.insert(registry.has_op(node.domain, node.op_type)
                         ? fmt::format("{}-{}", node.op_type, opset)
                         : node.op_type);
    for (const auto& a : node.attributes) {
      if (a.g) collect_missing_ops(model, *a.g, missing);
      for (const auto& g : a.graphs)
        if (g) collect_missing_ops(model, *g, missing);
    }
  }
}

struct Outcome {
  bool passed = false;
  std::string message;  // why it failed (several lines)
  std::string reason;   // one line, for the expected-failure list
};

Outcome failure(std::string message, std::string reason) {
  return Outcome{false, std::move(message), std::move(reason)};
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

std::vector<fs::path> data_sets(const fs::path& dir) {
  std::vector<fs::path> sets;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(entry.path());
  std::sort(sets.begin(), sets.end());
  return sets;
}

std::vector<Value> read_values(const fs::path& set, const char* prefix,
                               const std::vector<ir::ValueInfo>& declared) {
  std::vector<Value> values;
  for (size_t i = 0;; ++i) {
    fs::path file = set / fmt::format("{}_{}.pb", prefix, i);
    if (!fs::exists(file)) break;
    if (i >= declared.size())
      fail("failed to read {}: the graph has only {} {}s", file.string(), declared.size(), prefix);
    values.push_back(read_value_proto(file.string(), declared[i].type));
  }
  return values;
}

// The observer throws this once the time limit has passed; the flag survives the executor
// wrapping the exception into its own error inside control-flow bodies.
struct TimeLimitExceeded : std::runtime_error {
  TimeLimitExceeded() : std::runtime_error("the time limit was exceeded") {}
};

Outcome run_node_test(const fs::path& dir, Clock::time_point deadline) {
  std::shared_ptr<ir::Model> model;
  try {
    model = onnx_io::load_model((dir / "model.onnx").string());
  } catch (const std::exception& e) {
    return failure(fmt::format("loading the model failed: {}", e.what()),
                   fmt::format("load error: {}", first_line(e.what())));
  }
  std::set<std::string> missing;
  collect_missing_ops(*model, model->graph, missing);
  if (!missing.empty()) {
    std::string ops = fmt::format("{}", fmt::join(missing, ", "));
    return failure(fmt::format("no reference kernel for: {}", ops),
                   fmt::format("no reference kernel registered for: {}", ops));
  }

  bool timed_out = false;
  try {
    ref::Executor executor(model);
    executor.set_observer([&](const ir::Node&, const std::vector<Value>&) {
      if (Clock::now() > deadline) {
        timed_out = true;
        throw TimeLimitExceeded();
      }
    });
    for (const fs::path& set : data_sets(dir)) {
      std::vector<Value> inputs = read_values(set, "input", model->graph.inputs);
      std::vector<Value> expected = read_values(set, "output", model->graph.outputs);
      std::vector<ref::NamedValue> feed;
      for (size_t i = 0; i < inputs.size(); ++i)
        feed.push_back({model->graph.inputs[i].name, std::move(inputs[i])});
      std::vector<ref::NamedValue> actual = executor.run(feed);
      for (size_t i = 0; i < expected.size(); ++i) {
        std::string diff = compare_values(actual[i].value, expected[i]);
        if (!diff.empty())
          return failure(fmt::format("{}: output '{}' ({}) differs: {}", set.filename().string(),
                                     actual[i].name, model->graph.outputs[i].type.str(), diff),
                         fmt::format("output '{}' differs: {}", actual[i].name, diff));
      }
    }
  } catch (const std::exception& e) {
    if (timed_out)
      return failure(
          fmt::format("it took longer than the time limit of {} s", time_limit().count()),
          fmt::format("slower than {} s", time_limit().count()));
    return failure(fmt::format("running failed: {}", e.what()), first_line(e.what()));
  }
  return Outcome{true, "", ""};
}

// ---------------------------------------------------------------------------------------------
// Bookkeeping shared by the registered tests

struct Summary {
  int passed = 0;
  int expected_failures = 0;
  int failed = 0;                               // unlisted failures
  int unexpected_passes = 0;                    // listed but passing
  std::map<std::string, std::string> failures;  // every failing test -> reason
};

Summary& summary() {
  static Summary s;
  return s;
}

const ExpectedFailures& expected_failures() {
  static const ExpectedFailures list = read_expected_failures(expected_failures_path());
  return list;
}

// Ends the process when a test runs far beyond its time limit inside one kernel.
class Watchdog {
 public:
  Watchdog() : thread_([this] { loop(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  void arm(const std::string& name, Clock::time_point deadline) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      name_ = name;
      deadline_ = deadline + kHardLimitGrace;
    }
    wake_.notify_one();
  }
  void disarm() {
    std::lock_guard<std::mutex> lock(mutex_);
    deadline_.reset();
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
      if (!deadline_) {
        wake_.wait(lock);
        continue;
      }
      const Clock::time_point deadline = *deadline_;
      if (wake_.wait_until(lock, deadline) == std::cv_status::timeout && deadline_ == deadline &&
          !stop_) {
        std::fprintf(stderr,
                     "[conformance] %s is still running %lld s after its time limit: "
                     "stopping the test program\n",
                     name_.c_str(), static_cast<long long>(kHardLimitGrace.count()));
        std::fflush(stderr);
        std::_Exit(1);
      }
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string name_;
  std::optional<Clock::time_point> deadline_;
  bool stop_ = false;
  std::thread thread_;
};

Watchdog& watchdog() {
  static Watchdog w;
  return w;
}

class NodeTest : public ::testing::Test {
 public:
  NodeTest(std::string name, fs::path dir) : name_(std::move(name)), dir_(std::move(dir)) {}

  void TestBody() override {
    const auto deadline = Clock::now() + time_limit();
    watchdog().arm(name_, deadline);
    Outcome outcome = run_node_test(dir_, deadline);
    watchdog().disarm();

    Summary& s = summary();
    const auto& listed = expected_failures().reasons;
    const auto it = listed.find(name_);
    if (!outcome.passed) s.failures[name_] = outcome.reason;
    if (it == listed.end()) {
      if (outcome.passed) {
        ++s.passed;
      } else {
        ++s.failed;
        ADD_FAILURE() << name_ << " failed: " << outcome.message;
      }
    } else if (outcome.passed) {
      ++s.unexpected_passes;
      ADD_FAILURE() << "remove " << name_ << " from expected_failures.txt: it passes now";
    } else {
      ++s.expected_failures;
      RecordProperty("expected_failure", it->second);
    }
  }

 private:
  std::string name_;
  fs::path dir_;
};

// Prints the counts at the end and, when asked, the current failures in the list's format.
class SummaryPrinter : public ::testing::EmptyTestEventListener {
 public:
  void OnTestProgramEnd(const ::testing::UnitTest&) override {
    const Summary& s = summary();
    const int total = s.passed + s.expected_failures + s.failed + s.unexpected_passes;
    if (total == 0) return;
    std::printf(
        "[conformance] %d passed, %d expected failures, %d failed, %d listed but "
        "passing; %d node tests run\n",
        s.passed, s.expected_failures, s.failed, s.unexpected_passes, total);
    const std::string report = env_or("PARITY_CONFORMANCE_REPORT", "");
    if (report.empty()) return;
    std::ofstream out(report);
    for (const auto& [name, reason] : s.failures) out << name << "  # " << reason << "\n";
    std::printf("[conformance] wrote the %zu failing tests to %s\n", s.failures.size(),
                report.c_str());
  }
};

// The list itself: well formed, and naming only tests that exist.
TEST(ConformanceList, NamesExistingTestsOnce) {
  const ExpectedFailures& list = expected_failures();
  for (const auto& problem : list.problems)
    ADD_FAILURE() << expected_failures_path() << ": " << problem;
  const std::vector<std::string> all = discover_tests(node_test_root());
  const std::set<std::string> known(all.begin(), all.end());
  for (const auto& [name, reason] : list.reasons)
    EXPECT_TRUE(known.count(name)) << name << " is in expected_failures.txt but there is no "
                                   << "such node test under " << node_test_root();
}

TEST(ConformanceData, NodeTestsAreInstalled) {
  EXPECT_GT(discover_tests(node_test_root()).size(), 0u)
      << "no node tests found under " << node_test_root()
      << ": install libonnx-testdata or point PARITY_ONNX_TESTDATA at a folder of test_* dirs";
}

void register_node_tests() {
  time_limit();  // a malformed PARITY_CONFORMANCE_TIME_LIMIT is reported before any test runs
  const std::string root = node_test_root();
  const std::string filter = env_or("PARITY_CONFORMANCE_FILTER", "");
  std::regex pattern;
  try {
    pattern = std::regex(filter.empty() ? ".*" : filter);
  } catch (const std::regex_error& e) {
    fail_usage(
        "failed to use PARITY_CONFORMANCE_FILTER with '{}': {}; give an ECMAScript "
        "regular expression such as 'loop|scan'",
        filter, e.what());
  }
  for (const std::string& name : discover_tests(root)) {
    if (!std::regex_search(name, pattern)) continue;
    fs::path dir = fs::path(root) / name;
    ::testing::RegisterTest("NodeTests", name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                            [name, dir]() -> ::testing::Test* { return new NodeTest(name, dir); });
  }
  // The two model tests of the `simple` folder (beside `node`) that use the training domain's
  // Gradient op; the folder's other models are not run here.
  const fs::path simple = fs::path(root).parent_path() / "simple";
  for (const std::string name : {"test_gradient_of_add", "test_gradient_of_add_and_mul"}) {
    if (!std::regex_search(name, pattern)) continue;
    fs::path dir = simple / name;
    ::testing::RegisterTest("SimpleTests", name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                            [name, dir]() -> ::testing::Test* { return new NodeTest(name, dir); });
  }
}

}  // namespace
}  // namespace parity::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  try {
    parity::testing::register_node_tests();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  ::testing::UnitTest::GetInstance()->listeners().Append(new parity::testing::SummaryPrinter);
  return RUN_ALL_TESTS();
}
