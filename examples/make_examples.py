#!/usr/bin/python3
"""Writes the example models shipped in examples/ (run with Debian's python3-onnx).

    /usr/bin/python3 examples/make_examples.py

identity.onnx   x[1,1,2,2] -> Identity -> y  (Polygraphy's smallest test model)
tiny_cnn.onnx   a small image classifier: Conv, Relu, MaxPool, InstanceNormalization, Conv
                (stride 2), Relu, GlobalAveragePool, Flatten, Gemm, Softmax; a dynamic batch
                dimension "N"; fixed pseudo-random weights (seeded) so the file is reproducible.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(model, name):
    onnx.checker.check_model(model)
    path = os.path.join(HERE, name)
    onnx.save(model, path)
    print("wrote", path)


def identity():
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"], name="onnx_graphsurgeon_node_0")],
        "identity",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 2, 2])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                             producer_name="parity-examples")


def tiny_cnn():
    rng = np.random.RandomState(0)

    def weight(name, *shape, scale=0.5):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    inits = [
        weight("conv1.w", 8, 3, 3, 3), weight("conv1.b", 8, scale=0.1),
        weight("norm.scale", 8, scale=1.0), weight("norm.bias", 8, scale=0.1),
        weight("conv2.w", 16, 8, 3, 3, scale=0.2), weight("conv2.b", 16, scale=0.1),
        weight("fc.w", 16, 10), weight("fc.b", 10, scale=0.1),
    ]
    nodes = [
        helper.make_node("Conv", ["image", "conv1.w", "conv1.b"], ["conv1"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv1"], ["relu1"], name="relu1"),
        helper.make_node("MaxPool", ["relu1"], ["pool1"], name="pool1",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("InstanceNormalization", ["pool1", "norm.scale", "norm.bias"], ["norm"],
                         name="norm", epsilon=1e-5),
        helper.make_node("Conv", ["norm", "conv2.w", "conv2.b"], ["conv2"], name="conv2",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["conv2"], ["relu2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["relu2"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], name="fc"),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "tiny_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, 32, 32])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["N", 10])],
        initializer=inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                             producer_name="parity-examples")


if __name__ == "__main__":
    save(identity(), "identity.onnx")
    save(tiny_cnn(), "tiny_cnn.onnx")
