// The ai.onnx.ml test cases, shared by the reference backend's tests (against NumPy) and the
// ONNX Runtime differential tests (tests/backend/onnxrt/ml_differential_test.cc). Each case
// is a Python script that builds a model with onnx.helper and computes the expected outputs
// with NumPy restatements of the specification (`expect_<output>`), in the same run.
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "backend/ref/executor.h"
#include "onnx/model_io.h"
#include "ref_test_util.h"
#include "support/test_util.h"

namespace parity::testing {

struct MlCase {
  std::string model_bytes;  // the serialized model, for ONNX Runtime
  std::shared_ptr<ir::Model> model;
  std::map<std::string, Tensor> arrays;

  const Tensor& tensor(const std::string& name) const {
    auto it = arrays.find(name);
    if (it == arrays.end()) fail("failed to find array '{}' saved by the script", name);
    return it->second;
  }
  bool has(const std::string& name) const { return arrays.count(name) != 0; }
  // The graph inputs (saved under their own names) as a feed.
  TensorMap feed() const {
    TensorMap f;
    for (const auto& in : model->graph.inputs) f.set(in.name, tensor(in.name));
    return f;
  }
  std::vector<std::string> output_names() const {
    std::vector<std::string> names;
    for (const auto& out : model->graph.outputs) names.push_back(out.name);
    return names;
  }
};

// Runs `body` after a prelude that has numpy as np, onnx.helper as oh, TensorProto as TP,
// rng = RandomState(0), save(name, array), and ml_model(nodes, inputs, outputs, ml_opset)
// which saves the model (graph inputs from vi(name, TP.X, shape)); nodes of the ML domain
// come from ml(op, inputs, outputs, **attributes), map types from map_type(TP.K, TP.V).
inline MlCase ml_case(const std::string& body) {
  TempDir dir;
  std::string script =
      "import numpy as np\n"
      "import onnx\n"
      "from onnx import helper as oh, TensorProto as TP, numpy_helper as nh\n"
      "rng = np.random.RandomState(0)\n"
      "OUT = '" +
      dir.path().string() +
      "'\n"
      "def save(name, a):\n"
      "    a = np.asarray(a, order='C')\n"
      "    if a.dtype.kind == 'U':\n"
      "        a = a.astype(object)\n"
      "    if a.dtype == object:\n"
      "        with open(OUT + '/' + name + '.str', 'w') as f:\n"
      "            f.write(' '.join(str(d) for d in a.shape) + '\\n')\n"
      "            for s in a.ravel(): f.write(str(s) + '\\n')\n"
      "        return\n"
      "    head = ' '.join([a.dtype.name] + [str(d) for d in a.shape]) + '\\n'\n"
      "    with open(OUT + '/' + name + '.arr', 'wb') as f:\n"
      "        f.write(head.encode() + a.tobytes())\n"
      "ML = 'ai.onnx.ml'\n"
      "def ml(op, ins, outs, **kw):\n"
      "    return oh.make_node(op, ins, outs, domain=ML, **kw)\n"
      "def vi(name, tp, shape):\n"
      "    return oh.make_tensor_value_info(name, tp, shape)\n"
      "def map_type(key, value):  # onnx 1.12 has no helper.make_map_type_proto\n"
      "    t = onnx.TypeProto()\n"
      "    t.map_type.key_type = key\n"
      "    t.map_type.value_type.CopyFrom(oh.make_tensor_type_proto(value, []))\n"
      "    return t\n"
      "def ml_model(nodes, inputs, outputs, ml_opset=3):\n"
      "    g = oh.make_graph(nodes, 'g', inputs, outputs)\n"
      "    m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 17), oh.make_opsetid(ML, "
      "ml_opset)])\n"
      "    m.ir_version = 8\n"
      "    onnx.save(m, OUT + '/model.onnx')\n" +
      body;
  CommandResult r = run_python(script);
  if (r.exit_code != 0) fail("the Python case script failed:\n{}\n{}", r.output, body);
  MlCase c;
  const auto model_path = dir.path() / "model.onnx";
  std::ifstream in(model_path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  c.model_bytes = bytes.str();
  c.model = onnx_io::load_model(model_path.string());
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    const auto ext = entry.path().extension();
    if (ext == ".arr") c.arrays[entry.path().stem().string()] = read_array(entry.path().string());
    if (ext == ".str") {  // strings: a line of dims, then one string per line
      std::ifstream f(entry.path());
      std::string line;
      std::getline(f, line);
      std::istringstream dims(line);
      Shape shape;
      for (int64_t d; dims >> d;) shape.push_back(d);
      Tensor t(DataType::kString, shape);
      for (int64_t i = 0; i < t.numel(); ++i) std::getline(f, t.data<std::string>()[i]);
      c.arrays[entry.path().stem().string()] = t;
    }
  }
  return c;
}

// Float outputs: within 1e-6 relative (the reference rounds once from double, as NumPy's
// float64 restatement cast to float32 does; 1e-6 absorbs the last bit of a different
// summation order). Other types: equal.
inline ::testing::AssertionResult ml_close(const Tensor& actual, const Tensor& expected,
                                           double rtol = 1e-6, double atol = 1e-6) {
  if (expected.dtype() == DataType::kString) {
    if (actual.equals(expected)) return ::testing::AssertionSuccess();
    std::string a, e;
    if (actual.dtype() == DataType::kString && actual.shape() == expected.shape())
      for (int64_t i = 0; i < actual.numel(); ++i)
        if (actual.data<std::string>()[i] != expected.data<std::string>()[i]) {
          a = actual.data<std::string>()[i];
          e = expected.data<std::string>()[i];
          return ::testing::AssertionFailure()
                 << "element " << i << " is '" << a << "', expected '" << e << "'";
        }
    return ::testing::AssertionFailure()
           << "got " << dtype_name(actual.dtype()) << " " << shape_str(actual.shape())
           << ", expected strings " << shape_str(expected.shape());
  }
  return tensors_close(actual, expected, rtol, atol);
}

// ---------------------------------------------------------------------------------------------
// The cases. Each saves its inputs under the graph input names and expect_<output> per output.

// Binarizer, Scaler, Normalizer (MAX, L1, L2), Imputer (float and int64), ArrayFeatureExtractor
// and FeatureVectorizer (an input padded with zeros, and truncated).
inline const char* kMlPreprocessCase = R"(
x = rng.randn(4, 3).astype(np.float32); x[1, 1] = 0; x[3, 0] = 0
xi = rng.randint(-5, 5, size=(4, 2)).astype(np.int64); xi[0, 1] = 7
xl = rng.randn(4, 5).astype(np.float64)
save('x', x); save('xi', xi); save('xl', xl)
off = np.array([0.5, -1, 2], np.float32); scale = np.array([2, 0.5, -1], np.float32)
nodes = [ml('Binarizer', ['x'], ['bin'], threshold=0.3),
         ml('Scaler', ['x'], ['scaled'], offset=off.tolist(), scale=scale.tolist()),
         ml('Scaler', ['xi'], ['scaled_i'], offset=[1.5], scale=[0.25]),
         ml('Normalizer', ['x'], ['n_max'], norm='MAX'),
         ml('Normalizer', ['x'], ['n_l1'], norm='L1'),
         ml('Normalizer', ['xl'], ['n_l2'], norm='L2'),
         ml('Imputer', ['x'], ['imputed'], imputed_value_floats=[9.0, 8.0, 7.0], replaced_value_float=0.0),
         ml('Imputer', ['xi'], ['imputed_i'], imputed_value_int64s=[-1], replaced_value_int64=7),
         ml('ArrayFeatureExtractor', ['xl', 'idx'], ['picked']),
         ml('FeatureVectorizer', ['x', 'x', 'x'], ['features'], inputdimensions=[3, 4, 2])]
idx = np.array([4, 0, 4], np.int64); save('idx', idx)
ml_model(nodes, [vi('x', TP.FLOAT, [4, 3]), vi('xi', TP.INT64, [4, 2]), vi('xl', TP.DOUBLE, [4, 5]),
                 vi('idx', TP.INT64, [3])],
         [vi('bin', TP.FLOAT, None), vi('scaled', TP.FLOAT, None),
          vi('scaled_i', TP.FLOAT, None), vi('n_max', TP.FLOAT, None), vi('n_l1', TP.FLOAT, None),
          vi('n_l2', TP.FLOAT, None), vi('imputed', TP.FLOAT, None), vi('imputed_i', TP.INT64, None),
          vi('picked', TP.DOUBLE, None), vi('features', TP.FLOAT, None)], ml_opset=1)
xd = x.astype(np.float64)
save('expect_bin', (x > 0.3).astype(np.float32))
save('expect_scaled', ((xd - off.astype(np.float64)) * scale.astype(np.float64)).astype(np.float32))
save('expect_scaled_i', ((xi - 1.5) * 0.25).astype(np.float32))
save('expect_n_max', (xd / xd.max(axis=1, keepdims=True)).astype(np.float32))
save('expect_n_l1', (xd / np.abs(xd).sum(axis=1, keepdims=True)).astype(np.float32))
save('expect_n_l2', (xl / np.sqrt((xl * xl).sum(axis=1, keepdims=True))).astype(np.float32))
save('expect_imputed', np.where(x == 0, np.array([9, 8, 7], np.float32), x))
save('expect_imputed_i', np.where(xi == 7, -1, xi))
save('expect_picked', xl[:, idx])
# Every input of FeatureVectorizer has one type (T1); x padded to 4 columns, then cut to 2.
save('expect_features', np.concatenate([x, x, np.zeros((4, 1), np.float32), x[:, :2]], axis=1))
)";

// Binarizer on int64 (the schema allows it; ONNX Runtime implements float only).
inline const char* kMlBinarizerIntCase = R"(
xi = rng.randint(-5, 5, size=(4, 2)).astype(np.int64); save('xi', xi)
ml_model([ml('Binarizer', ['xi'], ['bin_i'], threshold=1.0)], [vi('xi', TP.INT64, [4, 2])],
         [vi('bin_i', TP.INT64, None)], ml_opset=1)
save('expect_bin_i', (xi > 1).astype(np.int64))
)";

// OneHotEncoder (strings, int64s), CategoryMapper both ways, LabelEncoder of opsets 1, 2, 4.
inline const char* kMlEncodersCase = R"(
words = np.array([['cat', 'dog', 'emu'], ['dog', 'yak', 'cat']], dtype=object)
ids = np.array([[3, 1], [7, 3], [2, 2]], np.int64)
fl = np.array([0.5, np.nan, 2.0, -1.0], np.float32)
fl2 = np.array([1.9, np.nan, 3e30, -np.inf, 3.0, 2.5], np.float32)  # truncated; no cast past int64
save('words', words); save('ids', ids); save('fl', fl); save('fl2', fl2)
cats = ['cat', 'dog', 'emu', 'gnu']
nodes = [ml('OneHotEncoder', ['words'], ['hot_words'], cats_strings=cats, zeros=1),
         ml('OneHotEncoder', ['ids'], ['hot_ids'], cats_int64s=[1, 2, 3]),
         ml('OneHotEncoder', ['fl2'], ['hot_fl'], cats_int64s=[1, 2, 3], zeros=1),
         ml('CategoryMapper', ['words'], ['mapped_ids'], cats_strings=cats, cats_int64s=[10, 20, 30, 40], default_int64=-7),
         ml('CategoryMapper', ['ids'], ['mapped_words'], cats_strings=['one', 'two', 'three'], cats_int64s=[1, 2, 3], default_string='none'),
         ml('LabelEncoder', ['words'], ['encoded_ids'], keys_strings=cats, values_int64s=[5, 6, 7, 8]),
         ml('LabelEncoder', ['ids'], ['encoded_words'], keys_int64s=[3, 2], values_strings=['three', 'two'], default_string='?'),
         ml('LabelEncoder', ['fl'], ['encoded_fl'], keys_floats=[0.5, float('nan'), -1.0], values_floats=[10.0, 20.0, 30.0], default_float=-5.0)]
ml_model(nodes, [vi('words', TP.STRING, [2, 3]), vi('ids', TP.INT64, [3, 2]), vi('fl', TP.FLOAT, [4]),
                 vi('fl2', TP.FLOAT, [6])],
         [vi('hot_words', TP.FLOAT, None), vi('hot_ids', TP.FLOAT, None), vi('hot_fl', TP.FLOAT, None),
          vi('mapped_ids', TP.INT64, None),
          vi('mapped_words', TP.STRING, None), vi('encoded_ids', TP.INT64, None),
          vi('encoded_words', TP.STRING, None), vi('encoded_fl', TP.FLOAT, None)], ml_opset=2)
def one_hot(values, categories):
    out = np.zeros(values.shape + (len(categories),), np.float32)
    for index, v in np.ndenumerate(values):
        if v in categories: out[index + (categories.index(v),)] = 1
    return out
save('expect_hot_words', one_hot(words, cats))
save('expect_hot_ids', one_hot(ids, [1, 2, 3]))
save('expect_hot_fl', one_hot(np.array([int(v) if abs(v) < 2.0**63 else None for v in fl2], dtype=object), [1, 2, 3]))
save('expect_mapped_ids', np.vectorize(lambda w: {c: 10 * (i + 1) for i, c in enumerate(cats)}.get(w, -7), otypes=[np.int64])(words))
save('expect_mapped_words', np.vectorize(lambda i: {1: 'one', 2: 'two', 3: 'three'}.get(i, 'none'), otypes=[object])(ids))
save('expect_encoded_ids', np.vectorize(lambda w: {c: 5 + i for i, c in enumerate(cats)}.get(w, -1), otypes=[np.int64])(words))
save('expect_encoded_words', np.vectorize(lambda i: {3: 'three', 2: 'two'}.get(i, '?'), otypes=[object])(ids))
# Before ml opset 4 a NaN key matches nothing (NaN != NaN); opset 4 added the NaN rule.
save('expect_encoded_fl', np.array([10, -5, -5, 30], np.float32))
)";

// LabelEncoder of ml opset 4: keys and values as tensors, a repeated key (the last wins), a
// default_tensor, a NaN key matching NaN.
inline const char* kMlLabelEncoder4Case = R"(
ids = np.array([4, 1, 9, 4, 2], np.int64)
fl = np.array([np.nan, 1.0, 2.5], np.float32)
save('ids', ids); save('fl', fl)
keys = nh.from_array(np.array([1, 4, 2, 4], np.int64))
values = nh.from_array(np.array([0.25, 0.5, 0.75, 1.5], np.float64))
default = nh.from_array(np.array([-2.0], np.float64))
nodes = [ml('LabelEncoder', ['ids'], ['coded'], keys_tensor=keys, values_tensor=values, default_tensor=default),
         ml('LabelEncoder', ['ids'], ['coded_unique'], keys_tensor=nh.from_array(np.array([1, 4, 2], np.int64)),
            values_tensor=nh.from_array(np.array([0.25, 0.5, 0.75], np.float64)), default_tensor=default),
         ml('LabelEncoder', ['fl'], ['from_nan'], keys_floats=[1.0, float('nan')], values_strings=['one', 'nan'])]
ml_model(nodes, [vi('ids', TP.INT64, [5]), vi('fl', TP.FLOAT, [3])],
         [vi('coded', TP.DOUBLE, None), vi('coded_unique', TP.DOUBLE, None), vi('from_nan', TP.STRING, None)], ml_opset=4)
save('expect_coded', np.array([1.5, 0.25, -2.0, 1.5, 0.75]))   # key 4 is repeated: the last wins
save('expect_coded_unique', np.array([0.5, 0.25, -2.0, 0.5, 0.75]))
save('expect_from_nan', np.array(['nan', 'one', '_Unused'], dtype=object))
)";

// LinearRegressor with two targets; LinearClassifier with three classes (SOFTMAX) and a binary
// one (one coefficient row, two string labels).
inline const char* kMlLinearCase = R"(
x = rng.randn(5, 3).astype(np.float32)
save('x', x)
w2 = rng.randn(2, 3).astype(np.float32); b2 = rng.randn(2).astype(np.float32)
w3 = rng.randn(3, 3).astype(np.float32); b3 = rng.randn(3).astype(np.float32)
w1 = rng.randn(3).astype(np.float32); b1 = np.float32(0.1)
nodes = [ml('LinearRegressor', ['x'], ['reg'], coefficients=w2.ravel().tolist(), intercepts=b2.tolist(), targets=2),
         ml('LinearClassifier', ['x'], ['label3', 'score3'], coefficients=w3.ravel().tolist(), intercepts=b3.tolist(),
            classlabels_ints=[10, 20, 30], post_transform='SOFTMAX'),
         ml('LinearClassifier', ['x'], ['label2', 'score2'], coefficients=w1.tolist(), intercepts=[float(b1)],
            classlabels_strings=['no', 'yes'])]
ml_model(nodes, [vi('x', TP.FLOAT, [5, 3])],
         [vi('reg', TP.FLOAT, None), vi('label3', TP.INT64, None), vi('score3', TP.FLOAT, None),
          vi('label2', TP.STRING, None), vi('score2', TP.FLOAT, None)], ml_opset=1)
xd = x.astype(np.float64)
save('expect_reg', (xd @ w2.T.astype(np.float64) + b2).astype(np.float32))
s3 = xd @ w3.T.astype(np.float64) + b3
save('expect_label3', np.array([10, 20, 30], np.int64)[s3.argmax(axis=1)])
e = np.exp(s3 - s3.max(axis=1, keepdims=True))
save('expect_score3', (e / e.sum(axis=1, keepdims=True)).astype(np.float32))
s = xd @ w1.astype(np.float64) + np.float64(b1)
save('expect_label2', np.where(s > 0, 'yes', 'no').astype(object))
save('expect_score2', np.stack([1 - s, s], axis=1).astype(np.float32))
)";

// post_transform PROBIT (the inverse normal CDF, Python's statistics.NormalDist) and
// SOFTMAX_ZERO (a zero score stays zero) through LinearRegressor.
inline const char* kMlPostTransformCase = R"(
import statistics
x = rng.uniform(0.05, 0.95, size=(4, 2)).astype(np.float32); save('x', x)
nodes = [ml('LinearRegressor', ['x'], ['probit'], coefficients=[1.0, 0.0, 0.0, 1.0], targets=2, post_transform='PROBIT'),
         ml('LinearRegressor', ['x'], ['softmax_zero'], coefficients=[2.0, 0.0, 0.0, -1.0, 0.0, 0.0], targets=3,
            post_transform='SOFTMAX_ZERO')]
ml_model(nodes, [vi('x', TP.FLOAT, [4, 2])], [vi('probit', TP.FLOAT, None), vi('softmax_zero', TP.FLOAT, None)], ml_opset=1)
xd = x.astype(np.float64)
save('expect_probit', np.vectorize(statistics.NormalDist().inv_cdf)(xd).astype(np.float32))
s = np.stack([2 * xd[:, 0], -xd[:, 1], np.zeros(4)], axis=1)
e = np.where(s != 0, np.exp(s - s.max(axis=1, keepdims=True)), 0)
save('expect_softmax_zero', (e / e.sum(axis=1, keepdims=True)).astype(np.float32))
)";

// ml opset 1 forms: LabelEncoder's classes_strings both ways, SVMRegressor as a linear model
// (n_supports = 0) and one-class, SVMClassifier as a linear model (no vectors_per_class).
inline const char* kMlOpset1Case = R"(
words = np.array(['b', 'zz', 'a', 'c'], dtype=object); idx = np.array([2, 0, 7], np.int64)
x = rng.randn(5, 3).astype(np.float32)
save('words', words); save('idx', idx); save('x', x)
w = rng.randn(3).astype(np.float32); wc = rng.randn(3, 3).astype(np.float32)
linear_kernel = dict(kernel_type='LINEAR', kernel_params=[0.3, 0.0, 1.0])
nodes = [ml('LabelEncoder', ['words'], ['word_ids'], classes_strings=['a', 'b', 'c'], default_int64=-9),
         ml('LabelEncoder', ['idx'], ['id_words'], classes_strings=['a', 'b', 'c'], default_string='none'),
         # ONNX Runtime refuses an SVM node without kernel_type and kernel_params (optional).
         ml('SVMRegressor', ['x'], ['linear'], coefficients=w.tolist(), rho=[0.5], **linear_kernel),
         ml('SVMRegressor', ['x'], ['one_class'], coefficients=w.tolist(), rho=[0.5], one_class=1, **linear_kernel),
         ml('SVMClassifier', ['x'], ['svm_label', 'svm_score'], coefficients=wc.ravel().tolist(), rho=[-0.25],
            classlabels_ints=[4, 5, 6], **linear_kernel)]
ml_model(nodes, [vi('words', TP.STRING, [4]), vi('idx', TP.INT64, [3]), vi('x', TP.FLOAT, [5, 3])],
         [vi('word_ids', TP.INT64, None), vi('id_words', TP.STRING, None), vi('linear', TP.FLOAT, None),
          vi('one_class', TP.FLOAT, None), vi('svm_label', TP.INT64, None), vi('svm_score', TP.FLOAT, None)], ml_opset=1)
save('expect_word_ids', np.array([1, -9, 0, 2], np.int64))
save('expect_id_words', np.array(['c', 'a', 'none'], dtype=object))
xd = x.astype(np.float64)
lin = xd @ w.astype(np.float64) + 0.5
save('expect_linear', lin.reshape(5, 1).astype(np.float32))
save('expect_one_class', np.where(lin > 0, 1, -1).reshape(5, 1).astype(np.float32))
sc = xd @ wc.T.astype(np.float64) - 0.25
save('expect_svm_label', np.array([4, 5, 6], np.int64)[sc.argmax(axis=1)])
save('expect_svm_score', sc.astype(np.float32))
)";

// ml opset 3: tree thresholds, weights and base values as double tensors (*_as_tensor).
inline const char* kMlTensorAttributesCase = R"(
x = rng.randn(6, 2).astype(np.float64); save('x', x)
att = dict(nodes_treeids=[0, 0, 0], nodes_nodeids=[0, 1, 2], nodes_featureids=[1, 0, 0],
           nodes_modes=['BRANCH_GT', 'LEAF', 'LEAF'], nodes_truenodeids=[1, 0, 0], nodes_falsenodeids=[2, 0, 0],
           nodes_values_as_tensor=nh.from_array(np.array([0.1234567890123, 0, 0], np.float64)),
           target_treeids=[0, 0], target_nodeids=[1, 2], target_ids=[0, 0],
           target_weights_as_tensor=nh.from_array(np.array([1.25, -0.75], np.float64)),
           base_values_as_tensor=nh.from_array(np.array([0.5], np.float64)), n_targets=1)
ml_model([ml('TreeEnsembleRegressor', ['x'], ['y'], **att)], [vi('x', TP.DOUBLE, [6, 2])], [vi('y', TP.FLOAT, None)], ml_opset=3)
save('expect_y', (np.where(x[:, 1] > 0.1234567890123, 1.25, -0.75) + 0.5).reshape(6, 1).astype(np.float32))
)";

// A Python restatement of the legacy tree encoding, shared by the tree cases: the leaf's node
// id that a row reaches in one tree (the tree's first listed node is its root).
inline const char* kMlTreeWalk = R"(
def leaf_of(row, a, tree):
    idx = {(t, n): i for i, (t, n) in enumerate(zip(a['nodes_treeids'], a['nodes_nodeids']))}
    i = a['nodes_treeids'].index(tree)
    while a['nodes_modes'][i] != 'LEAF':
        x, th = row[a['nodes_featureids'][i]], a['nodes_values'][i]
        if np.isnan(x):
            r = a.get('nodes_missing_value_tracks_true', [0] * 99)[i] == 1
        else:
            r = {'BRANCH_LEQ': x <= th, 'BRANCH_LT': x < th, 'BRANCH_GTE': x >= th,
                 'BRANCH_GT': x > th, 'BRANCH_EQ': x == th, 'BRANCH_NEQ': x != th}[a['nodes_modes'][i]]
        i = idx[(tree, a['nodes_truenodeids'][i] if r else a['nodes_falsenodeids'][i])]
    return a['nodes_nodeids'][i]
# Two trees over three features: tree 0 branches twice, tree 1 once (NaN goes to its true side).
TREES = dict(
    nodes_treeids=[0, 0, 0, 0, 0, 1, 1, 1],
    nodes_nodeids=[0, 1, 2, 3, 4, 0, 1, 2],
    nodes_featureids=[0, 1, 0, 0, 0, 2, 0, 0],
    nodes_modes=['BRANCH_LEQ', 'BRANCH_LT', 'LEAF', 'LEAF', 'LEAF', 'BRANCH_GTE', 'LEAF', 'LEAF'],
    nodes_values=[0.0, 0.5, 0, 0, 0, -0.2, 0, 0],
    nodes_truenodeids=[1, 3, 0, 0, 0, 1, 0, 0],
    nodes_falsenodeids=[2, 4, 0, 0, 0, 2, 0, 0],
    nodes_missing_value_tracks_true=[0, 0, 0, 0, 0, 1, 0, 0])
# (tree, leaf node, target, weight)
LEAVES = [(0, 3, 0, 1.0), (0, 3, 1, -0.5), (0, 4, 0, 2.0), (0, 2, 1, 0.75), (1, 1, 0, 0.3),
          (1, 1, 1, 0.3), (1, 2, 0, -1.0)]
x = rng.randn(6, 3).astype(np.float32); x[0, 2] = np.nan; x[1, 0] = np.nan
save('x', x)
def per_target(row, leaves, targets):
    hits = [[] for _ in range(targets)]
    for tree in [0, 1]:
        leaf = leaf_of(row, TREES, tree)
        for t, n, k, w in leaves:
            if t == tree and n == leaf: hits[k].append(w)
    return hits
)";

// TreeEnsembleRegressor with each aggregate function and base values.
inline const char* kMlTreeRegressorCase = R"(
weights = dict(target_treeids=[l[0] for l in LEAVES], target_nodeids=[l[1] for l in LEAVES],
               target_ids=[l[2] for l in LEAVES], target_weights=[l[3] for l in LEAVES])
base = [0.1, -0.2]
nodes = [ml('TreeEnsembleRegressor', ['x'], ['sum'], n_targets=2, aggregate_function='SUM', base_values=base, **TREES, **weights),
         ml('TreeEnsembleRegressor', ['x'], ['avg'], n_targets=2, aggregate_function='AVERAGE', **TREES, **weights),
         ml('TreeEnsembleRegressor', ['x'], ['min'], n_targets=2, aggregate_function='MIN', **TREES, **weights),
         ml('TreeEnsembleRegressor', ['x'], ['max'], n_targets=2, aggregate_function='MAX', base_values=base, **TREES, **weights)]
ml_model(nodes, [vi('x', TP.FLOAT, [6, 3])], [vi(n, TP.FLOAT, None) for n in ['sum', 'avg', 'min', 'max']], ml_opset=1)
w32 = lambda v: float(np.float32(v))   # attributes are float32
rows = [per_target(r, LEAVES, 2) for r in x]
agg = lambda f, b: np.array([[(f([w32(w) for w in h]) if h else 0.0) + b[k] for k, h in enumerate(r)] for r in rows], np.float64)
save('expect_sum', agg(sum, [w32(v) for v in base]).astype(np.float32))
save('expect_avg', (agg(sum, [0, 0]) / 2).astype(np.float32))
save('expect_min', agg(min, [0, 0]).astype(np.float32))
save('expect_max', agg(max, [w32(v) for v in base]).astype(np.float32))
)";

// TreeEnsembleClassifier: three classes with base values (NONE, and SOFTMAX), and a binary
// model whose weights all go to class 1 (Z = [1 - s, s]).
inline const char* kMlTreeClassifierCase = R"(
leaves3 = LEAVES + [(0, 4, 2, 0.5), (1, 2, 2, 0.25)]
cw = lambda ls: dict(class_treeids=[l[0] for l in ls], class_nodeids=[l[1] for l in ls],
                     class_ids=[l[2] for l in ls], class_weights=[l[3] for l in ls])
base = [0.05, 0.0, -0.05]
binary = [(0, 3, 1, 0.2), (0, 4, 1, 0.9), (0, 2, 1, 0.4), (1, 1, 1, 0.05), (1, 2, 1, 0.35)]  # no sum near 0.5
nodes = [ml('TreeEnsembleClassifier', ['x'], ['label', 'score'], classlabels_int64s=[7, 8, 9], base_values=base, **TREES, **cw(leaves3)),
         ml('TreeEnsembleClassifier', ['x'], ['label_sm', 'score_sm'], classlabels_strings=['a', 'b', 'c'], post_transform='SOFTMAX', **TREES, **cw(leaves3)),
         ml('TreeEnsembleClassifier', ['x'], ['label_bin', 'score_bin'], classlabels_int64s=[0, 1], **TREES, **cw(binary))]
ml_model(nodes, [vi('x', TP.FLOAT, [6, 3])],
         [vi('label', TP.INT64, None), vi('score', TP.FLOAT, None), vi('label_sm', TP.STRING, None),
          vi('score_sm', TP.FLOAT, None), vi('label_bin', TP.INT64, None), vi('score_bin', TP.FLOAT, None)], ml_opset=1)
w32 = lambda v: float(np.float32(v))
s = np.array([[sum(w32(w) for w in h) for h in per_target(r, leaves3, 3)] for r in x])
sb = s + np.array([w32(v) for v in base])
save('expect_label', np.array([7, 8, 9], np.int64)[sb.argmax(axis=1)])
save('expect_score', sb.astype(np.float32))
e = np.exp(s - s.max(axis=1, keepdims=True)); sm = e / e.sum(axis=1, keepdims=True)
save('expect_label_sm', np.array(['a', 'b', 'c'], dtype=object)[sm.argmax(axis=1)])
save('expect_score_sm', sm.astype(np.float32))
p = np.array([sum(w32(w) for w in per_target(r, binary, 2)[1]) for r in x])
save('expect_label_bin', (p > 0.5).astype(np.int64))
save('expect_score_bin', np.stack([1 - p, p], axis=1).astype(np.float32))
)";

// TreeEnsemble (ml opset 5): two trees, a set-membership node, leaves named by index.
inline const char* kMlTreeEnsemble5Case = R"(
x = np.array([[1, 0.2], [3, 0.9], [2, 0.4], [2, 0.7], [5, 0.1], [np.nan, 0.3]], np.float32)
save('x', x)
# tree 0: node 0 (f0 in {1, 3}) -> leaf 0, else node 1 (f1 <= 0.5 -> leaf 1, else leaf 2)
# tree 1: node 2 (f0 > 2; NaN goes true) -> leaf 3, else leaf 4
att = dict(nodes_featureids=[0, 1, 0], nodes_truenodeids=[0, 1, 3], nodes_trueleafs=[1, 1, 1],
           nodes_falsenodeids=[1, 2, 4], nodes_falseleafs=[0, 1, 1], nodes_missing_value_tracks_true=[0, 0, 1],
           nodes_modes=nh.from_array(np.array([6, 0, 3], np.uint8)),
           nodes_splits=nh.from_array(np.array([0, 0.5, 2], np.float32)),
           membership_values=nh.from_array(np.array([1, 3, np.nan], np.float32)),
           tree_roots=[0, 2], leaf_targetids=[0, 1, 0, 1, 1],
           leaf_weights=nh.from_array(np.array([1.5, -0.5, 0.25, 2.0, 0.125], np.float32)), n_targets=2)
nodes = [ml('TreeEnsemble', ['x'], ['y'], aggregate_function=1, **att),
         ml('TreeEnsemble', ['x'], ['y_avg'], aggregate_function=0, post_transform=2, **att)]
ml_model(nodes, [vi('x', TP.FLOAT, [6, 2])], [vi('y', TP.FLOAT, None), vi('y_avg', TP.FLOAT, None)], ml_opset=5)
y = np.zeros((6, 2))
for i, (a, b) in enumerate(x.astype(np.float64)):
    leaf0 = 0 if a in (1, 3) else (1 if b <= 0.5 else 2)
    leaf1 = 3 if (np.isnan(a) or a > 2) else 4
    for leaf in (leaf0, leaf1):
        y[i, [0, 1, 0, 1, 1][leaf]] += [1.5, -0.5, 0.25, 2.0, 0.125][leaf]
save('expect_y', y.astype(np.float32))
save('expect_y_avg', (1 / (1 + np.exp(-y / 2))).astype(np.float32))
)";

// SVMRegressor (RBF) and SVMClassifier: three classes with an RBF kernel (votes, pairwise
// scores), the same with Platt probabilities (pairwise coupling), and a binary POLY model.
inline const char* kMlSvmCase = R"(
x = rng.randn(5, 2).astype(np.float32); save('x', x)
f32 = lambda a: np.asarray(a, np.float32).astype(np.float64)
sv = f32(rng.randn(5, 2)); coef = f32(rng.randn(2, 5)); rho = f32(rng.randn(3)); gamma = 0.7
pa = f32([-1.2, -0.8, -1.5]); pb = f32([0.1, -0.2, 0.05])
sv_r = f32(rng.randn(3, 2)); coef_r = f32(rng.randn(3)); rho_r = 0.25
common = dict(kernel_type='RBF', kernel_params=[gamma, 0.0, 3.0], support_vectors=sv.ravel().tolist(),
              coefficients=coef.ravel().tolist(), rho=rho.tolist(), vectors_per_class=[2, 1, 2], classlabels_ints=[0, 1, 2])
sv_b = f32(rng.randn(3, 2)); coef_b = f32(rng.randn(3))
nodes = [ml('SVMRegressor', ['x'], ['reg'], kernel_type='RBF', kernel_params=[gamma, 0.0, 3.0], n_supports=3,
            support_vectors=sv_r.ravel().tolist(), coefficients=coef_r.tolist(), rho=[rho_r]),
         ml('SVMClassifier', ['x'], ['label', 'score'], **common),
         ml('SVMClassifier', ['x'], ['label_p', 'prob'], prob_a=pa.tolist(), prob_b=pb.tolist(), **common),
         ml('SVMClassifier', ['x'], ['label_b', 'score_b'], kernel_type='POLY', kernel_params=[0.5, 1.0, 2.0],
            support_vectors=sv_b.ravel().tolist(), coefficients=coef_b.tolist(), rho=[-0.1], vectors_per_class=[1, 2],
            classlabels_strings=['neg', 'pos'])]
ml_model(nodes, [vi('x', TP.FLOAT, [5, 2])],
         [vi('reg', TP.FLOAT, None), vi('label', TP.INT64, None), vi('score', TP.FLOAT, None),
          vi('label_p', TP.INT64, None), vi('prob', TP.FLOAT, None), vi('label_b', TP.STRING, None),
          vi('score_b', TP.FLOAT, None)], ml_opset=1)
g = np.float64(np.float32(gamma))
rbf = lambda a, s: np.exp(-g * ((a - s) ** 2).sum())
xd = x.astype(np.float64)
save('expect_reg', np.array([[sum(c * rbf(r, s) for c, s in zip(coef_r, sv_r)) + rho_r] for r in xd], np.float32))
def pairwise(r, svs, coefs, rhos, counts, kern):
    k = [kern(r, s) for s in svs]; starts = np.cumsum([0] + counts[:-1]); n = len(counts)
    scores, votes = [], [0] * n
    for i in range(n):
        for j in range(i + 1, n):
            s = rhos[len(scores)]
            s += sum(coefs[j - 1][starts[i] + m] * k[starts[i] + m] for m in range(counts[i]))
            s += sum(coefs[i][starts[j] + m] * k[starts[j] + m] for m in range(counts[j]))
            scores.append(s); votes[i if s > 0 else j] += 1
    return scores, int(np.argmax(votes))
res = [pairwise(r, sv, coef, rho, [2, 1, 2], rbf) for r in xd]
save('expect_label', np.array([b for _, b in res], np.int64))
save('expect_score', np.array([s for s, _ in res], np.float32))
def couple(k, r):   # Wu, Lin and Weng's method 2, iterated as libsvm does
    Q = np.zeros((k, k)); p = np.full(k, 1.0 / k)
    for t in range(k):
        Q[t, t] = sum(r[j, t] ** 2 for j in range(k) if j != t)
        for j in range(k):
            if j != t: Q[t, j] = -r[j, t] * r[t, j]
    for _ in range(100):
        Qp = Q @ p; pQp = p @ Qp
        if np.max(np.abs(Qp - pQp)) < 0.005 / k: break
        for t in range(k):
            diff = (-Qp[t] + pQp) / Q[t, t]
            p[t] += diff
            pQp = (pQp + diff * (diff * Q[t, t] + 2 * Qp[t])) / (1 + diff) / (1 + diff)
            Qp = (Qp + diff * Q[t, :]) / (1 + diff); p /= (1 + diff)
    return p
probs = []
for scores, _ in res:
    r = np.zeros((3, 3)); idx = 0
    for i in range(3):
        for j in range(i + 1, 3):
            v = min(max(1 / (1 + np.exp(scores[idx] * pa[idx] + pb[idx])), 1e-7), 1 - 1e-7)
            r[i, j], r[j, i] = v, 1 - v; idx += 1
    probs.append(couple(3, r))
save('expect_label_p', np.array([b for _, b in res], np.int64))
save('expect_prob', np.array(probs, np.float32))
poly = lambda a, s: (np.float64(np.float32(0.5)) * (a @ s) + 1.0) ** 2
resb = [pairwise(r, sv_b, [coef_b], [np.float64(np.float32(-0.1))], [1, 2], poly) for r in xd]
save('expect_label_b', np.array(['neg', 'pos'], dtype=object)[[b for _, b in resb]])
save('expect_score_b', np.array([[-s[0], s[0]] for s, _ in resb], np.float32))
)";

}  // namespace parity::testing
