// Maps and sequences as model inputs on the command line: `parity run` generates them for a
// DictVectorizer model and a sequence model and compares ONNX Runtime with the reference
// backend; `--save-inputs` writes them in Polygraphy's JSON and `--load-inputs` reads that (and
// a file made by Polygraphy's own save_json) back.
#include <gtest/gtest.h>

#include "support/test_util.h"

namespace parity::testing {
namespace {

bool has(const CommandResult& r, const std::string& s) {
  return r.output.find(s) != std::string::npos;
}

// The models, written with python3-onnx (ONNX 1.12's text format has no map types).
void write_models(const TempDir& dir) {
  CommandResult r = run_python(R"(
import onnx
from onnx import TensorProto as TP, helper as oh
def save(nodes, inputs, outputs, path):
    m = oh.make_model(oh.make_graph(nodes, 'g', inputs, outputs),
                      opset_imports=[oh.make_opsetid('', 17), oh.make_opsetid('ai.onnx.ml', 1)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)
mt = onnx.TypeProto(); mt.map_type.key_type = TP.INT64
mt.map_type.value_type.CopyFrom(oh.make_tensor_type_proto(TP.FLOAT, []))
save([oh.make_node('DictVectorizer', ['m'], ['y'], domain='ai.onnx.ml', int64_vocabulary=[2, 0, 9, 1])],
     [oh.make_value_info('m', mt)], [oh.make_tensor_value_info('y', TP.FLOAT, None)], ')" +
                               dir.file("dict.onnx") + R"(')
seq = oh.make_sequence_type_proto(oh.make_tensor_type_proto(TP.FLOAT, [2, 3]))
save([oh.make_node('ConcatFromSequence', ['s'], ['cat'], axis=1)], [oh.make_value_info('s', seq)],
     [oh.make_tensor_value_info('cat', TP.FLOAT, [2, None])], ')" +
                               dir.file("seq.onnx") + "')\n");
  ASSERT_EQ(r.exit_code, 0) << r.output;
}

TEST(CliValueInputs, GeneratedMapsAndSequencesRunOnBothBackends) {
  TempDir dir;
  write_models(dir);
  for (const char* model : {"dict.onnx", "seq.onnx"}) {
    CommandResult r = run_parity({"run", dir.file(model), "--onnxrt", "--pluginref",
                                  "--save-inputs", dir.file(std::string(model) + ".json")});
    ASSERT_EQ(r.exit_code, 0) << model << "\n" << r.output;
    EXPECT_TRUE(has(r, "PASSED | All outputs matched")) << r.output;
  }
  // The saved feed holds the map as a dict and the sequence as a list, as Polygraphy saves them.
  const std::string dict = read_text(dir.file("dict.onnx.json"));
  EXPECT_TRUE(has({0, dict}, "\"m\": {\n            \"0\": ")) << dict;
  const std::string seq = read_text(dir.file("seq.onnx.json"));
  EXPECT_TRUE(has({0, seq}, "\"s\": [\n            {\n                \"array\": ")) << seq;

  // Loaded back, on both backends again.
  for (const char* model : {"dict.onnx", "seq.onnx"}) {
    CommandResult r = run_parity({"run", dir.file(model), "--onnxrt", "--pluginref",
                                  "--load-inputs", dir.file(std::string(model) + ".json")});
    ASSERT_EQ(r.exit_code, 0) << model << "\n" << r.output;
    EXPECT_TRUE(has(r, "PASSED | All outputs matched")) << r.output;
  }
}

TEST(CliValueInputs, LoadsAMapSavedByPolygraphy) {
  TempDir dir;
  write_models(dir);
  // Polygraphy's save_json of {"m": {0: 0.5, 2: -1.25, 7: 3.0}} (the "m" of
  // tests/io/fixtures/polygraphy_value_inputs.json); its other inputs are dropped.
  CommandResult r =
      run_parity({"run", dir.file("dict.onnx"), "--onnxrt", "--pluginref", "--load-inputs",
                  source_path("tests/io/fixtures/polygraphy_value_inputs.json"), "--save-outputs",
                  dir.file("out.json")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r, "PASSED | All outputs matched")) << r.output;
  CommandResult check = run_python(R"(
import json, base64, io, numpy as np
runs = json.load(open(')" + dir.file("out.json") +
                                   R"('))['lst']
for name, iters in runs:
    arr = iters[0]['outputs']['y']['values']['array']
    y = np.load(io.BytesIO(base64.b64decode(arr)))
    # vocabulary [2, 0, 9, 1] over {0: 0.5, 2: -1.25, 7: 3.0}
    assert np.array_equal(y.ravel(), np.array([-1.25, 0.5, 0, 0], np.float32)), (name, y)
print('ok')
)");
  EXPECT_EQ(check.exit_code, 0) << check.output;
}

}  // namespace
}  // namespace parity::testing
