// Finding and loading libonnxruntime: the real library loads, and a missing or wrong one is a
// clear error (never a crash). The version-range test reruns this whole binary against
// ONNX Runtime 1.17.0 in a child process.
#include "backend/onnxrt/library.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "ort_test_util.h"
#include "support/test_util.h"

namespace fs = std::filesystem;

namespace parity {
namespace {

using testing::ort_runtime;
using testing::run_command;
using testing::TempDir;

// Sets an environment variable for the life of the object, restoring the old value after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string self_executable() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  return std::string(path, n > 0 ? static_cast<size_t>(n) : 0);
}

TEST(OrtLibrary, LoadsTheRealLibrary) {
  const OrtRuntime& runtime = ort_runtime();
  EXPECT_TRUE(fs::exists(runtime.library().path())) << runtime.library().path();
  EXPECT_GE(testing::ort_minor_version(), 17) << runtime.library().version();
  EXPECT_NE(runtime.library().build_info().find("ORT Build Info"), std::string::npos);
  EXPECT_NE(runtime.env(), nullptr);
  // Set before the environment was created, so ONNX Runtime writes no telemetry files.
  ASSERT_NE(std::getenv("ORT_DISABLE_TELEMETRY"), nullptr);
}

TEST(OrtLibrary, FindsTheLibraryInAFolder) {
  std::string folder = fs::path(ort_runtime().library().path()).parent_path().string();
  EXPECT_EQ(fs::weakly_canonical(ort_library_in_folder(folder)),
            fs::weakly_canonical(ort_runtime().library().path()));
  auto lib =
      OrtLibrary::open(folder + "/" + fs::path(ort_runtime().library().path()).filename().string());
  EXPECT_EQ(lib->version(), ort_runtime().library().version());
}

TEST(OrtLibrary, MissingExplicitPathSaysHowToInstall) {
  std::string message = error_of([] { OrtLibrary::discover("/nonexistent/libonnxruntime.so.1"); });
  EXPECT_NE(message.find("failed to load ONNX Runtime from '/nonexistent/libonnxruntime.so.1' "
                         "(given by --ort-lib): the file does not exist"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("scripts/install-onnxruntime.sh 1.30.0"), std::string::npos) << message;
  EXPECT_NE(message.find("./setup.sh"), std::string::npos) << message;
}

TEST(OrtLibrary, MissingEnvironmentPathIsAnError) {
  ScopedEnv env("PARITY_ORT_LIB", "/nonexistent");
  std::string message = error_of([] { OrtLibrary::discover(); });
  EXPECT_NE(message.find("'/nonexistent' (given by the environment variable PARITY_ORT_LIB)"),
            std::string::npos)
      << message;
}

TEST(OrtLibrary, SharedLibraryThatIsNotOnnxRuntime) {
  std::string libz = "/usr/lib/x86_64-linux-gnu/libz.so.1";
  ASSERT_TRUE(fs::exists(libz)) << "zlib is a build dependency";
  std::string message = error_of([&] { OrtLibrary::open(libz); });
  EXPECT_NE(message.find("has no OrtGetApiBase symbol, so it is not ONNX Runtime"),
            std::string::npos)
      << message;
}

TEST(OrtLibrary, FileThatIsNotASharedLibrary) {
  TempDir dir;
  testing::write_text(dir.file("libonnxruntime.so.1"), "not an ELF file\n");
  std::string message = error_of([&] { OrtLibrary::discover(dir.path().string()); });
  EXPECT_NE(message.find("it is not a loadable shared library"), std::string::npos) << message;
}

TEST(OrtLibrary, FolderWithoutTheLibrary) {
  TempDir dir;
  std::string message = error_of([&] { OrtLibrary::discover(dir.path().string()); });
  EXPECT_NE(message.find("it holds no libonnxruntime.so.1"), std::string::npos) << message;
}

TEST(OrtLibrary, OneLibraryPerProcess) {
  ort_runtime();
  std::string message = error_of([] { OrtRuntime::get("/usr/lib/x86_64-linux-gnu/libz.so.1"); });
  EXPECT_NE(message.find("a process uses one ONNX Runtime library"), std::string::npos) << message;
  // Naming the library already loaded is fine.
  EXPECT_EQ(&OrtRuntime::get(ort_runtime().library().path()), &ort_runtime());
}

TEST(OrtLibrary, MissingLibraryInAFreshProcessIsAnErrorNotACrash) {
  // A process whose PARITY_ORT_LIB names nothing: the runner reports how to install ONNX
  // Runtime and the test fails cleanly (exit status 1, not a signal).
  auto result = run_command("PARITY_ORT_LIB=/nonexistent '" + self_executable() +
                            "' --gtest_filter=OnnxrtRunner.Basic");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("(given by the environment variable PARITY_ORT_LIB): the file "
                               "does not exist"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("scripts/install-onnxruntime.sh"), std::string::npos)
      << result.output;
}

TEST(OrtLibrary, NonOnnxRuntimeLibraryInAFreshProcessIsAnErrorNotACrash) {
  auto result = run_command("PARITY_ORT_LIB=/usr/lib/x86_64-linux-gnu/libz.so.1 '" +
                            self_executable() + "' --gtest_filter=OnnxrtRunner.Basic");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("it is not ONNX Runtime"), std::string::npos) << result.output;
}

// The same binary must pass against the oldest supported ONNX Runtime. In the parent this test
// reruns the whole suite with PARITY_ORT_LIB pointing at 1.17.0; in that child (marked by
// PARITY_ORT_TEST_EXPECT_VERSION, which also stops the recursion) it checks that the child
// really loaded the library it was given.
TEST(OrtVersionRange, SuitePassesOnOnnxRuntime1_17) {
  if (const char* expected = std::getenv("PARITY_ORT_TEST_EXPECT_VERSION")) {
    EXPECT_EQ(ort_runtime().library().version(), expected);
    return;
  }
  std::string lib = testing::source_path(
      "deps/onnxruntime-1.17.0/node_modules/onnxruntime-node/bin/napi-v3/linux/x64/"
      "libonnxruntime.so.1.17.0");
  ASSERT_TRUE(fs::exists(lib)) << lib << " is missing: run "
                               << "scripts/install-onnxruntime.sh 1.17.0 deps/onnxruntime-1.17.0";
  // Left out: the checks of what ONNX Runtime 1.30 itself does (the departures page), of the
  // opset 23-24 ops and of the FLOAT4E2M1/FLOAT8E8M0 types (IR version 11), which 1.17
  // predates. Nothing in the child may skip itself.
  auto result = run_command(
      "PARITY_ORT_LIB='" + lib + "' PARITY_ORT_TEST_EXPECT_VERSION=1.17.0 '" + self_executable() +
      "' --gtest_brief=1 "
      "'--gtest_filter=-OrtDepartures.*:OrtOpset23Differential.*:OrtNarrowFloat.*'");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("[  PASSED  ]"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("SKIPPED"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace parity
