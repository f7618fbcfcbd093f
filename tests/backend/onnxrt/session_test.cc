// SessionFromOnnx: models from a path, bytes or a loader (with external data, unchanged and
// with every tensor marked as an output), session options and custom-op libraries.
#include "backend/onnxrt/session.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "backend/registry.h"
#include "ort_test_util.h"
#include "support/test_util.h"

namespace fs = std::filesystem;

namespace parity {
namespace {

using testing::ort_runtime;
using testing::TempDir;

constexpr const char* kAffine = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  affine (float[4] x) => (float[4] y) <float[4] w = {1.0, 2.0, 3.0, 4.0}> {
    h = Add(x, w)
    y = Mul(h, w)
  }
)";

const Tensor kX = Tensor::from_vector<float>({4}, {0.5f, -1.0f, 2.0f, 10.0f});

TensorMap run_session(Loader<OrtSessionPtr> session) {
  OnnxrtRunner runner(std::move(session));
  RunnerActivation active(runner);
  TensorMap feed;
  feed.set("x", kX);
  return runner.infer(feed);
}

// y = (x + w) * w for the w of kAffine.
Tensor expected_affine() {
  std::vector<float> y;
  const float w[] = {1, 2, 3, 4};
  for (int i = 0; i < 4; ++i) y.push_back((kX.data<float>()[i] + w[i]) * w[i]);
  return Tensor::from_vector<float>({4}, y);
}

// Writes kAffine with `w` moved to the external file weights.bin beside the model.
std::string write_external_affine(const TempDir& dir) {
  ::onnx::ModelProto proto = testing::model_proto_from_text(kAffine);
  ::onnx::TensorProto* w = proto.mutable_graph()->mutable_initializer(0);
  std::vector<float> values(w->float_data().begin(), w->float_data().end());
  w->clear_float_data();
  w->set_data_location(::onnx::TensorProto::EXTERNAL);
  auto* location = w->add_external_data();
  location->set_key("location");
  location->set_value("weights.bin");
  std::ofstream(dir.file("weights.bin"), std::ios::binary)
      .write(reinterpret_cast<const char*>(values.data()),
             static_cast<std::streamsize>(values.size() * sizeof(float)));
  std::string path = dir.file("model.onnx");
  std::ofstream out(path, std::ios::binary);
  proto.SerializeToOstream(&out);
  return path;
}

// The folder's modification time, which creating or removing a file in it changes.
std::filesystem::file_time_type folder_time(const TempDir& dir) {
  return fs::last_write_time(dir.path());
}

// Runs `body` and expects that nothing was created or removed in `dir` meanwhile (not even a
// file removed again, which a crash or Ctrl-C would have left behind).
template <typename Body>
void expect_folder_untouched(const TempDir& dir, Body body) {
  const auto entries = [&] {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir.path()))
      names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  };
  const auto before = entries();
  const auto time_before = folder_time(dir);
  // Timestamps have a granularity: let a write in the body be visible.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  body();
  EXPECT_EQ(entries(), before);
  EXPECT_EQ(folder_time(dir), time_before) << "a file was written beside the model";
}

TEST(OrtSession, FromPath) {
  TempDir dir;
  testing::write_model_from_text(dir.file("model.onnx"), kAffine);
  ort_runtime();
  EXPECT_TRUE(
      run_session(SessionFromOnnxPath(dir.file("model.onnx"))).at("y").equals(expected_affine()));
}

TEST(OrtSession, FromMissingPath) {
  auto session = SessionFromOnnxPath("/nonexistent/model.onnx");
  EXPECT_THROW(session(), Error);
}

TEST(OrtSession, FromBytesAndFromModel) {
  ort_runtime();
  EXPECT_TRUE(run_session(SessionFromOnnxBytes(testing::model_bytes_from_text(kAffine)))
                  .at("y")
                  .equals(expected_affine()));
  EXPECT_TRUE(run_session(SessionFromOnnx(testing::model_from_text(kAffine)))
                  .at("y")
                  .equals(expected_affine()));
}

TEST(OrtSession, CorruptBytesAreAnOrtError) {
  ort_runtime();
  try {
    SessionFromOnnxBytes(std::string("definitely not a model"))();
    FAIL() << "garbage must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ONNX Runtime failed to create the inference session: "),
              std::string::npos)
        << e.what();
  }
}

TEST(OrtSession, LogsProvidersAsPolygraphyDoes) {
  ort_runtime();
  testing::LogCapture log;
  auto session = SessionFromOnnxBytes(testing::model_bytes_from_text(kAffine))();
  EXPECT_TRUE(log.contains(
      "Creating ONNX-Runtime Inference Session with providers: ['CPUExecutionProvider']"))
      << log.text();
  EXPECT_EQ(session->providers(), std::vector<std::string>{"CPUExecutionProvider"});
}

TEST(OrtSession, ExternalDataFromTheUnchangedFile) {
  // The test runs in another folder, so only a session made from the file finds weights.bin.
  TempDir dir;
  std::string path = write_external_affine(dir);
  ASSERT_NE(fs::current_path(), dir.path());
  ort_runtime();
  expect_folder_untouched(dir, [&] {
    EXPECT_TRUE(run_session(SessionFromOnnx(OnnxFromPath(path))).at("y").equals(expected_affine()));
  });
}

TEST(OrtSession, ExternalDataWithEveryTensorMarked) {
  // The marked model differs from the file: ONNX Runtime gets it from memory, with the weights
  // as values over Parity's mapping of weights.bin; nothing is written beside the model.
  TempDir dir;
  std::string path = write_external_affine(dir);
  ort_runtime();
  TensorMap out;
  expect_folder_untouched(dir, [&] {
    out = run_session(SessionFromOnnx(ModifyOutputs(OnnxFromPath(path), {}, true)));
  });
  ASSERT_EQ(out.names(), (std::vector<std::string>{"h", "y"}));
  std::vector<float> h;
  const float w[] = {1, 2, 3, 4};
  for (int i = 0; i < 4; ++i) h.push_back(kX.data<float>()[i] + w[i]);
  EXPECT_TRUE(out.at("h").equals(Tensor::from_vector<float>({4}, h)));
  EXPECT_TRUE(out.at("y").equals(expected_affine()));
}

TEST(OrtSession, ExternalDataInAnotherFolder) {
  // --external-data-dir: the data is not beside the model, so the file cannot serve either.
  TempDir dir, data;
  std::string path = write_external_affine(dir);
  fs::rename(dir.file("weights.bin"), data.file("weights.bin"));
  ort_runtime();
  onnx_io::LoadOptions load;
  load.external_data_dir = data.path().string();
  expect_folder_untouched(data, [&] {
    EXPECT_TRUE(
        run_session(SessionFromOnnx(OnnxFromPath(path, load))).at("y").equals(expected_affine()));
  });
}

TEST(OrtSession, ExternalConstantAttributeIsInlined) {
  // A Constant's value tensor with external data is not a graph initializer, which
  // AddExternalInitializers cannot replace: its bytes go into the in-memory protobuf.
  TempDir dir;
  ::onnx::ModelProto proto = testing::model_proto_from_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    affine (float[4] x) => (float[4] y) <float[4] w = {1.0, 2.0, 3.0, 4.0}> {
      c = Constant<value = float[4] {0.0, 0.0, 0.0, 0.0}>()
      h = Add(x, w)
      y = Mul(h, c)
    }
  )");
  const float c[] = {5, 6, 7, 8}, w[] = {1, 2, 3, 4};
  std::ofstream(dir.file("c.bin"), std::ios::binary)
      .write(reinterpret_cast<const char*>(c), sizeof c);
  ::onnx::TensorProto* value =
      proto.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_t();
  value->clear_float_data();
  value->set_data_location(::onnx::TensorProto::EXTERNAL);
  auto* location = value->add_external_data();
  location->set_key("location");
  location->set_value("c.bin");
  std::string path = dir.file("model.onnx");
  {
    std::ofstream out(path, std::ios::binary);
    proto.SerializeToOstream(&out);
  }
  ort_runtime();
  TensorMap out;
  expect_folder_untouched(dir, [&] {
    out = run_session(SessionFromOnnx(ModifyOutputs(OnnxFromPath(path), {}, true)));
  });
  std::vector<float> y;
  for (int i = 0; i < 4; ++i) y.push_back((kX.data<float>()[i] + w[i]) * c[i]);
  EXPECT_TRUE(out.at("y").equals(Tensor::from_vector<float>({4}, y)));
}

TEST(OrtSession, ThreadsAndOptimizationLevels) {
  ort_runtime();
  std::string bytes = testing::model_bytes_from_text(kAffine);
  for (int level : {0, 1, 2, 99}) {
    OrtOptions options;
    options.intra_op_threads = 1;
    options.graph_optimization_level = level;
    EXPECT_TRUE(run_session(SessionFromOnnxBytes(bytes, options)).at("y").equals(expected_affine()))
        << "level " << level;
  }
  OrtOptions bad_threads;
  bad_threads.intra_op_threads = -1;
  EXPECT_THROW(SessionFromOnnxBytes(bytes, bad_threads)(), UsageError);
  OrtOptions bad_level;
  bad_level.graph_optimization_level = 5;
  EXPECT_THROW(SessionFromOnnxBytes(bytes, bad_level)(), UsageError);
}

// Layer-wise batch runners (Backend::for_batches) run without ONNX Runtime's CPU arena: the
// session option is accepted (on 1.17 and 1.30 alike) and the results do not change.
TEST(OrtSession, WithoutTheCpuMemoryArena) {
  ort_runtime();
  OrtOptions options;
  options.cpu_mem_arena = false;
  EXPECT_TRUE(run_session(SessionFromOnnxBytes(testing::model_bytes_from_text(kAffine), options))
                  .at("y")
                  .equals(expected_affine()));
  const Backend* onnxrt = BackendRegistry::global().find("onnxrt");
  ASSERT_NE(onnxrt, nullptr);
  ASSERT_TRUE(onnxrt->for_batches);
  const ConfiguredBackend plain{onnxrt, std::any(OrtOptions{})};
  EXPECT_TRUE(std::any_cast<const OrtOptions&>(plain.config).cpu_mem_arena);
  EXPECT_FALSE(std::any_cast<const OrtOptions&>(plain.for_batches().config).cpu_mem_arena);
}

TEST(OrtSession, OptimizationLevelNames) {
  EXPECT_EQ(graph_optimization_level_from_name("disable"), GraphOptimizationLevel::kDisableAll);
  EXPECT_EQ(graph_optimization_level_from_name("BASIC"), GraphOptimizationLevel::kBasic);
  EXPECT_EQ(graph_optimization_level_from_name("extended"), GraphOptimizationLevel::kExtended);
  EXPECT_EQ(graph_optimization_level_from_name("99"), GraphOptimizationLevel::kAll);
  EXPECT_EQ(graph_optimization_level_from_name("fast"), std::nullopt);
}

// A custom-op library is any shared library exporting RegisterCustomOps(options, api_base).
// This one registers nothing, or refuses with a status made through the API it is given, so
// the test proves ONNX Runtime loaded and called it.
std::string build_custom_op_library(const TempDir& dir, bool refuse) {
  std::string source = dir.file("ops.c");
  testing::write_text(source, fmt::format(R"(
    typedef struct OrtStatus OrtStatus;
    typedef struct {{ const void* (*GetApi)(unsigned); const char* (*GetVersionString)(void); }}
        OrtApiBase;
    typedef OrtStatus* (*CreateStatus)(int code, const char* message);
    OrtStatus* RegisterCustomOps(void* options, const OrtApiBase* base) {{
      if (!{}) return 0;
      CreateStatus create = *(CreateStatus const*)base->GetApi(17);  /* slot 0 */
      return create(1, "the test library refuses");
    }}
  )",
                                          refuse ? 1 : 0));
  std::string library = dir.file(refuse ? "librefuse.so" : "libnothing.so");
  auto result = testing::run_command("cc -shared -fPIC -o '" + library + "' '" + source + "'");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  return library;
}

TEST(OrtSession, CustomOpLibraryIsRegistered) {
  TempDir dir;
  ort_runtime();
  std::string bytes = testing::model_bytes_from_text(kAffine);
  OrtOptions accepting;
  accepting.custom_op_libs = {build_custom_op_library(dir, false)};
  EXPECT_TRUE(
      run_session(SessionFromOnnxBytes(bytes, accepting)).at("y").equals(expected_affine()));

  OrtOptions refusing;
  refusing.custom_op_libs = {build_custom_op_library(dir, true)};
  try {
    SessionFromOnnxBytes(bytes, refusing)();
    FAIL() << "the library's refusal must reach the caller";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ONNX Runtime failed to register the custom-op library"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("the test library refuses"), std::string::npos)
        << e.what();
  }
}

TEST(OrtSession, MissingCustomOpLibrary) {
  ort_runtime();
  OrtOptions options;
  options.custom_op_libs = {"/nonexistent/libops.so"};
  try {
    SessionFromOnnxBytes(testing::model_bytes_from_text(kAffine), options)();
    FAIL() << "a missing custom-op library must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("register the custom-op library '/nonexistent/libops.so'"),
              std::string::npos)
        << e.what();
  }
}

TEST(OrtSession, EmptyTensorsPassThrough) {
  ort_runtime();
  OnnxrtRunner runner(SessionFromOnnxBytes(testing::model_bytes_from_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    empty (float[N,4] x) => (float[N,4] y) { y = Identity(x) }
  )")));
  RunnerActivation active(runner);
  TensorMap feed;
  feed.set("x", Tensor(DataType::kFloat32, {0, 4}));
  TensorMap out = runner.infer(feed);
  EXPECT_EQ(out.at("y").shape(), (Shape{0, 4}));
}

}  // namespace
}  // namespace parity
