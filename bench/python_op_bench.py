#!/usr/bin/env python3
"""What a Python reference op costs over a C++ one, and what `import parity` costs.

The model is a chain of N custom-op nodes (parity.example::ScaledTanh) on a small tensor. It
runs through PluginRefRunner.infer once with the op from the C++ plugin (examples/plugin), once
with the same op written in Python (@parity.register); the difference per node is the cost of
calling into Python (GIL, NumPy views of the inputs, the call, checking and sharing the
outputs) plus NumPy's own work on the tensor. `import parity` is timed in fresh interpreters,
beside a bare interpreter and `import numpy` (which parity needs anyway).

    PYTHONPATH=build/python /usr/bin/python3 bench/python_op_bench.py [build folder]
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper

import parity
from parity.backend.onnx import OnnxFromPath
from parity.backend.pluginref import PluginRefRunner

NODES = 32
SHAPE = (4, 16)  # 64 floats
CALLS = 300
REPEATS = 7


def chain_model(path):
    nodes = [
        helper.make_node("ScaledTanh", [f"t{i}"], [f"t{i + 1}"], domain="parity.example", alpha=1.0)
        for i in range(NODES)
    ]
    graph = helper.make_graph(
        nodes, "chain",
        [helper.make_tensor_value_info("t0", TensorProto.FLOAT, SHAPE)],
        [helper.make_tensor_value_info(f"t{NODES}", TensorProto.FLOAT, SHAPE)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                     helper.make_opsetid("parity.example", 1)])
    onnx.save(model, path)


def seconds_per_infer(model_path, feed):
    """Median over REPEATS of the mean time of CALLS infer() calls."""
    with PluginRefRunner(OnnxFromPath(model_path)) as runner:
        runner.infer(feed)  # warm up
        samples = []
        for _ in range(REPEATS):
            start = time.perf_counter()
            for _ in range(CALLS):
                runner.infer(feed)
            samples.append((time.perf_counter() - start) / CALLS)
    return statistics.median(samples)


def seconds_to_run(code, env):
    samples = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], env=env, check=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main():
    default_build = os.path.join(os.path.dirname(__file__), "..", "build")
    build = sys.argv[1] if len(sys.argv) > 1 else default_build
    plugin = os.path.join(build, "examples", "plugin", "libparity_example_plugin.so")
    feed = {"t0": np.random.RandomState(0).uniform(-1, 1, SHAPE).astype(np.float32)}
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "chain.onnx")
        chain_model(model)

        parity.load_plugin(plugin)
        cpp = seconds_per_infer(model, feed)

        @parity.register("ScaledTanh", domain="parity.example")
        def scaled_tanh(attrs, x):
            return [(attrs["alpha"] * np.tanh(x)).astype(np.float32)]

        py = seconds_per_infer(model, feed)

        @parity.register("ScaledTanh", domain="parity.example")
        def passthrough(attrs, x):
            return [x]  # no NumPy work: the call itself

        bare = seconds_per_infer(model, feed)

    env = dict(os.environ)
    python = seconds_to_run("pass", env)
    numpy_import = seconds_to_run("import numpy", env)
    parity_import = seconds_to_run("import parity", env)
    everything = seconds_to_run(
        "import parity.backend.onnx, parity.backend.pluginref, parity.backend.onnxrt, "
        "parity.comparator, parity.json, parity.func", env)

    us = 1e6
    print(f"chain of {NODES} ScaledTanh nodes on {SHAPE} float32, {CALLS} infer() calls, "
          f"median of {REPEATS}")
    for label, seconds in (("C++ plugin op", cpp), ("Python op (np.tanh)", py),
                           ("Python op (return [x])", bare)):
        print(f"  {label + ':':26s}{seconds * us / NODES:8.2f} us per node "
              f"({seconds * us:.1f} us per infer)")
    print(f"  overhead of Python over C++: {(py - cpp) * us / NODES:.2f} us per node, "
          f"of which the call itself {(bare - cpp) * us / NODES:.2f} us")
    print(f"start-up, fresh interpreter, median of {REPEATS}")
    print(f"  python3 -c pass:          {python * 1e3:8.1f} ms")
    print(f"  import numpy:             {numpy_import * 1e3:8.1f} ms")
    print(f"  import parity:            {parity_import * 1e3:8.1f} ms "
          f"(NumPy is imported later, by the first array that crosses)")
    print(f"  import every submodule:   {everything * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
