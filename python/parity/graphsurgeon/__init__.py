"""Parity's graph-editing API with ONNX-GraphSurgeon's names: scripts port by changing
``import onnx_graphsurgeon as gs`` to ``import parity.graphsurgeon as gs``.

    graph = gs.import_onnx(onnx.load("model.onnx"))
    graph.fold_constants().cleanup().toposort()   # folded on Parity's reference backend
    onnx.save(gs.export_onnx(graph), "folded.onnx")

Pure Python over onnx and NumPy (graph.py, node.py, tensor.py, onnx_io.py, folding.py).
"""
from parity._parity import ParityException as OnnxGraphSurgeonException
from parity.graphsurgeon.function import Function
from parity.graphsurgeon.graph import Graph
from parity.graphsurgeon.node import Node
from parity.graphsurgeon.onnx_io import export_onnx, import_onnx
from parity.graphsurgeon.tensor import Constant, LazyValues, SparseValues, Tensor, Variable
from parity.logger import G_LOGGER

__all__ = ["Graph", "Function", "Node", "Tensor", "Variable", "Constant", "LazyValues", "SparseValues",
           "import_onnx", "export_onnx", "OnnxGraphSurgeonException", "G_LOGGER"]
