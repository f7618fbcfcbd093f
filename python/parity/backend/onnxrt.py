"""ONNX Runtime (Polygraphy's ``polygraphy.backend.onnxrt``), loaded at run time by Parity's
C++ backend: no ``onnxruntime`` Python package is needed."""
import os

from parity import _parity
from parity.backend import _models
from parity.backend.base import BaseLoader, BaseRunner, invoke_if_callable

_OPTIMIZATION_LEVELS = {"disable": 0, "disable_all": 0, "basic": 1, "extended": 2, "all": 99}


class SessionFromOnnx(BaseLoader):
    """Builds an ONNX Runtime session.

    Args:
        model_bytes: A path (str), serialized bytes, an onnx.ModelProto, a
            ``parity.graphsurgeon.Graph``, a parity.Model, or a loader of any of these. A
            chain of Parity's ONNX loaders is loaded by C++, not through a ModelProto.
        providers (List[str]): Execution providers in priority order, matched exactly or by
            case-insensitive substring. Default ["cpu"].
        provider_options (List[str]): "key=value" options for non-CPU providers.
        lib_path (str): libonnxruntime to load; default: search (docs/python.md).
        intra_op_threads (int): 0 lets ONNX Runtime choose.
        graph_optimization_level: "disable", "basic", "extended", "all" or 0/1/2/99.
        custom_op_libs (List[str]): ONNX Runtime custom-op libraries to register.
    """

    def __init__(self, model_bytes, providers=None, provider_options=None, lib_path=None,
                 intra_op_threads=None, graph_optimization_level=None, custom_op_libs=None):
        self._model_bytes = model_bytes
        self.providers = list(providers) if providers is not None else ["cpu"]
        self.provider_options = list(provider_options or [])
        self.lib_path = str(lib_path or "")
        self.intra_op_threads = int(intra_op_threads or 0)
        level = 99 if graph_optimization_level is None else graph_optimization_level
        if isinstance(level, str):
            level = _OPTIMIZATION_LEVELS.get(level.lower(), level)
        self.graph_optimization_level = level
        self.custom_op_libs = list(custom_op_libs or [])

    def call_impl(self):
        from parity.backend.onnx import OnnxFromPath

        source = self._model_bytes
        fast = getattr(source, "_parity_model", None)
        if (type(source) is OnnxFromPath and not source.external_data_dir
                and not source.ignore_external_data):
            # An unmodified file is opened by ONNX Runtime itself, as Polygraphy's session
            # loader opens a path: no model is loaded here, and no "Loading model" line.
            model = os.path.abspath(source.path)
        else:
            model = fast() if fast is not None else invoke_if_callable(source)[0]
        if isinstance(model, (bytearray, memoryview)):
            model = bytes(model)
        elif hasattr(model, "__fspath__"):
            model = str(model)
        elif not isinstance(model, (str, bytes)):
            model = _models.parity_model(model)
        if not isinstance(self.graph_optimization_level, int):
            raise _parity.ParityUsageError(
                f"failed to create a session with graph_optimization_level "
                f"'{self.graph_optimization_level}': unknown level; valid choices are "
                f"{sorted(_OPTIMIZATION_LEVELS)} or 0, 1, 2, 99"
            )
        return _parity.session_from_onnx(
            model, self.providers, self.provider_options, self.lib_path, self.intra_op_threads,
            self.graph_optimization_level, self.custom_op_libs,
        )


class OnnxrtRunner(BaseRunner):
    """Runs a model with ONNX Runtime.

    Args:
        sess: An ONNX Runtime session or a loader that returns one (``SessionFromOnnx``).
        name (str): The runner's name; default "onnxrt-runner-N<k>-<date>-<time>".
    """

    def __init__(self, sess, name=None):
        super().__init__(_parity.make_onnxrt_runner(sess, name or ""))


def session_from_onnx(model_bytes, providers=None, **kwargs):
    return SessionFromOnnx(model_bytes, providers, **kwargs)()
