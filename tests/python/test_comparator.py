"""Polygraphy's tests/comparator (test_comparator.py, test_compare.py, test_struct.py,
test_postprocess.py), on Parity's Python API."""
import numpy as np
import pytest

from parity import ParityException
from parity.backend.onnx import OnnxFromPath
from parity.backend.onnxrt import OnnxrtRunner, SessionFromOnnx
from parity.backend.pluginref import PluginRefRunner
from parity.comparator import (
    Comparator,
    CompareFunc,
    DataLoader,
    IterationResult,
    PostprocessFunc,
    RunResults,
    TensorMetadata,
)
from parity.logger import G_LOGGER


# ---- test_comparator.py ----------------------------------------------------------------------


def test_warmup_runs(identity_model):
    runner = PluginRefRunner(OnnxFromPath(identity_model))
    results = Comparator.run([runner], warm_up=2)
    assert len(results[runner.name]) == 1


def test_list_as_data_loader(identity_model):
    runner = PluginRefRunner(OnnxFromPath(identity_model), name="custom_runner")
    data = [{"x": np.ones((1, 1, 2, 2), dtype=np.float32)}] * 2
    results = Comparator.run([runner], data_loader=data)
    iteration_results = results["custom_runner"]
    assert len(iteration_results) == 2
    for feed, result in zip(data, iteration_results):
        assert np.all(result["y"] == feed["x"])


def test_generator_as_data_loader(identity_model):
    runner = PluginRefRunner(OnnxFromPath(identity_model), name="custom_runner")

    def data():
        for feed in [{"x": np.ones((1, 1, 2, 2), dtype=np.float32)}] * 2:
            yield feed

    results = Comparator.run([runner], data_loader=data())
    iteration_results = results["custom_runner"]
    assert len(iteration_results) == 2
    for result in iteration_results:
        assert np.all(result["y"] == np.ones((1, 1, 2, 2), dtype=np.float32))


def test_generator_error_reaches_the_caller(identity_model):
    def data():
        yield {"x": np.ones((1, 1, 2, 2), dtype=np.float32)}
        raise ValueError("the data source broke")

    with pytest.raises(ValueError, match="the data source broke"):
        Comparator.run([PluginRefRunner(OnnxFromPath(identity_model))], data_loader=data())


def test_multiple_runners(identity_model):
    runners = [
        OnnxrtRunner(SessionFromOnnx(identity_model)),
        PluginRefRunner(OnnxFromPath(identity_model)),
    ]
    results = Comparator.run(runners)
    assert bool(Comparator.compare_accuracy(results))
    assert len(list(results.values())[0]) == 1  # Default number of iterations


def test_postprocess(identity_model):
    runner = PluginRefRunner(OnnxFromPath(identity_model))
    results = Comparator.run([runner])
    # Output shape is (1, 1, 2, 2)
    postprocessed = Comparator.postprocess(results, PostprocessFunc.top_k(k=(1, -1)))
    for _, iteration_results in postprocessed.items():
        for result in iteration_results:
            for _, output in result.items():
                assert output.shape == (1, 1, 2, 1)


def test_multirun_outputs_are_different(identity_model):
    runner = PluginRefRunner(OnnxFromPath(identity_model))
    results = Comparator.run([runner], data_loader=DataLoader(iterations=2))
    iteration0 = results[runner.name][0]
    iteration1 = results[runner.name][1]
    for name in iteration0.keys():
        assert np.any(iteration0[name] != iteration1[name])


def test_data_loader_matches_polygraphy_random_state():
    # Polygraphy's inputs for seed s: RandomState(s).random_sample(shape) scaled to the range.
    meta = TensorMetadata().add("x", np.float32, (2, 3))
    loader = DataLoader(seed=7, iterations=2, input_metadata=meta, val_range=(-2.0, 3.0))
    for i in range(2):
        sample = np.random.RandomState(7 + i).random_sample((2, 3))
        expected = (sample * 5.0 - 2.0).astype(np.float32)
        assert np.array_equal(loader[i]["x"], expected)
    with pytest.raises(IndexError):
        loader[2]


def test_validate_nan():
    results = RunResults()
    results.add([{"x": np.array(np.nan)}])
    assert not Comparator.validate(results)


def test_validate_inf():
    results = RunResults()
    results.add([{"x": np.array(np.inf)}])
    assert not Comparator.validate(results, check_inf=True)
    assert Comparator.validate(results, check_inf=False)


def test_save_inputs_path(identity_model, tmp_path):
    from parity.json import load_json

    path = str(tmp_path / "inputs.json")
    runner = PluginRefRunner(OnnxFromPath(identity_model))
    results = Comparator.run([runner], data_loader=DataLoader(iterations=2), save_inputs_path=path)
    feeds = load_json(path)
    assert len(feeds) == 2
    for feed, result in zip(feeds, results[runner.name]):
        assert np.array_equal(feed["x"], result["y"])


# ---- test_compare.py -------------------------------------------------------------------------


def results_of(outputs0, outputs1):
    return (IterationResult(outputs=outputs0, runner_name="r0"),
            IterationResult(outputs=outputs1, runner_name="r1"))


def pair(values0, values1, dtype=np.float32):
    """Two iteration results with one output "out"."""
    return results_of({"out": np.array(values0, dtype=dtype)},
                      {"out": np.array(values1, dtype=dtype)})


@pytest.mark.parametrize(
    "values0, values1, dtype, expected_abs, expected_rel",
    [
        ([0], [1], np.uint8, 1, 1.0),
        ([0], [1], np.uint16, 1, 1.0),
        ([0], [1], np.uint32, 1, 1.0),
        ([1], [0], np.uint8, 1, np.inf),
        ([25], [30], np.int8, 5, 5.0 / 30),
        ([25], [30], np.float16, 5, np.float32(5) / np.float32(30)),
        ([1], [0], np.float16, 1, 1 / np.finfo(float).eps),
    ],
)
def test_comparison(values0, values1, dtype, expected_abs, expected_rel):
    r0, r1 = pair(values0, values1, dtype)
    result = CompareFunc.simple()(r0, r1)["out"]
    assert result.max_absdiff == expected_abs
    assert result.max_reldiff == pytest.approx(expected_rel)
    assert result.max_absdiff == result.mean_absdiff == result.median_absdiff


@pytest.mark.parametrize("mode", ["abs", "rel"])
def test_per_output_tol(mode):
    out0, out1 = "out0", "out1"
    r0, r1 = results_of(
        {out0: np.zeros((4, 4), dtype=np.float32), out1: np.ones((4, 4), dtype=np.float32)},
        {out0: np.zeros((4, 4), dtype=np.float32), out1: np.ones((4, 4), dtype=np.float32) + 1},
    )
    tol = {out0: 0.0, out1: 1.0}
    func = CompareFunc.simple(atol=tol) if mode == "abs" else CompareFunc.simple(rtol=tol)
    assert all(bool(v) for v in func(r0, r1).values())


def test_per_output_tol_fallback():
    r0, r1 = results_of(
        {"out0": np.zeros((4, 4), dtype=np.float32), "out1": np.ones((4, 4), dtype=np.float32)},
        {"out0": np.zeros((4, 4), dtype=np.float32) + 1, "out1": np.ones((4, 4), dtype=np.float32)},
    )
    result = CompareFunc.simple(atol={"out1": 1.0})(r0, r1)
    assert not result["out0"]
    assert result["out1"]


def test_default_tol_in_map():
    r0, r1 = pair(np.zeros((4, 4)), np.ones((4, 4)))
    assert CompareFunc.simple(atol={"": 1.0})(r0, r1)["out"]


@pytest.mark.parametrize("shape", [(), (1,), (2, 2, 2, 2)])
def test_non_matching_outputs(shape):
    r0, r1 = pair(np.zeros(shape), np.ones(shape))
    old = G_LOGGER.severity
    G_LOGGER.severity = G_LOGGER.ULTRA_VERBOSE
    try:
        assert not CompareFunc.simple()(r0, r1)["out"]
    finally:
        G_LOGGER.severity = old


@pytest.mark.parametrize(
    "stat, passes", [("max", False), ("elemwise", False), ("mean", True), ("median", True)]
)
def test_check_error_stat(stat, passes):
    a = np.zeros(100, dtype=np.float32)
    b = a.copy()
    b[0] = 100
    r0, r1 = results_of({"out": a}, {"out": b})
    result = CompareFunc.simple(check_error_stat=stat, atol=1.0, rtol=0.0)(r0, r1)["out"]
    assert bool(result) == passes


@pytest.mark.parametrize("stat", ["max", "mean", "median", "elemwise"])
def test_atol_rtol_either_pass(stat):
    r0, r1 = pair([1, 2], [1.25, 2.5])
    assert not CompareFunc.simple(check_error_stat=stat)(r0, r1)["out"]
    assert CompareFunc.simple(check_error_stat=stat, rtol=0.25)(r0, r1)["out"]
    assert CompareFunc.simple(check_error_stat=stat, atol=0.5)(r0, r1)["out"]


def test_atol_rtol_combined_pass():
    r0, r1 = results_of(
        {"out": np.array([0, 1, 2, 3], dtype=np.float32)},
        {"out": np.array([0.15, 1.25, 2.5, 3.75], dtype=np.float32)},
    )
    assert not CompareFunc.simple(atol=0.3)(r0, r1)["out"]
    assert not CompareFunc.simple(rtol=0.25)(r0, r1)["out"]
    assert CompareFunc.simple(atol=0.3, rtol=0.25)(r0, r1)["out"]


def test_invalid_error_stat():
    with pytest.raises(ParityException, match="Invalid choice"):
        CompareFunc.simple(check_error_stat="not-a-stat")


@pytest.mark.parametrize("values", [(np.nan, 0.15), (0.15, np.nan)])
@pytest.mark.parametrize("stat", ["max", "mean", "median", "elemwise"])
def test_nans_always_fail(values, stat):
    r0, r1 = pair([values[0]], [values[1]])
    assert not CompareFunc.simple(check_error_stat=stat, atol=10.0, rtol=10.0)(r0, r1)["out"]


@pytest.mark.parametrize("value", [np.inf, -np.inf])
@pytest.mark.parametrize("flag", [True, False])
def test_infinities_compare_equal(value, flag):
    r0, r1 = pair([value], [value])
    assert bool(CompareFunc.simple(infinities_compare_equal=flag)(r0, r1)["out"]) == flag


@pytest.mark.parametrize(
    "out0, out1, tolerance, passes",
    [
        ([0, 1, 2], [0, 1, 2], 0, True),
        ([0, 1, 2], [1, 0, 2], 0, False),
        ([0, 1, 2], [1, 0, 2], 1, True),
        ([0, 1, 2], [2, 1, 0], 1, False),
        ([[0, 1], [1, 0]], [[1, 0], [0, 1]], 1, True),
    ],
)
def test_index_tolerance(out0, out1, tolerance, passes):
    r0, r1 = pair(out0, out1, np.int64)
    assert bool(CompareFunc.indices(index_tolerance=tolerance)(r0, r1)["out"]) == passes


def test_custom_compare_func_with_comparator():
    results = RunResults()
    results.add([{"out": np.array([1.0, 2.0], dtype=np.float32)}], runner_name="a")
    results.add([{"out": np.array([1.0, 2.5], dtype=np.float32)}], runner_name="b")
    seen = []

    def compare(it0, it1):
        seen.append((it0.runner_name, it1.runner_name))
        return {name: bool(np.allclose(it0[name], it1[name], atol=0.6)) for name in it0.keys()}

    assert bool(Comparator.compare_accuracy(results, compare_func=compare))
    assert seen == [("a", "b")]
    assert not bool(Comparator.compare_accuracy(results))


# ---- test_struct.py --------------------------------------------------------------------------


def make_results():
    results = RunResults()
    results.add([{"x": np.ones(2)}], runner_name="runner0")
    results.add([{"x": np.zeros(2)}], runner_name="runner1")
    return results


def test_run_results_items_keys_values():
    results = make_results()
    assert results.keys() == ["runner0", "runner1"]
    for (name, its), values in zip(results.items(), results.values()):
        assert len(its) == 1 and len(values) == 1
        assert its[0].runner_name == name


def test_run_results_getitem():
    results = make_results()
    assert results[0][0] == "runner0"
    assert np.array_equal(results["runner1"][0]["x"], np.zeros(2))
    with pytest.raises(IndexError):
        results[2]
    with pytest.raises(ParityException, match="does not exist in this"):
        results["runner2"]


def test_run_results_setitem_replaces_or_appends():
    results = make_results()
    results["runner0"] = [IterationResult(outputs={"x": np.full(2, 5.0)})]
    assert np.array_equal(results["runner0"][0]["x"], np.full(2, 5.0))
    results["runner2"] = []
    assert results.keys() == ["runner0", "runner1", "runner2"]
    assert "runner2" in results and "runner3" not in results


def test_run_results_are_changed_in_place():
    results = make_results()
    results["runner0"][0]["x"] = np.full(2, 7.0)
    assert np.array_equal(results["runner0"][0]["x"], np.full(2, 7.0))


def test_run_results_add_default_name():
    results = RunResults()
    results.add([{"x": np.ones(1)}])
    assert results.keys() == ["custom_runner"]
    assert results["custom_runner"][0].runner_name == "custom_runner"


# ---- test_postprocess.py ---------------------------------------------------------------------


def top_k(outputs, k):
    result = IterationResult(outputs=outputs)
    PostprocessFunc.top_k(k)(result)
    return result


def test_top_k_basic():
    assert list(top_k({"x": np.array([1, 2, 3, 4, 5], dtype=np.float32)}, 3)["x"]) == [4, 3, 2]


def test_top_k_can_exceed_array_len():
    values = np.array([1, 2, 3, 4, 5], dtype=np.float32)
    assert list(top_k({"x": values}, 10)["x"]) == [4, 3, 2, 1, 0]


def test_per_output_top_k():
    out = top_k({"x": np.array([1, 2, 3]), "y": np.array([3, 2, 1])}, {"": 1, "y": 2})
    assert list(out["x"]) == [2] and list(out["y"]) == [0, 1]


def test_top_k_half():
    assert list(top_k({"x": np.array([1, 2, 3, 4, 5], dtype=np.float16)}, 2)["x"]) == [4, 3]


def test_errors_in_user_callables_reach_the_caller_unchanged(identity_model):
    results = RunResults()
    results.add([{"out": np.ones(2, dtype=np.float32)}], runner_name="a")
    results.add([{"out": np.ones(2, dtype=np.float32)}], runner_name="b")

    def broken_compare(it0, it1):
        raise KeyError("compare broke")

    with pytest.raises(KeyError, match="compare broke"):
        Comparator.compare_accuracy(results, compare_func=broken_compare)

    def broken_loader():
        raise RuntimeError("loader broke")

    with pytest.raises(RuntimeError, match="loader broke"):
        Comparator.run([PluginRefRunner(broken_loader)])
