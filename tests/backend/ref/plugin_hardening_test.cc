// C plugins that break the plugin contract (issue 15): writing into read-only inputs (which may
// be a shared initializer), returning another element type or shape than the model declares,
// and asking allocate_output for a size whose byte count overflows. Each must be an error that
// names the node, never a silently wrong result.
#include <gtest/gtest.h>

#include "backend/ref/plugin.h"
#include "ref_test_util.h"
#include "support/onnx_text.h"
#include "support/test_util.h"

namespace parity {
namespace {

using testing::error_of;

// Compiles a plugin registering op `op` of domain "test.hard" whose run() body is `body`
// (it sees `api`, `ctx`, `in`, `n`); returns the library's path.
std::string build_op_plugin(const testing::TempDir& dir, const std::string& op,
                            const std::string& body) {
  const std::string src = dir.file(op + ".cc"), lib = dir.file("lib" + op + ".so");
  testing::write_text(src, R"(#include "backend/plugin_api.h"
#include <string.h>
static const ParityPluginApi* api;
PARITY_PLUGIN_DEFINE_VERSION()
static int run(void*, ParityRunContext* ctx, const ParityTensor* in, size_t n) {
)" + body + R"(
}
PARITY_PLUGIN_EXPORT int parity_register_ops(const ParityPluginApi* a) {
  api = a;
  ParityOpDef def{};
  def.domain = "test.hard";
  def.op_type = ")" + op + R"(";
  def.since_version = 1;
  def.run = run;
  return api->register_op(api->host, &def);
}
)");
  testing::CommandResult r = testing::run_command(
      "c++ -shared -fPIC -I" + testing::source_path("src") + " -o " + lib + " " + src);
  if (r.exit_code != 0) fail("failed to compile test plugin {}:\n{}", op, r.output);
  return lib;
}

std::string run_error(const std::string& op, const std::string& signature) {
  const std::string model = R"(
    <ir_version: 8, opset_import: ["" : 17, "test.hard" : 1]>
    g (float[2] x) => ()" + signature +
                            R"( y) {
      w = Constant<value = float[2] {3, 4}>()
      s = Add(x, w)
      y = test.hard.)" + op +
                            R"( (w)
    }
  )";
  TensorMap feed;
  feed.set("x", Tensor::from_vector<float>({2}, {1, 2}));
  return error_of([&] { testing::run_text_model(model, feed); });
}

TEST(PluginHardening, APluginThatWritesIntoItsInputIsAnError) {
  testing::TempDir dir;
  ref::load_plugin(build_op_plugin(dir, "Vandal", R"(
  float* w = (float*)in[0].data;  /* casts the const away */
  w[0] = -1.0f;
  int64_t shape[1] = {2};
  float* y = (float*)api->allocate_output(ctx, 0, 1, 1, shape);
  memcpy(y, w, 2 * sizeof(float));
  return PARITY_OK;
)"));
  std::string m = run_error("Vandal", "float[2]");
  EXPECT_NE(m.find("failed to run node 'Vandal_2' (Vandal): the plugin kernel of Vandal wrote "
                   "into its input 0 ('w'), which is read-only"),
            std::string::npos)
      << m;
}

TEST(PluginHardening, APluginMustReturnTheDeclaredTypeAndShape) {
  testing::TempDir dir;
  ref::load_plugin(build_op_plugin(dir, "AsInt", R"(
  int64_t shape[1] = {2};
  return api->allocate_output(ctx, 0, 6, 1, shape) ? PARITY_OK : PARITY_ERROR;  /* int32 */
)"));
  std::string m = run_error("AsInt", "float[2]");
  EXPECT_NE(m.find("the plugin kernel of AsInt returned output 0 ('y') as int32, but the model "
                   "declares float32"),
            std::string::npos)
      << m;
  ref::load_plugin(build_op_plugin(dir, "Longer", R"(
  int64_t shape[1] = {3};
  return api->allocate_output(ctx, 0, 1, 1, shape) ? PARITY_OK : PARITY_ERROR;
)"));
  m = run_error("Longer", "float[2]");
  EXPECT_NE(m.find("the plugin kernel of Longer returned output 0 ('y') with shape (3,), but "
                   "the model declares (2,)"),
            std::string::npos)
      << m;
  // A symbolic dim accepts any size.
  EXPECT_EQ(run_error("Longer", "float[N]"), "");
}

TEST(PluginHardening, AllocateOutputRefusesASizeWhoseBytesOverflow) {
  testing::TempDir dir;
  ref::load_plugin(build_op_plugin(dir, "Huge", R"(
  int64_t shape[2] = {(int64_t)1 << 62, 4};
  return api->allocate_output(ctx, 0, 1, 2, shape) ? PARITY_OK : PARITY_ERROR;
)"));
  std::string m = run_error("Huge", "float[?, ?]");
  EXPECT_NE(m.find("failed to run node 'Huge_2' (Huge): the plugin kernel of Huge failed "
                   "(status 1): the kernel could not allocate output 0: "),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("overflows a 64-bit integer"), std::string::npos) << m;
}

}  // namespace
}  // namespace parity
