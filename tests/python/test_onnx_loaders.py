"""Polygraphy's ONNX loaders on ONNX's own objects: OnnxFromPath gives an onnx.ModelProto,
every loader and runner takes a ModelProto or a parity.graphsurgeon Graph (or a loader of
one), and chains of Parity's loaders given to a runner stay in C++."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import parity.graphsurgeon as gs
from conftest import save_model, tensor
from parity import ParityException, _parity
from parity.backend import _models
from parity.backend.onnx import (BytesFromOnnx, GsFromOnnx, ModifyOutputs, OnnxFromBytes,
                                 OnnxFromGs, OnnxFromPath, SaveOnnx, bytes_from_onnx,
                                 onnx_from_path)
from parity.backend.onnxrt import OnnxrtRunner, SessionFromOnnx
from parity.backend.pluginref import PluginRefRunner
from parity.backend.registry import make_runner
from parity.comparator import Comparator
from parity.constants import MARK_ALL
from parity.func import extend
from parity.layerwise import LayerwiseComparator

W = np.arange(12, dtype=np.float32).reshape(3, 4) / 10


@pytest.fixture
def matmul_relu(tmp_path):
    """x (2x3) @ w (3x4) -> mm -> Relu -> y."""
    return save_model(
        tmp_path / "mm.onnx",
        [helper.make_node("MatMul", ["x", "w"], ["mm"], name="matmul"),
         helper.make_node("Relu", ["mm"], ["y"], name="relu")],
        [tensor("x", TensorProto.FLOAT, [2, 3])], [tensor("y", TensorProto.FLOAT, [2, 4])],
        initializers=[numpy_helper.from_array(W, "w")])


X = np.array([[1, -2, 3], [-4, 5, -6]], dtype=np.float32)
EXPECTED_MM = X.astype(np.float64) @ W.astype(np.float64)
EXPECTED = np.maximum(EXPECTED_MM, 0)


def infer(runner, feed=None):
    with runner:
        return runner.infer(feed if feed is not None else {"x": X})


def test_onnx_from_path_returns_a_model_proto(matmul_relu):
    model = OnnxFromPath(matmul_relu)()
    assert isinstance(model, onnx.ModelProto)
    assert model == onnx.load(matmul_relu)
    assert onnx_from_path(matmul_relu) == model


def test_runners_accept_model_protos_graphs_and_loaders_of_them(matmul_relu):
    proto = onnx.load(matmul_relu)
    for model in [proto, gs.import_onnx(proto), OnnxFromPath(matmul_relu),
                  GsFromOnnx(OnnxFromPath(matmul_relu)), GsFromOnnx(proto), lambda: proto,
                  OnnxFromBytes(proto.SerializeToString())]:
        np.testing.assert_allclose(infer(PluginRefRunner(model))["y"], EXPECTED, rtol=1e-6)
        np.testing.assert_allclose(infer(OnnxrtRunner(SessionFromOnnx(model)))["y"], EXPECTED,
                                   rtol=1e-6)


def test_bytes_from_onnx_and_session_from_onnx_take_a_model_proto(matmul_relu):
    proto = onnx.load(matmul_relu)
    data = BytesFromOnnx(proto)()
    assert isinstance(data, bytes) and onnx.load_model_from_string(data) == proto
    assert onnx.load_model_from_string(bytes_from_onnx(OnnxFromPath(matmul_relu))) == proto
    session = SessionFromOnnx(proto)()
    np.testing.assert_allclose(infer(OnnxrtRunner(session))["y"], EXPECTED, rtol=1e-6)
    np.testing.assert_allclose(infer(OnnxrtRunner(SessionFromOnnx(data)))["y"], EXPECTED,
                               rtol=1e-6)


def test_gs_from_onnx_returns_an_editable_graph(matmul_relu):
    graph = GsFromOnnx(OnnxFromPath(matmul_relu))()
    assert isinstance(graph, gs.Graph)
    assert [n.op for n in graph.nodes] == ["MatMul", "Relu"]
    assert [t.name for t in graph.inputs] == ["x"] and [t.name for t in graph.outputs] == ["y"]
    graph.nodes[1].op = "Neg"  # edit, then run the edited graph
    out = infer(PluginRefRunner(graph))["y"]
    np.testing.assert_allclose(out, -EXPECTED_MM, rtol=1e-6)
    proto = OnnxFromGs(graph)()
    assert isinstance(proto, onnx.ModelProto) and proto.graph.node[1].op_type == "Neg"
    onnx.checker.check_model(proto)


def test_modify_outputs_on_a_model_proto_returns_a_model_proto(matmul_relu):
    proto = onnx.load(matmul_relu)
    marked = ModifyOutputs(proto, outputs=MARK_ALL)()
    assert isinstance(marked, onnx.ModelProto)
    assert [o.name for o in marked.graph.output] == ["mm", "y"]
    assert [o.name for o in proto.graph.output] == ["y"]  # the input is not changed
    out = infer(PluginRefRunner(marked))
    np.testing.assert_allclose(out["mm"], EXPECTED_MM, rtol=1e-6)
    only_mm = ModifyOutputs(OnnxFromPath(matmul_relu), outputs=["mm"])()
    assert [o.name for o in only_mm.graph.output] == ["mm"]
    # The chain given to a runner stays in C++ (no ModelProto made) and gives the same.
    chained = infer(PluginRefRunner(ModifyOutputs(OnnxFromPath(matmul_relu), outputs=MARK_ALL)))
    assert sorted(chained) == ["mm", "y"]
    np.testing.assert_array_equal(chained["mm"], out["mm"])
    with pytest.raises(ParityException, match="mmm"):
        ModifyOutputs(proto, outputs=["mmm"])()


def test_save_onnx_saves_a_model_proto(matmul_relu, tmp_path):
    proto = onnx.load(matmul_relu)
    path = tmp_path / "saved.onnx"
    assert SaveOnnx(proto, path)() is proto
    assert onnx.load(str(path)) == proto
    path2 = tmp_path / "saved2.onnx"
    np.testing.assert_allclose(infer(PluginRefRunner(SaveOnnx(OnnxFromPath(matmul_relu),
                                                              path2)))["y"], EXPECTED, rtol=1e-6)
    onnx.checker.check_model(str(path2))


def test_save_onnx_writes_external_data_as_polygraphy_does(matmul_relu, tmp_path):
    proto = onnx.load(matmul_relu)
    path = tmp_path / "ext.onnx"
    SaveOnnx(proto, path, external_data_path="weights.bin", size_threshold=16)()
    assert (tmp_path / "weights.bin").stat().st_size == W.nbytes
    saved = onnx.load(str(path), load_external_data=False)
    assert saved.graph.initializer[0].data_location == TensorProto.EXTERNAL
    onnx.checker.check_model(str(path))
    np.testing.assert_allclose(infer(PluginRefRunner(OnnxFromPath(path)))["y"], EXPECTED,
                               rtol=1e-6)
    # Under the default threshold (1024 bytes), the 48-byte tensor stays in the model file.
    SaveOnnx(onnx.load(matmul_relu), tmp_path / "inline.onnx", external_data_path="w2.bin")()
    inline = onnx.load(str(tmp_path / "inline.onnx"), load_external_data=False)
    assert inline.graph.initializer[0].raw_data and not inline.graph.initializer[0].external_data


def test_save_onnx_and_infer_shapes_given_to_a_runner_work_in_cpp(matmul_relu, tmp_path):
    # The chain a generated script of `parity run --shape-inference --save-onnx` builds: the
    # runner gets the model from C++ (no Python copy), saved with the external data options.
    from parity.backend.onnx import InferShapes

    path = tmp_path / "saved.onnx"
    chain = SaveOnnx(ModifyOutputs(InferShapes(OnnxFromPath(matmul_relu)), outputs=MARK_ALL),
                     path, external_data_path="weights.bin", size_threshold=16)
    outputs = infer(OnnxrtRunner(SessionFromOnnx(BytesFromOnnx(chain))))
    np.testing.assert_allclose(outputs["mm"], EXPECTED_MM, rtol=1e-6)
    onnx.checker.check_model(str(path))
    saved = onnx.load(str(path), load_external_data=False)
    assert [o.name for o in saved.graph.output] == ["mm", "y"]
    assert [v.name for v in saved.graph.value_info] == ["mm"]  # from InferShapes
    assert saved.graph.initializer[0].data_location == TensorProto.EXTERNAL
    assert (tmp_path / "weights.bin").stat().st_size == W.nbytes
    np.testing.assert_allclose(infer(PluginRefRunner(OnnxFromPath(path)))["y"], EXPECTED,
                               rtol=1e-6)
    # Given to a runner itself, the chain is loaded by Parity's C++ loaders (_parity_model).
    path2 = tmp_path / "saved2.onnx"
    chain2 = SaveOnnx(ModifyOutputs(InferShapes(OnnxFromPath(matmul_relu)), outputs=MARK_ALL),
                      path2, external_data_path="weights2.bin", size_threshold=16)
    np.testing.assert_allclose(infer(PluginRefRunner(chain2))["mm"], EXPECTED_MM, rtol=1e-6)
    saved2 = onnx.load(str(path2), load_external_data=False)
    assert [v.name for v in saved2.graph.value_info] == ["mm"]
    assert saved2.graph.initializer[0].data_location == TensorProto.EXTERNAL
    onnx.checker.check_model(str(path2))


def test_extend_edits_the_model_proto_a_runner_then_runs(matmul_relu):
    @extend(OnnxFromPath(matmul_relu))
    def load_model(model):
        model.graph.node[1].op_type = "Neg"

    np.testing.assert_allclose(infer(PluginRefRunner(load_model))["y"], -EXPECTED_MM, rtol=1e-6)


def test_comparator_registry_and_layerwise_take_model_protos(matmul_relu):
    proto = onnx.load(matmul_relu)
    results = Comparator.run([PluginRefRunner(proto), OnnxrtRunner(SessionFromOnnx(proto))])
    assert bool(Comparator.compare_accuracy(results))
    np.testing.assert_allclose(infer(make_runner("onnxrt", proto))["y"], EXPECTED, rtol=1e-6)
    assert LayerwiseComparator.run(proto, other="onnxrt").passed


def test_external_data_loaded_as_polygraphy_loads_it(tmp_path):
    w = np.random.RandomState(0).uniform(-1, 1, (64, 64)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "ext",
        [tensor("x", TensorProto.FLOAT, [1, 64])], [tensor("y", TensorProto.FLOAT, [1, 64])],
        initializer=[numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    path = tmp_path / "ext.onnx"
    onnx.save(model, str(path), save_as_external_data=True, location="ext.data",
              size_threshold=0)

    loaded = OnnxFromPath(path)()
    np.testing.assert_array_equal(numpy_helper.to_array(loaded.graph.initializer[0]), w)
    refs = OnnxFromPath(path, ignore_external_data=True)()
    assert refs.graph.initializer[0].data_location == TensorProto.EXTERNAL
    x = np.random.RandomState(1).uniform(-1, 1, (1, 64)).astype(np.float32)
    expected = x.astype(np.float64) @ w
    for source in [loaded, OnnxFromPath(path), GsFromOnnx(OnnxFromPath(path))]:
        np.testing.assert_allclose(infer(PluginRefRunner(source), {"x": x})["y"], expected,
                                   rtol=1e-5)
    # A gs graph of the unread model keeps the references and loads values on request.
    graph = GsFromOnnx(OnnxFromPath(path, ignore_external_data=True))()
    np.testing.assert_array_equal(graph.tensors()["w"].values, w)


def test_a_model_too_big_to_serialize_goes_through_external_data(matmul_relu):
    # The limit is protobuf's 2 GB; a small limit takes the same path on a small model.
    proto = onnx.load(matmul_relu)
    proto.graph.initializer.append(numpy_helper.from_array(np.ones((300, 4), np.float32), "big"))
    before = proto.SerializeToString()
    model = _models.parity_model(proto, limit=2000)
    assert isinstance(model, _parity.Model)
    assert proto.SerializeToString() == before  # the weights are put back
    np.testing.assert_allclose(infer(PluginRefRunner(model))["y"], EXPECTED, rtol=1e-6)
    with pytest.raises(ParityException, match="over protobuf"):
        _models.parity_model(proto, limit=100)


def test_bad_models_are_clear_errors(tmp_path):
    with pytest.raises(TypeError, match="expected an onnx.ModelProto, a "
                                        "parity.graphsurgeon.Graph or a parity.Model"):
        PluginRefRunner(42)
    with pytest.raises(ParityException, match="no such file"):
        OnnxFromPath(tmp_path / "missing.onnx")()
    with pytest.raises(TypeError, match="the loader returned str"):
        infer(PluginRefRunner(lambda: "model"))
