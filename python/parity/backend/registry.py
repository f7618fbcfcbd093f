"""The backend registry (C++ ``backend/registry.h``): every backend Parity has, its own and those
of plugin libraries, with the options each takes. The command line's runner flags are made from
the same registry, so a backend is used the same way from both::

    from parity.backend.registry import backends, make_runner
    [b.name for b in backends()]              # ['pluginref', 'onnxrt', ...]
    runner = make_runner("onnxrt", OnnxFromPath("model.onnx"), ort_threads=1)

Options are the backend's command-line options without the leading dashes, dashes written as
underscores (``--ort-threads 1`` is ``ort_threads=1``; a list option takes a list).
"""
from parity import _parity
from parity.backend import _models
from parity.backend.base import BaseRunner


def backends():
    """Every registered backend (name, flags, help, group, options), in ``--help`` order."""
    return list(_parity.backends())


def make_runner(backend, model, name=None, **options):
    """A runner of the backend named ``backend`` (or one of its flags) for ``model``.

    Args:
        backend (str): "pluginref", "onnxrt", a plugin's backend name, or a flag ("--onnxrt").
        model: A model (onnx.ModelProto, gs Graph, parity.Model) or a loader that returns one
            (``OnnxFromPath(...)``).
        name (str): The runner's name; default "<backend>-runner-N<k>-<date>-<time>".
        options: The backend's options, e.g. ``providers=["cpu"]``, ``ort_threads=1``.
    """
    model = _models.model_loader(model)
    return BaseRunner(_parity.make_backend_runner(backend, model, options, name or ""))


__all__ = ["backends", "make_runner"]
