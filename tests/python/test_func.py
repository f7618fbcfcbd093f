"""parity.func.extend (Polygraphy's tests/func/test_func.py), also on real loaders."""
import numpy as np
import pytest

from parity import ParityException
from parity.backend.onnx import OnnxFromPath
from parity.backend.pluginref import PluginRefRunner
from parity.func import extend


def test_arguments_are_forwarded():
    calls = []

    def x(a0, a1, a2=0):
        calls.append((a0, a1, a2))
        return [a0, a1, a2]

    @extend(x)
    def y(lst):
        lst.append(-1)

    assert y(1, 2, a2=3) == [1, 2, 3, -1]
    assert calls == [(1, 2, 3)]


def test_tuple_returns_are_unpacked():
    def x():
        return [1], None

    @extend(x)
    def y(rv0, rv1):
        rv0.append(2)

    rv0, rv1 = y()
    assert rv0 == [1, 2] and rv1 is None


def test_returned_value_replaces_the_loaders():
    @extend(lambda: 1)
    def y(value):
        return value + 41

    assert y() == 42


def test_no_return_value_and_no_parameters():
    called = []

    @extend(lambda: None)
    def y():
        called.append(True)

    assert y() is None and called == [True]


def test_count_mismatch_is_rejected():
    def x():
        return 1, 2

    @extend(x)
    def y(only_one):
        pass

    expected = (r"Function: y accepts 1 parameter\(s\), but needs to accept 2 parameter\(s\) "
                r"from: x")
    with pytest.raises(ParityException, match=expected):
        y()


def test_extend_a_model_loader(identity_model):
    # The loader's object (an onnx.ModelProto, as in Polygraphy) is reached without leaving
    # the pipeline, and the pipeline stays lazy.
    seen = []

    @extend(OnnxFromPath(identity_model))
    def load_model(model):
        seen.append([i.name for i in model.graph.input])

    assert seen == []
    with PluginRefRunner(load_model) as runner:
        x = np.ones((1, 1, 2, 2), dtype=np.float32)
        assert np.array_equal(runner.infer({"x": x})["y"], x)
    assert seen == [["x"]]


def test_loader_returning_the_wrong_type_is_a_clear_error(identity_model):
    @extend(OnnxFromPath(identity_model))
    def load_model(model):
        return "not a model"

    with pytest.raises(TypeError, match="the loader returned str, expected an onnx.ModelProto, a "
                       "parity.graphsurgeon.Graph or a parity.Model"):
        with PluginRefRunner(load_model):
            pass
