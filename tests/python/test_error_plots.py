"""CompareFunc.simple's figures of the errors: `parity run --save-heatmaps DIR
--save-error-metrics-plot DIR` (drawn by a child Python only when asked for) and
CompareFunc.simple(save_heatmaps=..., save_error_metrics_plot=...) in Python. The file names are
checked against what Polygraphy wrote (tests/cli/fixtures/plots), the images are decoded with
matplotlib and must show the compared data."""
import base64
import io
import os
import re
import runpy
import stat
import subprocess
import sys

import matplotlib
import matplotlib.image
import numpy as np

import parity
from parity.comparator import Comparator, CompareFunc, IterationResult, RunResults

from conftest import PARITY_CLI

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIXTURES = os.path.join(ROOT, "tests", "cli", "fixtures", "plots")


def run_cli(*args, cwd, env=None):
    return subprocess.run([PARITY_CLI, *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          env=env)


def save_results(path, name, iterations):
    """A results file of one runner, one dict of outputs per iteration."""
    results = RunResults()
    results.append((name, [IterationResult(outs, runner_name=name) for outs in iterations]))
    results.save(str(path))
    return str(path)


def fixture_lines(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def svg_images(path):
    """The raster images embedded in a heatmap SVG, as RGBA arrays, in drawing order."""
    with open(path) as f:
        text = f.read()
    found = re.findall(r"data:image/png;base64,\s*([A-Za-z0-9+/=\s]+)", text)
    return [matplotlib.image.imread(io.BytesIO(base64.b64decode("".join(b.split()))))
            for b in found]


def plasma_values(rgba):
    """Each pixel's position (0..255) on the plasma colour map: the drawn value, normalized."""
    table = matplotlib.colormaps["plasma"](np.linspace(0, 1, 256))[:, :3]
    pixels = rgba[..., :3].reshape(-1, 1, 3)
    nearest = np.argmin(((pixels - table[None]) ** 2).sum(axis=2), axis=1)
    return nearest.reshape(rgba.shape[:2])


def test_cli_writes_polygraphys_file_names_and_lines(tmp_path):
    cwd = tmp_path
    old = os.getcwd()
    os.chdir(cwd)
    try:
        runpy.run_path(os.path.join(FIXTURES, "make_results.py"))["main"]()
    finally:
        os.chdir(old)
    env = dict(os.environ, NO_COLOR="1")
    r = run_cli("run", "--load-outputs", "a.json", "b.json", "--save-heatmaps", "h",
                "--save-error-metrics-plot", "p", cwd=cwd, env=env)
    assert r.returncode == 1, r.stdout + r.stderr  # the outputs differ: the comparison fails
    # Polygraphy's names, less its repeated " (Log Scale)" (tests/cli/fixtures/plots/README.md).
    expected = sorted(n.replace(" (Log Scale) (Log Scale)", " (Log Scale)")
                      for n in fixture_lines("polygraphy_heatmap_files.txt"))
    assert sorted(os.listdir(cwd / "h")) == expected
    assert sorted(os.listdir(cwd / "p")) == fixture_lines("polygraphy_error_metrics_files.txt")
    # The lines about figures, where Polygraphy prints them (Parity adds its warnings about
    # files overwritten by the second iteration).
    pattern = re.compile(r"Building|Saving|Iteration:|Comparing Output|FAILED \|")
    def masked(line):  # the run's time and command line differ
        line = re.sub(r"Runtime: [0-9.]+s", "Runtime: <masked>", line)
        return re.sub(r"Command: .*", "Command: <masked>", line)

    lines = [masked(line) for line in r.stdout.splitlines() if pattern.search(line)]
    expected_lines = [masked(line.replace(" (Log Scale) (Log Scale)", " (Log Scale)"))
                      for line in fixture_lines("polygraphy_plot_lines.txt")]
    assert lines == expected_lines
    assert r.stdout.count("[W]                         Overwriting 'h/") == 10
    assert r.stdout.count("[W]                         Overwriting 'p/") == 4


def one_element_error(tmp_path, shape, at, delta=1.0):
    """Results files whose outputs are equal except at one element."""
    rng = np.random.RandomState(3)
    a = (rng.rand(*shape) + 1).astype(np.float32)
    b = a.copy()
    b[at] += delta
    return (save_results(tmp_path / "a.json", "a-runner", [{"out": a}]),
            save_results(tmp_path / "b.json", "b-runner", [{"out": b}]))


def test_cli_heatmap_peaks_at_the_differing_element(tmp_path):
    a, b = one_element_error(tmp_path, (3, 4, 6), (1, 2, 5))
    r = run_cli("run", "--load-outputs", a, b, "--save-heatmaps", "h", cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    path = tmp_path / "h" / "Absolute Error | out: (0,0:4,0:6) to (2,0:4,0:6).svg"
    images = [img for img in svg_images(path) if img.shape[:2] == (4, 6)]
    assert len(images) == 3  # one image per slice, one pixel per element
    values = [plasma_values(img) for img in images]
    # Slice 1 holds the only nonzero error: its pixel is the top of the scale, all else 0.
    assert values[1][2, 5] == 255
    assert values[1].sum() == 255 and values[0].sum() == 0 and values[2].sum() == 0


def test_cli_relative_heatmap_is_on_a_log_scale_of_the_data(tmp_path):
    rng = np.random.RandomState(5)
    a = (rng.rand(5, 8) + 1).astype(np.float32)
    b = a * (1 + np.logspace(-6, -2, 40, dtype=np.float32).reshape(5, 8))
    pa = save_results(tmp_path / "a.json", "a-runner", [{"out": b}])
    pb = save_results(tmp_path / "b.json", "b-runner", [{"out": a}])
    r = run_cli("run", "--load-outputs", pa, pb, "--save-heatmaps", "h", cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    path = tmp_path / "h" / "Relative Error | out (Log Scale): (0,0:5,0:8) to (0,0:5,0:8).svg"
    (image,) = [img for img in svg_images(path) if img.shape[:2] == (5, 8)]
    values = plasma_values(image).astype(float)
    # Each element's colour is its relative error (NumPy's, in float32) on a log scale.
    rel = np.abs(b - a) / np.abs(a)
    lo, hi = np.log10(rel.min()), np.log10(rel.max())
    expected = 255 * (np.log10(rel) - lo) / (hi - lo)
    # (within the 256 steps of the colour table: matplotlib takes floor(x * 256))
    assert np.all(np.abs(values - expected) <= 2.0), (values, expected)
    assert values.min() == 0 and values.max() == 255


def test_cli_error_metrics_plot_is_a_png_drawn_from_the_data(tmp_path):
    a, b = one_element_error(tmp_path, (4, 6), (2, 3))
    r = run_cli("run", "--load-outputs", a, b, "--save-error-metrics-plot", "p", cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    image = matplotlib.image.imread(tmp_path / "p" / "error_metrics_out.png")
    assert image.ndim == 3 and image.shape[2] == 4
    assert 800 <= image.shape[0] <= 4000 and 800 <= image.shape[1] <= 4000
    # Drawn again from other data, the plot differs; from the same data, it is the same.
    (tmp_path / "other").mkdir()
    a2, b2 = one_element_error(tmp_path / "other", (4, 6), (0, 0), delta=0.25)
    again = run_cli("run", "--load-outputs", a, b, "--save-error-metrics-plot", "q",
                    cwd=tmp_path)
    other = run_cli("run", "--load-outputs", a2, b2, "--save-error-metrics-plot", "o",
                    cwd=tmp_path)
    assert again.returncode == other.returncode == 1
    same = matplotlib.image.imread(tmp_path / "q" / "error_metrics_out.png")
    different = matplotlib.image.imread(tmp_path / "o" / "error_metrics_out.png")
    assert np.array_equal(image, same)
    assert image.shape != different.shape or not np.array_equal(image, different)


def test_cli_without_matplotlib_fails_before_inference(tmp_path):
    fake = tmp_path / "fake"
    (fake / "matplotlib").mkdir(parents=True)
    (fake / "matplotlib" / "__init__.py").write_text(
        "raise ImportError(\"No module named 'matplotlib'\")\n")
    a, b = one_element_error(tmp_path, (2, 2), (0, 0))
    env = dict(os.environ, PYTHONPATH=str(fake))
    r = run_cli("run", "--load-outputs", a, b, "--save-heatmaps", "h", cwd=tmp_path, env=env)
    assert r.returncode == 1
    out = r.stdout + r.stderr
    assert "failed to import matplotlib to draw the error figures" in out
    assert "python3-matplotlib" in out
    assert "Traceback" not in out
    assert "Accuracy Comparison" not in out and "Loading inference results" not in out
    assert not (tmp_path / "h").exists()


def test_cli_starts_python_only_for_figures(tmp_path):
    marker = tmp_path / "python-started"
    wrapper = tmp_path / "python"
    wrapper.write_text(f"#!/bin/sh\ntouch '{marker}'\nexec /usr/bin/python3 \"$@\"\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    a, b = one_element_error(tmp_path, (2, 2), (0, 0))
    env = dict(os.environ, PARITY_PYTHON=str(wrapper))
    r = run_cli("run", "--load-outputs", a, b, cwd=tmp_path, env=env)
    assert r.returncode == 1 and "Accuracy Summary" in r.stdout
    assert not marker.exists()
    r = run_cli("run", "--load-outputs", a, b, "--save-error-metrics-plot", "p", cwd=tmp_path,
                env=env)
    assert r.returncode == 1 and marker.exists()
    assert (tmp_path / "p" / "error_metrics_out.png").exists()


def test_cli_show_without_display_is_a_usage_error(tmp_path):
    a, b = one_element_error(tmp_path, (2, 2), (0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.pop("MPLBACKEND", None)
    for flag in ("--show-heatmaps", "--show-error-metrics-plot"):
        r = run_cli("run", "--load-outputs", a, b, flag, cwd=tmp_path, env=env)
        assert r.returncode == 2, r.stdout + r.stderr
        assert "cannot show a window" in r.stdout + r.stderr
        assert "$DISPLAY" in r.stdout + r.stderr
        assert "Accuracy Comparison" not in r.stdout


def test_cli_refuses_figures_it_cannot_draw(tmp_path):
    a, b = one_element_error(tmp_path, (2, 2), (0, 0))
    (tmp_path / "file").write_text("x")
    r = run_cli("run", "--load-outputs", a, b, "--save-heatmaps", "file", cwd=tmp_path)
    assert r.returncode == 2 and "it is a file" in r.stdout + r.stderr
    assert (tmp_path / "file").read_text() == "x"
    r = run_cli("run", "--load-outputs", a, b, "--save-heatmaps", "h", "--compare", "indices",
                cwd=tmp_path)
    assert r.returncode == 2 and "CompareFunc.simple's" in r.stdout + r.stderr
    assert not (tmp_path / "h").exists()


def test_gen_script_passes_the_figures_to_compare_func_simple(tmp_path):
    a, b = one_element_error(tmp_path, (2, 3), (1, 1))
    r = run_cli("run", "--load-outputs", a, b, "--save-heatmaps", "h",
                "--save-error-metrics-plot", "p", "--gen-script", "run.py", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    script = (tmp_path / "run.py").read_text()
    assert "save_heatmaps='h'" in script and "save_error_metrics_plot='p'" in script
    module_dir = os.path.dirname(os.path.dirname(os.path.abspath(parity.__file__)))
    env = dict(os.environ, PYTHONPATH=module_dir)
    run = subprocess.run([sys.executable, "run.py"], cwd=tmp_path, capture_output=True,
                         text=True, env=env)
    assert run.returncode == 1, run.stdout + run.stderr
    assert sorted(os.listdir(tmp_path / "h")) == [
        "Absolute Error | out: (0,0:2,0:3) to (0,0:2,0:3).svg",
        "Relative Error | out (Log Scale): (0,0:2,0:3) to (0,0:2,0:3).svg",
    ]
    assert os.listdir(tmp_path / "p") == ["error_metrics_out.png"]


def test_python_compare_func_simple_draws_the_compared_arrays(tmp_path):
    out0 = np.zeros((2, 4, 5), dtype=np.float32)
    out1 = out0.copy()
    out1[0, 3, 1] = 2.0
    results = RunResults()
    results.append(("r0", [IterationResult({"x/y": out0}, runner_name="r0")]))
    results.append(("r1", [IterationResult({"x/y": out1}, runner_name="r1")]))
    func = CompareFunc.simple(save_heatmaps=tmp_path / "h",
                              save_error_metrics_plot=str(tmp_path / "p"))
    accuracy = Comparator.compare_accuracy(results, compare_func=func)
    assert not accuracy
    names = sorted(os.listdir(tmp_path / "h"))
    assert names == ["Absolute Error | x_y: (0,0:4,0:5) to (1,0:4,0:5).svg",
                     "Relative Error | x_y (Log Scale): (0,0:4,0:5) to (1,0:4,0:5).svg"]
    images = [img for img in svg_images(tmp_path / "h" / names[0]) if img.shape[:2] == (4, 5)]
    assert plasma_values(images[0])[3, 1] == 255 and plasma_values(images[0]).sum() == 255
    assert plasma_values(images[1]).sum() == 0
    image = matplotlib.image.imread(tmp_path / "p" / "error_metrics_x_y.png")
    assert image.shape[2] == 4 and min(image.shape[:2]) >= 800


def test_python_show_without_display_raises_usage_error(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    try:
        CompareFunc.simple(show_heatmaps=True)
    except parity.ParityUsageError as err:
        assert "cannot show a window" in str(err)
    else:
        raise AssertionError("show_heatmaps=True without a display was accepted")


def test_cli_layer_wise_runs_refuse_the_figures(tmp_path, identity_model):
    r = run_cli("run", identity_model, "--pluginref", "--onnxrt", "--onnx-outputs", "mark", "all",
                "--save-heatmaps", "h", cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "layer-wise" in r.stdout + r.stderr and "--report" in r.stdout + r.stderr
    assert not (tmp_path / "h").exists()


def test_cli_data_loader_script_runs_draw_in_the_scripts_python(tmp_path, identity_model):
    (tmp_path / "data.py").write_text(
        "import numpy as np\n"
        "def load_data():\n"
        "    yield {'x': np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)}\n")
    r = run_cli("run", identity_model, "--pluginref", "--onnxrt", "--data-loader-script",
                "data.py", "--save-heatmaps", "h", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    # Equal outputs: both errors are 0 everywhere, so no log scale.
    assert sorted(os.listdir(tmp_path / "h")) == [
        "Absolute Error | y: (0,0,0:2,0:2) to (0,0,0:2,0:2).svg",
        "Relative Error | y: (0,0,0:2,0:2) to (0,0,0:2,0:2).svg",
    ]


def test_python_relative_error_with_zeros_is_drawn_on_a_log_scale(tmp_path):
    # Polygraphy stops here ("Invalid vmin or vmax"): the relative error's minimum is 0.
    out1 = np.array([[1.0, 2.0, 4.0], [8.0, 16.0, 32.0]], dtype=np.float32)
    out0 = out1 * np.array([[1, 1 + 1e-6, 1 + 1e-4], [1 + 1e-3, 1 + 1e-2, 1.5]],
                           dtype=np.float32)
    results = RunResults()
    results.append(("r0", [IterationResult({"o": out0}, runner_name="r0")]))
    results.append(("r1", [IterationResult({"o": out1}, runner_name="r1")]))
    func = CompareFunc.simple(save_heatmaps=str(tmp_path))
    assert not Comparator.compare_accuracy(results, compare_func=func)
    path = tmp_path / "Relative Error | o (Log Scale): (0,0:2,0:3) to (0,0:2,0:3).svg"
    (image,) = [img for img in svg_images(path) if img.shape[:2] == (2, 3)]
    # The zero error is drawn in the colour of missing values; the rest rise along the map.
    assert np.allclose(image[0, 0, :3], matplotlib.colors.to_rgb("#00ff7f"), atol=1 / 255)
    values = plasma_values(image).ravel()[1:]
    assert values[0] == 0 and values[-1] == 255 and np.all(np.diff(values) > 0)


def test_python_tall_slices_are_drawn_as_block_maxima(tmp_path):
    # Polygraphy divides by zero for a slice taller than 1080 elements; Parity draws it in a
    # figure of its own, as the maximum of 2x1 blocks (3000 rows > 2048), keeping the peak.
    out1 = np.ones((1, 3000, 10), dtype=np.float32)
    out0 = out1.copy()
    out0[0, 2501, 7] = 3.0
    results = RunResults()
    results.append(("r0", [IterationResult({"t": out0}, runner_name="r0")]))
    results.append(("r1", [IterationResult({"t": out1}, runner_name="r1")]))
    func = CompareFunc.simple(save_heatmaps=str(tmp_path))
    assert not Comparator.compare_accuracy(results, compare_func=func)
    path = tmp_path / "Absolute Error | t: (0,0:3000,0:10) to (0,0:3000,0:10).svg"
    (image,) = [img for img in svg_images(path) if img.shape[:2] == (1500, 10)]
    values = plasma_values(image)
    assert values[1250, 7] == 255 and values.sum() == 255


def test_large_outputs_plot_a_sample_that_keeps_the_largest_errors():
    from parity.comparator.error_plots import ErrorPlots

    rng = np.random.RandomState(0)
    absdiff = rng.rand(1_500_000)
    reldiff = rng.rand(1_500_000)
    absdiff[[17, 1_234_567]] = 5.0
    reldiff[999_999] = np.nan
    keep = ErrorPlots._sample(absdiff, reldiff)
    assert keep.size <= 1_000_000
    assert {17, 1_234_567, 999_999} <= set(keep.tolist())
    largest = np.argsort(absdiff)[-10_000:]
    assert np.isin(largest, keep).all()
