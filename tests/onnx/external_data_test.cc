// External data: files written by python3-onnx load and are mapped, not copied; locations that
// escape the model's folder, missing files and short files are refused with clear errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <onnx/onnx_pb.h>

#include "core/error.h"
#include "onnx/external_data.h"
#include "onnx/model_io.h"
#include "onnx/save_model.h"
#include "support/onnx_text.h"
#include "support/test_util.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ExternalData, LoadsWhatPythonOnnxSavesAndMapsIt) {
  TempDir dir;
  std::string script = R"PY(
import numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
w = np.arange(1000, dtype=np.float32).reshape(10, 100) * 0.5
b = np.arange(7, dtype=np.int64) - 3
graph = helper.make_graph(
    [helper.make_node("Add", ["x", "w"], ["y"])], "ext",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [10, 100])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [10, 100])],
    [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.save_model(model, "DIR/model.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
                location="weights.bin", size_threshold=0)
open("DIR/w.raw", "wb").write(w.tobytes())
open("DIR/b.raw", "wb").write(b.tobytes())
)PY";
  for (size_t p; (p = script.find("DIR")) != std::string::npos;)
    script.replace(p, 3, dir.path().string());
  auto result = run_python(script);
  ASSERT_EQ(result.exit_code, 0) << result.output;

  auto model = onnx_io::load_model(dir.file("model.onnx"));
  const Tensor& w = model->graph.initializers.at("w");
  const Tensor& b = model->graph.initializers.at("b");
  EXPECT_EQ(w.shape(), (Shape{10, 100}));
  EXPECT_EQ(std::string(static_cast<const char*>(w.raw_data()), w.nbytes()),
            read_text(dir.file("w.raw")));
  EXPECT_EQ(std::string(static_cast<const char*>(b.raw_data()), b.nbytes()),
            read_text(dir.file("b.raw")));
  // The protobuf keeps the reference; the weights are not copied into it.
  EXPECT_EQ(model->proto->graph().initializer(0).data_location(), ::onnx::TensorProto::EXTERNAL);

  // ignore_external_data: the structure only, zero tensors of the right shape.
  onnx_io::LoadOptions structure_only;
  structure_only.ignore_external_data = true;
  auto light = onnx_io::load_model(dir.file("model.onnx"), structure_only);
  EXPECT_TRUE(light->graph.initializers.at("w").equals(Tensor(DataType::kFloat32, {10, 100})));

  // external_data_dir: the data may live somewhere else than the model.
  TempDir other;
  fs::copy_file(dir.file("model.onnx"), other.file("model.onnx"));
  EXPECT_NE(error_of([&] { onnx_io::load_model(other.file("model.onnx")); }).find("does not exist"),
            std::string::npos);
  onnx_io::LoadOptions elsewhere;
  elsewhere.external_data_dir = dir.path().string();
  auto moved = onnx_io::load_model(other.file("model.onnx"), elsewhere);
  EXPECT_TRUE(moved->graph.initializers.at("w").equals(w));

  // Saved elsewhere, the data is copied beside the new file; saved beside it, kept as is.
  onnx_io::save_model(*model, other.file("copy.onnx"));
  EXPECT_TRUE(fs::exists(other.file("copy.onnx.data")));
  auto reloaded = onnx_io::load_model(other.file("copy.onnx"));
  EXPECT_TRUE(reloaded->graph.initializers.at("w").equals(w));
  EXPECT_TRUE(reloaded->graph.initializers.at("b").equals(b));
  onnx_io::save_model(*model, dir.file("same_folder.onnx"));
  EXPECT_FALSE(fs::exists(dir.file("same_folder.onnx.data")));
  EXPECT_TRUE(
      onnx_io::load_model(dir.file("same_folder.onnx"))->graph.initializers.at("w").equals(w));
}

// A model with one external float[4] initializer "w" at `location`, in `dir`.
void write_external_model(const TempDir& dir, const std::string& location, int64_t offset = 0,
                          int64_t length = -1) {
  auto proto = model_proto_from_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    ext (float[4] x) => (float[4] y)
    <float[4] w = {0.0, 0.0, 0.0, 0.0}>
    { y = Mul (x, w) }
  )");
  auto* w = proto.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_data_location(::onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* key, const std::string& value) {
    auto* kv = w->add_external_data();
    kv->set_key(key);
    kv->set_value(value);
  };
  add("location", location);
  if (offset) add("offset", std::to_string(offset));
  if (length >= 0) add("length", std::to_string(length));
  std::ofstream(dir.file("model.onnx"), std::ios::binary) << proto.SerializeAsString();
}

void write_floats(const std::string& path, const std::vector<float>& values, size_t skip = 0) {
  std::ofstream out(path, std::ios::binary);
  out << std::string(skip, 'x');
  out.write(reinterpret_cast<const char*>(values.data()),
            static_cast<std::streamsize>(values.size() * sizeof(float)));
}

TEST(ExternalData, LoadsAtAlignedAndMisalignedOffsets) {
  const std::vector<float> values = {1.5f, -2.0f, 3.25f, 4.0f};
  for (size_t offset : {size_t{0}, size_t{8}, size_t{3}}) {
    SCOPED_TRACE(offset);
    TempDir dir;
    write_floats(dir.file("w.bin"), values, offset);
    write_external_model(dir, "w.bin", static_cast<int64_t>(offset), 16);
    auto model = onnx_io::load_model(dir.file("model.onnx"));
    EXPECT_TRUE(model->graph.initializers.at("w").equals(Tensor::from_vector<float>({4}, values)));
  }
}

TEST(ExternalData, MissingAndShortFilesAreRefused) {
  TempDir dir;
  write_external_model(dir, "w.bin");
  EXPECT_NE(error_of([&] { onnx_io::load_model(dir.file("model.onnx")); })
                .find("failed to load external data of tensor 'w' with location 'w.bin': the "
                      "file '" +
                      dir.file("w.bin") + "' does not exist"),
            std::string::npos);

  write_floats(dir.file("w.bin"), {1.0f, 2.0f, 3.0f});  // 12 bytes; the shape needs 16
  EXPECT_NE(error_of([&] { onnx_io::load_model(dir.file("model.onnx")); })
                .find("failed to load external data of tensor 'w' with length 12: shape (4,) of "
                      "float32 needs 16 bytes"),
            std::string::npos);

  write_external_model(dir, "w.bin", 4, 16);
  EXPECT_NE(error_of([&] { onnx_io::load_model(dir.file("model.onnx")); })
                .find("with offset 4 and length 16: the file '" +
                      fs::canonical(dir.file("w.bin")).string() + "' holds only 12 bytes"),
            std::string::npos);
}

TEST(ExternalData, LocationsOutsideTheModelFolderAreRefused) {
  TempDir outside;
  write_floats(outside.file("secret.bin"), {1.0f, 2.0f, 3.0f, 4.0f});
  TempDir dir;

  write_external_model(dir, outside.file("secret.bin"));
  EXPECT_NE(error_of([&] {
              onnx_io::load_model(dir.file("model.onnx"));
            }).find("absolute locations are refused"),
            std::string::npos);

  write_external_model(dir, "../x");
  EXPECT_NE(error_of([&] {
              onnx_io::load_model(dir.file("model.onnx"));
            }).find("with location '../x': locations with '..' are refused"),
            std::string::npos);

  fs::create_symlink(outside.file("secret.bin"), dir.file("link.bin"));
  write_external_model(dir, "link.bin");
  EXPECT_NE(error_of([&] { onnx_io::load_model(dir.file("model.onnx")); })
                .find("with location 'link.bin': it resolves to '" +
                      fs::canonical(outside.file("secret.bin")).string() + "', outside the folder"),
            std::string::npos);

  // A symlink that stays inside the folder is fine.
  fs::create_directory(dir.file("data"));
  write_floats(dir.file("data/w.bin"), {1.0f, 2.0f, 3.0f, 4.0f});
  fs::create_symlink(dir.file("data/w.bin"), dir.file("inside.bin"));
  write_external_model(dir, "inside.bin");
  EXPECT_TRUE(onnx_io::load_model(dir.file("model.onnx"))
                  ->graph.initializers.at("w")
                  .equals(Tensor::from_vector<float>({4}, {1.0f, 2.0f, 3.0f, 4.0f})));
}

TEST(ExternalData, LargeZeroTensorsForIgnoredDataAreZeros) {
  Tensor zeros = onnx_io::zero_tensor(DataType::kFloat32, {3, 1 << 20});  // past the mapping size
  EXPECT_EQ(zeros.shape(), (Shape{3, 1 << 20}));
  EXPECT_TRUE(zeros.equals(Tensor(DataType::kFloat32, {3, 1 << 20})));
  EXPECT_TRUE(onnx_io::zero_tensor(DataType::kInt8, {5}).equals(Tensor(DataType::kInt8, {5})));
}

}  // namespace
}  // namespace parity::testing
