"""Constant folding, measured side by side: a fully connected layer (MatMul [8, 4096] x
[4096, 4096], AlexNet's and ZFNet's classifier size) whose weights come from ConstantOfShape
and Mul (an all-constant subgraph) against the same MatMul with the weights as an initializer (the
yardstick: weights packed once). With folding both run the same kernels on the same packed
weights, so the ratio is about 1. A third model takes the Mul's scale as a graph input, so its
weights cannot be folded: it shows what every inference paid before (weights rebuilt and
repacked each time).

    PYTHONPATH=build/python /usr/bin/python3 bench/constant_folding_bench.py [rounds]
"""
import statistics
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from parity.backend.onnx import GsFromOnnx, OnnxFromPath
from parity.backend.pluginref import PluginRefRunner

N, K = 8, 4096


def model(path, folded_weights, scale_input=False):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [N, K])
    inputs = [x]
    if scale_input:
        inputs.append(helper.make_tensor_value_info("scale", TensorProto.FLOAT, [1, K]))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    scale = numpy_helper.from_array(np.full([1, K], 0.01, np.float32), "scale")
    if folded_weights:
        shape = numpy_helper.from_array(np.array([K, K], np.int64), "shape")
        nodes = [helper.make_node("ConstantOfShape", ["shape"], ["ones"],
                                  value=numpy_helper.from_array(np.ones([1], np.float32))),
                 helper.make_node("Mul", ["ones", "scale"], ["w"])]
        inits = [shape] if scale_input else [shape, scale]
    else:
        nodes = []
        inits = [numpy_helper.from_array(np.full([K, K], 0.01, np.float32), "w")]
    nodes.append(helper.make_node("MatMul", ["x", "w"], ["y"]))
    g = helper.make_graph(nodes, "g", inputs, [y], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def median_ms(runner, feed, n=3):
    times = []
    for _ in range(n):
        start = time.perf_counter()
        runner.infer(feed)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    d = tempfile.mkdtemp()
    made, given, fed = d + "/made.onnx", d + "/given.onnx", d + "/fed.onnx"
    model(made, True)
    model(given, False)
    model(fed, True, scale_input=True)
    feed = {"x": np.random.RandomState(0).randn(N, K).astype(np.float32)}
    feed_c = dict(feed, scale=np.full([1, K], 0.01, np.float32))
    with PluginRefRunner(GsFromOnnx(OnnxFromPath(made)), threads=1) as a, \
            PluginRefRunner(GsFromOnnx(OnnxFromPath(given)), threads=1) as b, \
            PluginRefRunner(GsFromOnnx(OnnxFromPath(fed)), threads=1) as c:
        a.infer(feed), b.infer(feed), c.infer(feed_c)
        ra, rb, rc, ratio, ratio_c = [], [], [], [], []
        for _ in range(rounds):
            ta, tb, tc = median_ms(a, feed), median_ms(b, feed), median_ms(c, feed_c)
            ra.append(ta), rb.append(tb), rc.append(tc)
            ratio.append(ta / tb), ratio_c.append(tc / tb)
        same = np.array_equal(a.infer(feed)["y"], b.infer(feed)["y"]) and \
            np.array_equal(c.infer(feed_c)["y"], b.infer(feed)["y"])
    print(f"| weights as an initializer (yardstick) | {statistics.median(rb):.2f} ms | 1.00 |")
    print(f"| weights from ConstantOfShape * Mul (folded) | {statistics.median(ra):.2f} ms | "
          f"{statistics.median(ratio):.2f} |")
    print(f"| the same with the scale fed (not foldable) | {statistics.median(rc):.2f} ms | "
          f"{statistics.median(ratio_c):.2f} |")
    print(f"same outputs: {same}")


if __name__ == "__main__":
    main()
