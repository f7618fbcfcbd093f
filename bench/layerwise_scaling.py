#!/usr/bin/python3
"""Layer-wise comparison's cost against depth: chains of N Adds over 1M floats (4 MiB tensors),
compared with every tensor marked. For each N: wall seconds, seconds per node and peak RSS of
the `parity run` process, for one reference pass (the yardstick: the least a layer-wise run can
cost) and for the layer-wise runs.

    bench/layerwise_scaling.py build/parity [--nodes 150,300,600,1200] [--budget 128M]
"""
import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper


def chain(path, nodes, size=1 << 20):
    one = helper.make_node("Constant", [], ["one"],
                           value=helper.make_tensor("v", TensorProto.FLOAT, [], [1.0]))
    adds = [helper.make_node("Add", ["x" if i == 1 else f"t{i - 1}", "one"], [f"t{i}"],
                             name=f"add_{i}") for i in range(1, nodes + 1)]
    graph = helper.make_graph(
        [one] + adds, f"chain{nodes}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [size])],
        [helper.make_tensor_value_info(f"t{nodes}", TensorProto.FLOAT, [size])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def measure(cmd):
    """Wall seconds, CPU seconds (user + system: what other loads on the machine change least)
    and peak RSS (MiB) of one child process; its output when it fails."""
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.execv(cmd[0], cmd)
    _, status, usage = os.wait4(pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stdout[-3000:]}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("parity")
    parser.add_argument("--nodes", default="150,300,600,1200")
    parser.add_argument("--budget", default="128M")
    parser.add_argument("--pairs", default="pluginref+onnxrt,pluginref+pluginref")
    args = parser.parse_args()
    parity = os.path.abspath(args.parity)
    print("| nodes | run | wall s | CPU s | CPU per node | peak RSS |")
    print("|---:|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as d:
        for n in [int(v) for v in args.nodes.split(",")]:
            model = os.path.join(d, f"chain{n}.onnx")
            chain(model, n)
            runs = [("one reference pass (yardstick)", ["--pluginref"])]
            for pair in args.pairs.split(","):
                a, b = pair.split("+")
                runs.append((f"--{a} --{b} mark all, --mark-budget {args.budget}",
                             [f"--{a}", f"--{b}", "--onnx-outputs", "mark", "all",
                              "--mark-budget", args.budget]))
            for label, flags in runs:
                seconds, cpu, peak = measure([parity, "run", model, *flags])
                print(f"| {n} | {label} | {seconds:.2f} | {cpu:.2f} | {cpu / n * 1000:.2f} ms "
                      f"| {peak:.0f} MiB |", flush=True)


if __name__ == "__main__":
    main()
