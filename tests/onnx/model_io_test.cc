// Loading whole models: value types, attributes of each type, subgraphs, and the errors for
// files that are missing, truncated or not ONNX at all.
#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include <onnx/onnx_pb.h>

#include "core/error.h"
#include "onnx/model_io.h"
#include "support/onnx_text.h"
#include "support/test_util.h"

namespace parity::testing {
namespace {

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

constexpr const char* kAttributes = R"(
  <ir_version: 8, opset_import: ["" : 17, "com.example" : 2]>
  attrs (float[N, 2] x, int64[3] k) => (float[N, 2] y, s, o)
  <float[2] w = {1.0, 2.0}, int64[1] shape = {3}>
  {
    y = Custom <to = 1, alpha = 0.5, note = "hi", ints = [1, -2], floats = [1.0, 2.5],
                strs = ["a", "b"], t = float[2] {1.5, -2.0}> (x, w)
    s = SequenceConstruct (y)
    o = com.example.Opt (k)
  }
)";

TEST(ModelIo, ConvertsValueTypesOpsetsAndInitializers) {
  // ONNX 1.12's text parser has no syntax for sequence and optional types: set them here.
  auto proto = model_proto_from_text(kAttributes);
  auto* seq = proto.mutable_graph()->mutable_output(1)->mutable_type()->mutable_sequence_type();
  seq->mutable_elem_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
  auto* opt = proto.mutable_graph()->mutable_output(2)->mutable_type()->mutable_optional_type();
  opt->mutable_elem_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::INT64);
  // A dimension with neither dim_value nor dim_param is unknown.
  proto.mutable_graph()
      ->mutable_input(1)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->add_dim();
  auto model = onnx_io::model_from_proto(std::make_shared<::onnx::ModelProto>(proto), {}, ".");
  EXPECT_EQ(model->ir_version, 8);
  EXPECT_EQ(model->opset(), 17);
  EXPECT_EQ(model->opset("com.example"), 2);
  const auto& g = model->graph;
  // Initializers are not graph inputs in the IR, even when the file lists them as inputs.
  ASSERT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(g.inputs[0].type.str(), "tensor(float32, ('N', 2))");
  EXPECT_EQ(g.inputs[1].type.str(), "tensor(int64, (3, -1))");
  ASSERT_EQ(g.outputs.size(), 3u);
  EXPECT_EQ(g.outputs[1].type.str(), "seq(tensor(float32, ?))");
  EXPECT_EQ(g.outputs[2].type.str(), "optional(tensor(int64, ?))");
  ASSERT_EQ(g.initializers.size(), 2u);
  EXPECT_TRUE(g.initializers.at("w").equals(Tensor::from_vector<float>({2}, {1.0f, 2.0f})));
  EXPECT_EQ(g.nodes[2].domain, "com.example");
  EXPECT_EQ(g.nodes[2].name, "Opt_2");
}

TEST(ModelIo, ConvertsEveryAttributeType) {
  auto model = model_from_text(kAttributes);
  const ir::Node& n = model->graph.nodes[0];
  using T = ir::Attribute::Type;
  ASSERT_EQ(n.attributes.size(), 7u);
  EXPECT_EQ(n.attribute("to")->type, T::kInt);
  EXPECT_EQ(n.attribute("to")->i, 1);
  EXPECT_EQ(n.attribute("alpha")->type, T::kFloat);
  EXPECT_EQ(n.attribute("alpha")->f, 0.5f);
  EXPECT_EQ(n.attribute("note")->type, T::kString);
  EXPECT_EQ(n.attribute("note")->s, "hi");
  EXPECT_EQ(n.attribute("ints")->ints, (std::vector<int64_t>{1, -2}));
  EXPECT_EQ(n.attribute("floats")->floats, (std::vector<float>{1.0f, 2.5f}));
  EXPECT_EQ(n.attribute("strs")->strings, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(n.attribute("t")->type, T::kTensor);
  EXPECT_TRUE(n.attribute("t")->t.equals(Tensor::from_vector<float>({2}, {1.5f, -2.0f})));
  EXPECT_EQ(n.attribute("missing"), nullptr);
}

TEST(ModelIo, ConvertsTensorsGraphsTypeProtosAndUntypedAttributes) {
  auto proto = model_proto_from_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) { y = Custom (x) }
  )");
  auto* node = proto.mutable_graph()->mutable_node(0);
  auto* tensors = node->add_attribute();
  tensors->set_name("tensors");
  tensors->set_type(::onnx::AttributeProto::TENSORS);
  tensors->add_tensors()->set_data_type(::onnx::TensorProto::INT64);
  tensors->mutable_tensors(0)->add_int64_data(42);
  auto* graphs = node->add_attribute();
  graphs->set_name("graphs");
  graphs->set_type(::onnx::AttributeProto::GRAPHS);
  *graphs->add_graphs() = model_proto_from_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    body () => (float[2] z) { z = Neg (x) }
  )")
                              .graph();
  auto* tp = node->add_attribute();
  tp->set_name("tp");
  tp->set_type(::onnx::AttributeProto::TYPE_PROTO);
  tp->mutable_tp()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT16);
  auto* untyped = node->add_attribute();  // old exporters leave `type` unset
  untyped->set_name("untyped");
  untyped->add_ints(4);
  untyped->add_ints(5);

  auto model = onnx_io::model_from_proto(std::make_shared<::onnx::ModelProto>(proto), {}, ".");
  const ir::Node& n = model->graph.nodes[0];
  using T = ir::Attribute::Type;
  ASSERT_EQ(n.attribute("tensors")->type, T::kTensors);
  EXPECT_TRUE(n.attribute("tensors")->tensors.at(0).equals(Tensor::scalar<int64_t>(42)));
  ASSERT_EQ(n.attribute("graphs")->graphs.size(), 1u);
  const ir::Graph& body = *n.attribute("graphs")->graphs[0];
  EXPECT_EQ(body.parent, &model->graph);
  EXPECT_EQ(body.nodes.at(0).op_type, "Neg");
  EXPECT_EQ(n.attribute("tp")->type, T::kTypeProto);
  EXPECT_EQ(n.attribute("tp")->type_protos.at(0).str(), "tensor(float16, ?)");
  EXPECT_EQ(n.attribute("untyped")->type, T::kInts);
  EXPECT_EQ(n.attribute("untyped")->ints, (std::vector<int64_t>{4, 5}));
}

TEST(ModelIo, IfBranchesAreSubgraphsReadingTheOuterScope) {
  auto model = model_from_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    cond (bool c, float[2] x) => (float[2] y) {
      y = If (c) <then_branch = then_g () => (float[2] a) { a = Neg (x) },
                  else_branch = else_g () => (float[2] b) { t = Abs (x)  b = Neg (t) }>
    }
  )");
  const ir::Node& n = model->graph.nodes.at(0);
  const auto& then_g = n.attribute("then_branch")->g;
  const auto& else_g = n.attribute("else_branch")->g;
  ASSERT_TRUE(then_g && else_g);
  EXPECT_EQ(then_g->name, "then_g");
  EXPECT_EQ(then_g->parent, &model->graph);
  EXPECT_EQ(else_g->parent, &model->graph);
  ASSERT_EQ(else_g->nodes.size(), 2u);
  EXPECT_EQ(else_g->nodes[0].op_type, "Abs");
  EXPECT_EQ(else_g->outputs.at(0).name, "b");
}

TEST(ModelIo, DensifiesSparseInitializers) {
  auto proto = model_proto_from_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2, 3] x) => (float[2, 3] y) { y = Add (x, sp) }
  )");
  auto* sparse = proto.mutable_graph()->add_sparse_initializer();
  sparse->add_dims(2);
  sparse->add_dims(3);
  auto* values = sparse->mutable_values();
  values->set_name("sp");
  values->set_data_type(::onnx::TensorProto::FLOAT);
  values->add_dims(2);
  values->add_float_data(4.0f);
  values->add_float_data(-1.0f);
  auto* indices = sparse->mutable_indices();
  indices->set_data_type(::onnx::TensorProto::INT64);
  indices->add_dims(2);
  indices->add_int64_data(1);
  indices->add_int64_data(5);
  auto model = onnx_io::model_from_proto(std::make_shared<::onnx::ModelProto>(proto), {}, ".");
  EXPECT_TRUE(model->graph.initializers.at("sp").equals(
      Tensor::from_vector<float>({2, 3}, {0, 4, 0, 0, 0, -1})));

  indices->set_int64_data(1, 6);
  EXPECT_NE(error_of([&] {
              onnx_io::model_from_proto(std::make_shared<::onnx::ModelProto>(proto), {}, ".");
            }).find("at an index outside shape (2, 3)"),
            std::string::npos);
}

constexpr const char* kSmall = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  small (float[4] x) => (float[4] y)
  <float[4] w = {1.0, 2.0, 3.0, 4.0}>
  { y = Mul (x, w) }
)";

TEST(ModelIo, MissingFileNamesThePath) {
  TempDir dir;
  const std::string path = dir.file("nope.onnx");
  EXPECT_EQ(error_of([&] { onnx_io::load_model(path); }),
            "failed to load model '" + path + "': the file does not exist; check the path");
  EXPECT_NE(error_of([&] { onnx_io::load_model(dir.path().string()); }).find("it is a folder"),
            std::string::npos);
}

TEST(ModelIo, TruncatedAndGarbageFilesAreNotValidModels) {
  TempDir dir;
  const std::string bytes = model_bytes_from_text(kSmall);
  write_text(dir.file("half.onnx"), bytes.substr(0, bytes.size() / 2));
  EXPECT_EQ(error_of([&] { onnx_io::load_model(dir.file("half.onnx")); }),
            "failed to parse '" + dir.file("half.onnx") +
                "' as an ONNX model: the file is not a valid ModelProto (truncated or corrupt?)");

  write_text(dir.file("garbage.onnx"), std::string("\xff\xfe\xfd\xfc garbage \x01\x02", 15));
  EXPECT_NE(error_of([&] {
              onnx_io::load_model(dir.file("garbage.onnx"));
            }).find("failed to parse '" + dir.file("garbage.onnx") + "' as an ONNX model"),
            std::string::npos);

  // Valid protobuf that holds no graph (here: an empty file).
  write_text(dir.file("empty.onnx"), "");
  EXPECT_NE(
      error_of([&] { onnx_io::load_model(dir.file("empty.onnx")); }).find("it holds no graph"),
      std::string::npos);
  EXPECT_NE(error_of([&] {
              onnx_io::load_model_from_bytes("\x0a\xff\xff\xff\xff");
            }).find("failed to parse 5 bytes as an ONNX model"),
            std::string::npos);
}

TEST(ModelIo, LoadsFromBytesAndFile) {
  TempDir dir;
  write_model_from_text(dir.file("small.onnx"), kSmall);
  auto from_file = onnx_io::load_model(dir.file("small.onnx"));
  auto from_bytes = onnx_io::load_model_from_bytes(model_bytes_from_text(kSmall));
  EXPECT_EQ(from_file->path, dir.file("small.onnx"));
  EXPECT_EQ(from_file->external_data_dir, dir.path().string());
  EXPECT_TRUE(from_file->graph.initializers.at("w").equals(from_bytes->graph.initializers.at("w")));
  EXPECT_EQ(onnx_io::serialize_model(*from_file), onnx_io::serialize_model(*from_bytes));
}

TEST(ModelIo, ErrorsWhileConvertingNameTheModelFile) {
  TempDir dir;
  auto proto = model_proto_from_text(kSmall);
  proto.mutable_graph()->mutable_initializer(0)->clear_float_data();
  std::ofstream(dir.file("bad.onnx"), std::ios::binary) << proto.SerializeAsString();
  EXPECT_EQ(error_of([&] { onnx_io::load_model(dir.file("bad.onnx")); }),
            "failed to load tensor 'w' with 0 values in float_data: shape (4,) of float32 needs "
            "4 (model '" +
                dir.file("bad.onnx") + "')");
}

// Corrupted models either load or fail with parity::Error: never a crash, an abort or another
// exception type. The corruptions are reproducible (fixed seed).
TEST(ModelIo, CorruptedBytesFailCleanly) {
  const std::string valid = model_bytes_from_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 2] x, bool c) => (float[N, 2] y)
    <float[2] w = {1.0, 2.0}, int64[1] k = {3}>
    {
      a = Mul <alpha = 0.5, ints = [1, 2], t = float[2] {1.5, -2.0}> (x, w)
      y = If (c) <then_branch = t () => (float[N, 2] o1) { o1 = Neg (a) },
                  else_branch = e () => (float[N, 2] o2) { o2 = Abs (a) }>
    }
  )");
  std::mt19937 rng(12345);
  int loaded = 0, refused = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bytes = valid;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] = static_cast<char>(rng() & 0xFF);
    if (trial % 7 == 0) bytes.resize(rng() % bytes.size());
    try {
      onnx_io::load_model_from_bytes(bytes);
      ++loaded;
    } catch (const Error&) {
      ++refused;
    }
  }
  EXPECT_EQ(loaded + refused, 3000);
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace parity::testing
