"""Shared fixtures: where the build is, and small ONNX models written with onnx.helper."""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import parity


def _build_dir():
    # test.sh sets PARITY_BUILD_DIR; otherwise the module is <build>/python/parity/_parity*.so.
    env = os.environ.get("PARITY_BUILD_DIR")
    if env:
        return os.path.abspath(env)
    module = os.path.abspath(parity._parity.__file__)
    return os.path.dirname(os.path.dirname(os.path.dirname(module)))


BUILD_DIR = _build_dir()
PARITY_CLI = os.path.join(BUILD_DIR, "parity")
EXAMPLE_PLUGIN = os.path.join(BUILD_DIR, "examples", "plugin", "libparity_example_plugin.so")


def save_model(path, nodes, inputs, outputs, initializers=(), opsets=(("", 17),), name="graph"):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets], ir_version=8
    )
    onnx.save(model, str(path))
    return str(path)


def tensor(name, elem_type, shape):
    return helper.make_tensor_value_info(name, elem_type, shape)


@pytest.fixture
def identity_model(tmp_path):
    """x (float32, 1x1x2x2) -> Identity -> y, as in Polygraphy's tests."""
    return save_model(
        tmp_path / "identity.onnx",
        [helper.make_node("Identity", ["x"], ["y"])],
        [tensor("x", TensorProto.FLOAT, [1, 1, 2, 2])],
        [tensor("y", TensorProto.FLOAT, [1, 1, 2, 2])],
    )


@pytest.fixture
def identity_identity_model(tmp_path):
    """X (64x64) -> Identity -> Identity -> identity_out_2."""
    return save_model(
        tmp_path / "identity_identity.onnx",
        [
            helper.make_node("Identity", ["X"], ["identity_out_0"]),
            helper.make_node("Identity", ["identity_out_0"], ["identity_out_2"]),
        ],
        [tensor("X", TensorProto.FLOAT, [64, 64])],
        [tensor("identity_out_2", TensorProto.FLOAT, [64, 64])],
    )


@pytest.fixture
def and_model(tmp_path):
    return save_model(
        tmp_path / "and.onnx",
        [helper.make_node("And", ["x", "y"], ["z"])],
        [tensor("x", TensorProto.BOOL, [3]), tensor("y", TensorProto.BOOL, [3])],
        [tensor("z", TensorProto.BOOL, [3])],
    )


@pytest.fixture
def dim_param_model(tmp_path):
    return save_model(
        tmp_path / "dim_param.onnx",
        [helper.make_node("Identity", ["input"], ["output"])],
        [tensor("input", TensorProto.FLOAT, ["dim0", 16, 128])],
        [tensor("output", TensorProto.FLOAT, ["dim0", 16, 128])],
    )


@pytest.fixture
def reshape_model(tmp_path):
    """The output's shape is computed by shape ops (Polygraphy's test_shape_output)."""
    return save_model(
        tmp_path / "reshape.onnx",
        [
            helper.make_node("Shape", ["x"], ["shape"]),
            helper.make_node("ReduceProd", ["shape"], ["size"], keepdims=1),
            helper.make_node("Reshape", ["x", "size"], ["y"]),
        ],
        [tensor("x", TensorProto.FLOAT, [1, 3, 2, 2])],
        [tensor("y", TensorProto.FLOAT, [12])],
    )


def random_input(shape, dtype=np.float32, seed=0):
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype(dtype)
