// 2:4 sparsity (check, prune) and weight-strip / weight-reconstruct, against the models
// Polygraphy 0.49 wrote for the same input (tests/cli/fixtures/model_tools/README.md).
#include "surgeon/sparsity.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "onnx/proto_convert.h"
#include "support/test_util.h"
#include "surgeon/model_file.h"
#include "surgeon/weight_strip.h"
#include "surgeon_test_util.h"

namespace parity::testing {
namespace {

std::string fixture(const std::string& name) {
  return source_path("tests/cli/fixtures/model_tools/" + name);
}

::onnx::ModelProto load(const std::string& name) {
  return *surgeon::load_model_file(fixture(name)).proto;
}

std::map<std::string, const ::onnx::TensorProto*> initializers(const ::onnx::ModelProto& m) {
  std::map<std::string, const ::onnx::TensorProto*> out;
  for (const auto& t : m.graph().initializer()) out[t.name()] = &t;
  return out;
}

Tensor value(const ::onnx::TensorProto& t) { return onnx_io::tensor_from_proto(t, {}); }

TEST(SurgeonSparsity, FindsTheCandidatesAndTheSparseOnesAsPolygraphy) {
  const auto model = load("weights.onnx");
  LogCapture capture(Severity::kInfo);
  const auto sparse = surgeon::check_sparsity(model);
  EXPECT_EQ(sparse, (std::set<std::string>{"w_sparse"}));
  const auto candidates = surgeon::prune_candidates(model);
  std::vector<std::string> names;
  for (const auto& c : candidates) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"w_dense", "w_sparse", "g_b", "conv_w"}));
  EXPECT_EQ(candidates[2].axis, 1);  // Gemm with transB: B is reduced along axis 1
  EXPECT_NE(capture.text().find("(m0) produced by mm0 type: MatMul is unsupported!"),
            std::string::npos);
}

TEST(SurgeonSparsity, PrunesToTheSameValuesAsPolygraphy) {
  auto model = load("weights.onnx");
  const auto polygraphy = load("polygraphy_pruned.onnx");
  LogCapture capture(Severity::kInfo);
  EXPECT_EQ(surgeon::prune_to_2_4(model), 4u);
  const auto mine = initializers(model), theirs = initializers(polygraphy);
  for (const auto& [name, t] : theirs) EXPECT_TRUE(value(*mine.at(name)).equals(value(*t))) << name;
  EXPECT_EQ(surgeon::check_sparsity(model).size(), 4u);
  EXPECT_EQ(model.producer_name(), "fixtures");  // everything else is kept
}

TEST(SurgeonWeightStrip, MarksAndEmptiesTheSameInitializersAsPolygraphy) {
  auto model = load("weights.onnx");
  const auto polygraphy = load("polygraphy_stripped.onnx");
  LogCapture capture(Severity::kInfo);
  EXPECT_EQ(surgeon::strip_weights(model), 6u);
  EXPECT_EQ(model.doc_string(), polygraphy.doc_string());
  const auto mine = initializers(model), theirs = initializers(polygraphy);
  for (const auto& [name, t] : theirs) {
    const ::onnx::TensorProto& m = *mine.at(name);
    EXPECT_EQ(m.doc_string(), t->doc_string()) << name;
    EXPECT_EQ(m.raw_data().size(), t->raw_data().size()) << name;
    EXPECT_EQ(m.data_type(), t->data_type()) << name;
    EXPECT_EQ(std::vector<int64_t>(m.dims().begin(), m.dims().end()),
              std::vector<int64_t>(t->dims().begin(), t->dims().end()))
        << name;
  }
  EXPECT_NE(capture.text().find("Finished stripping 6 weights"), std::string::npos);
}

TEST(SurgeonWeightStrip, ExcludeListKeepsWeightsAndWarnsAboutUnknownNames) {
  auto model = load("weights.onnx");
  LogCapture capture(Severity::kInfo);
  EXPECT_EQ(surgeon::strip_weights(model, {"w_dense", "nope"}), 5u);
  EXPECT_TRUE(initializers(model).at("w_dense")->doc_string().empty());
  EXPECT_NE(capture.text().find("were not found in the model: {'nope'}."), std::string::npos)
      << capture.text();
}

TEST(SurgeonWeightStrip, ReconstructedModelRunsAndSparseWeightsAreSparseAgain) {
  auto model = load("weights.onnx");
  LogCapture capture(Severity::kInfo);
  surgeon::strip_weights(model);
  EXPECT_EQ(surgeon::reconstruct_weights(model), 6u);
  const auto inits = initializers(model);
  EXPECT_EQ(value(*inits.at("w_sparse")).numel(), 32);
  // Only w_sparse was marked SPARSE_2_4: it alone is pruned again.
  const auto sparse = surgeon::check_sparsity(model);
  EXPECT_EQ(sparse, (std::set<std::string>{"w_sparse"}));
  // Untouched initializers keep their values.
  const auto original_model = load("weights.onnx");
  const auto original = initializers(original_model);
  EXPECT_TRUE(value(*inits.at("idx")).equals(value(*original.at("idx"))));
  TensorMap feed;
  feed.set("x", Tensor(DataType::kFloat32, {2, 8}));
  feed.set("odd_in", Tensor(DataType::kFloat32, {2, 3}));
  const TensorMap out = run_model(model, feed);
  EXPECT_EQ(out.at("gt").shape(), (Shape{2}));
}

TEST(SurgeonWeightStrip, ReconstructRefusesAMarkedInitializerWithData) {
  auto model = load("weights.onnx");
  model.mutable_graph()->mutable_initializer(0)->set_doc_string("TRT_WEIGHTLESS/");
  LogCapture capture(Severity::kInfo);
  EXPECT_NE(error_of([&] {
              surgeon::reconstruct_weights(model);
            }).find("it is marked TRT_WEIGHTLESS/ but holds data"),
            std::string::npos);
}

}  // namespace
}  // namespace parity::testing
