// Op plugins (plugin.h, plugin_api.h): the example plugin runs in the reference backend and
// matches NumPy; broken libraries are refused with messages that say what is wrong. The broken
// libraries are compiled here from a few lines of C, as a plugin author would write them.
#include "backend/ref/plugin.h"

#include "backend/plugin_api.h"

#include <gtest/gtest.h>

#include "backend/ref/registry.h"
#include "ref_test_util.h"
#include "support/onnx_text.h"
#include "support/test_util.h"

namespace parity {
namespace {

using testing::error_of;

std::string example_plugin_path() {
  return std::string(PARITY_BINARY_DIR) + "/examples/plugin/libparity_example_plugin.so";
}

// Compiles `source` (C++ including plugin_api.h) into a shared library in `dir`.
std::string build_plugin(const testing::TempDir& dir, const std::string& name,
                         const std::string& source) {
  const std::string src = dir.file(name + ".cc");
  const std::string lib = dir.file("lib" + name + ".so");
  testing::write_text(src, "#include \"backend/plugin_api.h\"\n" + source);
  testing::CommandResult r = testing::run_command(
      "c++ -shared -fPIC -I" + testing::source_path("src") + " -o " + lib + " " + src);
  if (r.exit_code != 0) fail("failed to compile test plugin {}:\n{}", name, r.output);
  return lib;
}

constexpr const char* kScaledTanhModel = R"(
  <ir_version: 8, opset_import: ["" : 17, "parity.example" : 1]>
  g (float[2,3] x) => (float[2,3] y) {
    y = parity.example.ScaledTanh <alpha = 2.5, beta = 0.75> (x)
  }
)";

TEST(Plugin, ExamplePluginRegistersItsOpAndMatchesNumpy) {
  ref::PluginInfo info = ref::load_plugin(example_plugin_path());
  EXPECT_EQ(info.ops, std::vector<std::string>{"parity.example::ScaledTanh"});
  EXPECT_TRUE(ref::Registry::global().has_op("parity.example", "ScaledTanh"));

  auto expected = testing::numpy_arrays(R"(
x = rng.uniform(-3, 3, (2, 3)).astype(np.float32)
save('x', x)
save('y', (2.5 * np.tanh(0.75 * x.astype(np.float64))).astype(np.float32))
)");
  TensorMap feed;
  feed.set("x", expected.at("x"));
  TensorMap out = testing::run_text_model(kScaledTanhModel, feed);
  EXPECT_TRUE(testing::tensors_identical(out.at("y"), expected.at("y")));
}

TEST(Plugin, ExamplePluginReportsBadInputsNamingTheNode) {
  ref::load_plugin(example_plugin_path());
  const std::string int_model = R"(
    <ir_version: 8, opset_import: ["" : 17, "parity.example" : 1]>
    g (int32[2] x) => (int32[2] y) { y = parity.example.ScaledTanh (x) }
  )";
  TensorMap feed;
  feed.set("x", Tensor::from_vector<int32_t>({2}, {1, 2}));
  std::string message = error_of([&] { testing::run_text_model(int_model, feed); });
  EXPECT_NE(message.find("failed to run node 'ScaledTanh_0' (ScaledTanh)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("input x must be float or double"), std::string::npos) << message;
}

TEST(Plugin, ExamplePluginRefusesAnAttributeOfTheWrongType) {
  ref::load_plugin(example_plugin_path());
  const std::string model = R"(
    <ir_version: 8, opset_import: ["" : 17, "parity.example" : 1]>
    g (float[2] x) => (float[2] y) { y = parity.example.ScaledTanh <alpha = 2> (x) }
  )";
  std::string message = error_of([&] { ref::Executor exec(testing::model_from_text(model)); });
  EXPECT_NE(message.find("failed to prepare node 'ScaledTanh_0' (ScaledTanh)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("attribute 'alpha' must be a float"), std::string::npos) << message;
}

TEST(Plugin, MissingFileIsAClearError) {
  std::string message = error_of([] { ref::load_plugin("/nonexistent/libnothing.so"); });
  EXPECT_NE(message.find("failed to load plugin library '/nonexistent/libnothing.so' with dlopen"),
            std::string::npos)
      << message;
}

TEST(Plugin, LibraryWithoutTheEntryPointIsRefused) {
  testing::TempDir dir;
  std::string lib = build_plugin(dir, "noentry", "PARITY_PLUGIN_DEFINE_VERSION()\n");
  std::string message = error_of([&] { ref::load_plugin(lib); });
  EXPECT_NE(message.find("failed to load plugin library '" + lib +
                         "' without the entry point 'parity_register_ops'"),
            std::string::npos)
      << message;
}

TEST(Plugin, LibraryWithoutTheVersionFunctionIsRefused) {
  testing::TempDir dir;
  std::string lib = build_plugin(
      dir, "noversion",
      "PARITY_PLUGIN_EXPORT int parity_register_ops(const ParityPluginApi*) { return 0; }\n");
  std::string message = error_of([&] { ref::load_plugin(lib); });
  EXPECT_NE(message.find("without the function 'parity_plugin_api_version'"), std::string::npos)
      << message;
}

TEST(Plugin, IncompatibleInterfaceVersionIsRefused) {
  testing::TempDir dir;
  std::string lib = build_plugin(
      dir, "future",
      "PARITY_PLUGIN_EXPORT uint32_t parity_plugin_api_version(void) { return 99; }\n"
      "PARITY_PLUGIN_EXPORT int parity_register_ops(const ParityPluginApi*) { return 0; }\n");
  std::string message = error_of([&] { ref::load_plugin(lib); });
  EXPECT_NE(message.find("with plugin interface version 99: this Parity implements version " +
                         std::to_string(PARITY_PLUGIN_API_VERSION)),
            std::string::npos)
      << message;
}

TEST(Plugin, FailingEntryPointRegistersNothing) {
  testing::TempDir dir;
  std::string lib = build_plugin(dir, "failing", R"(
PARITY_PLUGIN_DEFINE_VERSION()
static int run(void*, ParityRunContext*, const ParityTensor*, size_t) { return 0; }
PARITY_PLUGIN_EXPORT int parity_register_ops(const ParityPluginApi* api) {
  ParityOpDef def{};
  def.domain = "test.failing";
  def.op_type = "NeverRegistered";
  def.since_version = 1;
  def.run = run;
  api->register_op(api->host, &def);
  def.since_version = 0;  // invalid: the second registration fails
  return api->register_op(api->host, &def);
}
)");
  std::string message = error_of([&] { ref::load_plugin(lib); });
  EXPECT_NE(message.find("its parity_register_ops returned status 1"), std::string::npos)
      << message;
  EXPECT_NE(message.find("since_version must be at least 1"), std::string::npos) << message;
  EXPECT_FALSE(ref::Registry::global().has_op("test.failing", "NeverRegistered"));
}

TEST(Plugin, KernelThatForgetsAnOutputIsAnErrorNamingTheNode) {
  testing::TempDir dir;
  std::string lib = build_plugin(dir, "lazy", R"(
PARITY_PLUGIN_DEFINE_VERSION()
static int run(void*, ParityRunContext*, const ParityTensor*, size_t) { return PARITY_OK; }
PARITY_PLUGIN_EXPORT int parity_register_ops(const ParityPluginApi* api) {
  ParityOpDef def{};
  def.domain = "test.lazy";
  def.op_type = "Lazy";
  def.since_version = 1;
  def.run = run;
  return api->register_op(api->host, &def);
}
)");
  ref::PluginInfo info = ref::load_plugin(lib);
  EXPECT_EQ(info.ops, std::vector<std::string>{"test.lazy::Lazy"});
  const std::string model = R"(
    <ir_version: 8, opset_import: ["" : 17, "test.lazy" : 1]>
    g (float[2] x) => (float[2] y) { y = test.lazy.Lazy (x) }
  )";
  TensorMap feed;
  feed.set("x", Tensor::from_vector<float>({2}, {1, 2}));
  std::string message = error_of([&] { testing::run_text_model(model, feed); });
  EXPECT_NE(message.find("failed to run node 'Lazy_0' (Lazy): the plugin kernel of Lazy did not "
                         "allocate output 0 ('y')"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace parity
