// PostprocessFunc.top_k: the cases of Polygraphy's tests/comparator/test_postprocess.py.
#include <gtest/gtest.h>

#include "comparator/comparator.h"

namespace parity {
namespace {

IterationResult outputs(std::vector<std::pair<std::string, Tensor>> named) {
  IterationResult r;
  for (auto& [n, t] : named) r.outputs.set(n, t);
  return r;
}

std::vector<int64_t> values(const Tensor& t) {
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
}

Tensor ramp() { return Tensor::from_vector<float>({5}, {1, 2, 3, 4, 5}); }

TopKOptions k_of(std::map<std::string, std::pair<int64_t, int64_t>> per_output) {
  TopKOptions options;
  options.k.values = std::move(per_output);
  return options;
}

TEST(TopK, Basic) {
  IterationResult r = outputs({{"x", ramp()}});
  postprocess_func::top_k(k_of({{"", {3, -1}}}))(r);
  EXPECT_EQ(values(r.outputs.at("x")), (std::vector<int64_t>{4, 3, 2}));
}

TEST(TopK, KCanExceedTheAxisLength) {
  IterationResult r = outputs({{"x", ramp()}});
  postprocess_func::top_k(k_of({{"", {10, -1}}}))(r);
  EXPECT_EQ(values(r.outputs.at("x")), (std::vector<int64_t>{4, 3, 2, 1, 0}));
}

TEST(TopK, PerOutput) {
  IterationResult r = outputs({{"x", ramp()}, {"y", ramp()}});
  postprocess_func::top_k(k_of({{"", {10, -1}}, {"y", {2, -1}}}))(r);
  EXPECT_EQ(values(r.outputs.at("x")), (std::vector<int64_t>{4, 3, 2, 1, 0}));
  EXPECT_EQ(values(r.outputs.at("y")), (std::vector<int64_t>{4, 3}));
}

TEST(TopK, PerOutputAxis) {
  Tensor arr = Tensor::from_vector<float>({2, 3}, {5, 6, 5, 6, 5, 6});
  IterationResult r = outputs({{"x", arr}, {"y", arr}});
  postprocess_func::top_k(k_of({{"", {1, 0}}, {"y", {1, 1}}}))(r);
  EXPECT_EQ(r.outputs.at("x").shape(), (Shape{1, 3}));
  EXPECT_EQ(values(r.outputs.at("x")), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(r.outputs.at("y").shape(), (Shape{2, 1}));
  EXPECT_EQ(values(r.outputs.at("y")), (std::vector<int64_t>{1, 0}));
}

TEST(TopK, Half) {
  Tensor arr(DataType::kFloat16, {5});
  for (int i = 0; i < 5; ++i) arr.data<float16>()[i] = float16::from_double(i + 1);
  IterationResult r = outputs({{"x", arr}});
  postprocess_func::top_k(k_of({{"", {3, -1}}}))(r);
  EXPECT_EQ(values(r.outputs.at("x")), (std::vector<int64_t>{4, 3, 2}));
}

TEST(TopK, TiesKeepTheLowerIndexFirstAndNansComeLast) {
  Tensor arr = Tensor::from_vector<float>({5}, {2, NAN, 7, 2, 7});
  EXPECT_EQ(values(postprocess_func::top_k_indices(arr, 5, 0)),
            (std::vector<int64_t>{2, 4, 0, 3, 1}));
}

TEST(TopK, OutputsWithoutAnEntryAreLeftAlone) {
  IterationResult r = outputs({{"x", ramp()}, {"y", ramp()}});
  postprocess_func::top_k(k_of({{"y", {2, -1}}}))(r);
  EXPECT_EQ(r.outputs.at("x").dtype(), DataType::kFloat32);
  EXPECT_EQ(r.outputs.at("y").dtype(), DataType::kInt64);
}

TEST(TopK, BadAxisIsAnError) {
  EXPECT_THROW(postprocess_func::top_k_indices(ramp(), 1, 1), Error);
  EXPECT_THROW(postprocess_func::top_k_indices(ramp(), 1, -2), Error);
  EXPECT_THROW(postprocess_func::top_k_indices(Tensor::scalar<float>(1), 1, 0), Error);
}

}  // namespace
}  // namespace parity
