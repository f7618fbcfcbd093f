"""Polygraphy's tests/backend/onnxrt/test_runner.py, on Parity (ONNX Runtime loaded by the C++
backend from the copy scripts/install-onnxruntime.sh installs)."""
import numpy as np
import pytest

from parity import ParityException
from parity.backend.onnx import BytesFromOnnx, OnnxFromPath
from parity.backend.onnxrt import OnnxrtRunner, SessionFromOnnx
from parity.logger import G_LOGGER


@pytest.mark.parametrize("sev", [G_LOGGER.VERBOSE, G_LOGGER.INFO, G_LOGGER.WARNING])
def test_set_severity(sev):
    old = G_LOGGER.severity
    try:
        G_LOGGER.module_severity = sev
        assert G_LOGGER.severity == sev
    finally:
        G_LOGGER.severity = old


def test_can_name_runner(identity_model):
    runner = OnnxrtRunner(SessionFromOnnx(identity_model), name="test-runner")
    assert runner.name == "test-runner"


def test_basic(identity_model):
    with OnnxrtRunner(SessionFromOnnx(identity_model)) as runner:
        assert runner.is_active
        x = np.ones((1, 1, 2, 2), dtype=np.float32)
        assert np.array_equal(runner.infer({"x": x})["y"], x)
        assert runner.last_inference_time() is not None
    assert not runner.is_active


@pytest.mark.parametrize("source", ["path", "bytes", "model"])
def test_session_from_every_kind_of_model(identity_model, source):
    model = {
        "path": identity_model,
        "bytes": BytesFromOnnx(OnnxFromPath(identity_model)),
        "model": OnnxFromPath(identity_model),
    }[source]
    with OnnxrtRunner(SessionFromOnnx(model, providers=["cpu"])) as runner:
        x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
        assert np.array_equal(runner.infer({"x": x})["y"], x)


def test_warn_if_impl_methods_called(identity_model, capfd):
    runner = OnnxrtRunner(SessionFromOnnx(identity_model))
    with runner:
        runner.infer({"x": np.ones((1, 1, 2, 2), dtype=np.float32)})
    assert "directly is not recommended" not in capfd.readouterr().out
    runner.activate_impl()
    meta = runner.get_input_metadata_impl()
    runner.deactivate_impl()
    out = capfd.readouterr().out
    assert "Calling 'OnnxrtRunner.activate_impl()' directly is not recommended." in out
    assert "Calling 'OnnxrtRunner.get_input_metadata_impl()' directly is not recommended." in out
    assert isinstance(meta["x"].dtype, np.dtype)


def test_shape_output(reshape_model):
    with OnnxrtRunner(SessionFromOnnx(reshape_model)) as runner:
        x = np.random.RandomState(1).rand(1, 3, 2, 2).astype(np.float32)
        assert np.array_equal(runner.infer({"x": x})["y"], x.reshape(12))


def test_dim_param_preserved(dim_param_model):
    with OnnxrtRunner(SessionFromOnnx(dim_param_model)) as runner:
        meta = runner.get_input_metadata()
        assert list(meta["input"].shape) == ["dim0", 16, 128]


@pytest.mark.parametrize(
    "names, err",
    [
        (["fake-input", "x"], "Extra inputs in"),
        (["fake-input"], "The following inputs were not found"),
        ([], "The following inputs were not found"),
    ],
)
def test_error_on_wrong_name_feed_dict(identity_model, names, err):
    with OnnxrtRunner(SessionFromOnnx(identity_model)) as runner:
        with pytest.raises(ParityException, match=err):
            runner.infer({name: np.ones(shape=(1, 1, 2, 2), dtype=np.float32) for name in names})


def test_error_on_wrong_dtype_feed_dict(identity_model):
    with OnnxrtRunner(SessionFromOnnx(identity_model)) as runner:
        with pytest.raises(ParityException, match="unexpected dtype."):
            runner.infer({"x": np.ones(shape=(1, 1, 2, 2), dtype=np.int32)})


def test_error_on_wrong_shape_feed_dict(identity_model):
    with OnnxrtRunner(SessionFromOnnx(identity_model)) as runner:
        with pytest.raises(ParityException, match="incompatible shape."):
            runner.infer({"x": np.ones(shape=(1, 1, 3, 2), dtype=np.float32)})


def test_infer_raises_if_runner_inactive(identity_model):
    runner = OnnxrtRunner(SessionFromOnnx(identity_model))
    with pytest.raises(ParityException, match="Must be activated"):
        runner.infer({"x": np.ones(shape=(1, 1, 2, 2), dtype=np.float32)})


def test_unknown_provider_lists_the_available_ones(identity_model):
    with pytest.raises(ParityException, match="CPUExecutionProvider"):
        with OnnxrtRunner(SessionFromOnnx(identity_model, providers=["no-such-provider"])):
            pass
