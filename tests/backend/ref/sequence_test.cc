// Sequence, optional and constant kernels beyond the ONNX node tests: SplitToSequence and
// ConcatFromSequence in all their modes, positions (negative, default, out of range), type
// checks, opset-18 optionals, every attribute form of Constant and ConstantOfShape's rules.
// Expected values come from NumPy in the script that builds the model.
#include <gtest/gtest.h>

#include "python_model.h"

namespace parity::testing {
namespace {

TEST(Sequence, SplitToSequenceInEveryMode) {
  // No split (keepdims 1 and 0), a scalar split with a shorter last piece, a 1-D split.
  PythonModel m = python_model(R"(
x = rng.randn(3, 5, 2).astype(np.float32)
save('x', x)
seq = lambda n: oh.make_tensor_sequence_value_info(n, TP.FLOAT, None)
nodes = [oh.make_node('SplitToSequence', ['x'], ['keep'], axis=1),
         oh.make_node('SplitToSequence', ['x'], ['drop'], axis=-2, keepdims=0),
         oh.make_node('SplitToSequence', ['x', 'two'], ['chunks'], axis=1),
         oh.make_node('SplitToSequence', ['x', 'sizes'], ['parts'], axis=0, keepdims=0)]
g = oh.make_graph(nodes, 'g',
    [oh.make_tensor_value_info('x', TP.FLOAT, [3, 5, 2]), oh.make_tensor_value_info('two', TP.INT64, []),
     oh.make_tensor_value_info('sizes', TP.INT32, [2])],
    [seq(n) for n in ['keep', 'drop', 'chunks', 'parts']])
save_model(oh.make_model(g, opset_imports=[oh.make_opsetid('', 11)]))
save_seq('keep', np.split(x, 5, axis=1))
save_seq('drop', [x[:, i, :] for i in range(5)])
save_seq('chunks', [x[:, 0:2], x[:, 2:4], x[:, 4:5]])
save_seq('parts', np.split(x, [1], axis=0))   # sizes [1, 2]; keepdims is ignored with a split
)");
  auto out = m.run({{"x", m.tensor("x")},
                    {"two", Tensor::scalar<int64_t>(2)},
                    {"sizes", Tensor::from_vector<int32_t>({2}, {1, 2})}});
  for (size_t i = 0; i < 4; ++i)
    EXPECT_TRUE(values_equal(out.at(i).value, m.sequence(out.at(i).name))) << out.at(i).name;

  std::string message = error_of([&] {
    m.run({{"x", m.tensor("x")},
           {"two", Tensor::scalar<int64_t>(2)},
           {"sizes", Tensor::from_vector<int32_t>({2}, {1, 3})}});
  });
  EXPECT_NE(message.find("input 'split' [1, 3] adds up to 4; it must add up to the split axis' "
                         "size 3"),
            std::string::npos)
      << message;
}

TEST(Sequence, ConcatFromSequenceJoinsOrStacks) {
  PythonModel m = python_model(R"(
items = [rng.randn(2, n).astype(np.float32) for n in [1, 3, 2]]
same = [rng.randn(2, 3).astype(np.float32) for _ in range(3)]
save_seq('items', items); save_seq('same', same)
seq = lambda n: oh.make_tensor_sequence_value_info(n, TP.FLOAT, None)
nodes = [oh.make_node('ConcatFromSequence', ['items'], ['joined'], axis=-1),
         oh.make_node('ConcatFromSequence', ['same'], ['stacked'], axis=1, new_axis=1),
         oh.make_node('ConcatFromSequence', ['same'], ['stacked_last'], axis=-1, new_axis=1)]
g = oh.make_graph(nodes, 'g', [seq('items'), seq('same')],
    [oh.make_tensor_value_info(n, TP.FLOAT, None) for n in ['joined', 'stacked', 'stacked_last']])
save_model(oh.make_model(g, opset_imports=[oh.make_opsetid('', 11)]))
save('joined', np.concatenate(items, axis=-1))
save('stacked', np.stack(same, axis=1))
save('stacked_last', np.stack(same, axis=-1))
)");
  auto out = m.run({{"items", m.sequence("items")}, {"same", m.sequence("same")}});
  EXPECT_TRUE(values_equal(out.at(0).value, m.tensor("joined")));
  EXPECT_TRUE(values_equal(out.at(1).value, m.tensor("stacked")));
  EXPECT_TRUE(values_equal(out.at(2).value, m.tensor("stacked_last")));

  // Stacking needs equal shapes; an empty sequence has nothing to join.
  std::string message = error_of([&] {
    m.run({{"items", m.sequence("items")}, {"same", m.sequence("items")}});
  });
  EXPECT_NE(message.find("every item must have the first item's shape (2, 1)"), std::string::npos)
      << message;
  Value empty = Value::make_sequence({}, DataType::kFloat32);
  message = error_of([&] { m.run({{"items", empty}, {"same", m.sequence("same")}}); });
  EXPECT_NE(message.find("the input sequence is empty"), std::string::npos) << message;
}

// A graph applying SequenceInsert / SequenceErase / SequenceAt / SequenceLength at a position.
const char* kPositions = R"(
s = [rng.randn(n).astype(np.float32) for n in [1, 2, 3]]
t = rng.randn(4).astype(np.float32)
save_seq('s', s); save('t', t)
seq = lambda n: oh.make_tensor_sequence_value_info(n, TP.FLOAT, None)
nodes = [oh.make_node('SequenceInsert', ['s', 't', 'p'], ['inserted']),
         oh.make_node('SequenceInsert', ['s', 't'], ['appended']),
         oh.make_node('SequenceErase', ['s', 'p'], ['erased']),
         oh.make_node('SequenceErase', ['s'], ['erased_last']),
         oh.make_node('SequenceAt', ['s', 'p'], ['at']),
         oh.make_node('SequenceLength', ['inserted'], ['length'])]
g = oh.make_graph(nodes, 'g',
    [seq('s'), oh.make_tensor_value_info('t', TP.FLOAT, [4]), oh.make_tensor_value_info('p', TP.INT64, [])],
    [seq('inserted'), seq('appended'), seq('erased'), seq('erased_last'),
     oh.make_tensor_value_info('at', TP.FLOAT, None), oh.make_tensor_value_info('length', TP.INT64, [])])
save_model(oh.make_model(g, opset_imports=[oh.make_opsetid('', 11)]))
for p in [-1, 0, 2]:
    ins = list(s); ins.insert(p if p >= 0 else p + len(s), t)
    er = list(s); del er[p]
    save_seq(f'inserted_{p}', ins); save_seq(f'erased_{p}', er); save(f'at_{p}', s[p])
    save(f'length_{p}', np.array(len(ins), dtype=np.int64))
save_seq('appended', s + [t]); save_seq('erased_last', s[:-1])
)";

TEST(Sequence, PositionsCountFromEitherEndAndDefaultToTheEnd) {
  PythonModel m = python_model(kPositions);
  for (int64_t p : {-1, 0, 2}) {
    auto out = m.run({{"s", m.sequence("s")}, {"t", m.tensor("t")}, {"p", Tensor::scalar(p)}});
    EXPECT_TRUE(values_equal(out.at(0).value, m.sequence(fmt::format("inserted_{}", p)))) << p;
    EXPECT_TRUE(values_equal(out.at(1).value, m.sequence("appended"))) << p;
    EXPECT_TRUE(values_equal(out.at(2).value, m.sequence(fmt::format("erased_{}", p)))) << p;
    EXPECT_TRUE(values_equal(out.at(3).value, m.sequence("erased_last"))) << p;
    EXPECT_TRUE(values_equal(out.at(4).value, m.tensor(fmt::format("at_{}", p)))) << p;
    EXPECT_TRUE(values_equal(out.at(5).value, m.tensor(fmt::format("length_{}", p)))) << p;
  }
}

TEST(Sequence, RefusesPositionsOutsideTheSequenceAndMixedTypes) {
  PythonModel m = python_model(kPositions);
  std::string message = error_of([&] {
    m.run({{"s", m.sequence("s")}, {"t", m.tensor("t")}, {"p", Tensor::scalar<int64_t>(3)}});
  });
  // SequenceInsert accepts 3 (the end); SequenceErase is the first to refuse it.
  EXPECT_NE(message.find("(SequenceErase): position 3 is out of range for a sequence of 3 tensors; "
                         "it must be in [-3, 2]"),
            std::string::npos)
      << message;
  message = error_of([&] {
    m.run({{"s", m.sequence("s")},
           {"t", Tensor::from_vector<int64_t>({1}, {1})},
           {"p", Tensor::scalar<int64_t>(0)}});
  });
  EXPECT_NE(message.find("input 'tensor' has element type int64; it must match the sequence's "
                         "float32"),
            std::string::npos)
      << message;
}

TEST(Sequence, SequenceEmptyAndConstructKeepTheirElementType) {
  PythonModel m = python_model(R"(
a = rng.randint(0, 9, size=(2,)).astype(np.int32)
b = rng.randint(0, 9, size=(3,)).astype(np.int32)
save('a', a); save('b', b)
nodes = [oh.make_node('SequenceEmpty', [], ['e'], dtype=TP.INT32),
         oh.make_node('SequenceInsert', ['e', 'a'], ['e1']),
         oh.make_node('SequenceConstruct', ['a', 'b'], ['ab']),
         oh.make_node('SequenceLength', ['e'], ['n'])]
g = oh.make_graph(nodes, 'g', [oh.make_tensor_value_info(n, TP.INT32, None) for n in 'ab'],
    [oh.make_tensor_sequence_value_info(n, TP.INT32, None) for n in ['e', 'e1', 'ab']] +
    [oh.make_tensor_value_info('n', TP.INT64, [])])
save_model(oh.make_model(g, opset_imports=[oh.make_opsetid('', 11)]))
save_seq('e1', [a]); save_seq('ab', [a, b]); save('n', np.array(0, dtype=np.int64))
)");
  auto out = m.run({{"a", m.tensor("a")}, {"b", m.tensor("b")}});
  EXPECT_TRUE(values_equal(out.at(0).value, Value::make_sequence({}, DataType::kInt32)));
  EXPECT_EQ(out.at(0).value.elem_type, DataType::kInt32);
  EXPECT_TRUE(values_equal(out.at(1).value, m.sequence("e1")));
  EXPECT_TRUE(values_equal(out.at(2).value, m.sequence("ab")));
  EXPECT_TRUE(values_equal(out.at(3).value, m.tensor("n")));
  std::string message = error_of([&] {
    m.run({{"a", m.tensor("a")}, {"b", Tensor::from_vector<float>({1}, {1})}});
  });
  EXPECT_NE(message.find("input 1 has element type float32; every input must have the first "
                         "one's type int32"),
            std::string::npos)
      << message;
}

TEST(Optional, Opset18AcceptsAbsentInputsAndPlainValues) {
  // OptionalHasElement-18 with no input is false; OptionalGetElement-18 passes a tensor on.
  PythonModel m = python_model(R"(
x = rng.randn(3).astype(np.float32)
save('x', x)
nodes = [oh.make_node('OptionalHasElement', [], ['has_none']),
         oh.make_node('OptionalHasElement', ['x'], ['has_x']),
         oh.make_node('OptionalGetElement', ['x'], ['got'])]
g = oh.make_graph(nodes, 'g', [oh.make_tensor_value_info('x', TP.FLOAT, [3])],
    [oh.make_tensor_value_info('has_none', TP.BOOL, []), oh.make_tensor_value_info('has_x', TP.BOOL, []),
     oh.make_tensor_value_info('got', TP.FLOAT, [3])])
save_model(oh.make_model(g, opset_imports=[oh.make_opsetid('', 18)]))
save('false', np.array(False)); save('true', np.array(True))
)");
  auto out = m.run({{"x", m.tensor("x")}});
  EXPECT_TRUE(values_equal(out.at(0).value, m.tensor("false")));
  EXPECT_TRUE(values_equal(out.at(1).value, m.tensor("true")));
  EXPECT_TRUE(values_equal(out.at(2).value, m.tensor("x")));
}

TEST(Optional, EmptyOptionalsFlowAndGettingFromOneFails) {
  PythonModel m = python_model(R"(
opt = oh.make_optional_type_proto(oh.make_tensor_type_proto(TP.FLOAT, [2]))
nodes = [oh.make_node('Optional', [], ['empty'], type=oh.make_tensor_type_proto(TP.FLOAT, [2])),
         oh.make_node('OptionalHasElement', ['empty'], ['has']),
         oh.make_node('OptionalGetElement', ['empty'], ['got'], name='get')]
g = oh.make_graph(nodes, 'g', [],
    [oh.make_tensor_value_info('has', TP.BOOL, []), oh.make_tensor_value_info('got', TP.FLOAT, [2])])
save_model(oh.make_model(g, opset_imports=[oh.make_opsetid('', 15)]))
)");
  std::string message = error_of([&] { m.run({}); });
  EXPECT_NE(message.find("failed to run node 'get' (OptionalGetElement): input 'input' is an "
                         "empty optional"),
            std::string::npos)
      << message;
}

TEST(Constant, EveryAttributeFormAtTheOpsetsThatAllowIt) {
  PythonModel m = python_model(R"(
dense = rng.randn(2, 3).astype(np.float32)
save('value', dense)
sparse = oh.make_sparse_tensor(oh.make_tensor('v', TP.FLOAT, [2], [5.5, -1.25]),
                               oh.make_tensor('i', TP.INT64, [2], [1, 4]), [2, 3])
forms = [('value', oh.make_tensor('t', TP.FLOAT, dense.shape, dense.flatten())),
         ('sparse_value', sparse), ('value_float', 2.5), ('value_floats', [1.5, -2.0]),
         ('value_int', -7), ('value_ints', [3, 1, 4]), ('value_string', 'abc'),
         ('value_strings', ['x', '', 'yz'])]
nodes = [oh.make_node('Constant', [], [name], **{name: v}) for name, v in forms]
g = oh.make_graph(nodes, 'g', [], [oh.make_tensor_value_info(name, TP.UNDEFINED, None)
                                   for name, _ in forms])
save_model(oh.make_model(g, opset_imports=[oh.make_opsetid('', 13)]))
s = np.zeros(6, dtype=np.float32); s[[1, 4]] = [5.5, -1.25]
save('sparse_value', s.reshape(2, 3))
save('value_float', np.array(2.5, dtype=np.float32))
save('value_floats', np.array([1.5, -2.0], dtype=np.float32))
save('value_int', np.array(-7, dtype=np.int64))
save('value_ints', np.array([3, 1, 4], dtype=np.int64))
)");
  auto out = m.run({});
  for (size_t i = 0; i < 6; ++i)
    EXPECT_TRUE(values_equal(out.at(i).value, m.tensor(out.at(i).name))) << out.at(i).name;
  EXPECT_TRUE(values_equal(out.at(6).value, Tensor::scalar<std::string>("abc")));
  EXPECT_TRUE(
      values_equal(out.at(7).value, Tensor::from_vector<std::string>({3}, {"x", "", "yz"})));
}

TEST(Constant, RefusesFormsItsOpsetDoesNotHaveAndAmbiguousNodes) {
  PythonModel m = python_model(R"(
g = oh.make_graph([oh.make_node('Constant', [], ['c'], name='k', value_float=1.0)], 'g', [],
                  [oh.make_tensor_value_info('c', TP.FLOAT, [])])
save_model(oh.make_model(g, opset_imports=[oh.make_opsetid('', 11)]))
)");
  std::string message = error_of([&] { ref::Executor executor(m.model); });
  EXPECT_NE(message.find("failed to prepare node 'k' (Constant): attribute 'value_float' is not "
                         "allowed at opset 11: it exists from opset 12; valid attributes: "
                         "[value, sparse_value]"),
            std::string::npos)
      << message;

  PythonModel two = python_model(R"(
g = oh.make_graph([oh.make_node('Constant', [], ['c'], name='k', value_int=1, value_ints=[2])],
                  'g', [], [oh.make_tensor_value_info('c', TP.INT64, None)])
save_model(oh.make_model(g, opset_imports=[oh.make_opsetid('', 13)]))
)");
  message = error_of([&] { ref::Executor executor(two.model); });
  EXPECT_NE(message.find("attributes 'value_int' and 'value_ints' are both set"), std::string::npos)
      << message;
}

TEST(Constant, ConstantOfShapeFillsEveryShapeWithItsValue) {
  PythonModel m = python_model(R"(
nodes = [oh.make_node('ConstantOfShape', ['shape'], ['zeros']),
         oh.make_node('ConstantOfShape', ['shape'], ['sevens'],
                      value=oh.make_tensor('v', TP.INT32, [1], [7])),
         oh.make_node('ConstantOfShape', ['shape'], ['halves'],
                      value=oh.make_tensor('v', TP.FLOAT16, [1], [0.5]))]
g = oh.make_graph(nodes, 'g', [oh.make_tensor_value_info('shape', TP.INT64, [None])],
    [oh.make_tensor_value_info(n, TP.UNDEFINED, None) for n in ['zeros', 'sevens', 'halves']])
save_model(oh.make_model(g, opset_imports=[oh.make_opsetid('', 9)]))
for name, shape in [('a', (2, 3)), ('scalar', ()), ('empty', (4, 0))]:
    save(f'zeros_{name}', np.zeros(shape, dtype=np.float32))
    save(f'sevens_{name}', np.full(shape, 7, dtype=np.int32))
    save(f'halves_{name}', np.full(shape, 0.5, dtype=np.float16))
)");
  struct Case {
    const char* name;
    Shape shape;
  };
  for (const Case& c : {Case{"a", {2, 3}}, Case{"scalar", {}}, Case{"empty", {4, 0}}}) {
    Tensor shape = Tensor::from_vector<int64_t>({static_cast<int64_t>(c.shape.size())}, c.shape);
    auto out = m.run({{"shape", shape}});
    for (size_t i = 0; i < 3; ++i)
      EXPECT_TRUE(values_equal(out.at(i).value, m.tensor(out.at(i).name + "_" + c.name)))
          << out.at(i).name << " " << c.name;
  }
  std::string message = error_of([&] {
    m.run({{"shape", Tensor::from_vector<int64_t>({2}, {2, -1})}});
  });
  EXPECT_NE(message.find("failed to make a tensor of shape [2, -1]: dims must be 0 or more"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace parity::testing
