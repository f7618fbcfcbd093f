// Sequence and map outputs in Polygraphy's JSON: Polygraphy stores what ONNX Runtime's Python
// binding returns (a list of dicts for ZipMap, a list of arrays for a sequence, a dict for a
// map) as plain JSON inside the LazyArray. Parity's results spell those values as tensors
// (backend/value_tensors.h); saving writes the plain JSON byte for byte as Python's
// json.dumps(indent=4) does, and loading reads it back into the same tensors.
#include <gtest/gtest.h>

#include "backend/value_tensors.h"
#include "io/json.h"
#include "support/test_util.h"

namespace parity::io {
namespace {

using testing::run_python;

TEST(JsonValues, SequencesAndMapsAsPolygraphyWritesThem) {
  Value zipmap = Value::make_map_sequence(
      {sorted_map_from_entries(Tensor::from_vector<int64_t>({2}, {1, 0}),
                               Tensor::from_vector<float>({2}, {0.75f, 0.1f})),
       sorted_map_from_entries(Tensor::from_vector<int64_t>({2}, {0, 1}),
                               Tensor::from_vector<float>({2}, {0.5f, 0.5f}))},
      DataType::kInt64, DataType::kFloat32);
  Value names =
      Value::make_map(sorted_map_from_entries(Tensor::from_vector<std::string>({2}, {"b", "a"}),
                                              Tensor::from_vector<int64_t>({2}, {7, -3})));
  IterationResult it;
  it.runner_name = "onnxrt-runner";
  add_value_tensors(it.outputs, "label", Tensor::from_vector<int64_t>({2}, {1, 0}));
  add_value_tensors(it.outputs, "probabilities", zipmap);
  add_value_tensors(it.outputs, "names", names);
  RunResults results;
  results.append({"onnxrt-runner", {it}});
  const std::string ours = run_results_to_json(results);

  // The same structure through Python's json module (the array is only checked for its place).
  testing::CommandResult r = run_python(R"(
import json
lazy = lambda v: {'values': v, 'polygraphy_class': 'LazyArray'}
f = lambda x: float(__import__('numpy').float32(x))
outputs = {'label': lazy('ARRAY'),
           'probabilities': lazy([{'0': f(0.1), '1': f(0.75)}, {'0': f(0.5), '1': f(0.5)}]),
           'names': lazy({'a': -3, 'b': 7})}
it = {'outputs': outputs, 'runtime': None, 'runner_name': 'onnxrt-runner', 'polygraphy_class': 'IterationResult'}
print(json.dumps({'lst': [['onnxrt-runner', [it]]], 'polygraphy_class': 'RunResults'}, indent=4), end='')
)");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Our ndarray object in place of the Python placeholder.
  const size_t label_at = ours.find("\"label\"");
  const size_t array_start = ours.find("\"values\": ", label_at) + 10;
  const size_t array_end = ours.find('}', ours.find("\"ndarray\"", array_start)) + 1;
  ASSERT_NE(label_at, std::string::npos);
  std::string expected = r.output;
  expected.replace(expected.find("\"ARRAY\""), 7,
                   ours.substr(array_start, array_end - array_start));
  EXPECT_EQ(ours, expected);

  // Reading gives the same tensors back.
  RunResults back = run_results_from_json(ours);
  const TensorMap& outputs = back.begin()->second.front().outputs;
  EXPECT_EQ(outputs.names(), it.outputs.names());
  for (const auto& [name, tensor] : it.outputs)
    EXPECT_TRUE(outputs.at(name).equals(tensor)) << name;
}

TEST(JsonValues, GroupingNeedsTheWholeSet) {
  TensorMap t;
  t.set("a.keys", Tensor::from_vector<int64_t>({1}, {1}));  // no a.values: a plain tensor
  t.set("s[1]", Tensor::scalar<float>(1));                  // no s[0]: a plain tensor
  t.set("q[0]", Tensor::scalar<float>(2));
  t.set("q[1]", Tensor::scalar<float>(3));
  auto groups = group_value_tensors(t);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].first, "a.keys");
  EXPECT_TRUE(groups[0].second.is_tensor());
  EXPECT_EQ(groups[1].first, "s[1]");
  EXPECT_EQ(groups[2].first, "q");
  EXPECT_TRUE(groups[2].second.is_sequence());
  EXPECT_EQ(groups[2].second.sequence.size(), 2u);
}

// Sequence and map INPUTS: Polygraphy's JSON of a feed holds the list or dict itself (made
// with Polygraphy 0.49's save_json, tests/io/fixtures/polygraphy_value_inputs.py). Loading gives
// the derived tensors; saving them gives Polygraphy's file byte for byte.
TEST(JsonValues, SequenceAndMapInputsAsPolygraphyWritesThem) {
  const std::string fixture =
      testing::source_path("tests/io/fixtures/polygraphy_value_inputs.json");
  std::vector<TensorMap> feeds = load_inputs(fixture);
  ASSERT_EQ(feeds.size(), 1u);
  const TensorMap& f = feeds[0];
  EXPECT_EQ(f.names(), (std::vector<std::string>{"x", "s[0]", "s[1]", "m.keys", "m.values",
                                                 "z[0].keys", "z[0].values"}));
  EXPECT_TRUE(f.at("s[1]").equals(Tensor::from_vector<float>({2}, {-1.0f, 0.25f})));
  EXPECT_TRUE(f.at("m.keys").equals(Tensor::from_vector<int64_t>({3}, {0, 2, 7})));
  EXPECT_TRUE(f.at("m.values").equals(Tensor::from_vector<float>({3}, {0.5f, -1.25f, 3.0f})));
  EXPECT_TRUE(f.at("z[0].keys").equals(Tensor::from_vector<std::string>({2}, {"a", "b"})));
  EXPECT_EQ(inputs_to_json(feeds), read_file(fixture));
}

}  // namespace
}  // namespace parity::io
