"""Layer-wise comparison and the backend registry from Python (parity.layerwise,
parity.backend.registry): the library calls behind `parity run --onnx-outputs mark all`."""
import os

import numpy as np
import pytest
from onnx import TensorProto, helper

from parity import ParityUsageError
from parity.backend.onnx import ModifyOutputs, OnnxFromPath
from parity.backend.pluginref import PluginRefRunner
from parity.backend.registry import backends, make_runner
from parity.comparator import Comparator, DataLoader
from parity.constants import MARK_ALL
from parity.layerwise import LayerwiseComparator

from conftest import save_model, tensor


@pytest.fixture
def chain_model(tmp_path):
    """x -> Relu -> t1 -> Neg -> t2 -> Abs -> t3 -> Sigmoid -> y (2x8 float32)."""
    return save_model(
        tmp_path / "chain.onnx",
        [
            helper.make_node("Relu", ["x"], ["t1"], name="relu"),
            helper.make_node("Neg", ["t1"], ["t2"], name="neg"),
            helper.make_node("Abs", ["t2"], ["t3"], name="abs"),
            helper.make_node("Sigmoid", ["t3"], ["y"], name="sigmoid"),
        ],
        [tensor("x", TensorProto.FLOAT, [2, 8])],
        [tensor("y", TensorProto.FLOAT, [2, 8])],
    )


def saved_reference_results(model):
    runner = PluginRefRunner(ModifyOutputs(OnnxFromPath(model), outputs=MARK_ALL), name="golden")
    return Comparator.run([runner], data_loader=DataLoader(iterations=1)), runner.name


def test_first_divergence_against_saved_results(chain_model):
    results, name = saved_reference_results(chain_model)
    t2 = np.array(results[name][0]["t2"])
    results[name][0]["t2"] = t2 + np.float32(0.5)  # the saved side diverges at Neg
    run = LayerwiseComparator.run(OnnxFromPath(chain_model), other=results, local_error=True)
    assert not run
    result = run.iterations[0]
    first = result.first_divergence
    assert (first.name, first.op_type, first.status) == ("neg", "Neg", "diverges")
    assert result.nodes[0].name == "relu" and result.nodes[0].passed
    # Only t2 was changed, so Abs and Sigmoid pass; Neg's own (local) error fails: re-run on the
    # saved t1, it gives the reference's t2, not the saved one.
    by_name = {n.name: n for n in result.nodes}
    assert by_name["abs"].passed and by_name["sigmoid"].passed
    assert by_name["neg"].local_passed is False
    assert {t.name for t in result.tensors} == {"t1", "t2", "t3", "y"}
    # Errors in float32 ulps: t1 is equal; t2 moved by 0.5, which NumPy counts in ulps too.
    tensors = {t.name: t for t in result.tensors}
    assert tensors["t1"].max_ulps == 0
    ref_t2 = -np.array(results[name][0]["t1"])
    ordered = lambda a: np.where(a.view(np.int32) < 0, -(a.view(np.int32) & 0x7FFFFFFF),
                                 a.view(np.int32)).astype(np.int64)
    assert tensors["t2"].max_ulps == np.abs(ordered(ref_t2) - ordered(t2 + np.float32(0.5))).max()
    assert by_name["neg"].local_max_ulps == tensors["t2"].max_ulps
    assert not any(n.rounds_inherited for n in result.nodes)


def test_two_backends_agree_and_the_report_is_written(chain_model, tmp_path):
    run = LayerwiseComparator.run(OnnxFromPath(chain_model), other="onnxrt",
                                  other_options={"ort_threads": 1}, mark_budget="1M")
    assert run and run.passed
    assert run.iterations[0].first_divergence is None
    assert run.runner0.startswith("pluginref-runner") and run.runner1.startswith("onnxrt-runner")
    report = tmp_path / "report.html"
    run.report_html(str(report))
    page = report.read_text()
    assert page.startswith("<!DOCTYPE html>") and "sigmoid" in page


def test_the_other_side_may_be_first(chain_model):
    run = LayerwiseComparator.run(OnnxFromPath(chain_model), other="pluginref",
                                  other_is_first=True, outputs=["t2", "y"])
    assert run.passed
    assert {t.name for t in run.iterations[0].tensors} == {"t2", "y"}


def test_bad_arguments_name_the_rule(chain_model):
    with pytest.raises(ParityUsageError, match="failed to find backend 'trt'"):
        LayerwiseComparator.run(OnnxFromPath(chain_model), other="trt")
    with pytest.raises(ParityUsageError, match="it cannot stream its tensors"):
        LayerwiseComparator.run(OnnxFromPath(chain_model), reference="onnxrt", other="pluginref")
    with pytest.raises(ParityUsageError, match="mark_budget"):
        LayerwiseComparator.run(OnnxFromPath(chain_model), mark_budget="lots")


def test_the_registry_lists_and_makes_every_backend(chain_model):
    names = [b.name for b in backends()]
    assert names[:2] == ["pluginref", "onnxrt"]
    onnxrt = next(b for b in backends() if b.name == "onnxrt")
    assert "--onnxrt" in onnxrt.flags
    assert "ort-threads" in [o.name for o in onnxrt.options]
    runner = make_runner("onnxrt", OnnxFromPath(chain_model), ort_threads=1,
                         ort_optimization_level="basic")
    feed = {"x": np.linspace(-1, 1, 16, dtype=np.float32).reshape(2, 8)}
    with runner:
        y = runner.infer(feed)["y"]
    np.testing.assert_allclose(y, 1 / (1 + np.exp(-np.maximum(feed["x"], 0))), rtol=1e-6)
    with pytest.raises(ParityUsageError, match="valid choices are"):
        make_runner("onnxrt", OnnxFromPath(chain_model), threads=1)
    with pytest.raises(ParityUsageError, match="valid choices are"):
        make_runner("onnxrt", OnnxFromPath(chain_model), ort_optimization_level="max")
