"""Comparator.run(use_subprocess=True): each runner in a child process, the same results as in
this process, and a runner whose process dies raises its own error instead of killing Python."""
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import parity
from parity import ParityException
from parity.backend.onnx import OnnxFromPath
from parity.backend.onnxrt import OnnxrtRunner, SessionFromOnnx
from parity.backend.pluginref import PluginRefRunner
from parity.comparator import Comparator

from test_python_ops import custom_op_model


def test_results_equal_a_run_in_this_process(identity_model):
    runners = [PluginRefRunner(OnnxFromPath(identity_model)),
               OnnxrtRunner(SessionFromOnnx(identity_model))]
    here = Comparator.run(runners, data_loader=None)
    isolated = Comparator.run(runners, use_subprocess=True)
    for name, iterations in here.items():
        for a, b in zip(iterations, isolated[name]):
            assert a.keys() == b.keys()
            for key in a.keys():
                assert np.array_equal(a[key], b[key])
    assert Comparator.compare_accuracy(isolated)
    # The runners themselves were only ever active in the children.
    assert not any(r.is_active for r in runners)


def test_a_crash_in_a_python_op_raises_that_runners_error(tmp_path):
    @parity.register("Crashes", domain="test.python")
    def crashes(attrs, x):
        os.kill(os.getpid(), signal.SIGSEGV)

    model = custom_op_model(tmp_path, "Crashes", "test.python", ["x"])
    runner = PluginRefRunner(OnnxFromPath(model), name="crashing")
    feed = [{"x": np.ones((2, 3), dtype=np.float32)}]
    with pytest.raises(ParityException) as info:
        Comparator.run([runner], data_loader=feed, use_subprocess=True)
    message = str(info.value)
    assert "crashing | Terminated prematurely during inference" in message
    assert "killed by signal 11 (Segmentation fault)" in message
    # The node and where its kernel came from.
    assert "while running node 'my_node' (Crashes, domain test.python) from a Python op" in message


def test_another_python_thread_holding_the_gil_does_not_hang_the_child(identity_model):
    # A second Python thread holds the GIL nearly all the time while Comparator.run forks (with
    # the GIL released): forked without CPython's fork protocol, the child's copy of the GIL
    # belonged to a thread the child does not have, and its first Python call (the model
    # loader) waited forever. Run in a fresh interpreter so that a hang is a timeout here.
    script = textwrap.dedent(f"""
        import threading
        from parity.backend.onnx import OnnxFromPath
        from parity.backend.pluginref import PluginRefRunner
        from parity.comparator import Comparator
        started, stop = threading.Event(), False
        def spin():
            started.set()
            while not stop:
                pass
        threading.Thread(target=spin, daemon=True).start()
        started.wait()
        for _ in range(20):
            Comparator.run([PluginRefRunner(OnnxFromPath({str(identity_model)!r}))],
                           use_subprocess=True)
        stop = True
        print("all runs finished")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all runs finished" in done.stdout
