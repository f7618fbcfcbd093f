"""Runners written in Python (Polygraphy's extension point: a BaseRunner subclass with
activate_impl, get_input_metadata_impl, infer_impl, deactivate_impl), run by Comparator.run
beside Parity's C++ runners through the same runner contract."""
import numpy as np
import pytest

from parity.backend.base import BaseRunner
from parity.backend.onnx import OnnxFromPath
from parity.backend.onnxrt import OnnxrtRunner, SessionFromOnnx
from parity.backend.pluginref import PluginRefRunner
from parity.common import TensorMetadata
from parity.comparator import Comparator, CompareFunc, DataLoader
from parity.datatype import DataType
from parity.exception import PolygraphyException


class NumpyIdentityRunner(BaseRunner):
    """The identity model (x -> y, float32 1x1x2x2) in NumPy, with an optional error."""

    def __init__(self, offset=0.0, name=None, record=None):
        super().__init__(name=name, prefix="numpy-runner")
        self.offset = np.float32(offset)
        self.record = record if record is not None else []

    def activate_impl(self):
        self.record.append("activate")

    def get_input_metadata_impl(self):
        return TensorMetadata().add("x", DataType.FLOAT32, (1, 1, 2, 2))

    def infer_impl(self, feed_dict):
        self.record.append("infer")
        self.inference_time = 0.25
        return {"y": feed_dict["x"] + self.offset}

    def deactivate_impl(self):
        self.record.append("deactivate")


def test_python_runner_agrees_with_the_cpp_runners(identity_model):
    record = []
    runners = [
        PluginRefRunner(OnnxFromPath(identity_model)),
        NumpyIdentityRunner(record=record),
        OnnxrtRunner(SessionFromOnnx(identity_model)),
    ]
    results = Comparator.run(runners, data_loader=DataLoader(iterations=2))
    assert record == ["activate", "infer", "infer", "deactivate"]
    numpy_its = results[runners[1].name]
    assert len(numpy_its) == 2
    for ref_it, np_it in zip(results[runners[0].name], numpy_its):
        assert np.array_equal(ref_it["y"], np_it["y"])
        assert np_it.runtime == 0.25  # the runner's own inference_time
    accuracy = Comparator.compare_accuracy(results)
    assert accuracy and len(accuracy) == 2


def test_python_runner_that_disagrees_fails_the_comparison(identity_model):
    runners = [PluginRefRunner(OnnxFromPath(identity_model)), NumpyIdentityRunner(offset=1e-2)]
    results = Comparator.run(runners)
    expected = results[runners[0].name][0]["y"] + np.float32(1e-2)
    assert np.array_equal(results[runners[1].name][0]["y"], expected)
    assert not Comparator.compare_accuracy(results)
    assert Comparator.compare_accuracy(results, compare_func=CompareFunc.simple(atol=2e-2))


def test_python_runner_default_name_and_lifecycle():
    runner = NumpyIdentityRunner()
    assert runner.name.startswith("numpy-runner-N")
    assert not runner.is_active
    with runner:
        assert runner.is_active
        assert list(runner.get_input_metadata().keys()) == ["x"]
        out = runner.infer({"x": np.ones((1, 1, 2, 2), dtype=np.float32)})
        assert np.array_equal(out["y"], np.ones((1, 1, 2, 2)))
        assert runner.last_inference_time() == 0.25
    assert not runner.is_active
    assert NumpyIdentityRunner(name="custom").name == "custom"


def test_python_runner_inputs_are_checked_against_its_metadata():
    with NumpyIdentityRunner() as runner:
        with pytest.raises(PolygraphyException, match="dtype"):
            runner.infer({"x": np.ones((1, 1, 2, 2), dtype=np.int32)})
        with pytest.raises(PolygraphyException):
            runner.infer({"not_x": np.ones((1, 1, 2, 2), dtype=np.float32)})


def test_python_runner_gets_coerced_feeds_as_polygraphy_gives_them(identity_model):
    # A float64 feed is cast to the runner's float32 input, with Polygraphy's warning.
    seen = []

    class Recording(NumpyIdentityRunner):
        def infer_impl(self, feed_dict):
            seen.append(feed_dict["x"].dtype)
            return super().infer_impl(feed_dict)

    feeds = [{"x": np.ones((1, 1, 2, 2), dtype=np.float64)}]
    results = Comparator.run([Recording()], data_loader=feeds)
    assert seen == [np.float32]
    assert len(results) == 1


def test_errors_in_a_python_runner_reach_the_caller():
    class Broken(NumpyIdentityRunner):
        def infer_impl(self, feed_dict):
            raise ValueError("the backend broke")

    with pytest.raises(ValueError, match="the backend broke"):
        Comparator.run([Broken()])

    class WrongReturn(NumpyIdentityRunner):
        def infer_impl(self, feed_dict):
            return [feed_dict["x"]]

    with pytest.raises(PolygraphyException, match="return a dict"):
        Comparator.run([WrongReturn()])


def test_runner_without_metadata_impl_is_a_clear_error():
    class NoMetadata(BaseRunner):
        def __init__(self):
            super().__init__(prefix="no-meta")

        def infer_impl(self, feed_dict):
            return {}

    with pytest.raises(NotImplementedError, match="get_input_metadata_impl"):
        Comparator.run([NoMetadata()])


def test_runner_that_skips_base_init_is_a_clear_error():
    class NoInit(BaseRunner):
        def __init__(self):
            pass

    with pytest.raises(PolygraphyException, match="did not call BaseRunner.__init__"):
        Comparator.run([NoInit()])


def test_duck_typed_runner_is_accepted(identity_model):
    class Duck:
        name = "duck"

        def activate(self):
            pass

        def deactivate(self):
            pass

        def get_input_metadata(self):
            return {"x": (np.float32, (1, 1, 2, 2))}

        def infer(self, feed_dict):
            return {"y": feed_dict["x"].copy()}

    results = Comparator.run([PluginRefRunner(OnnxFromPath(identity_model)), Duck()])
    assert "duck" in results
    assert Comparator.compare_accuracy(results)


def test_outputs_are_copied_so_a_reused_buffer_keeps_each_iteration():
    class Reusing(NumpyIdentityRunner):
        buffer = np.zeros((1, 1, 2, 2), dtype=np.float32)

        def infer_impl(self, feed_dict):
            self.buffer[...] = feed_dict["x"]
            return {"y": self.buffer}

    results = Comparator.run([Reusing(name="reuse")], data_loader=DataLoader(iterations=2))
    first, second = results["reuse"][0]["y"], results["reuse"][1]["y"]
    assert not np.array_equal(first, second)
    assert np.array_equal(second, Reusing.buffer)
