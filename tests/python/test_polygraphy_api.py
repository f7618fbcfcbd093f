"""The rest of Polygraphy's Python API that its users and its generated scripts import (issue
#11, section 3): util, mod, exception, constants, config, datatype, tools.args, pluginref's
references, and the runner and result details. Checked against NumPy, against the real
Polygraphy's output kept as fixtures, and against Parity's own other paths."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import onnx.mapping
from onnx import TensorProto, helper

import parity
from parity import config, constants, func, mod, util
from parity.backend.onnx import OnnxFromPath
from parity.backend.onnxrt import OnnxrtRunner, SessionFromOnnx, session_from_onnx
from parity.backend.pluginref import PluginRefRunner
from parity.backend.pluginref.references import OP_REGISTRY, register
from parity.common import TensorMetadata
from parity.comparator import Comparator, DataLoader, IterationResult, RunResults
from parity.datatype import DataType
from parity.exception import (
    DataTypeConversionException,
    PolygraphyException,
    PolygraphyInternalException,
)
from parity.json import from_json, load_json, save_json, to_json
from parity.logger import G_LOGGER
from parity.tools.args import util as args_util

from conftest import save_model, tensor

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
MODULE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(parity.__file__)))


def two_input_model(tmp_path):
    """x (float32 [2, 3]) + cast(i (int32 [2, 3])) -> y."""
    return save_model(
        tmp_path / "two_inputs.onnx",
        [helper.make_node("Cast", ["i"], ["i_f"], to=TensorProto.FLOAT),
         helper.make_node("Add", ["x", "i_f"], ["y"])],
        [tensor("x", TensorProto.FLOAT, [2, 3]), tensor("i", TensorProto.INT32, [2, 3])],
        [tensor("y", TensorProto.FLOAT, [2, 3])],
    )


# ---- exception, constants, config -------------------------------------------------------------


def test_module_errors_are_polygraphy_exceptions(identity_model):
    with pytest.raises(PolygraphyException):
        OnnxFromPath(str(identity_model) + ".missing")()
    with pytest.raises(PolygraphyException, match="boom"):
        G_LOGGER.critical("boom")
    assert issubclass(DataTypeConversionException, PolygraphyException)
    assert not issubclass(PolygraphyInternalException, PolygraphyException)


def test_constants_and_config():
    assert constants.MARK_ALL == "mark-all"
    assert constants.TAB == "    "
    assert constants.DEFAULT_SHAPE_VALUE == 1 and constants.DEFAULT_SEED == 1
    assert constants.TYPE_MARKER == "polygraphy_class"
    assert isinstance(config.INTERNAL_CORRECTNESS_CHECKS, bool)
    assert config.AUTOINSTALL_DEPS is False  # Parity never installs packages


def test_config_reads_polygraphy_environment_variables():
    code = "from parity import config; print(config.INTERNAL_CORRECTNESS_CHECKS)"
    env = dict(os.environ, PYTHONPATH=MODULE_DIR, POLYGRAPHY_INTERNAL_CORRECTNESS_CHECKS="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "True", out.stderr


# ---- datatype ---------------------------------------------------------------------------------


@pytest.mark.parametrize("np_type", [np.float32, np.float64, np.float16, np.int8, np.int16,
                                     np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                     np.uint64, np.bool_])
def test_datatype_round_trips_numpy(np_type):
    entry = DataType.from_dtype(np_type)
    assert entry.numpy() == np.dtype(np_type)
    assert DataType.to_dtype(entry, "numpy") == np.dtype(np_type)
    assert DataType.from_dtype(np.dtype(np_type)) is entry
    assert entry.itemsize == np.dtype(np_type).itemsize
    assert entry.is_floating == (np.dtype(np_type).kind == "f")
    assert entry.is_integral == (np.dtype(np_type).kind in "iu")


def test_datatype_onnx_values_match_onnx():
    for name in ["FLOAT", "DOUBLE", "FLOAT16", "INT8", "INT16", "INT32", "INT64", "UINT8",
                 "UINT16", "UINT32", "UINT64", "BOOL"]:
        value = getattr(TensorProto, name)
        entry = DataType.from_dtype(value, source_module="onnx")
        assert entry.onnx() == value
        assert entry.numpy() == onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[value]
    assert DataType.from_dtype(TensorProto.BFLOAT16) is DataType.BFLOAT16
    assert DataType.from_dtype(TensorProto.STRING) is DataType.STRING


def test_datatype_errors():
    with pytest.raises(DataTypeConversionException):
        DataType.from_dtype(None)
    with pytest.raises(DataTypeConversionException, match="NumPy has no such type"):
        DataType.BFLOAT16.numpy()
    with pytest.raises(DataTypeConversionException, match="valid choices"):
        DataType.to_dtype(DataType.FLOAT32, "torch")


def test_datatype_members_are_accepted_as_dtypes():
    meta = TensorMetadata().add("x", DataType.INT64, (2, 3))
    assert meta["x"].dtype == np.int64 and meta["x"].shape == [2, 3]


# ---- util, mod, tools.args --------------------------------------------------------------------


def test_util_helpers():
    assert util.default(None, 3) == 3 and util.default(0, 3) == 0
    assert util.value_or_from_dict({"a": 1, "": 2}, "a") == 1
    assert util.value_or_from_dict({"a": 1, "": 2}, "b") == 2
    assert util.value_or_from_dict({"a": 1}, "b", 7) == 7
    assert util.value_or_from_dict(5, "b") == 5
    assert util.unique_list([3, 1, 3, 2, 1]) == [3, 1, 2]
    assert util.is_sequence([1]) and not util.is_sequence("ab") and not util.is_sequence({})
    assert util.volume((2, 3, 4)) == 24 and util.volume(()) == 1
    assert util.is_empty_shape((2, 0)) and not util.is_empty_shape((2, 1))
    assert util.is_shape_dynamic((1, "N", 3)) and util.is_shape_dynamic((1, None))
    assert not util.is_shape_dynamic((1, 2))
    assert util.override_dynamic_shape(["N", 3, -1]) == [1, 3, 1]
    assert util.unpack_args((1, 2), 3) == (1, 2, None) and util.unpack_args(5, 2) == (5, None)
    assert util.match_keys(["in*", "z"], ["input0", "input1", "other"]) == (
        {"input0": "in*", "input1": "in*"}, ["z"])
    assert util.indent_block("a\nb") == "    a\n    b"
    assert util.invoke_if_callable(lambda x: x + 1, 1) == (2, True)
    assert util.add_file_suffix("a/b.onnx", "_x") == "a/b_x.onnx"


def test_util_files(tmp_path):
    path = tmp_path / "sub" / "f.bin"
    util.save_file(b"abc", str(path))
    assert util.load_file(str(path)) == b"abc"
    assert util.get_file_size(str(path)) == 3


def test_import_from_script(tmp_path):
    (tmp_path / "helper_mod.py").write_text("VALUE = 41\n")
    script = tmp_path / "user_script.py"
    script.write_text("from helper_mod import VALUE\n\ndef get():\n    return VALUE + 1\n")
    assert mod.import_from_script(str(script), "get")() == 42
    with pytest.raises(PolygraphyException, match="Could not import symbol: nope"):
        mod.import_from_script(str(script), "nope")
    with pytest.raises(PolygraphyException, match="extension is: .txt"):
        mod.import_from_script(str(tmp_path / "missing.txt"), "get")


def test_tools_args_util():
    assert args_util.parse_arglist_to_dict(["a:1", "b:2.5", "c", "d:[1,2]"]) == {
        "a": 1, "b": 2.5, "": "c", "d": [1, 2]}
    assert args_util.parse_script_and_func_name("s.py:fn") == ("s.py", "fn")
    assert args_util.parse_script_and_func_name("s.py", "load") == ("s.py", "load")
    assert args_util.parse_num_bytes("16M") == 16 << 20
    assert args_util.parse_num_bytes("2e3") == 2000
    with pytest.raises(PolygraphyException, match="number of bytes"):
        args_util.parse_num_bytes("lots")
    meta = args_util.parse_meta(["x:[1,3]:float32", "y:auto:int64"])
    assert meta["x"].shape == [1, 3] and meta["x"].dtype == np.float32
    assert meta["y"].shape is None and meta["y"].dtype == np.int64


# ---- pluginref references ---------------------------------------------------------------------


def test_references_register_with_a_domain_matches_a_custom_domain_node(tmp_path):
    @register("PyDouble", domain="my.custom")
    def run_double(attrs, x):
        return [x * 2]

    assert OP_REGISTRY["PyDouble"] is run_double
    assert OP_REGISTRY[("my.custom", "PyDouble")] is run_double
    model = save_model(
        tmp_path / "custom.onnx",
        [helper.make_node("PyDouble", ["x"], ["y"], domain="my.custom")],
        [tensor("x", TensorProto.FLOAT, [3])], [tensor("y", TensorProto.FLOAT, [3])],
        opsets=(("", 17), ("my.custom", 1)),
    )
    x = np.array([1, 2, 3], dtype=np.float32)
    with PluginRefRunner(OnnxFromPath(model)) as runner:
        assert np.array_equal(runner.infer({"x": x})["y"], x * 2)


# ---- runner and result details ----------------------------------------------------------------


def test_inference_time_is_an_attribute(identity_model, capfd):
    runner = PluginRefRunner(OnnxFromPath(identity_model))
    # Reading the attribute before any inference (or after deactivation) gives None and, as in
    # Polygraphy, no warning: only last_inference_time() warns.
    assert runner.inference_time is None
    with runner:
        runner.infer({"x": np.ones((1, 1, 2, 2), dtype=np.float32)})
        assert runner.inference_time == runner.last_inference_time()
        assert runner.inference_time >= 0
    assert runner.inference_time is None
    assert "was not set" not in capfd.readouterr().out
    with runner:
        assert runner.last_inference_time() is None
    assert ("`inference_time` was not set. Inference time will be incorrect! To correctly "
            "compare runtimes, please set the `inference_time` attribute in `infer_impl()`"
            in capfd.readouterr().out)


def test_onnxrt_runner_takes_a_session_or_a_loader_and_a_name(identity_model):
    x = np.ones((1, 1, 2, 2), dtype=np.float32)
    for sess in (session_from_onnx(identity_model), SessionFromOnnx(identity_model)):
        runner = OnnxrtRunner(sess, name="my-ort")
        assert runner.name == "my-ort"
        with runner:
            assert np.array_equal(runner.infer({"x": x})["y"], x)
    assert OnnxrtRunner(sess=SessionFromOnnx(identity_model), name="kw").name == "kw"


def test_accuracy_result_defaults_to_the_first_runner_pair(identity_model):
    loader = OnnxFromPath(identity_model)
    runners = [PluginRefRunner(loader, name="a"), OnnxrtRunner(SessionFromOnnx(identity_model),
                                                               name="b")]
    results = Comparator.run(runners, data_loader=DataLoader(iterations=3))
    results.append(("c", [IterationResult(outputs={"y": np.zeros((1, 1, 2, 2), np.float32)},
                                          runner_name="c")] * 3))
    accuracy = Comparator.compare_accuracy(results, comparisons=[(0, 1), (0, 2)])
    assert accuracy.stats() == accuracy.stats(("a", "b")) == (3, 0, 3)
    assert accuracy.percentage() == 1.0
    assert accuracy.stats(("a", "c")) == (0, 3, 3)
    assert accuracy.percentage(("a", "c")) == 0.0


def test_empty_accuracy_result_percentage_is_one():
    results = RunResults()
    results.append(("only", [IterationResult(outputs={"y": np.ones(2, np.float32)})]))
    accuracy = Comparator.compare_accuracy(results)
    assert accuracy.percentage() == 1.0


def test_run_results_append_takes_a_pair_as_polygraphy_does():
    results = RunResults()
    its = [IterationResult(outputs={"y": np.arange(3)}, runner_name="r")]
    results.append(("r", its))
    results.append("s", its)
    assert results.keys() == ["r", "s"]
    assert np.array_equal(results["r"][0]["y"], np.arange(3))
    with pytest.raises(TypeError, match="pair"):
        results.append("just-a-name")


def test_func_extend_passes_the_wrapped_functions_arguments_through():
    def x(x_arg, scale=1):
        return x_arg * scale + 1

    @func.extend(x)
    def y(x_arg, scale, x_ret):
        assert x_ret == x_arg * scale + 1
        return x_ret + 100

    assert y(5, scale=2) == 111

    @func.extend(x)
    def z(x_arg, x_ret):
        assert x_ret == x_arg + 1

    assert z(5) == 6


def test_func_extend_on_a_loader_sees_the_loaders_result(identity_model):
    seen = []

    @func.extend(OnnxFromPath(identity_model))
    def load(model):
        # An onnx.ModelProto, as Polygraphy's OnnxFromPath gives.
        seen.append([i.name for i in model.graph.input])

    model = load()
    assert seen == [["x"]] and [o.name for o in model.graph.output] == ["y"]


def test_constantmethod_checks_only_with_internal_checks(monkeypatch):
    class Dummy:
        def __init__(self):
            self.x = 1

        def modify(self):
            self.x = 2

        def read(self):
            return self.x

    monkeypatch.setattr(config, "INTERNAL_CORRECTNESS_CHECKS", True)
    checked_modify, checked_read = func.constantmethod(Dummy.modify), func.constantmethod(Dummy.read)
    with pytest.raises(PolygraphyInternalException, match="mutated in a constant method"):
        checked_modify(Dummy())
    assert checked_read(Dummy()) == 1
    monkeypatch.setattr(config, "INTERNAL_CORRECTNESS_CHECKS", False)
    assert func.constantmethod(Dummy.modify) is Dummy.modify


def test_data_loader_int_and_float_ranges_equal_val_range(tmp_path):
    model = two_input_model(tmp_path)
    runner = PluginRefRunner(OnnxFromPath(model))
    meta = {"x": (np.float32, [2, 3]), "i": (np.int32, [2, 3])}

    def feeds(loader):
        loader.input_metadata = TensorMetadata().add("x", *meta["x"]).add("i", *meta["i"])
        return loader[0]

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ranged = feeds(DataLoader(int_range=(2, 9), float_range=(-3.0, -1.0)))
    assert any("int_range parameter in DataLoader is deprecated" in str(w.message)
               for w in caught)
    # float_range applies to the float input, int_range to the integer one: each is what
    # val_range with that range gives (whose values are checked against NumPy elsewhere).
    assert np.array_equal(ranged["x"], feeds(DataLoader(val_range=(-3.0, -1.0)))["x"])
    assert np.array_equal(ranged["i"], feeds(DataLoader(val_range=(2, 9)))["i"])
    assert ranged["i"].min() >= 2 and ranged["i"].max() <= 9
    assert ranged["x"].min() >= -3 and ranged["x"].max() <= -1
    # Only float_range given: integers keep val_range.
    with pytest.warns(DeprecationWarning, match="float_range"):
        only_float = feeds(DataLoader(float_range=(5.0, 6.0),
                                      val_range={"i": (0, 1), "": (0, 1)}))
    assert only_float["i"].max() <= 1 and only_float["x"].min() >= 5
    # The generated values are NumPy's: RandomState(1), as Polygraphy's loader draws them.
    rng = np.random.RandomState(1)
    expected_x = (rng.random_sample((2, 3)) * 2.0 - 3.0).astype(np.float32)
    assert np.array_equal(ranged["x"], expected_x)
    del runner


def test_data_loader_input_metadata_attribute(identity_model):
    loader = DataLoader()
    assert loader.input_metadata is None
    user = DataLoader(input_metadata=TensorMetadata().add("x", np.float32, (1, 1, 2, 2)))
    assert list(user.input_metadata.keys()) == ["x"]
    Comparator.run([PluginRefRunner(OnnxFromPath(identity_model))], data_loader=loader)
    assert list(loader.input_metadata.keys()) == ["x"]
    assert loader.input_metadata["x"].shape == [1, 1, 2, 2]


# ---- json and the logger, against Polygraphy's own output -------------------------------------


def fixture_sections(path):
    sections, name = {}, None
    with open(path) as f:
        for line in f:
            if line.startswith("== "):
                name = line[3:].strip()
                sections[name] = ""
            else:
                sections[name] += line
    return sections


def test_json_arrays_and_dicts_are_polygraphys_bytes():
    expected = fixture_sections(os.path.join(FIXTURES, "polygraphy_api_fixtures.txt"))
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert to_json(a) + "\n" == expected["to_json(array)"]
    assert to_json({"x": a, "n": 3, "s": "hi", "l": [1.5, None]}) + "\n" == \
        expected["to_json(dict)"]
    assert to_json([{"y": np.arange(3, dtype=np.int64)}]) + "\n" == \
        expected["to_json(int64 array in a list)"]


def test_json_round_trips(tmp_path):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    back = from_json(to_json(a))
    assert back.dtype == a.dtype and np.array_equal(back, a)
    d = from_json(to_json({"x": a, "n": 3, "nested": {"b": np.array([True, False])}}))
    assert np.array_equal(d["x"], a) and d["n"] == 3
    assert np.array_equal(d["nested"]["b"], [True, False])
    save_json({"k": a}, tmp_path / "d.json")
    assert np.array_equal(load_json(tmp_path / "d.json")["k"], a)
    feeds = from_json(to_json([{"x": a}]))
    assert np.array_equal(feeds[0]["x"], a)
    assert from_json(to_json([{"a": 1}])) == [{"a": 1}]  # a list of dicts that are not feeds


def test_logger_indent_and_verbosity_print_polygraphys_lines():
    # The fixture's own generator, written for Polygraphy, ported by renaming.
    with open(os.path.join(FIXTURES, "make_polygraphy_api_fixtures.py")) as f:
        script = f.read().replace("polygraphy", "parity")
    env = dict(os.environ, PYTHONPATH=MODULE_DIR, PYTHONUNBUFFERED="1")
    out = subprocess.run([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    with open(os.path.join(FIXTURES, "polygraphy_api_fixtures.txt")) as f:
        expected = f.read()
    assert out.returncode == 0 and out.stdout == expected, out.stdout


# ---- model scripts (--model-type onnx-script) from Python -------------------------------------


def test_model_from_script_takes_a_model_proto_or_a_loader(tmp_path, identity_model):
    from parity.backend.common import ModelFromScript

    script = tmp_path / "models.py"
    script.write_text(
        "import onnx\nfrom parity.backend.onnx import OnnxFromPath\n\n"
        f"def proto():\n    return onnx.load({str(identity_model)!r})\n\n"
        f"def loader():\n    return OnnxFromPath({str(identity_model)!r})\n\n"
        "def wrong():\n    return 'model.onnx'\n"
    )
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
    for name in ("proto", "loader"):
        with PluginRefRunner(ModelFromScript(str(script), name)) as runner:
            assert np.array_equal(runner.infer({"x": x})["y"], x)
    with pytest.raises(PolygraphyException, match="it returned str"):
        ModelFromScript(str(script), "wrong")()
