"""The reference backend (Polygraphy's ``polygraphy.backend.pluginref``), with every op of
Parity's registry plus those added by ``parity.register`` and ``parity.load_plugin``."""
from parity import _parity
from parity.backend import _models
from parity.backend.base import BaseRunner


class PluginRefRunner(BaseRunner):
    """Runs a model on Parity's reference interpreter.

    Args:
        graph: A model (an onnx.ModelProto, a ``parity.graphsurgeon.Graph``, a
            ``parity._parity.Model``) or a loader that returns one, e.g.
            ``GsFromOnnx(OnnxFromPath("model.onnx"))``. Loaded when the runner is activated.
        name (str): The runner's name; default "pluginref-runner-N<k>-<date>-<time>".
        threads (int): The reference backend's threads (``--ref-threads``); 0 or None, the
            default, uses the CPUs of the process's affinity mask.
    """

    def __init__(self, graph, name=None, threads=None):
        model = _models.model_loader(graph, "graph")
        super().__init__(_parity.make_pluginref_runner(model, name or "", int(threads or 0)))
