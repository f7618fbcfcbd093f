#!/usr/bin/env python3
"""Dataset runs on a Dask cluster (parity.distributed): throughput of two workers against one
on a compute-bound model, and the scheduling overhead per feed on a tiny model, each against
the same run in one process (the yardstick).

    PYTHONPATH=build/python python3 bench/dask_dataset_bench.py [--feeds N] [--address ADDR]

With --address the cluster at that scheduler is measured instead of local clusters (start
workers with `dask worker ADDR --nthreads 1` on each machine; the model and this script must be
at the same path on every worker).
"""
import argparse
import os
import sys
import tempfile
import time

import cloudpickle
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from parity.backend.onnx import OnnxFromPath
from parity.backend.pluginref import PluginRefRunner
from parity.comparator import CompareFunc, DataLoader
from parity.dataset import run_dataset
from parity.distributed import local_cluster, run_dataset as run_distributed
from parity.logger import G_LOGGER

MODEL = {}


def chain_model(path, width, layers):
    rng = np.random.RandomState(0)
    nodes, inits, prev = [], [], "x"
    for k in range(layers):
        w = (rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32)
        inits.append(numpy_helper.from_array(w, f"W{k}"))
        out = "y" if k == layers - 1 else f"h{k}"
        nodes += [helper.make_node("MatMul", [prev, f"W{k}"], [f"m{k}"]),
                  helper.make_node("Tanh", [f"m{k}"], [out])]
        prev = out
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [width, width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [width, width])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                ir_version=8), path)
    return path


def setup():
    # Two reference runners of one thread each: the work is the interpreter's, all of it on
    # the worker's core.
    loaded = OnnxFromPath(MODEL["path"])
    return [PluginRefRunner(loaded, threads=1, name="ref-a"),
            PluginRefRunner(loaded, threads=1, name="ref-b")], CompareFunc.simple()


REPEAT = {"n": 3}


def timed(fn):
    """The best of REPEAT runs: on a shared machine the least disturbed run is the measure."""
    best, result = None, None
    for _ in range(REPEAT["n"]):
        start = time.perf_counter()
        result = fn()
        t = time.perf_counter() - start
        best = t if best is None else min(best, t)
    return best, result


def measure(path, feeds, batch, workers, address):
    MODEL["path"] = path
    runners, compare = setup()
    t_local, local = timed(lambda: run_dataset(runners, DataLoader(iterations=feeds), compare))
    out = {"local": t_local}
    if address:
        t, remote = timed(lambda: run_distributed(setup, DataLoader(iterations=feeds),
                                                  address=address, batch_size=batch))
        assert remote.iterations == local.iterations
        out["cluster"] = t
        return out
    for n in workers:
        with local_cluster(n_workers=n) as cluster:
            from distributed import Client

            with Client(cluster) as client:
                # Warm the workers (model loaded, runners active) before timing.
                run_distributed(setup, DataLoader(iterations=n), client=client, batch_size=1)
                t, remote = timed(lambda: run_distributed(setup, DataLoader(iterations=feeds),
                                                          client=client, batch_size=batch))
        assert remote.iterations == local.iterations  # bit for bit, every record
        out[n] = t
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--feeds", type=int, default=64)
    p.add_argument("--address")
    p.add_argument("--repeat", type=int, default=3, help="best of N runs per measurement")
    p.add_argument("--batch", type=int, default=4, help="feeds per task, compute-bound model")
    args = p.parse_args()
    REPEAT["n"] = args.repeat
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    # Nothing is printed per feed, here or on the workers, so only the work is timed.
    G_LOGGER.severity = G_LOGGER.CRITICAL
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    with tempfile.TemporaryDirectory() as d:
        heavy = chain_model(os.path.join(d, "heavy.onnx"), width=384, layers=8)
        tiny = chain_model(os.path.join(d, "tiny.onnx"), width=2, layers=1)
        print(f"load average before: {os.getloadavg()}")
        h = measure(heavy, args.feeds, batch=args.batch, workers=(1, 2), address=args.address)
        print(f"compute-bound model, {args.feeds} feeds, batches of {args.batch}: in process "
              f"{h['local']:.2f} s", end="")
        if args.address:
            print(f", cluster {h['cluster']:.2f} s")
        else:
            print(f", 1 worker {h[1]:.2f} s, 2 workers {h[2]:.2f} s, "
                  f"2 workers / 1 worker throughput: {h[1] / h[2]:.2f}x")
        n = args.feeds * 8
        for batch in (1, 8, 64):
            t = measure(tiny, n, batch=batch, workers=(1,), address=args.address)
            remote = t["cluster"] if args.address else t[1]
            print(f"tiny model, {n} feeds, batch {batch}: in process {t['local'] / n * 1e6:.0f} us "
                  f"per feed, Dask {remote / n * 1e6:.0f} us per feed, overhead "
                  f"{(remote - t['local']) / n * 1e6:.0f} us per feed")
        print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
