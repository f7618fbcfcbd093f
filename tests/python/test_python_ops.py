"""Python reference ops (@parity.register): the contract of Polygraphy's pluginref register,
errors that name the node, and the same custom op in Python and in a C++ plugin compared."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import parity
from parity import ParityException
from parity.backend.onnx import OnnxFromPath
from parity.backend.pluginref import PluginRefRunner
from parity.comparator import Comparator, CompareFunc, RunResults

from conftest import EXAMPLE_PLUGIN, save_model, tensor


def custom_op_model(tmp_path, op, domain, inputs, attrs=None, outputs=("y",),
                    out_type=TensorProto.FLOAT):
    node = helper.make_node(op, list(inputs), list(outputs), domain=domain, name="my_node",
                            **(attrs or {}))
    return save_model(
        tmp_path / f"{op}.onnx",
        [node],
        [tensor(name, TensorProto.FLOAT, [2, 3]) for name in inputs if name],
        [tensor(name, out_type, [2, 3]) for name in outputs],
        opsets=(("", 17), (domain, 1)),
    )


def run(model_path, **feed):
    with PluginRefRunner(OnnxFromPath(model_path)) as runner:
        return runner.infer(feed)


def test_python_op_gets_attributes_inputs_and_none_for_an_empty_optional(tmp_path):
    seen = {}

    @parity.register("Scale", domain="test.python")
    def scale(attrs, x, bias=None):
        seen["attrs"] = attrs
        seen["bias"] = bias
        seen["writeable"] = x.flags.writeable
        return [(x * attrs["factor"]).astype(np.float32)]

    model = custom_op_model(
        tmp_path, "Scale", "test.python", ["x", ""],
        attrs={"factor": 2.5, "mode": "fast", "axes": [0, 1]},
    )
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert np.array_equal(run(model, x=x)["y"], x * np.float32(2.5))
    assert seen["attrs"] == {"factor": 2.5, "mode": "fast", "axes": [0, 1]}
    assert seen["bias"] is None
    assert seen["writeable"] is False  # inputs are the executor's buffers


def test_exception_inside_the_op_names_the_node(tmp_path):
    @parity.register("Raises", domain="test.python")
    def raises(attrs, x):
        raise ValueError("this op always fails")

    model = custom_op_model(tmp_path, "Raises", "test.python", ["x"])
    with pytest.raises(ParityException) as info:
        run(model, x=np.ones((2, 3), dtype=np.float32))
    message = str(info.value)
    assert "failed to run node 'my_node' (Raises)" in message
    assert "ValueError: this op always fails" in message


def test_too_many_outputs_names_the_op_and_node(tmp_path):
    @parity.register("TooMany", domain="test.python")
    def too_many(attrs, x):
        return [x, x]

    model = custom_op_model(tmp_path, "TooMany", "test.python", ["x"])
    with pytest.raises(ParityException) as info:
        run(model, x=np.ones((2, 3), dtype=np.float32))
    message = str(info.value)
    assert "failed to run node 'my_node' (TooMany)" in message
    assert "TooMany reference implementation returned the wrong number of outputs." in message
    assert "Expected 1 but received 2" in message


def test_wrong_dtype_names_the_node(tmp_path):
    @parity.register("WrongType", domain="test.python")
    def wrong_type(attrs, x):
        return [x.astype(np.float64)]

    model = custom_op_model(tmp_path, "WrongType", "test.python", ["x"])
    with pytest.raises(ParityException) as info:
        run(model, x=np.ones((2, 3), dtype=np.float32))
    message = str(info.value)
    assert "failed to run node 'my_node' (WrongType)" in message
    assert "with dtype float64, but the model declares float32" in message


def test_returning_an_array_instead_of_a_list_is_an_error(tmp_path):
    @parity.register("NotAList", domain="test.python")
    def not_a_list(attrs, x):
        return x

    model = custom_op_model(tmp_path, "NotAList", "test.python", ["x"])
    with pytest.raises(ParityException, match="returned ndarray; it must return a list"):
        run(model, x=np.ones((2, 3), dtype=np.float32))


def test_python_op_can_replace_a_builtin_kernel_in_its_own_domain(tmp_path):
    @parity.register("Relu", domain="test.replaced")
    def relu(attrs, x):
        return [np.maximum(x, 0) + np.float32(1)]

    model = custom_op_model(tmp_path, "Relu", "test.replaced", ["x"])
    x = np.array([[-1, 0, 1], [2, -3, 4]], dtype=np.float32)
    assert np.array_equal(run(model, x=x)["y"], np.maximum(x, 0) + 1)


def scaled_tanh_model(tmp_path):
    node = helper.make_node(
        "ScaledTanh", ["x", "bias"], ["y"], domain="parity.example", name="st", alpha=1.5, beta=0.5
    )
    return save_model(
        tmp_path / "scaled_tanh.onnx",
        [node],
        [tensor("x", TensorProto.FLOAT, [4, 8]), tensor("bias", TensorProto.FLOAT, [1])],
        [tensor("y", TensorProto.FLOAT, [4, 8])],
        opsets=(("", 17), ("parity.example", 1)),
    )


def test_python_op_compared_with_the_same_op_from_a_cpp_plugin(tmp_path):
    model = scaled_tanh_model(tmp_path)
    feed = {"x": np.random.RandomState(3).uniform(-4, 4, (4, 8)).astype(np.float32),
            "bias": np.array([0.25], dtype=np.float32)}
    results = RunResults()

    # The C++ plugin (examples/plugin) computes in double and rounds once.
    assert parity.load_plugin(EXAMPLE_PLUGIN) == ["parity.example::ScaledTanh"]
    cpp = PluginRefRunner(OnnxFromPath(model), name="cpp-plugin")
    results.extend(Comparator.run([cpp], data_loader=[feed]))

    # The same op in Python, in float32 as NumPy computes it; it replaces the plugin's kernel.
    @parity.register("ScaledTanh", domain="parity.example")
    def scaled_tanh(attrs, x, bias=None):
        y = attrs.get("alpha", 1.0) * np.tanh(attrs.get("beta", 1.0) * x)
        return [(y + (0 if bias is None else bias[0])).astype(x.dtype)]

    py = PluginRefRunner(OnnxFromPath(model), name="python-op")
    results.extend(Comparator.run([py], data_loader=[feed]))

    close = CompareFunc.simple(atol=1e-6, rtol=1e-6)
    assert bool(Comparator.compare_accuracy(results, compare_func=close))
    # Each runner ran its own implementation.
    expected = (1.5 * np.tanh(0.5 * feed["x"].astype(np.float64)) + 0.25).astype(np.float32)
    assert np.array_equal(results["cpp-plugin"][0]["y"], expected)
    in_float32 = (1.5 * np.tanh(0.5 * feed["x"]) + feed["bias"][0]).astype(np.float32)
    assert np.array_equal(results["python-op"][0]["y"], in_float32)

    # Loading the plugin again puts its kernel back.
    parity.load_plugin(EXAMPLE_PLUGIN)
    assert np.array_equal(run(model, **feed)["y"], expected)


def test_plugin_errors_become_parity_exceptions(tmp_path):
    expected = "failed to load plugin library '/no/such/lib.so' with dlopen"
    with pytest.raises(ParityException, match=expected):
        parity.load_plugin("/no/such/lib.so")


def test_register_rejects_a_non_callable():
    with pytest.raises(parity.ParityUsageError, match="must be callable"):
        parity.register("Nope", domain="test.python")(42)
