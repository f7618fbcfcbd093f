"""Hostile shapes through the Python API (issue 15): a graph input whose element count overflows
64 bits is an error with a message, on the reference runner and on ONNX Runtime's, instead of a
crash of the interpreter."""
import pytest
from onnx import TensorProto

from conftest import save_model, tensor
from parity import ParityException
from parity.backend.onnx import OnnxFromPath
from parity.backend.onnxrt import OnnxrtRunner, SessionFromOnnx
from parity.backend.pluginref import PluginRefRunner
from parity.comparator import Comparator, DataLoader
from onnx import helper


@pytest.mark.parametrize("elem_type", [TensorProto.FLOAT, TensorProto.INT8, TensorProto.BOOL])
@pytest.mark.parametrize("dims", [[2**31, 2**31, 4], [2**62, 4]])
@pytest.mark.parametrize("backend", ["pluginref", "onnxrt"])
def test_overflowing_graph_input_is_an_error(tmp_path, elem_type, dims, backend):
    path = save_model(tmp_path / "m.onnx", [helper.make_node("Identity", ["x"], ["y"])],
                      [tensor("x", elem_type, dims)], [tensor("y", elem_type, dims)])
    runner = (PluginRefRunner(OnnxFromPath(str(path))) if backend == "pluginref"
              else OnnxrtRunner(SessionFromOnnx(OnnxFromPath(str(path)))))
    with pytest.raises(ParityException, match="overflows a 64-bit integer"):
        Comparator.run([runner], data_loader=DataLoader())
