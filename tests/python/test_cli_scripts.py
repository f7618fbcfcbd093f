"""The CLI's Python-facing flags: --gen-script (the script does what the command does, with the
same results and exit status), --data-loader-script, --compare-func-script, --plugins."""
import os
import subprocess
import sys

import numpy as np
import pytest
from onnx import TensorProto, helper

import parity
from parity.json import load_json

from conftest import EXAMPLE_PLUGIN, PARITY_CLI, save_model, tensor

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TINY_CNN = os.path.join(ROOT, "examples", "tiny_cnn.onnx")
MODULE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(parity.__file__)))


def run_cli(*args, cwd):
    return subprocess.run([PARITY_CLI, *map(str, args)], cwd=cwd, capture_output=True, text=True)


def run_script(path, cwd):
    env = dict(os.environ, PYTHONPATH=MODULE_DIR)
    return subprocess.run([sys.executable, str(path)], cwd=cwd, env=env, capture_output=True,
                          text=True)


def assert_same_results(path0, path1):
    r0, r1 = load_json(path0), load_json(path1)
    assert len(r0) == len(r1) > 0
    for (_, its0), (_, its1) in zip(r0.items(), r1.items()):
        assert len(its0) == len(its1)
        for it0, it1 in zip(its0, its1):
            assert it0.keys() == it1.keys()
            for name in it0.keys():
                assert np.array_equal(it0[name], it1[name])


def last_lines(text, count=3):
    # The lines that state the verdicts, without runner names (they hold the time of day), and
    # without the command's final "PASSED/FAILED | Runtime" line, which a script does not print.
    lines = [line.split("|", 1)[0] for line in text.splitlines()
             if ("PASSED" in line or "FAILED" in line) and "| Runtime:" not in line]
    return lines[-count:]


def test_generated_script_gives_the_same_results_as_the_command(tmp_path):
    flags = ["--onnxrt", "--pluginref", "--iterations", "2", "--seed", "5", "--val-range", "[-2,2]",
             "--atol", "1e-4", "probs:1e-5", "--rtol", "1e-3", "--check-error-stat", "max",
             "--onnx-outputs", "mark", "all", "--warm-up", "1", "--validate"]
    cli = run_cli("run", TINY_CNN, *flags, "--save-outputs", tmp_path / "cli.json", cwd=tmp_path)
    assert cli.returncode == 0, cli.stdout + cli.stderr

    gen = run_cli("run", TINY_CNN, *flags, "--save-outputs", tmp_path / "script.json",
                  "--gen-script", tmp_path / "run.py", cwd=tmp_path)
    assert gen.returncode == 0, gen.stdout + gen.stderr
    assert not (tmp_path / "script.json").exists()  # generating does not run
    script = run_script(tmp_path / "run.py", cwd=tmp_path)
    assert script.returncode == 0, script.stdout + script.stderr
    assert_same_results(tmp_path / "cli.json", tmp_path / "script.json")
    assert "PASSED | All outputs matched" in script.stdout
    assert "PASSED | Output Validation" in script.stdout


def test_generated_script_fails_when_the_command_fails(tmp_path):
    saved = run_cli("run", TINY_CNN, "--pluginref", "--seed", "1", "--save-outputs",
                    tmp_path / "seed1.json", cwd=tmp_path)
    assert saved.returncode == 0, saved.stdout
    flags = ["--pluginref", "--seed", "2", "--load-outputs", tmp_path / "seed1.json"]
    cli = run_cli("run", TINY_CNN, *flags, cwd=tmp_path)
    assert cli.returncode == 1
    run_cli("run", TINY_CNN, *flags, "--gen-script", tmp_path / "run.py", cwd=tmp_path)
    script = run_script(tmp_path / "run.py", cwd=tmp_path)
    assert script.returncode == 1, script.stdout + script.stderr
    assert last_lines(script.stdout, 2) == last_lines(cli.stdout, 2)


@pytest.mark.parametrize("compare", [
    ["--compare", "distance", "--l2-tolerance", "1e-3"],
    ["--compare", "quality", "--psnr-tolerance", "200", "probs:300"],
])
def test_generated_script_with_metric_compare_funcs(tmp_path, compare):
    flags = ["--onnxrt", "--pluginref", *compare]
    cli = run_cli("run", TINY_CNN, *flags, cwd=tmp_path)
    run_cli("run", TINY_CNN, *flags, "--gen-script", tmp_path / "run.py", cwd=tmp_path)
    script = run_script(tmp_path / "run.py", cwd=tmp_path)
    assert cli.returncode == script.returncode, cli.stdout + script.stdout + script.stderr
    assert last_lines(script.stdout, 2) == last_lines(cli.stdout, 2)


def test_generated_script_reports_errors_like_the_command(tmp_path):
    cli = run_cli("run", tmp_path / "missing.onnx", "--pluginref", cwd=tmp_path)
    run_cli("run", tmp_path / "missing.onnx", "--pluginref", "--gen-script", tmp_path / "run.py",
            cwd=tmp_path)
    script = run_script(tmp_path / "run.py", cwd=tmp_path)
    assert cli.returncode == script.returncode == 1
    # The fatal "[!]" line is an error: it goes to stderr, from the command and the script alike.
    assert "[!]" in script.stderr and "missing.onnx" in script.stderr
    assert "[!]" in cli.stderr and "[!]" not in cli.stdout


def test_gen_script_to_stdout_and_bad_values(tmp_path):
    out = run_cli("run", TINY_CNN, "--pluginref", "--gen-script", "-", cwd=tmp_path)
    assert out.returncode == 0
    assert "PluginRefRunner(model)" in out.stdout
    # The script is printed between the command's own log lines.
    start = out.stdout.index("#!/usr/bin/env python3")
    end = "sys.exit(report_status(1))\n"
    script = out.stdout[start:out.stdout.rindex(end) + len(end)]
    compile(script, "generated", "exec")
    bad = run_cli("run", TINY_CNN, "--pluginref", "--atol", "abc", "--gen-script", "-",
                  cwd=tmp_path)
    assert bad.returncode == 2
    assert "failed to parse --atol with value 'abc'" in bad.stdout + bad.stderr


DATA_LOADER = """
import numpy as np

def load_data():
    for i in range(3):
        yield {"image": np.full((1, 3, 32, 32), 0.1 * i, dtype=np.float32)}

def other_loader():
    return [{"image": np.ones((1, 3, 32, 32), dtype=np.float32)}]
"""


def test_data_loader_script(tmp_path):
    (tmp_path / "data.py").write_text(DATA_LOADER)
    cli = run_cli("run", TINY_CNN, "--pluginref", "--onnxrt", "--atol", "1e-4",
                  "--data-loader-script", "data.py", "--save-inputs", "inputs.json", cwd=tmp_path)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    feeds = load_json(tmp_path / "inputs.json")
    assert len(feeds) == 3
    for i, feed in enumerate(feeds):
        assert np.array_equal(feed["image"], np.full((1, 3, 32, 32), 0.1 * i, dtype=np.float32))
    assert "PASSED | Runtime" in cli.stdout

    other = run_cli("run", TINY_CNN, "--pluginref", "--data-loader-script", "data.py:other_loader",
                    "--save-inputs", "other.json", cwd=tmp_path)
    assert other.returncode == 0, other.stdout + other.stderr
    assert len(load_json(tmp_path / "other.json")) == 1


def test_data_loader_script_that_is_missing_is_a_usage_error(tmp_path):
    cli = run_cli("run", TINY_CNN, "--pluginref", "--data-loader-script", "nope.py", cwd=tmp_path)
    assert cli.returncode == 2
    assert "failed to use script 'nope.py'" in cli.stdout + cli.stderr


COMPARE_FUNC = """
def compare_outputs(run0, run1):
    return {name: False for name in run0.keys()}

def always_pass(run0, run1):
    assert run0.runner_name != run1.runner_name
    return {name: True for name in run0.keys()}
"""


def test_compare_func_script(tmp_path):
    (tmp_path / "compare.py").write_text(COMPARE_FUNC)
    fail = run_cli("run", TINY_CNN, "--pluginref", "--onnxrt", "--compare-func-script",
                   "compare.py", cwd=tmp_path)
    assert fail.returncode == 1, fail.stdout + fail.stderr
    ok = run_cli("run", TINY_CNN, "--pluginref", "--onnxrt", "--compare-func-script",
                 "compare.py:always_pass", cwd=tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "Pass Rate: 100.0%" in ok.stdout


def test_plugins_flag_runs_a_custom_op(tmp_path):
    node = helper.make_node("ScaledTanh", ["x"], ["y"], domain="parity.example", alpha=2.0)
    model = save_model(tmp_path / "custom.onnx", [node], [tensor("x", TensorProto.FLOAT, [3, 4])],
                       [tensor("y", TensorProto.FLOAT, [3, 4])],
                       opsets=(("", 17), ("parity.example", 1)))
    missing = run_cli("run", model, "--pluginref", cwd=tmp_path)
    assert missing.returncode == 1
    # The fatal "[!]" message is on stderr.
    assert "Op: ScaledTanh does not have a reference implementation registered!" in missing.stderr

    ok = run_cli("run", model, "--pluginref", "--plugins", EXAMPLE_PLUGIN, "--seed", "3",
                 "--save-outputs", "out.json", "--save-inputs", "in.json", cwd=tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    x = load_json(tmp_path / "in.json")[0]["x"]
    y = load_json(tmp_path / "out.json")[0][1][0]["y"]
    assert np.array_equal(y, (2.0 * np.tanh(x.astype(np.float64))).astype(np.float32))

    run_cli("run", model, "--pluginref", "--plugins", EXAMPLE_PLUGIN, "--seed", "3",
            "--save-outputs", "script.json", "--gen-script", "run.py", cwd=tmp_path)
    script = run_script(tmp_path / "run.py", cwd=tmp_path)
    assert script.returncode == 0, script.stdout + script.stderr
    assert_same_results(tmp_path / "out.json", tmp_path / "script.json")


def test_bad_plugin_is_a_clear_error(tmp_path):
    cli = run_cli("run", TINY_CNN, "--pluginref", "--plugins", "/no/such/plugin.so", cwd=tmp_path)
    assert cli.returncode == 1
    assert "failed to load plugin library '/no/such/plugin.so' with dlopen" in cli.stderr
