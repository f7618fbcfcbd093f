"""What a run costs in memory and leaves on disk (issue 15): a large MatMul's peak RSS within
1.5 times its weights on the reference."""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

from conftest import PARITY_CLI, tensor
from parity.json import load_json

# Runs a command in a fresh Python process that reports the peak RSS (KiB) of its one child,
# so that earlier children of pytest do not count.
_PEAK_RSS = (
    "import resource, subprocess, sys\n"
    "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "sys.stderr.write(r.stdout + r.stderr)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.exit(r.returncode)\n"
)


def peak_rss_mib(*command):
    r = subprocess.run([sys.executable, "-c", _PEAK_RSS, *command], capture_output=True, text=True)
    return r.returncode, int(r.stdout.split()[-1]) / 1024, r.stderr


def external_matmul_model(folder, m, k, n, seed=0):
    """x [m, k] @ w [k, n], w float32 in the external file weights.bin; returns (path, w)."""
    w = np.random.default_rng(seed).standard_normal((k, n), dtype=np.float32)
    w.tofile(os.path.join(folder, "weights.bin"))
    init = onnx.TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[k, n])
    init.data_location = TensorProto.EXTERNAL
    for key, value in (("location", "weights.bin"), ("offset", "0"), ("length", str(w.nbytes))):
        entry = init.external_data.add()
        entry.key, entry.value = key, value
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "matmul",
        [tensor("x", TensorProto.FLOAT, [m, k])], [tensor("y", TensorProto.FLOAT, [m, n])],
        [init])
    path = os.path.join(folder, "matmul.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8),
              path)
    return path, w


def test_large_constant_matmul_peaks_within_one_and_a_half_times_its_weights(tmp_path):
    # 256 MiB of float32 weights: packed whole in float64 they would take 512 MiB more.
    model, w = external_matmul_model(str(tmp_path), 4, 8192, 8192)
    weights_mib = w.nbytes / 2**20
    saved = tmp_path / "out.json"
    rc, peak, log = peak_rss_mib(PARITY_CLI, "run", model, "--pluginref", "--save-inputs",
                                 str(tmp_path / "in.json"), "--save-outputs", str(saved))
    assert rc == 0, log
    assert peak <= 1.5 * weights_mib, f"peak RSS {peak:.0f} MiB for {weights_mib:.0f} MiB of weights"
    # And the product is right: against NumPy in float64, within float32 rounding.
    x = load_json(tmp_path / "in.json")[0]["x"]
    y = load_json(saved)[0][1][0]["y"]
    expected = x.astype(np.float64) @ w.astype(np.float64)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-4)


def _tree_pids(pid):
    """pid and its descendants, from /proc."""
    pids, pending = [], [pid]
    while pending:
        p = pending.pop()
        pids.append(p)
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                pending += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return pids


def _tree_rss_mib(pid):
    total = 0
    for p in _tree_pids(pid):
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def test_endless_data_loader_infers_at_once_in_flat_memory_and_stops_on_sigint(tmp_path):
    # Polygraphy makes a list of the data loader's feeds before the first inference, so an
    # endless generator never starts and takes memory until the kernel kills it. Parity reads
    # feeds as it infers; one runner keeps no feed (only each iteration's small output).
    import signal
    import threading
    import time
    graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["x"], ["y"], keepdims=0)], "sum",
        [tensor("x", TensorProto.FLOAT, [1 << 20])], [tensor("y", TensorProto.FLOAT, [])])
    model = str(tmp_path / "sum.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
              model)
    script = tmp_path / "endless.py"
    script.write_text(
        "import numpy as np\n"
        "def load_data():\n"
        "    i = 0\n"
        "    while True:  # 4 MiB of fresh data per feed, forever\n"
        "        i += 1\n"
        "        yield {'x': np.full(1 << 20, i % 7, dtype=np.float32)}\n")
    proc = subprocess.Popen([PARITY_CLI, "run", model, "--pluginref", "--data-loader-script",
                             str(script)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, cwd=tmp_path)
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 60
        while not any("Inference Input(s)" in line for line in lines):
            assert proc.poll() is None, "".join(lines)
            assert time.monotonic() < deadline, "no inference began:\n" + "".join(lines)
            # (Materialising the feeds would take all the memory there is: stop well before.)
            assert _tree_rss_mib(proc.pid) < 1024, "feeds are being held before inference"
            time.sleep(0.1)
        time.sleep(1)
        start = _tree_rss_mib(proc.pid)
        time.sleep(3)
        grown = _tree_rss_mib(proc.pid) - start
        # Materialising would keep 4 MiB per feed, hundreds of feeds a second.
        assert grown < 64, f"memory grew by {grown:.0f} MiB in 3 s"
        children = _tree_pids(proc.pid)[1:]
        assert children, "the data loader runs in a Python child"
        # Ctrl-C, to parity alone: it must stop its Python child too, promptly.
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(timeout=5)
    # Ended by the signal itself, which a shell reports as status 130.
    assert rc == -signal.SIGINT, "".join(lines)
    assert "[!] Interrupted (SIGINT): the run stopped" in "".join(lines)
    time.sleep(0.5)
    for child in children:
        try:
            with open(f"/proc/{child}/status") as f:
                state = next(line for line in f if line.startswith("State:"))
        except OSError:
            continue  # gone
        assert "zombie" in state, f"the child {child} still runs: {state}"
