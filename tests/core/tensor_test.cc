#include "core/tensor.h"

#include <gtest/gtest.h>

#include "core/metadata.h"

namespace parity {
namespace {

TEST(Tensor, OwnedIsZeroFilledAndTyped) {
  Tensor t(DataType::kFloat32, {2, 3});
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.nbytes(), 24u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t.data<float>()[i], 0.0f);
  EXPECT_THROW(t.data<double>(), InternalError);
}

TEST(Tensor, CloneIsDeepAndReshapeShares) {
  auto t = Tensor::from_vector<int64_t>({2, 2}, {1, 2, 3, 4});
  Tensor c = t.clone();
  Tensor r = t.reshaped({4});
  t.data<int64_t>()[0] = 9;
  EXPECT_EQ(c.data<int64_t>()[0], 1);
  EXPECT_EQ(r.data<int64_t>()[0], 9);
  EXPECT_THROW(t.reshaped({3}), Error);
}

TEST(Tensor, StringsAreObjects) {
  auto t = Tensor::from_vector<std::string>({2}, {"a", "bc"});
  Tensor c = t.clone();
  EXPECT_TRUE(t.equals(c));
  c.data<std::string>()[1] = "x";
  EXPECT_FALSE(t.equals(c));
}

TEST(Tensor, Int4PacksTwoPerByte) {
  Tensor t(DataType::kInt4, {3});
  EXPECT_EQ(t.nbytes(), 2u);
}

TEST(Tensor, ShapeStringsFollowNumpy) {
  EXPECT_EQ(shape_str({}), "()");
  EXPECT_EQ(shape_str({5}), "(5,)");
  EXPECT_EQ(shape_str({1, 3, 224, 224}), "(1, 3, 224, 224)");
}

TEST(TensorMap, KeepsInsertionOrderAndReplacesInPlace) {
  TensorMap m;
  m.set("b", Tensor::scalar(1.0f));
  m.set("a", Tensor::scalar(2.0f));
  m.set("b", Tensor::scalar(3.0f));
  EXPECT_EQ(m.names(), (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(m.at("b").data<float>()[0], 3.0f);
  EXPECT_THROW(m.at("c"), Error);
}

TEST(Metadata, SymbolicAndUnknownDimsAcceptAnySize) {
  DimList dims{Dim::symbolic("batch"), Dim::fixed(3), Dim::unknown()};
  EXPECT_TRUE(dims_accept(dims, {7, 3, 1}));
  EXPECT_FALSE(dims_accept(dims, {7, 4, 1}));
  EXPECT_FALSE(dims_accept(dims, {7, 3}));
  EXPECT_EQ(dims_str(dims), "('batch', 3, -1)");
}

}  // namespace
}  // namespace parity
