// Maps and sequences as model inputs on the command line: `parity run --load-inputs` feeds a
// DictVectorizer model a map and a ConcatFromSequence model a sequence from Polygraphy's JSON
// (a dict and a list inside the feed, as Polygraphy's save_json writes them; one file made by
// Polygraphy itself), compares ONNX Runtime with the reference backend, and `--save-inputs`
// writes the same JSON back. Without --load-inputs, the data loader generates such inputs.
#include <gtest/gtest.h>

#include "support/test_util.h"

namespace parity::testing {
namespace {

bool has(const std::string& text, const std::string& s) {
  return text.find(s) != std::string::npos;
}

// Python for both cases: save() writes a model into D, and dict.onnx is a DictVectorizer over
// an int64 -> float map.
const char* kSaveAndDictModel = R"(
def save(nodes, inputs, outputs, path):
    m = oh.make_model(oh.make_graph(nodes, 'g', inputs, outputs),
                      opset_imports=[oh.make_opsetid('', 17), oh.make_opsetid('ai.onnx.ml', 1)])
    m.ir_version = 8
    onnx.save(m, D + '/' + path)
mt = onnx.TypeProto(); mt.map_type.key_type = TP.INT64
mt.map_type.value_type.CopyFrom(oh.make_tensor_type_proto(TP.FLOAT, []))
save([oh.make_node('DictVectorizer', ['m'], ['y'], domain='ai.onnx.ml', int64_vocabulary=[2, 0, 9, 1])],
     [oh.make_value_info('m', mt)], [oh.make_tensor_value_info('y', TP.FLOAT, None)], 'dict.onnx')
)";

// The models (python3-onnx: ONNX 1.12's text format has no map types) and a feed for each,
// written as Python's json module writes Polygraphy's encoding of them.
void write_case(const TempDir& dir) {
  CommandResult r = run_python(R"(
import base64, io, json, numpy as np, onnx
from onnx import TensorProto as TP, helper as oh
D = ')" + dir.path().string() + "'\n" +
                               kSaveAndDictModel + R"(
seq = oh.make_sequence_type_proto(oh.make_tensor_type_proto(TP.FLOAT, [2, 3]))
save([oh.make_node('ConcatFromSequence', ['s'], ['cat'], axis=1)], [oh.make_value_info('s', seq)],
     [oh.make_tensor_value_info('cat', TP.FLOAT, [2, None])], 'seq.onnx')
def arr(a):
    b = io.BytesIO(); np.save(b, a, allow_pickle=False)
    return {'array': base64.b64encode(b.getvalue()).decode(), 'polygraphy_class': 'ndarray'}
rng = np.random.RandomState(0)
items = [rng.rand(2, 3).astype(np.float32) for _ in range(3)]
json.dump([{'s': [arr(a) for a in items]}], open(D + '/seq.json', 'w'), indent=4)
np.save(D + '/cat.npy', np.concatenate(items, axis=1))
)");
  ASSERT_EQ(r.exit_code, 0) << r.output;
}

// The output `name` of each runner in a saved RunResults file, checked against `expected`
// (a NumPy expression).
std::string check_outputs(const std::string& path, const std::string& name,
                          const std::string& expected) {
  return R"(
import base64, io, json, numpy as np
runs = json.load(open(')" +
         path + R"('))['lst']
assert len(runs) == 2, runs
for runner, iters in runs:
    y = np.load(io.BytesIO(base64.b64decode(iters[0]['outputs'][')" +
         name + R"(']['values']['array'])))
    want = )" +
         expected +
         R"(
    assert np.array_equal(y.reshape(want.shape), want), (runner, y, want)
print('ok')
)";
}

TEST(CliValueInputs, LoadedSequenceRunsOnBothBackendsAndSavesAsPolygraphyDoes) {
  TempDir dir;
  write_case(dir);
  CommandResult r = run_parity({"run", dir.file("seq.onnx"), "--onnxrt", "--pluginref",
                                "--load-inputs", dir.file("seq.json"), "--save-inputs",
                                dir.file("saved.json"), "--save-outputs", dir.file("out.json")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "PASSED | All outputs matched")) << r.output;
  CommandResult check = run_python(
      check_outputs(dir.file("out.json"), "cat", "np.load('" + dir.file("cat.npy") + "')"));
  EXPECT_EQ(check.exit_code, 0) << check.output;
  // The saved feed holds the list again, array for array.
  CommandResult same = run_python(R"(
import json
a = json.load(open(')" + dir.file("seq.json") +
                                  R"('))
b = json.load(open(')" + dir.file("saved.json") +
                                  R"('))
assert a == b, (a, b)
)");
  EXPECT_EQ(same.exit_code, 0) << same.output;
}

TEST(CliValueInputs, LoadsAMapSavedByPolygraphy) {
  TempDir dir;
  write_case(dir);
  // Polygraphy's save_json of {"m": {0: 0.5, 2: -1.25, 7: 3.0}, ...} (the feed of
  // tests/io/fixtures/polygraphy_value_inputs.json); the inputs dict.onnx lacks are dropped.
  CommandResult r =
      run_parity({"run", dir.file("dict.onnx"), "--onnxrt", "--pluginref", "--load-inputs",
                  source_path("tests/io/fixtures/polygraphy_value_inputs.json"), "--save-outputs",
                  dir.file("out.json")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "PASSED | All outputs matched")) << r.output;
  // The vocabulary [2, 0, 9, 1] over {0: 0.5, 2: -1.25, 7: 3.0}.
  CommandResult check = run_python(
      check_outputs(dir.file("out.json"), "y", "np.array([-1.25, 0.5, 0, 0], np.float32)"));
  EXPECT_EQ(check.exit_code, 0) << check.output;
}

// Models whose inputs the data loader must generate: a sequence with a dynamic dim in its
// tensors' shape (SequenceLength and ConcatFromSequence) and an int64 -> float map.
void write_generated_case(const TempDir& dir) {
  CommandResult r = run_python(R"(
import onnx
from onnx import TensorProto as TP, helper as oh
D = ')" + dir.path().string() + "'\n" +
                               kSaveAndDictModel + R"(
seq = oh.make_sequence_type_proto(oh.make_tensor_type_proto(TP.FLOAT, [2, 'N']))
save([oh.make_node('SequenceLength', ['s'], ['len']),
      oh.make_node('ConcatFromSequence', ['s'], ['cat'], axis=1)], [oh.make_value_info('s', seq)],
     [oh.make_tensor_value_info('len', TP.INT64, []),
      oh.make_tensor_value_info('cat', TP.FLOAT, [2, None])], 'seq.onnx')
norank = oh.make_sequence_type_proto(oh.make_tensor_type_proto(TP.FLOAT, None))
save([oh.make_node('SequenceLength', ['s'], ['len'])], [oh.make_value_info('s', norank)],
     [oh.make_tensor_value_info('len', TP.INT64, [])], 'norank.onnx')
)");
  ASSERT_EQ(r.exit_code, 0) << r.output;
}

TEST(CliValueInputs, GeneratesASequenceInputForBothBackends) {
  TempDir dir;
  write_generated_case(dir);
  CommandResult r =
      run_parity({"run", dir.file("seq.onnx"), "--onnxrt", "--pluginref", "--seed", "3",
                  "--save-inputs", dir.file("in.json"), "--save-outputs", dir.file("out.json")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "PASSED | All outputs matched")) << r.output;
  EXPECT_TRUE(has(r.output,
                  "Input tensor: s [type=seq(tensor(float32, (2, 'N')))] | Will "
                  "generate a sequence of 1 tensor(s) of shape: [2, 1]."))
      << r.output;
  // The saved feed is a list of one (2, 1) array drawn as NumPy's RandomState(3) draws it, and
  // both backends' outputs are the sequence's length and the concatenation.
  CommandResult check = run_python(R"(
import base64, io, json, numpy as np
feed = json.load(open(')" + dir.file("in.json") +
                                   R"('))[0]
items = [np.load(io.BytesIO(base64.b64decode(a['array']))) for a in feed['s']]
want = np.random.RandomState(3).random_sample((2, 1)).astype(np.float32)
assert len(items) == 1 and items[0].dtype == np.float32, items
assert np.array_equal(items[0], want), (items, want)
runs = json.load(open(')" + dir.file("out.json") +
                                   R"('))['lst']
assert len(runs) == 2, runs
for runner, iters in runs:
    out = {k: np.load(io.BytesIO(base64.b64decode(v['values']['array'])))
           for k, v in iters[0]['outputs'].items()}
    assert int(out['len']) == 1, (runner, out)
    assert np.array_equal(out['cat'], want), (runner, out)
print('ok')
)");
  EXPECT_EQ(check.exit_code, 0) << check.output;
}

TEST(CliValueInputs, GeneratesAMapInputForBothBackends) {
  TempDir dir;
  write_generated_case(dir);
  CommandResult r = run_parity({"run", dir.file("dict.onnx"), "--onnxrt", "--pluginref",
                                "--val-range", "m:[-2,2]", "--save-inputs", dir.file("in.json"),
                                "--save-outputs", dir.file("out.json")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "PASSED | All outputs matched")) << r.output;
  EXPECT_TRUE(has(r.output,
                  "Input tensor: m [type=map(int64, float32)] | Will generate a map "
                  "of 1 entr(ies) with keys 0 to 0."))
      << r.output;
  // Key 0 with a value drawn in [-2, 2] from RandomState(1); the vocabulary [2, 0, 9, 1] puts
  // it second.
  CommandResult check = run_python(R"(
import json, numpy as np
feed = json.load(open(')" + dir.file("in.json") +
                                   R"('))[0]
v = np.float32(np.random.RandomState(1).random_sample(1) * 4.0 - 2.0)[0]
assert list(feed['m'].keys()) == ['0'] and np.float32(feed['m']['0']) == v, (feed, v)
)" + check_outputs(dir.file("out.json"), "y", "np.array([0, v, 0, 0], np.float32)"));
  EXPECT_EQ(check.exit_code, 0) << check.output;
}

TEST(CliValueInputs, SequenceOfUnknownRankNeedsInputShapes) {
  TempDir dir;
  write_generated_case(dir);
  // The reference runner first: its metadata keeps the unknown rank (ONNX Runtime reports an
  // undeclared shape as rank 0, so it would generate scalars).
  CommandResult r = run_parity({"run", dir.file("norank.onnx"), "--pluginref", "--onnxrt"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r.output,
                  "failed to generate input s with shape None: its rank is unknown; "
                  "give its shape with --input-shapes s:[...]"))
      << r.output;
  // The shape given is that of the sequence's tensors.
  r = run_parity({"run", dir.file("norank.onnx"), "--pluginref", "--onnxrt", "--input-shapes",
                  "s:[3,2]", "--save-inputs", dir.file("in.json")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  CommandResult check = run_python(R"(
import base64, io, json, numpy as np
feed = json.load(open(')" + dir.file("in.json") +
                                   R"('))[0]
a = np.load(io.BytesIO(base64.b64decode(feed['s'][0]['array'])))
assert a.shape == (3, 2) and a.dtype == np.float32, a
)");
  EXPECT_EQ(check.exit_code, 0) << check.output;
}

}  // namespace
}  // namespace parity::testing
