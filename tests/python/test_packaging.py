"""The pip route (pyproject.toml, setup.py): a wheel built from the build tree test.sh made
(PARITY_BUILD_DIR, nothing compiled again), installed into a fresh virtual environment with no
compiler and no package index, and used from there: `import parity`, Comparator.run of two
runners, and the `parity` command. Also what pip refuses: another Python, another platform,
NumPy or onnx outside the declared range."""
import json
import os
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from parity.json import load_json

from conftest import BUILD_DIR, save_model, tensor

ROOT = Path(__file__).resolve().parents[2]


def cmake_version():
    """The version CMake itself read from project(parity VERSION ...), from the build tree."""
    cache = (Path(BUILD_DIR) / "CMakeCache.txt").read_text()
    return re.search(r"^CMAKE_PROJECT_VERSION:STATIC=(.*)$", cache, re.M).group(1)


def clean_env(**extra):
    # test.sh points PYTHONPATH at the build tree: the venv must import its own copy instead.
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "PARITY_PYTHON", "PARITY_ORT_LIB")}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", **extra)
    return env


def run(command, **kwargs):
    kwargs.setdefault("env", clean_env())
    return subprocess.run([str(c) for c in command], capture_output=True, text=True, **kwargs)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheels")
    built = run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
                 "--no-index", "-w", out, ROOT],
                env=clean_env(PARITY_BUILD_DIR=BUILD_DIR))
    assert built.returncode == 0, built.stdout + built.stderr
    wheels = list(out.glob("parity-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory):
    """A fresh venv that sees Debian's numpy and onnx, with the wheel installed by its own pip."""
    venv = tmp_path_factory.mktemp("venv")
    created = run([sys.executable, "-m", "venv", "--system-site-packages", venv])
    assert created.returncode == 0, created.stdout + created.stderr
    # Only the venv on PATH and no compiler: the install has nothing to build.
    installed = run([venv / "bin" / "python", "-m", "pip", "install", "--no-index", wheel],
                    env=clean_env(PATH=str(venv / "bin"), CC="false", CXX="false"))
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert "Successfully installed parity-" in installed.stdout
    return venv


@pytest.fixture(scope="module")
def affine_relu(tmp_path_factory):
    """y = Relu(x * w + b), x float32 2x3, w and b initializers; returns (path, w, b)."""
    w = np.array([[0.5, -1.0, 2.0]], dtype=np.float32)
    b = np.array([[0.25, 0.5, -0.75]], dtype=np.float32)
    path = save_model(
        tmp_path_factory.mktemp("model") / "affine_relu.onnx",
        [helper.make_node("Mul", ["x", "w"], ["xw"]),
         helper.make_node("Add", ["xw", "b"], ["xwb"]),
         helper.make_node("Relu", ["xwb"], ["y"])],
        [tensor("x", TensorProto.FLOAT, [2, 3])],
        [tensor("y", TensorProto.FLOAT, [2, 3])],
        initializers=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")],
    )
    return path, w, b


def affine_relu_expected(x, w, b):
    return np.maximum(x * w + b, 0).astype(np.float32)


def test_wheel_is_tagged_for_this_interpreter_and_platform(wheel):
    name, version, python_tag, abi_tag, platform_tag = wheel.stem.split("-")
    interpreter = f"cp{sys.version_info.major}{sys.version_info.minor}"
    assert (name, version) == ("parity", cmake_version())
    assert (python_tag, abi_tag) == (interpreter, interpreter)
    assert platform_tag == sysconfig.get_platform().replace("-", "_").replace(".", "_")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        metadata = zf.read(f"parity-{version}.dist-info/METADATA").decode()
        exe_mode = zf.getinfo("parity/_bin/parity").external_attr >> 16
    assert f"parity/_parity{sysconfig.get_config_var('EXT_SUFFIX')}" in names
    assert exe_mode & 0o111, oct(exe_mode)  # pip restores the executable bit from this
    assert not [n for n in names if "onnxruntime" in n]  # never bundled
    assert f"Version: {cmake_version()}" in metadata.splitlines()
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert sorted(requires) == ["Requires-Dist: numpy (<2,>=1.24)", "Requires-Dist: onnx (>=1.12)"]


@pytest.mark.parametrize("target", [
    ["--python-version", f"{sys.version_info.major}.{sys.version_info.minor + 1}"],
    ["--python-version", f"{sys.version_info.major}.{sys.version_info.minor - 1}"],
    ["--platform", "manylinux2014_aarch64"],
])
def test_pip_refuses_the_wheel_for_another_python_or_platform(wheel, tmp_path, target):
    refused = run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps",
                   "--only-binary=:all:", *target, "--target", tmp_path / "t", wheel])
    assert refused.returncode != 0
    assert f"{wheel.name} is not a supported wheel on this platform" in refused.stderr
    assert not (tmp_path / "t" / "parity").exists()


def fake_distribution(site_packages, name, version):
    """Installed-package metadata only: what pip reads to decide whether a requirement is met."""
    info = site_packages / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "RECORD").write_text("")


@pytest.mark.parametrize("numpy_version, onnx_version, accepted", [
    ("1.24.0", "1.12.0", True),
    ("1.26.4", "1.16.0", True),
    ("1.23.5", "1.12.0", False),
    ("2.0.0", "1.12.0", False),
    ("1.24.0", "1.11.0", False),
])
def test_pip_checks_numpy_and_onnx_versions(wheel, tmp_path, numpy_version, onnx_version,
                                            accepted):
    env_dir = tmp_path / "env"
    created = run([sys.executable, "-m", "venv", "--without-pip", env_dir])
    assert created.returncode == 0, created.stdout + created.stderr
    purelib = run([env_dir / "bin" / "python", "-c",
                   "import sysconfig; print(sysconfig.get_path('purelib'))"]).stdout.strip()
    fake_distribution(Path(purelib), "numpy", numpy_version)
    fake_distribution(Path(purelib), "onnx", onnx_version)
    result = run([sys.executable, "-m", "pip", "--python", env_dir / "bin" / "python", "install",
                  "--no-index", "--no-compile", wheel])
    if accepted:
        assert result.returncode == 0, result.stdout + result.stderr
    else:
        assert result.returncode != 0, result.stdout
        wanted = "numpy<2,>=1.24" if onnx_version == "1.12.0" else "onnx>=1.12"
        assert f"Could not find a version that satisfies the requirement {wanted}" in result.stderr


def test_import_in_the_venv_is_the_installed_copy_with_one_version(venv):
    probe = run([venv / "bin" / "python", "-c",
                 "import json, importlib.metadata, parity, parity.backend.onnxrt; "
                 "print(json.dumps([parity.__file__, parity.__version__, "
                 "importlib.metadata.version('parity')]))"])
    assert probe.returncode == 0, probe.stdout + probe.stderr
    assert probe.stderr == ""  # importing says nothing (ONNX Runtime is not loaded yet)
    module_file, version, dist_version = json.loads(probe.stdout)
    assert Path(module_file).is_relative_to(venv)
    assert version == dist_version == cmake_version()
    cli = run([venv / "bin" / "parity", "--version"])
    assert cli.returncode == 0, cli.stdout + cli.stderr
    assert cli.stdout.strip() == f"parity {cmake_version()}"


COMPARATOR_SCRIPT = """
import sys
import numpy as np
from parity.backend.onnx import OnnxFromPath
from parity.backend.onnxrt import OnnxrtRunner, SessionFromOnnx
from parity.backend.pluginref import PluginRefRunner
from parity.comparator import Comparator

model, out = sys.argv[1], sys.argv[2]
feeds = [{"x": np.array([[1.0, 2.0, -3.0], [-0.5, 0.25, 4.0]], dtype=np.float32)},
         {"x": np.array([[-1.0, -2.0, 3.0], [0.5, -0.25, -4.0]], dtype=np.float32)}]
runners = [PluginRefRunner(OnnxFromPath(model)), OnnxrtRunner(SessionFromOnnx(model))]
results = Comparator.run(runners, data_loader=feeds)
passed = bool(Comparator.compare_accuracy(results))
arrays = {f"{i}_{k}_x": feed["x"] for i, feed in enumerate(feeds) for k in range(len(runners))}
for k, runner in enumerate(runners):
    for i, result in enumerate(results[runner.name]):
        arrays[f"{i}_{k}_y"] = result["y"]
np.savez(out, **arrays)
print("accuracy passed" if passed else "accuracy failed")
"""


def test_comparator_run_of_two_runners_in_the_venv(venv, affine_relu, tmp_path):
    model, w, b = affine_relu
    (tmp_path / "compare.py").write_text(COMPARATOR_SCRIPT)
    ran = run([venv / "bin" / "python", tmp_path / "compare.py", model, tmp_path / "out.npz"],
              cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "accuracy passed" in ran.stdout
    with np.load(tmp_path / "out.npz") as out:
        for i in range(2):
            for k in range(2):  # pluginref, then onnxrt
                expected = affine_relu_expected(out[f"{i}_{k}_x"], w, b)
                np.testing.assert_allclose(out[f"{i}_{k}_y"], expected, rtol=1e-6, atol=0)


DATA_LOADER = """
import json, sys
import numpy as np
import parity

# Which interpreter and which parity the command ran this script with.
with open("loader_ran_in.json", "w") as f:
    json.dump([sys.prefix, parity.__file__], f)

def load_data():
    yield {"x": np.array([[3.0, -1.0, 0.5], [-2.0, 0.0, 1.5]], dtype=np.float32)}
"""


def test_parity_command_in_the_venv(venv, affine_relu, tmp_path):
    model, w, b = affine_relu
    (tmp_path / "data.py").write_text(DATA_LOADER)
    cli = run([venv / "bin" / "parity", "run", model, "--onnxrt", "--pluginref",
               "--data-loader-script", "data.py", "--save-inputs", "inputs.json",
               "--save-outputs", "outputs.json"], cwd=tmp_path)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    assert "PASSED | Runtime" in cli.stdout
    prefix, module_file = json.loads((tmp_path / "loader_ran_in.json").read_text())
    assert Path(prefix) == venv and Path(module_file).is_relative_to(venv)
    x = load_json(tmp_path / "inputs.json")[0]["x"]
    outputs = load_json(tmp_path / "outputs.json")
    assert len(outputs) == 2
    for _, iterations in outputs.items():
        np.testing.assert_allclose(iterations[0]["y"], affine_relu_expected(x, w, b), rtol=1e-6)


def test_without_onnx_runtime_import_works_and_the_runner_says_how_to_provide_it(
        venv, affine_relu, tmp_path):
    model, w, b = affine_relu
    missing = tmp_path / "nowhere" / "libonnxruntime.so.1"
    script = (
        "import sys, numpy as np, parity\n"
        "from parity.backend.onnx import OnnxFromPath\n"
        "from parity.backend.onnxrt import OnnxrtRunner, SessionFromOnnx\n"
        "from parity.backend.pluginref import PluginRefRunner\n"
        "x = np.ones((2, 3), dtype=np.float32)\n"
        "with PluginRefRunner(OnnxFromPath(sys.argv[1])) as r:\n"
        "    np.save(sys.argv[2], r.infer({'x': x})['y'])\n"
        "try:\n"
        "    with OnnxrtRunner(SessionFromOnnx(sys.argv[1])) as r:\n"
        "        r.infer({'x': x})\n"
        "except parity.ParityException as e:\n"
        "    print(e)\n"
        "    sys.exit(3)\n"
    )
    ran = run([venv / "bin" / "python", "-c", script, model, tmp_path / "ref.npy"],
              env=clean_env(PARITY_ORT_LIB=str(missing)))
    assert ran.returncode == 3, ran.stdout + ran.stderr
    np.testing.assert_allclose(np.load(tmp_path / "ref.npy"),
                               affine_relu_expected(np.ones((2, 3), np.float32), w, b), rtol=1e-6)
    message = ran.stdout
    assert f"failed to load ONNX Runtime from '{missing}'" in message
    assert "PARITY_ORT_LIB" in message and "--ort-lib" in message
