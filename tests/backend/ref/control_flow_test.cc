// If, Loop, Scan and SequenceMap beyond what the ONNX node tests cover: bodies nested two
// deep reading outer values, loops that never run, scans along other axes and directions,
// Scan-8 batches of different lengths, SequenceMap over two sequences. Expected values come
// from NumPy in the same script that builds the model.
#include <gtest/gtest.h>

#include "python_model.h"

namespace parity::testing {
namespace {

using ref::NamedValue;

Tensor bool_scalar(bool v) { return Tensor::scalar<bool>(v); }

TEST(ControlFlow, IfBranchesNestedTwoDeepReadEveryEnclosingScope) {
  // The inner branches read x (two scopes up) and t (made in the enclosing branch).
  PythonModel m = python_model(R"(
x = rng.randn(3).astype(np.float32)
save('x', x)
t = x + x
save('tt', x * t)   # c1 and c2
save('tf', x - t)   # c1 and not c2
save('f', -x)       # not c1
inner = oh.make_node('If', ['c2'], ['o'],
    then_branch=oh.make_graph([oh.make_node('Mul', ['x', 't'], ['m'])], 'inner_then', [],
                              [oh.make_tensor_value_info('m', TP.FLOAT, [3])]),
    else_branch=oh.make_graph([oh.make_node('Sub', ['x', 't'], ['s'])], 'inner_else', [],
                              [oh.make_tensor_value_info('s', TP.FLOAT, [3])]))
then_g = oh.make_graph([oh.make_node('Add', ['x', 'x'], ['t']), inner], 'then', [],
                       [oh.make_tensor_value_info('o', TP.FLOAT, [3])])
else_g = oh.make_graph([oh.make_node('Neg', ['x'], ['n'])], 'else', [],
                       [oh.make_tensor_value_info('n', TP.FLOAT, [3])])
g = oh.make_graph([oh.make_node('If', ['c1'], ['y'], then_branch=then_g, else_branch=else_g)],
    'g', [oh.make_tensor_value_info('x', TP.FLOAT, [3]),
          oh.make_tensor_value_info('c1', TP.BOOL, []),
          oh.make_tensor_value_info('c2', TP.BOOL, [])],
    [oh.make_tensor_value_info('y', TP.FLOAT, [3])])
save_model(oh.make_model(g, opset_imports=[oh.make_opsetid('', 16)]))
)");
  ref::Executor executor(m.model);
  const Tensor& x = m.tensor("x");
  struct Case {
    bool c1, c2;
    const char* expected;
  };
  for (Case c : {Case{true, true, "tt"}, Case{true, false, "tf"}, Case{false, true, "f"},
                 Case{false, false, "f"}}) {
    auto out = executor.run(
        std::vector<NamedValue>{{"x", x}, {"c1", bool_scalar(c.c1)}, {"c2", bool_scalar(c.c2)}});
    EXPECT_TRUE(values_equal(out.at(0).value, m.tensor(c.expected)))
        << "c1=" << c.c1 << " c2=" << c.c2;
  }
}

TEST(ControlFlow, IfRefusesAConditionThatIsNotOneBool) {
  PythonModel m = python_model(R"(
branch = lambda n: oh.make_graph([oh.make_node('Identity', ['x'], [n])], n, [],
                                 [oh.make_tensor_value_info(n, TP.FLOAT, [2])])
g = oh.make_graph([oh.make_node('If', ['c'], ['y'], name='choose', then_branch=branch('a'),
                                else_branch=branch('b'))], 'g',
    [oh.make_tensor_value_info('x', TP.FLOAT, [2]), oh.make_tensor_value_info('c', TP.INT64, [])],
    [oh.make_tensor_value_info('y', TP.FLOAT, [2])])
save_model(oh.make_model(g, opset_imports=[oh.make_opsetid('', 16)]))
)");
  std::string message = error_of([&] {
    m.run({{"x", Tensor::from_vector<float>({2}, {1, 2})}, {"c", Tensor::scalar<int64_t>(1)}});
  });
  EXPECT_NE(message.find("failed to run node 'choose' (If): input 'cond' is a int64 tensor"),
            std::string::npos)
      << message;
}

// A Loop whose body doubles v and emits v as a scan output, run with trip count M and an
// initial condition: the iterations the NumPy loop makes.
const char* kDoublingLoop = R"(
body = oh.make_graph(
    [oh.make_node('Add', ['v_in', 'v_in'], ['v_out']),
     oh.make_node('Identity', ['v_in'], ['scan']),
     oh.make_node('Identity', ['cond_in'], ['cond_out'])], 'body',
    [oh.make_tensor_value_info('i', TP.INT64, []), oh.make_tensor_value_info('cond_in', TP.BOOL, []),
     oh.make_tensor_value_info('v_in', TP.FLOAT, [2])],
    [oh.make_tensor_value_info('cond_out', TP.BOOL, []),
     oh.make_tensor_value_info('v_out', TP.FLOAT, [2]),
     oh.make_tensor_value_info('scan', TP.FLOAT, [2])])
g = oh.make_graph([oh.make_node('Loop', ['M', 'cond', 'v'], ['v_final', 'scans'], body=body)],
    'g', [oh.make_tensor_value_info('M', TP.INT64, []), oh.make_tensor_value_info('cond', TP.BOOL, []),
          oh.make_tensor_value_info('v', TP.FLOAT, [2])],
    [oh.make_tensor_value_info('v_final', TP.FLOAT, [2]),
     oh.make_tensor_value_info('scans', TP.FLOAT, [None, 2])])
save_model(oh.make_model(g, opset_imports=[oh.make_opsetid('', 16)]))
v0 = rng.randn(2).astype(np.float32)
save('v0', v0)
for M in [0, 3]:
    v, scans = v0.copy(), []
    for i in range(M):
        scans.append(v)
        v = v + v
    save(f'v_{M}', v)
    save(f'scans_{M}', np.array(scans, dtype=np.float32).reshape(len(scans), 2))
)";

TEST(ControlFlow, LoopWithTripCountZeroReturnsTheInitialValuesAndEmptyScans) {
  PythonModel m = python_model(kDoublingLoop);
  auto out = m.run(
      {{"M", Tensor::scalar<int64_t>(0)}, {"cond", bool_scalar(true)}, {"v", m.tensor("v0")}});
  EXPECT_TRUE(values_equal(out.at(0).value, m.tensor("v_0")));
  EXPECT_TRUE(values_equal(out.at(1).value, m.tensor("scans_0")));  // float32 of shape (0, 2)
  // A false initial condition runs no iteration either.
  out = m.run(
      {{"M", Tensor::scalar<int64_t>(3)}, {"cond", bool_scalar(false)}, {"v", m.tensor("v0")}});
  EXPECT_TRUE(values_equal(out.at(0).value, m.tensor("v_0")));
  EXPECT_TRUE(values_equal(out.at(1).value, m.tensor("scans_0")));
  out = m.run(
      {{"M", Tensor::scalar<int64_t>(3)}, {"cond", bool_scalar(true)}, {"v", m.tensor("v0")}});
  EXPECT_TRUE(values_equal(out.at(0).value, m.tensor("v_3")));
  EXPECT_TRUE(values_equal(out.at(1).value, m.tensor("scans_3")));
}

TEST(ControlFlow, LoopWithoutTripCountStopsWhenTheBodySaysSo) {
  // while (sum < limit) { sum += i; collect i }: the body's condition ends the loop.
  PythonModel m = python_model(R"(
body = oh.make_graph(
    [oh.make_node('Add', ['s_in', 'i'], ['s_out']),
     oh.make_node('Less', ['s_out', 'limit'], ['keep_going']),
     oh.make_node('Identity', ['i'], ['seen'])], 'body',
    [oh.make_tensor_value_info('i', TP.INT64, []), oh.make_tensor_value_info('c', TP.BOOL, []),
     oh.make_tensor_value_info('s_in', TP.INT64, [])],
    [oh.make_tensor_value_info('keep_going', TP.BOOL, []),
     oh.make_tensor_value_info('s_out', TP.INT64, []),
     oh.make_tensor_value_info('seen', TP.INT64, [])])
g = oh.make_graph([oh.make_node('Loop', ['', 'start', 's'], ['s_final', 'seen_all'], body=body)],
    'g', [oh.make_tensor_value_info('start', TP.BOOL, []), oh.make_tensor_value_info('s', TP.INT64, []),
          oh.make_tensor_value_info('limit', TP.INT64, [])],
    [oh.make_tensor_value_info('s_final', TP.INT64, []),
     oh.make_tensor_value_info('seen_all', TP.INT64, [None])])
save_model(oh.make_model(g, opset_imports=[oh.make_opsetid('', 13)]))
s, i, seen = 0, 0, []
while True:
    s += i
    seen.append(i)
    i += 1
    if not s < 20: break
save('s_final', np.array(s, dtype=np.int64))
save('seen', np.array(seen, dtype=np.int64))
)");
  auto out = m.run({{"start", bool_scalar(true)},
                    {"s", Tensor::scalar<int64_t>(0)},
                    {"limit", Tensor::scalar<int64_t>(20)}});
  EXPECT_TRUE(values_equal(out.at(0).value, m.tensor("s_final")));
  EXPECT_TRUE(values_equal(out.at(1).value, m.tensor("seen")));
}

TEST(ControlFlow, LoopRefusesABodyWithTheWrongNumberOfValues) {
  PythonModel m = python_model(R"(
body = oh.make_graph([oh.make_node('Identity', ['c'], ['c2'])], 'body',
    [oh.make_tensor_value_info('i', TP.INT64, []), oh.make_tensor_value_info('c', TP.BOOL, [])],
    [oh.make_tensor_value_info('c2', TP.BOOL, [])])
g = oh.make_graph([oh.make_node('Loop', ['M', '', 'v'], ['v_final'], name='loop', body=body)], 'g',
    [oh.make_tensor_value_info('M', TP.INT64, []), oh.make_tensor_value_info('v', TP.FLOAT, [2])],
    [oh.make_tensor_value_info('v_final', TP.FLOAT, [2])])
save_model(oh.make_model(g, opset_imports=[oh.make_opsetid('', 16)]))
)");
  std::string message = error_of([&] { ref::Executor executor(m.model); });
  EXPECT_NE(message.find("failed to prepare node 'loop' (Loop): body 'body' takes 2 inputs and "
                         "returns 1 outputs; this node needs 3 and 2"),
            std::string::npos)
      << message;
}

TEST(ControlFlow, ScanAlongOtherAxesInBothDirections) {
  // Scan 16: x scanned along axis 1 backwards, y forwards along axis 0; the two scan outputs
  // are stacked along axis 1 by prepending, and along axis -1 (the last) by appending.
  PythonModel m = python_model(R"(
x = rng.randn(2, 4, 3).astype(np.float32)
y = rng.randn(4, 3).astype(np.float32)
s0 = rng.randn(2, 3).astype(np.float32)
for name, a in [('x', x), ('y', y), ('s0', s0)]: save(name, a)
body = oh.make_graph(
    [oh.make_node('Add', ['s_in', 'x_t'], ['a']), oh.make_node('Mul', ['a', 'y_t'], ['s_out']),
     oh.make_node('Sub', ['s_out', 'x_t'], ['o1']), oh.make_node('Identity', ['a'], ['o2'])], 'body',
    [oh.make_tensor_value_info(n, TP.FLOAT, s) for n, s in
     [('s_in', [2, 3]), ('x_t', [2, 3]), ('y_t', [3])]],
    [oh.make_tensor_value_info(n, TP.FLOAT, [2, 3]) for n in ['s_out', 'o1', 'o2']])
node = oh.make_node('Scan', ['s0', 'x', 'y'], ['s', 'out1', 'out2'], body=body, num_scan_inputs=2,
                    scan_input_axes=[1, 0], scan_input_directions=[1, 0],
                    scan_output_axes=[1, -1], scan_output_directions=[1, 0])
g = oh.make_graph([node], 'g',
    [oh.make_tensor_value_info(n, TP.FLOAT, a.shape) for n, a in [('s0', s0), ('x', x), ('y', y)]],
    [oh.make_tensor_value_info(n, TP.FLOAT, None) for n in ['s', 'out1', 'out2']])
save_model(oh.make_model(g, opset_imports=[oh.make_opsetid('', 16)]))
s, o1, o2 = s0.copy(), [], []
for t in range(4):
    x_t, y_t = x[:, 3 - t, :], y[t]
    a = s + x_t
    s = a * y_t
    o1.insert(0, s - x_t)
    o2.append(a)
save('s', s)
save('out1', np.stack(o1, axis=1))
save('out2', np.stack(o2, axis=-1))
)");
  auto out = m.run({{"s0", m.tensor("s0")}, {"x", m.tensor("x")}, {"y", m.tensor("y")}});
  EXPECT_TRUE(values_equal(out.at(0).value, m.tensor("s")));
  EXPECT_TRUE(values_equal(out.at(1).value, m.tensor("out1")));
  EXPECT_TRUE(values_equal(out.at(2).value, m.tensor("out2")));
}

TEST(ControlFlow, Scan8RunsEachBatchEntryForItsOwnLength) {
  // Batch entries of lengths 3 and 1 (of 3), the second scan input reversed within each
  // entry's length; scan outputs past an entry's length are zeros.
  PythonModel m = python_model(R"(
x = rng.randn(2, 3, 2).astype(np.float32)
w = rng.randn(2, 3, 2).astype(np.float32)
s0 = rng.randn(2, 2).astype(np.float32)
lens = np.array([3, 1], dtype=np.int64)
for name, a in [('x', x), ('w', w), ('s0', s0), ('lens', lens)]: save(name, a)
body = oh.make_graph(
    [oh.make_node('Add', ['s_in', 'x_t'], ['b']), oh.make_node('Mul', ['b', 'w_t'], ['s_out']),
     oh.make_node('Identity', ['b'], ['o'])], 'body',
    [oh.make_tensor_value_info(n, TP.FLOAT, [2]) for n in ['s_in', 'x_t', 'w_t']],
    [oh.make_tensor_value_info(n, TP.FLOAT, [2]) for n in ['s_out', 'o']])
node = oh.make_node('Scan', ['lens', 's0', 'x', 'w'], ['s', 'o_all'], body=body,
                    num_scan_inputs=2, directions=[0, 1])
g = oh.make_graph([node], 'g',
    [oh.make_tensor_value_info('lens', TP.INT64, [2])] +
    [oh.make_tensor_value_info(n, TP.FLOAT, a.shape) for n, a in [('s0', s0), ('x', x), ('w', w)]],
    [oh.make_tensor_value_info(n, TP.FLOAT, None) for n in ['s', 'o_all']])
save_model(oh.make_model(g, opset_imports=[oh.make_opsetid('', 8)]))
s_all, o_all = np.zeros_like(s0), np.zeros((2, 3, 2), dtype=np.float32)
for b in range(2):
    s, n = s0[b].copy(), lens[b]
    for t in range(n):
        v = s + x[b, t]
        s = v * w[b, n - 1 - t]
        o_all[b, t] = v
    s_all[b] = s
save('s', s_all)
save('o_all', o_all)
)");
  auto out = m.run({{"lens", m.tensor("lens")},
                    {"s0", m.tensor("s0")},
                    {"x", m.tensor("x")},
                    {"w", m.tensor("w")}});
  EXPECT_TRUE(values_equal(out.at(0).value, m.tensor("s")));
  EXPECT_TRUE(values_equal(out.at(1).value, m.tensor("o_all")));
}

TEST(ControlFlow, SequenceMapOverTwoSequencesAndATensor) {
  // Items of different shapes; the body sees the i-th item of each sequence and the tensor.
  PythonModel m = python_model(R"(
a = [rng.randn(n, 2).astype(np.float32) for n in [1, 3, 2]]
b = [rng.randn(n, 2).astype(np.float32) for n in [1, 3, 2]]
c = rng.randn(2).astype(np.float32)
save_seq('a', a); save_seq('b', b); save('c', c)
body = oh.make_graph(
    [oh.make_node('Mul', ['ai', 'bi'], ['p']), oh.make_node('Add', ['p', 'ci'], ['r']),
     oh.make_node('Shape', ['ai'], ['shape'])], 'body',
    [oh.make_tensor_value_info('ai', TP.FLOAT, ['N', 2]), oh.make_tensor_value_info('bi', TP.FLOAT, ['N', 2]),
     oh.make_tensor_value_info('ci', TP.FLOAT, [2])],
    [oh.make_tensor_value_info('r', TP.FLOAT, ['N', 2]), oh.make_tensor_value_info('shape', TP.INT64, [2])])
seq = lambda n, t: oh.make_tensor_sequence_value_info(n, t, None)
g = oh.make_graph([oh.make_node('SequenceMap', ['a', 'b', 'c'], ['r', 'shapes'], body=body)], 'g',
    [seq('a', TP.FLOAT), seq('b', TP.FLOAT), oh.make_tensor_value_info('c', TP.FLOAT, [2])],
    [seq('r', TP.FLOAT), seq('shapes', TP.INT64)])
save_model(oh.make_model(g, opset_imports=[oh.make_opsetid('', 17)]))
save_seq('r', [x * y + c for x, y in zip(a, b)])
save_seq('shapes', [np.array(x.shape, dtype=np.int64) for x in a])
)");
  auto out = m.run({{"a", m.sequence("a")}, {"b", m.sequence("b")}, {"c", m.tensor("c")}});
  EXPECT_TRUE(values_equal(out.at(0).value, m.sequence("r")));
  EXPECT_TRUE(values_equal(out.at(1).value, m.sequence("shapes")));
  EXPECT_EQ(out.at(1).value.elem_type, DataType::kInt64);

  // Sequences of different lengths are refused; empty ones give empty, typed outputs.
  Value short_b = m.sequence("b");
  short_b.sequence.pop_back();
  std::string message = error_of([&] {
    m.run({{"a", m.sequence("a")}, {"b", short_b}, {"c", m.tensor("c")}});
  });
  EXPECT_NE(message.find("input 1 is a sequence of 2 tensors; every sequence input must have 3"),
            std::string::npos)
      << message;
  Value empty = Value::make_sequence({}, DataType::kFloat32);
  out = m.run({{"a", empty}, {"b", empty}, {"c", m.tensor("c")}});
  EXPECT_TRUE(values_equal(out.at(0).value, Value::make_sequence({}, DataType::kFloat32)));
  EXPECT_EQ(out.at(1).value.elem_type, DataType::kInt64);
}

}  // namespace
}  // namespace parity::testing
