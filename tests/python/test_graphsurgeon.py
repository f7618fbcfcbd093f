"""parity.graphsurgeon: ONNX-GraphSurgeon's examples ported by changing the import, checked
against what the real GraphSurgeon exports (fixtures/graphsurgeon/examples.json, made by
fixtures/graphsurgeon/make_fixtures.py), with onnx.checker, and by running the exported
models on Parity's runners against NumPy."""
import json
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import graphsurgeon_examples as examples
import parity.graphsurgeon as gs
from parity import ParityException
from parity.backend.onnxrt import OnnxrtRunner, SessionFromOnnx
from parity.backend.pluginref import PluginRefRunner

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "graphsurgeon", "examples.json")


def run(model, feed):
    with PluginRefRunner(model) as runner:
        return runner.infer(feed)


def run_onnxrt(model, feed):
    # For models with local functions, which the reference backend does not run.
    with OnnxrtRunner(SessionFromOnnx(model)) as runner:
        return runner.infer(feed)


def rand(*shape, seed=0):
    return np.random.RandomState(seed).uniform(-2, 2, shape).astype(np.float32)


@pytest.mark.parametrize("name", sorted(examples.EXAMPLES) + sorted(examples.FOLD_CASES))
def test_example_exports_what_onnx_graphsurgeon_exports(name):
    # Folding cases: the fixture holds what the real GraphSurgeon's fold_constants() decided
    # (its evaluations done by the reference backend, make_fixtures.py); values are checked
    # against NumPy in the tests below.
    with open(FIXTURES) as f:
        expected = json.load(f)["examples"][name]
    models = {**examples.EXAMPLES, **examples.FOLD_CASES}[name](gs)
    assert sorted(models) == sorted(expected)
    for saved, model in models.items():
        # JSON turns tuples into lists: compare the same way.
        assert json.loads(json.dumps(examples.summary(model))) == expected[saved], saved
        if not any(n.op_type == "FakeNodeToRemove" for n in model.graph.node):
            onnx.checker.check_model(model)


def test_isolated_subgraph_computes_its_part():
    models = examples.ex03_isolating_a_subgraph(gs)
    sub = models["subgraph"]
    assert [n.op_type for n in sub.graph.node] == ["Mul", "Add"]
    assert [i.name for i in sub.graph.input] == ["x1"]
    # to_variable() without a shape declares a scalar, in GraphSurgeon as here.
    assert len(sub.graph.input[0].type.tensor_type.shape.dim) == 0
    x1 = np.array(0.75, np.float32)
    np.testing.assert_array_equal(run(sub, {"x1": x1})["add_out"],
                                  np.full((1, 3, 4, 4), 2 * 0.75 + 3, np.float32))


def test_modified_model_computes_the_new_graph():
    modified = examples.ex04_modifying_a_model(gs)["modified"]
    x1 = rand(1, 3, 4, 4)
    mul = np.float32(2) * x1
    expected = np.where(mul >= 0, mul, mul * np.float32(0.02))
    got = run(modified, {"x1": x1})["identity_out"]
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_folding_evaluates_constants_exactly_on_the_reference_backend():
    models = examples.ex05_folding_constants(gs)
    folded = models["folded"]
    onnx.checker.check_model(folded)
    assert [n.op_type for n in folded.graph.node] == ["Add"]
    (e,) = folded.graph.initializer
    assert e.name == "e"
    expected_e = (np.full((1, 3), 1.5, np.float32) + np.float32(2.25)) + np.arange(
        3, dtype=np.float32).reshape(1, 3)
    np.testing.assert_array_equal(numpy_helper.to_array(e), expected_e)
    x = rand(1, 3)
    np.testing.assert_array_equal(run(folded, {"input": x})["output"],
                                  run(models["model"], {"input": x})["output"])


def test_removed_node_leaves_a_runnable_model():
    removed = examples.ex06_removing_nodes(gs)["removed"]
    onnx.checker.check_model(removed)
    assert [n.op_type for n in removed.graph.node] == ["Identity", "Identity"]
    x = rand(1, 3, 4, 4)
    np.testing.assert_array_equal(run(removed, {"x": x})["y"], x)


def test_layer_api_model_computes_gemm_relu_mul_add():
    model = examples.ex07_layer_api(gs)["model"]
    x = rand(8, 8)
    a = np.arange(64, dtype=np.float32).reshape(8, 8) / 64
    expected = np.maximum(a.astype(np.float64) @ x.T.astype(np.float64) - 0.5, 0) * 3 + 1
    (out,) = run(model, {"X": x}).values()
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_replaced_subgraph_is_a_clip():
    models = examples.ex08_replacing_a_subgraph(gs)
    replaced = models["replaced"]
    assert [n.op_type for n in replaced.graph.node] == ["Identity", "Clip", "Identity"]
    x = rand(4, 4) * 5
    (out,) = run(replaced, {"input": x}).values()
    np.testing.assert_array_equal(out, np.clip(x, 0, 6))
    (before,) = run(models["model"], {"input": x}).values()
    np.testing.assert_array_equal(out, before)


def test_shape_operations_flatten_dynamic_input():
    model = examples.ex09_shape_operations(gs)["model"]
    data = rand(2, 3, 4, 5)
    out = run(model, {"data": data})
    np.testing.assert_array_equal(out["flattened"], data.reshape(-1))
    np.testing.assert_array_equal(out["partially_flattened"], data.reshape(2, 3, 20))


def test_dynamic_batch_model_matches_onnxruntime():
    dynamic = examples.ex10_dynamic_batch_size(gs)["dynamic"]
    onnx.checker.check_model(dynamic)
    assert dynamic.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "N"
    x = rand(3, 3, 6, 6)
    ref = run(dynamic, {"input_1": x})
    with OnnxrtRunner(SessionFromOnnx(dynamic)) as runner:
        ort = runner.infer({"input_1": x})
    (name,) = ref
    assert ref[name].shape == (3, 10)
    np.testing.assert_allclose(ref[name], ort[name], rtol=1e-5, atol=1e-5)


# --- The IR's own rules ----------------------------------------------------------------------


def test_node_and_tensor_lists_stay_in_sync():
    a, b, c = gs.Variable("a"), gs.Variable("b"), gs.Variable("c")
    node = gs.Node("Add", inputs=[a, b], outputs=[c])
    assert a.outputs == [node] and c.inputs == [node]
    node.inputs[1] = a
    assert b.outputs == [] and a.outputs == [node, node]
    node.inputs.pop()
    assert a.outputs == [node]
    node.outputs = [b]
    assert c.inputs == [] and b.inputs == [node]
    b.inputs.clear()
    assert node.outputs == []
    c.outputs.append(node)
    assert node.inputs == [a, c]
    del node.inputs[0]
    assert a.outputs == [] and node.inputs == [c]


def test_to_constant_and_to_variable_change_the_tensor_in_place():
    t = gs.Variable("t", dtype=np.float32, shape=[2])
    node = gs.Node("Relu", inputs=[t], outputs=[gs.Variable("u")])
    t.to_constant(np.array([1, 2], np.float32))
    assert isinstance(node.inputs[0], gs.Constant) and node.inputs[0].shape == (2,)
    t.to_variable(dtype=np.float16, shape=["n"])
    assert isinstance(node.inputs[0], gs.Variable)
    assert (t.dtype, t.shape) == (np.float16, ["n"])


def test_toposort_orders_nodes_and_refuses_a_cycle():
    x = gs.Variable("x", np.float32, [1])
    a, b, y = gs.Variable("a"), gs.Variable("b"), gs.Variable("y", np.float32, [1])
    n2 = gs.Node("Neg", name="n2", inputs=[b], outputs=[y])
    n1 = gs.Node("Neg", name="n1", inputs=[a], outputs=[b])
    n0 = gs.Node("Neg", name="n0", inputs=[x], outputs=[a])
    graph = gs.Graph(nodes=[n2, n1, n0], inputs=[x], outputs=[y])
    assert [n.name for n in graph.toposort().nodes] == ["n0", "n1", "n2"]
    n0.inputs = [y]  # y -> n0 -> a -> n1 -> b -> n2 -> y
    with pytest.raises(ParityException, match="cycle"):
        graph.toposort()


def test_cleanup_removes_unused_nodes_and_inputs():
    x, z = gs.Variable("x", np.float32, [2]), gs.Variable("z", np.float32, [2])
    y, unused = gs.Variable("y", np.float32, [2]), gs.Variable("unused", np.float32, [2])
    graph = gs.Graph(nodes=[gs.Node("Relu", inputs=[x], outputs=[y]),
                            gs.Node("Neg", inputs=[z], outputs=[unused])],
                     inputs=[x, z], outputs=[y])
    graph.cleanup()
    assert [n.op for n in graph.nodes] == ["Relu"] and len(graph.inputs) == 2
    graph.cleanup(remove_unused_graph_inputs=True)
    assert [t.name for t in graph.inputs] == ["x"]


def test_copy_is_independent():
    graph = gs.import_onnx(examples.ex05_generate(gs))
    clone = graph.copy()
    clone.nodes[0].op = "Sub"
    clone.tensors()["c"].name = "renamed"
    assert graph.nodes[0].op == "Add" and "c" in graph.tensors()
    assert clone.nodes[1].inputs[0].name == "renamed"


def test_layer_makes_constants_from_lists_and_numbers():
    graph = gs.Graph(opset=17)
    (out,) = graph.layer(op="Add", inputs=[[1, 2], 3.5], outputs=["sum"])
    first, second = graph.nodes[0].inputs
    assert first.values.dtype == np.int64 and second.values.dtype == np.float32
    assert out.name.startswith("sum_") and graph.nodes[0].name.startswith("onnx_graphsurgeon_node")
    with pytest.raises(ParityException, match="unrecognized type dict"):
        graph.layer(op="Relu", inputs=[{}], outputs=["r"])


def test_register_is_per_opset_and_unknown_names_say_what_is_registered():
    @gs.Graph.register(opsets=[13])
    def only_in_13(self):
        return "13"

    assert gs.Graph(opset=13).only_in_13() == "13"
    with pytest.raises(AttributeError, match=r"registered for opsets \[13\]"):
        gs.Graph(opset=11).only_in_13()


def test_export_requires_io_dtypes_unless_told_not_to():
    x, y = gs.Variable("x", np.float32, [1]), gs.Variable("y")
    graph = gs.Graph(nodes=[gs.Node("Relu", inputs=[x], outputs=[y])], inputs=[x], outputs=[y])
    with pytest.raises(ParityException, match="must include dtype information"):
        gs.export_onnx(graph)
    assert gs.export_onnx(graph, do_type_check=False).graph.output[0].name == "y"


# --- Export keeps what it does not change -----------------------------------------------------


def _rich_model():
    """Metadata, doc strings, a local function, value_info, a custom domain, an If subgraph."""
    w = numpy_helper.from_array(np.arange(4, dtype=np.float32).reshape(2, 2), "w")
    then_branch = helper.make_graph(
        [helper.make_node("Add", ["h", "w"], ["then_out"])], "then",
        [], [helper.make_tensor_value_info("then_out", TensorProto.FLOAT, [2, 2])])
    else_branch = helper.make_graph(
        [helper.make_node("Sub", ["h", "w"], ["else_out"])], "else",
        [], [helper.make_tensor_value_info("else_out", TensorProto.FLOAT, [2, 2])])
    square = helper.make_function(
        "local", "Square", ["a"], ["b"], [helper.make_node("Mul", ["a", "a"], ["b"])],
        [helper.make_opsetid("", 17)])
    nodes = [
        helper.make_node("Square", ["x"], ["h"], domain="local", name="square",
                         doc_string="squares x"),
        helper.make_node("Constant", [], ["cond"], value=numpy_helper.from_array(
            np.array(True))),
        helper.make_node("If", ["cond"], ["y"], then_branch=then_branch,
                         else_branch=else_branch, name="if"),
    ]
    graph = helper.make_graph(
        nodes, "rich", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])], initializer=[w],
        value_info=[helper.make_tensor_value_info("h", TensorProto.FLOAT, [2, 2])],
        doc_string="the graph's doc")
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("local", 1)],
                              functions=[square], ir_version=8, doc_string="the model's doc",
                              model_version=7, domain="org.example")
    helper.set_model_props(model, {"author": "parity", "purpose": "round trip"})
    onnx.checker.check_model(model)
    return model


def test_round_trip_keeps_metadata_functions_doc_strings_and_value_info():
    model = _rich_model()
    out = gs.export_onnx(gs.import_onnx(model))
    onnx.checker.check_model(out)
    for field in ("ir_version", "doc_string", "model_version", "domain", "producer_name"):
        assert getattr(out, field) == getattr(model, field), field
    assert {p.key: p.value for p in out.metadata_props} == {"author": "parity",
                                                           "purpose": "round trip"}
    assert list(out.functions) == list(model.functions)
    assert sorted((o.domain, o.version) for o in out.opset_import) == [("", 17), ("local", 1)]
    assert out.graph.doc_string == "the graph's doc"
    assert [n.doc_string for n in out.graph.node] == ["squares x", "", ""]
    assert list(out.graph.value_info) == list(model.graph.value_info)
    assert list(out.graph.node) == list(model.graph.node)  # the If's subgraphs included
    x = rand(2, 2)
    np.testing.assert_array_equal(run_onnxrt(out, {"x": x})["y"],
                                  run_onnxrt(model, {"x": x})["y"])


def test_fold_flattens_an_if_with_a_constant_condition():
    model = _rich_model()
    graph = gs.import_onnx(model)
    graph.fold_constants().cleanup()
    out = gs.export_onnx(graph)
    onnx.checker.check_model(out)
    assert [n.op_type for n in out.graph.node] == ["Square", "Add"]
    x = rand(2, 2)
    expected = x * x + np.arange(4, dtype=np.float32).reshape(2, 2)
    np.testing.assert_array_equal(run_onnxrt(out, {"x": x})["y"], expected)


def test_fold_folds_shapes_of_static_tensors_only():
    x = gs.Variable("x", np.float32, [2, 3, "n"])
    shape, dims, y = gs.Variable("shape"), gs.Variable("dims"), gs.Variable("y", np.int64)
    graph = gs.Graph(opset=17, nodes=[
        gs.Node("Shape", inputs=[x], outputs=[shape]),
        gs.Node("Gather", inputs=[shape, gs.Constant("idx", np.array([1, 0], np.int64))],
                outputs=[dims]),
        gs.Node("Mul", inputs=[dims, gs.Constant("two", np.array([2, 2], np.int64))],
                outputs=[y]),
    ], inputs=[x], outputs=[y])
    graph.fold_constants().cleanup()
    assert graph.nodes == [] and isinstance(graph.outputs[0], gs.Constant)
    np.testing.assert_array_equal(graph.outputs[0].values, [6, 4])
    # With the whole shape asked for, the dynamic dim keeps the Shape node.
    x2 = gs.Variable("x2", np.float32, [2, "n"])
    s2 = gs.Variable("s2", np.int64)
    graph = gs.Graph(opset=17, nodes=[gs.Node("Shape", inputs=[x2], outputs=[s2])],
                     inputs=[x2], outputs=[s2])
    graph.fold_constants()
    assert [n.op for n in graph.nodes] == ["Shape"]


def test_fold_values_are_exact():
    # sqrt(a) / b in float32: each op correctly rounded, as NumPy's float32 ops are.
    a = rand(64) ** 2 + 1
    b = rand(64, seed=1) + 3
    x = gs.Variable("x", np.float32, [64])
    r, q, y = gs.Variable("r"), gs.Variable("q"), gs.Variable("y", np.float32, [64])
    graph = gs.Graph(opset=17, nodes=[
        gs.Node("Sqrt", inputs=[gs.Constant("a", a)], outputs=[r]),
        gs.Node("Div", inputs=[r, gs.Constant("b", b)], outputs=[q]),
        gs.Node("Add", inputs=[x, q], outputs=[y]),
    ], inputs=[x], outputs=[y])
    graph.fold_constants().cleanup()
    assert [n.op for n in graph.nodes] == ["Add"]
    np.testing.assert_array_equal(graph.nodes[0].inputs[1].values, np.sqrt(a) / b)


def _graph_with_a_bad_node():
    """Two constant chains; one goes through an op no backend has."""
    x = gs.Variable("x", np.float32, [2])
    good, bad, s1, y = (gs.Variable("good"), gs.Variable("bad"), gs.Variable("s1"),
                        gs.Variable("y", np.float32, [2]))
    c = gs.Constant("c", np.array([1, 4], np.float32))
    return gs.Graph(opset=17, import_domains=[helper.make_opsetid("", 17),
                                              helper.make_opsetid("nowhere", 1)], nodes=[
        gs.Node("Sqrt", name="good_sqrt", inputs=[c], outputs=[good]),
        gs.Node("NoSuchOp", name="bad_node", domain="nowhere", inputs=[c], outputs=[bad]),
        gs.Node("Add", inputs=[good, bad], outputs=[s1]),
        gs.Node("Add", inputs=[x, s1], outputs=[y]),
    ], inputs=[x], outputs=[y])


def test_fold_keeps_a_node_that_cannot_run_and_names_it(capfd):
    graph = _graph_with_a_bad_node()
    graph.fold_constants()
    captured = capfd.readouterr()
    assert "Inference failed" in captured.out + captured.err
    assert "NoSuchOp" in captured.out + captured.err
    assert [n.name for n in graph.nodes][:2] == ["good_sqrt", "bad_node"]
    assert not isinstance(graph.tensors()["good"], gs.Constant)  # all or nothing without parts
    with pytest.raises(ParityException, match="NoSuchOp"):
        _graph_with_a_bad_node().fold_constants(error_ok=False)


def test_fold_with_partitioning_folds_what_can_run():
    graph = _graph_with_a_bad_node()
    graph.fold_constants(partitioning="recursive")
    tensors = graph.tensors()
    assert isinstance(tensors["good"], gs.Constant)
    np.testing.assert_array_equal(tensors["good"].values, [1, 2])
    assert not isinstance(tensors["bad"], gs.Constant)
    with pytest.raises(ParityException, match="valid choices are"):
        graph.fold_constants(partitioning="everything")


def test_fold_respects_the_size_threshold():
    x = gs.Variable("x", np.float32, [1000])
    big, y = gs.Variable("big"), gs.Variable("y", np.float32, [1000])
    graph = gs.Graph(opset=17, nodes=[
        gs.Node("Neg", inputs=[gs.Constant("c", np.ones(1000, np.float32))], outputs=[big]),
        gs.Node("Add", inputs=[x, big], outputs=[y])], inputs=[x], outputs=[y])
    graph.fold_constants(size_threshold=1000)
    assert not isinstance(graph.tensors()["big"], gs.Constant)
    graph.fold_constants(size_threshold=4000)
    assert isinstance(graph.tensors()["big"], gs.Constant)


def test_external_data_stays_external_until_asked_for(tmp_path):
    w = np.arange(4096, dtype=np.float32).reshape(64, 64)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "ext",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])],
        initializer=[numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    path = tmp_path / "ext.onnx"
    onnx.save(model, str(path), save_as_external_data=True, location="ext.data",
              size_threshold=0)

    proto = onnx.load(str(path), load_external_data=False)
    g = gs.import_onnx(proto, base_dir=str(tmp_path))
    weight = g.tensors()["w"]
    assert isinstance(weight._values, gs.LazyValues) and weight.shape == (64, 64)
    exported = gs.export_onnx(g)
    init = exported.graph.initializer[0]
    assert init.data_location == TensorProto.EXTERNAL and not init.raw_data
    onnx.save(exported, str(tmp_path / "copy.onnx"))  # beside ext.data
    x = rand(1, 64)
    expected = x.astype(np.float64) @ w
    np.testing.assert_allclose(run(onnx.load(str(tmp_path / "copy.onnx")), {"x": x})["y"],
                               expected, rtol=1e-6)
    np.testing.assert_array_equal(weight.values, w)  # read from base_dir when asked


def test_import_rejects_what_is_not_a_model():
    with pytest.raises(ParityException, match="takes an onnx.ModelProto"):
        gs.import_onnx(b"bytes")
    with pytest.raises(ParityException, match="takes a parity.graphsurgeon.Graph"):
        gs.export_onnx("graph")


def test_node_ids_exist_only_inside_the_context():
    graph = gs.import_onnx(examples.ex05_generate(gs))
    with graph.node_ids():
        assert [n.id for n in graph.nodes] == [0, 1, 2]
    assert not hasattr(graph.nodes[0], "id")


def test_float32_constant_exports_as_bfloat16_rounded_to_nearest_even():
    values = np.array([1.0, -2.5, 0.15625, 1 + 1 / 256, 1 + 3 / 256], np.float32)
    x = gs.Variable("x", np.float32, [5])
    y = gs.Variable("y", np.float32, [5])
    c = gs.Constant("c", values, export_dtype=TensorProto.BFLOAT16)
    graph = gs.Graph(opset=17, nodes=[gs.Node("Add", inputs=[x, c], outputs=[y])],
                     inputs=[x], outputs=[y])
    (init,) = gs.export_onnx(graph, do_type_check=False).graph.initializer
    assert init.data_type == TensorProto.BFLOAT16
    # 1 + 1/256 is a tie and rounds down to even 1.0; 1 + 3/256 rounds up to 1 + 4/256.
    assert np.frombuffer(init.raw_data, np.uint16).tolist() == [
        0x3F80, 0xC020, 0x3E20, 0x3F80, 0x3F82]


def test_fold_cases_compute_what_numpy_computes():
    folded = examples.fold_shapes_case(gs)["folded"]
    assert [n.op_type for n in folded.graph.node] == ["Shape", "Neg"]  # the dynamic one stays
    x = rand(2, 3, 5)
    out = run(folded, {"x": x})
    np.testing.assert_array_equal(out["y"], [6, 4])
    np.testing.assert_array_equal(out["z"], [-2, -3, -5])

    folded = examples.fold_if_case(gs)["folded"]
    assert [n.op_type for n in folded.graph.node] == ["Add"]  # Not(False): the then branch
    x = rand(2)
    np.testing.assert_array_equal(run(folded, {"x": x})["y"], x + np.array([1, 2], np.float32))

    folded = examples.fold_threshold_and_exclude_case(gs)["folded"]
    assert [n.op_type for n in folded.graph.node] == ["Neg", "Abs", "Add", "Add"]
    x = rand(1000)
    np.testing.assert_array_equal(run(folded, {"x": x})["y"], x + np.float32(0))


def test_basic_partitioning_warns_and_keeps_the_failing_part(capfd):
    # The real GraphSurgeon recurses without end here (see fold_partition_cases).
    graph = examples._bad_node_graph(gs)
    graph.fold_constants(partitioning="basic").cleanup()
    text = "".join(capfd.readouterr())
    assert "Inference failed for subgraph" in text and "bad_node" in text
    assert [n.name for n in graph.nodes] == ["good_sqrt", "bad_node", "add_s1", "add_y"]


def test_loop_body_round_trips_unchanged_and_runs():
    body = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "w"], ["acc_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [2])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["n", "", "x"], ["y"], body=body)], "loop",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        initializer=[numpy_helper.from_array(np.array(3, np.int64), "n"),
                     numpy_helper.from_array(np.array([1, 2], np.float32), "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    out = gs.export_onnx(gs.import_onnx(model))
    # The body uses the outer w: it stays an outer initializer, not copied into the body.
    assert out.graph == model.graph
    x = np.array([10, 20], np.float32)
    np.testing.assert_array_equal(run(out, {"x": x})["y"], x + 3 * np.array([1, 2], np.float32))


def test_ir3_model_keeps_initializers_among_inputs():
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "b"], ["y"])], "ir3",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        initializer=[numpy_helper.from_array(np.array([1, 2], np.float32), "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)], ir_version=3)
    imported = gs.import_onnx(model)
    assert [t.name for t in imported.inputs] == ["x"]  # as GraphSurgeon imports it
    out = gs.export_onnx(imported)
    onnx.checker.check_model(out)  # IR 3 requires initializers to be inputs
    assert [i.name for i in out.graph.input] == ["x", "b"]


def test_every_onnx_test_model_round_trips_unchanged():
    # Debian's libonnx-testdata (also the conformance suite's data): import then export keeps
    # every node, input, output, value_info, initializer and model field as it was.
    import glob

    paths = sorted(glob.glob("/usr/share/libonnx-testdata/data/**/model.onnx", recursive=True))
    assert len(paths) > 1000
    changed = []
    for path in paths:
        model = onnx.load(path)
        out = gs.export_onnx(gs.import_onnx(model), do_type_check=False)
        model_fields, out_fields = onnx.ModelProto(), onnx.ModelProto()
        model_fields.CopyFrom(model)
        out_fields.CopyFrom(out)
        model_fields.ClearField("graph")
        out_fields.ClearField("graph")
        if out.graph != model.graph or out_fields != model_fields:
            changed.append(path)
    assert changed == []


def _test_data_feed(model, model_path):
    """The model's first test data set as a feed, or None when it cannot be read here."""
    import glob

    initializers = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]
    folder = os.path.join(os.path.dirname(model_path), "test_data_set_0")
    files = sorted(glob.glob(os.path.join(folder, "input_*.pb")))
    if len(files) != len(names):
        return None
    feed = {}
    for name, path in zip(names, files):
        proto = onnx.TensorProto()
        with open(path, "rb") as f:
            proto.ParseFromString(f.read())
        try:
            feed[name] = numpy_helper.to_array(proto)
        except ValueError:  # segments, which onnx 1.12 cannot read
            return None
    return feed


def test_folded_onnx_test_models_compute_what_the_originals_compute():
    # Every libonnx-testdata model that folding changes, run on the reference backend before
    # and after toposort().fold_constants().cleanup(): the outputs must be identical.
    import glob

    paths = sorted(glob.glob("/usr/share/libonnx-testdata/data/**/model.onnx", recursive=True))
    compared, failures = 0, []
    for path in paths:
        model = onnx.load(path)
        graph = gs.import_onnx(model)
        graph.toposort().fold_constants().cleanup()
        folded = gs.export_onnx(graph, do_type_check=False)
        if len(folded.graph.node) == len(model.graph.node):
            continue
        feed = _test_data_feed(model, path)
        if feed is None:
            continue
        try:
            before = run(model, feed)
        except ParityException:
            continue  # the reference backend does not run the original either
        kept = {i.name for i in folded.graph.input}
        try:
            after = run(folded, {k: v for k, v in feed.items() if k in kept})
        except ParityException as err:
            failures.append(f"{path}: {err}")
            continue
        if not all(np.array_equal(before[k], after[k], equal_nan=True) for k in before):
            failures.append(f"{path}: values differ")
        compared += 1
    assert failures == []
    assert compared > 100


def test_local_function_example_runs_as_numpy_computes():
    model, weights = examples.ex11_local_function(gs)
    onnx.checker.check_model(model)
    (function,) = model.functions
    assert (function.domain, function.name) == ("onnx_graphsurgeon", "SelfAttention")
    assert sorted(function.attribute) == ["Wk", "Wq", "Wv", "sqrt_emb_dim", "transpose_perm"]
    assert [n.op_type for n in model.graph.node] == ["SelfAttention", "Relu", "Add"] * 2
    # Importing and exporting again changes nothing, the function included.
    again = gs.export_onnx(gs.import_onnx(model))
    assert again == model

    x = rand(2, 3, 4)
    expected = x.astype(np.float64)
    for w in weights:
        q, k, v = (expected @ w[n] for n in ("Wq", "Wk", "Wv"))
        scores = q @ k.transpose(0, 2, 1) / 2.0
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        expected = expected + np.maximum((scores / scores.sum(-1, keepdims=True)) @ v, 0)
    (out,) = run_onnxrt(model, {"input_embeds": x}).values()
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)
