"""Polygraphy's tests/backend/pluginref/test_runner.py (and base/test_runner.py), on Parity."""
import numpy as np
import pytest

from parity import ParityException
from parity.backend.onnx import GsFromOnnx, OnnxFromPath
from parity.backend.pluginref import PluginRefRunner
from parity.logger import G_LOGGER

SEVERITIES = [
    G_LOGGER.ULTRA_VERBOSE, G_LOGGER.SUPER_VERBOSE, G_LOGGER.EXTRA_VERBOSE, G_LOGGER.VERBOSE,
    G_LOGGER.INFO, G_LOGGER.START, G_LOGGER.FINISH, G_LOGGER.WARNING, G_LOGGER.ERROR,
    G_LOGGER.CRITICAL,
]


class TestLoggerCallbacks:
    @pytest.mark.parametrize("sev", SEVERITIES)
    def test_set_severity(self, sev):
        old = G_LOGGER.severity
        try:
            G_LOGGER.module_severity = sev
            assert G_LOGGER.severity == sev
        finally:
            G_LOGGER.severity = old


def test_can_name_runner(identity_model):
    runner = PluginRefRunner(GsFromOnnx(OnnxFromPath(identity_model)), name="test-runner")
    assert runner.name == "test-runner"


def test_default_name_has_prefix_counter_and_date(identity_model):
    first = PluginRefRunner(GsFromOnnx(OnnxFromPath(identity_model)))
    second = PluginRefRunner(GsFromOnnx(OnnxFromPath(identity_model)))
    assert first.name.startswith("pluginref-runner-N")
    assert int(second.name.split("-")[2][1:]) == int(first.name.split("-")[2][1:]) + 1


def test_basic(identity_model):
    with PluginRefRunner(GsFromOnnx(OnnxFromPath(identity_model))) as runner:
        assert runner.is_active
        x = np.ones((1, 1, 2, 2), dtype=np.float32)
        outputs = runner.infer({"x": x})
        assert np.array_equal(outputs["y"], x)
        assert runner.last_inference_time() is not None
    assert not runner.is_active


def test_outputs_share_memory_with_inputs_for_identity(identity_model):
    # Identity passes its input's buffer on: no copy from NumPy into Parity and back.
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
    with PluginRefRunner(OnnxFromPath(identity_model)) as runner:
        y = runner.infer({"x": x})["y"]
    assert np.shares_memory(x, y)
    assert not y.flags.writeable


def test_warn_if_impl_methods_called(identity_model, capfd):
    runner = PluginRefRunner(GsFromOnnx(OnnxFromPath(identity_model)))
    with runner:
        runner.get_input_metadata()
        runner.infer({"x": np.ones((1, 1, 2, 2), dtype=np.float32)})
    assert "directly is not recommended" not in capfd.readouterr().out

    runner.activate_impl()
    meta = runner.get_input_metadata_impl()
    runner.infer_impl({"x": np.ones((1, 1, 2, 2), dtype=np.float32)})
    runner.deactivate_impl()
    out = capfd.readouterr().out
    for method in ["activate", "get_input_metadata", "infer", "deactivate"]:
        assert (
            f"Calling 'PluginRefRunner.{method}_impl()' directly is not recommended. "
            f"Please use '{method}()' instead." in out
        )
    assert isinstance(meta["x"].dtype, np.dtype)
    assert meta["x"].dtype == np.float32
    assert list(meta["x"].shape) == [1, 1, 2, 2]


def test_works_on_multiple_nodes(identity_identity_model):
    with PluginRefRunner(GsFromOnnx(OnnxFromPath(identity_identity_model))) as runner:
        x = np.random.RandomState(0).rand(64, 64).astype(np.float32)
        assert np.array_equal(runner.infer({"X": x})["identity_out_2"], x)


def test_fail_on_unsupported_node(and_model, monkeypatch):
    # And has a kernel in Parity; a model with an op nobody registered fails the same way
    # Polygraphy's does for And.
    import onnx

    model = onnx.load(and_model)
    model.graph.node[0].op_type = "AndNotRegistered"
    onnx.save(model, and_model)
    expected = "does not have a reference implementation registered!"
    with pytest.raises(ParityException, match=expected):
        with PluginRefRunner(GsFromOnnx(OnnxFromPath(and_model))) as runner:
            runner.infer({"x": np.ones(3, dtype=bool), "y": np.ones(3, dtype=bool)})


@pytest.mark.parametrize(
    "names, err",
    [
        (["fake-input", "x"], "Extra inputs in"),
        (["fake-input"], "The following inputs were not found"),
        ([], "The following inputs were not found"),
    ],
)
def test_error_on_wrong_name_feed_dict(identity_model, names, err):
    with PluginRefRunner(GsFromOnnx(OnnxFromPath(identity_model))) as runner:
        with pytest.raises(ParityException, match=err):
            runner.infer({name: np.ones(shape=(1, 1, 2, 2), dtype=np.float32) for name in names})


def test_error_on_wrong_dtype_feed_dict(identity_model):
    with PluginRefRunner(GsFromOnnx(OnnxFromPath(identity_model))) as runner:
        with pytest.raises(ParityException, match="unexpected dtype."):
            runner.infer({"x": np.ones(shape=(1, 1, 2, 2), dtype=np.int32)})


def test_error_on_wrong_shape_feed_dict(identity_model):
    with PluginRefRunner(GsFromOnnx(OnnxFromPath(identity_model))) as runner:
        with pytest.raises(ParityException, match="incompatible shape."):
            runner.infer({"x": np.ones(shape=(1, 1, 3, 2), dtype=np.float32)})


def test_infer_raises_if_runner_inactive(identity_model):
    runner = PluginRefRunner(OnnxFromPath(identity_model))
    with pytest.raises(ParityException, match="Must be activated"):
        runner.infer({"x": np.ones(shape=(1, 1, 2, 2), dtype=np.float32)})


def test_non_contiguous_and_big_endian_inputs_are_accepted(identity_model):
    base = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    strided = base[:, :, ::2, ::2]
    big_endian = strided.astype(">f4")
    with PluginRefRunner(OnnxFromPath(identity_model)) as runner:
        assert np.array_equal(runner.infer({"x": strided})["y"], strided)
        assert np.array_equal(runner.infer({"x": big_endian})["y"], strided)


def test_threads_give_the_same_bits(tmp_path):
    import onnx
    from onnx import TensorProto, helper
    n = 1 << 18  # several parallel chunks
    graph = helper.make_graph(
        [helper.make_node("Softmax", ["x"], ["y"], axis=0), helper.make_node("Tanh", ["x"], ["t"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n // 64, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n // 64, 64]),
         helper.make_tensor_value_info("t", TensorProto.FLOAT, [n // 64, 64])])
    path = str(tmp_path / "softmax_tanh.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    feed = {"x": (np.random.RandomState(0).randn(n // 64, 64) * 5).astype(np.float32)}
    outs = []
    for threads in (1, 2, None):
        with PluginRefRunner(GsFromOnnx(OnnxFromPath(path)), threads=threads) as runner:
            outs.append({k: v.tobytes() for k, v in runner.infer(feed).items()})
    assert outs[1] == outs[0] and outs[2] == outs[0]


def test_negative_threads_is_an_error(identity_model):
    with pytest.raises(ParityException, match="reference threads"):
        PluginRefRunner(GsFromOnnx(OnnxFromPath(identity_model)), threads=-1)
