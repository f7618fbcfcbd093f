"""Polygraphy's ONNX model loaders (FoldConstants, InferShapes, ExtractSubgraph, SetUpperBound,
SaveOnnx) on onnx.ModelProto: results checked with python3-onnx and NumPy, and run on both
backends."""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from parity import ParityException
from parity.backend.onnx import (
    ExtractSubgraph,
    FoldConstants,
    OnnxFromBytes,
    OnnxFromPath,
    SaveOnnx,
    extract_subgraph,
    fold_constants,
    infer_shapes,
    save_onnx,
    set_upper_bound,
)
from parity.backend.onnxrt import OnnxrtRunner, SessionFromOnnx
from parity.backend.pluginref import PluginRefRunner
from parity.common import TensorMetadata

W = np.array([1, 2, 3], dtype=np.float32)
C = np.array([0.5, -1, 2], dtype=np.float32)


def chain_model():
    """y = x + exp(c * w) with c a Constant node and w an initializer."""
    nodes = [
        helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(C, "c")),
        helper.make_node("Mul", ["c", "w"], ["m"], name="mul"),
        helper.make_node("Exp", ["m"], ["e"], name="exp"),
        helper.make_node("Add", ["x", "e"], ["y"], name="add"),
    ]
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(W, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def run_both(model, feed):
    data = model.SerializeToString()
    with PluginRefRunner(OnnxFromBytes(data)) as ref, OnnxrtRunner(SessionFromOnnx(data)) as ort:
        return ref.infer(feed), ort.infer(feed)


def test_fold_constants_folds_the_chain_to_numpys_values():
    original = chain_model()
    folded = fold_constants(original)
    assert isinstance(folded, onnx.ModelProto)
    onnx.checker.check_model(folded)
    assert [n.op_type for n in folded.graph.node] == ["Add"]
    (e,) = [numpy_helper.to_array(t) for t in folded.graph.initializer if t.name == "e"]
    # The reference backend computes in double and rounds once: exactly NumPy's float64 exp
    # of the float32 products, rounded to float32.
    np.testing.assert_array_equal(e, np.exp((C * W).astype(np.float64)).astype(np.float32))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for out in run_both(folded, {"x": x}):
        np.testing.assert_allclose(out["y"], x + np.exp(C * W), rtol=1e-6)
    assert len(original.graph.node) == 4  # the model given is not changed


def test_fold_constants_loader_over_a_loader_gives_what_the_loader_gives(tmp_path):
    path = str(tmp_path / "chain.onnx")
    onnx.save(chain_model(), path)
    loader = FoldConstants(OnnxFromPath(path), num_passes=1)
    folded = loader()
    # OnnxFromPath gives an onnx.ModelProto (as Polygraphy's), and so does the folded model.
    assert isinstance(folded, onnx.ModelProto)
    assert len(folded.graph.node) == 1
    x = np.ones((2, 3), dtype=np.float32)
    with PluginRefRunner(folded) as runner:
        np.testing.assert_allclose(runner.infer({"x": x})["y"], x + np.exp(C * W), rtol=1e-6)


def test_infer_shapes_records_the_intermediate_types():
    inferred = infer_shapes(chain_model())
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in inferred.graph.value_info}
    assert shapes["m"] == [3] and shapes["e"] == [3]


def test_extract_subgraph_between_tensors_and_a_leaking_cut():
    model = infer_shapes(chain_model())
    meta = TensorMetadata().add("x", np.float32, (2, 3)).add("e", np.float32, (3,))
    sub = extract_subgraph(model, input_metadata=meta,
                           output_metadata=TensorMetadata().add("y", np.float32))
    onnx.checker.check_model(sub)
    assert [n.op_type for n in sub.graph.node] == ["Add"]
    assert [i.name for i in sub.graph.input] == ["x", "e"]
    x = np.ones((2, 3), dtype=np.float32)
    e = np.full(3, 2, dtype=np.float32)
    for out in run_both(sub, {"x": x, "e": e}):
        np.testing.assert_array_equal(out["y"], x + e)

    with pytest.raises(ParityException, match="tensor 'x' is an input of the model"):
        ExtractSubgraph(model, {"e": (np.float32, (3,))}, {"y": (np.float32, None)})()
    with pytest.raises(ParityException, match="did you mean 'y'"):
        extract_subgraph(model, None, {"yy": (np.float32, None)})


def test_set_upper_bound_bounds_a_range_fed_by_a_reduction():
    nodes = [
        helper.make_node("ReduceMax", ["x"], ["n"], keepdims=0, name="reduce"),
        helper.make_node("Range", ["start", "n", "delta"], ["r"], name="range"),
        helper.make_node("Neg", ["r"], ["y"], name="neg"),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(0, np.float32), "start"),
         numpy_helper.from_array(np.array(1, np.float32), "delta")])
    model = infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                           ir_version=8))
    bounded = set_upper_bound(model, 2)
    onnx.checker.check_model(bounded, full_check=True)
    assert [n.op_type for n in bounded.graph.node] == ["ReduceMax", "Min", "Range", "Neg"]
    x = np.array([0.5, 7, 1, 2], dtype=np.float32)  # max 7, bounded to 2
    for out in run_both(bounded, {"x": x}):
        np.testing.assert_array_equal(out["y"], -np.arange(0, 2, 1, dtype=np.float32))


def test_save_onnx_writes_external_data_that_onnx_reads_back(tmp_path):
    weights = np.random.RandomState(0).rand(64, 4).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 4])],
        [numpy_helper.from_array(weights, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    path = str(tmp_path / "saved.onnx")
    assert SaveOnnx(model, path, external_data_path="", size_threshold=16)() is model
    assert os.path.exists(path + ".data")
    onnx.checker.check_model(path)
    loaded = onnx.load(path)
    np.testing.assert_array_equal(numpy_helper.to_array(loaded.graph.initializer[0]), weights)
    x = np.ones((64, 4), dtype=np.float32)
    with OnnxrtRunner(SessionFromOnnx(path)) as ort, PluginRefRunner(OnnxFromPath(path)) as ref:
        for runner in (ort, ref):
            np.testing.assert_array_equal(runner.infer({"x": x})["y"], x + weights)

    with pytest.raises(ParityException, match="is not an existing folder"):
        save_onnx(model, str(tmp_path / "missing" / "m.onnx"))
