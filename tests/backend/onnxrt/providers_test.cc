// Execution providers: exact and substring matches, unknown and ambiguous names, and a
// provider the library lists but cannot start (CUDA in the npm build).
#include "backend/onnxrt/providers.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "ort_test_util.h"

namespace parity {
namespace {

using testing::ort_runtime;

constexpr const char* kIdentity = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  identity (float[2] x) => (float[2] y) { y = Identity(x) }
)";

std::string session_error(const OrtOptions& options) {
  try {
    SessionFromOnnxBytes(testing::model_bytes_from_text(kIdentity), options)();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

OrtOptions with_providers(std::vector<std::string> providers,
                          std::vector<std::string> provider_options = {}) {
  OrtOptions options;
  options.providers = std::move(providers);
  options.provider_options = std::move(provider_options);
  return options;
}

bool listed(const std::string& provider) {
  auto available = available_providers(ort_runtime());
  return std::find(available.begin(), available.end(), provider) != available.end();
}

TEST(OrtProviders, CpuIsAvailable) { EXPECT_TRUE(listed("CPUExecutionProvider")); }

TEST(OrtProviders, ExactMatch) {
  auto available = available_providers(ort_runtime());
  EXPECT_EQ(resolve_providers({"CPUExecutionProvider"}, available),
            std::vector<std::string>{"CPUExecutionProvider"});
}

TEST(OrtProviders, CaseInsensitiveSubstringMatch) {
  auto available = available_providers(ort_runtime());
  EXPECT_EQ(resolve_providers({"cpu"}, available),
            std::vector<std::string>{"CPUExecutionProvider"});
  EXPECT_EQ(resolve_providers({"CpuExecution"}, available),
            std::vector<std::string>{"CPUExecutionProvider"});
}

TEST(OrtProviders, PriorityOrderIsKept) {
  std::vector<std::string> available{"AExecutionProvider", "BExecutionProvider"};
  EXPECT_EQ(resolve_providers({"b", "a"}, available),
            (std::vector<std::string>{"BExecutionProvider", "AExecutionProvider"}));
}

TEST(OrtProviders, UnknownNameListsTheAvailableOnes) {
  std::string message = session_error(with_providers({"no-such-provider"}));
  EXPECT_NE(message.find("Could not find specified ONNX-Runtime execution provider.\nNote: "
                         "Requested provider was: no-such-provider, but available providers "
                         "are: ["),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("'CPUExecutionProvider']"), std::string::npos) << message;
}

TEST(OrtProviders, AmbiguousNameIsAnError) {
  std::vector<std::string> available{"AExecutionProvider", "BExecutionProvider"};
  try {
    resolve_providers({"execution"}, available);
    FAIL() << "a name matching two providers must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("it matches ['AExecutionProvider', "
                                         "'BExecutionProvider']"),
              std::string::npos)
        << e.what();
  }
}

TEST(OrtProviders, UnavailableCudaGivesOnnxRuntimesReason) {
  std::string message = session_error(with_providers({"cuda", "cpu"}));
  if (listed("CUDAExecutionProvider")) {
    // Listed but without its libraries (the npm build): ONNX Runtime's own reason, once.
    EXPECT_NE(message.find("ONNX Runtime failed to enable the execution provider "
                           "CUDAExecutionProvider: "),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("libonnxruntime_providers_shared.so"), std::string::npos) << message;
  } else {
    EXPECT_NE(message.find("Requested provider was: cuda, but available providers are:"),
              std::string::npos)
        << message;
  }
}

TEST(OrtProviders, ProviderOptionsAreParsed) {
  auto parsed = parse_provider_options({"device_id=0", "trt_engine_cache_path=/a=b"});
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed[0].key, "device_id");
  EXPECT_EQ(parsed[0].value, "0");
  EXPECT_EQ(parsed[1].key, "trt_engine_cache_path");
  EXPECT_EQ(parsed[1].value, "/a=b");
  EXPECT_THROW(parse_provider_options({"device_id"}), UsageError);
  EXPECT_THROW(parse_provider_options({"=0"}), UsageError);
}

TEST(OrtProviders, ProviderOptionsReachOnnxRuntime) {
  // The options go to ONNX Runtime's own call for the provider.
  if (!listed("CUDAExecutionProvider")) {
    EXPECT_NE(session_error(with_providers({"cuda"})).find("Could not find"), std::string::npos);
    return;
  }
  std::string message = session_error(with_providers({"cuda"}, {"no_such_option=1"}));
  // Only a call with options reaches this step, which the npm build fails for want of the
  // provider's libraries.
  EXPECT_NE(message.find("ONNX Runtime failed to set the options of CUDAExecutionProvider: "),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace parity
