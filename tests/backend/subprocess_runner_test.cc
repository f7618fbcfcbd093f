// SubprocessRunner: a runner run in a child process gives the same results as in this process,
// and whatever kills its process becomes that runner's error.
#include "backend/subprocess_runner.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include "core/error.h"
#include "core/thread_pool.h"

namespace parity {
namespace {

// Doubles float input "x" (with the thread pool, so the child's pool is exercised), echoes
// string input "s", reports its pid; `crash` says what infer does instead.
class TestRunner : public Runner {
 public:
  explicit TestRunner(std::string crash = "") : Runner("test-runner", "test"), crash_(crash) {}
  int activations = 0;

 protected:
  void activate_impl() override {
    ++activations;
    if (crash_ == "activate") std::abort();
  }
  void deactivate_impl() override {}
  TensorMetadata input_metadata_impl() override {
    TensorMetadata meta;
    meta.add("x", DataType::kFloat32, DimList{Dim::symbolic("batch"), Dim::fixed(3)});
    meta.add("s", DataType::kString, std::nullopt);
    return meta;
  }
  TensorMap infer_impl(const TensorMap& feed) override {
    if (crash_ == "segv") std::raise(SIGSEGV);
    if (crash_ == "exit") std::exit(7);
    if (crash_ == "hang") pause();
    if (crash_ == "throw") fail("failed to run inference: the test says no");
    const Tensor& x = feed.at("x");
    Tensor y(DataType::kFloat32, x.shape());
    parallel_for(x.numel(), 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y.data<float>()[i] = 2 * x.data<float>()[i];
    });
    TensorMap out;
    out.set("y", y);
    out.set("s", feed.at("s").clone());
    out.set("pid", Tensor::scalar<int64_t>(getpid()));
    set_inference_time(0.25);
    return out;
  }

 private:
  std::string crash_;
};

TensorMap feed() {
  TensorMap f;
  f.set("x", Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, -6.5f}));
  Tensor s(DataType::kString, {2});
  s.data<std::string>()[0] = "hello";
  s.data<std::string>()[1] = std::string("with\0nul", 8);
  f.set("s", s);
  return f;
}

std::string error_of(SubprocessRunner& runner) {
  try {
    RunnerActivation active(runner);
    runner.infer(feed());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SubprocessRunner, GivesTheSameResultsFromAnotherProcess) {
  // The parent's pool has running workers when the child is made: the child must get its own.
  set_num_threads(2);
  parallel_for(1000, 1, [](int64_t, int64_t) {});
  SubprocessRunner runner(std::make_unique<TestRunner>());
  EXPECT_EQ(runner.name(), "test-runner");
  for (int round = 0; round < 2; ++round) {  // activating again starts a new process
    RunnerActivation active(runner);
    const TensorMetadata meta = runner.input_metadata();
    ASSERT_EQ(meta.size(), 2u);
    TestRunner here;
    RunnerActivation here_active(here);
    EXPECT_EQ(meta.str(), here.input_metadata().str());
    const TensorMap out = runner.infer(feed());
    ASSERT_EQ(out.size(), 3u);
    EXPECT_TRUE(out.at("y").equals(Tensor::from_vector<float>({2, 3}, {2, 4, 6, 8, 10, -13})));
    EXPECT_TRUE(out.at("s").equals(feed().at("s")));
    EXPECT_NE(out.at("pid").data<int64_t>()[0], getpid());
    EXPECT_EQ(runner.last_inference_time(), 0.25);
  }
  set_num_threads(0);
}

TEST(SubprocessRunner, TheChildsErrorsComeBackAsTheirOwnMessage) {
  SubprocessRunner runner(std::make_unique<TestRunner>("throw"));
  EXPECT_EQ(error_of(runner), "failed to run inference: the test says no");
}

TEST(SubprocessRunner, ACrashIsThisRunnersError) {
  SubprocessRunner segv(std::make_unique<TestRunner>("segv"));
  const std::string e = error_of(segv);
  EXPECT_NE(e.find("test-runner"), std::string::npos) << e;
  EXPECT_NE(e.find("Terminated prematurely during inference: its process was killed by signal "
                   "11 (Segmentation fault)"),
            std::string::npos)
      << e;

  SubprocessRunner exits(std::make_unique<TestRunner>("exit"));
  EXPECT_NE(error_of(exits).find("its process exited with status 7"), std::string::npos);

  SubprocessRunner aborts(std::make_unique<TestRunner>("activate"));
  const std::string a = error_of(aborts);
  EXPECT_NE(a.find("during activation: its process was killed by signal 6 (Aborted)"),
            std::string::npos)
      << a;
}

TEST(SubprocessRunner, AHangingChildIsKilledAfterTheTimeout) {
  SubprocessRunner runner(std::make_unique<TestRunner>("hang"), SubprocessOptions{0.3});
  const std::string e = error_of(runner);
  EXPECT_NE(e.find("did not answer within 0.3 s"), std::string::npos) << e;
}

TEST(SubprocessRunner, ABorrowedRunnerIsLeftAsItWas) {
  TestRunner inner;
  {
    SubprocessRunner runner(inner);
    RunnerActivation active(runner);
    runner.infer(feed());
  }
  // Activated in the child only.
  EXPECT_EQ(inner.activations, 0);
  EXPECT_FALSE(inner.is_active());
}

}  // namespace
}  // namespace parity
