"""Parity: run an ONNX model on several backends and compare the results, with Polygraphy's API.

A thin layer over Parity's C++ library (the extension module ``parity._parity``)::

    from parity.backend.onnx import OnnxFromPath
    from parity.backend.pluginref import PluginRefRunner
    from parity.backend.onnxrt import OnnxrtRunner, SessionFromOnnx
    from parity.comparator import Comparator

    runners = [PluginRefRunner(OnnxFromPath("model.onnx")),
               OnnxrtRunner(SessionFromOnnx("model.onnx"))]
    results = Comparator.run(runners)
    assert Comparator.compare_accuracy(results)

Custom ops get reference implementations with :func:`register` (Python) or
:func:`load_plugin` (a C++ plugin, see docs/plugins.md). See docs/python.md.
"""
from parity._parity import ParityException, ParityUsageError, __version__
from parity import _parity


def register(op, domain="", since_version=1, until_version=None):
    """Registers the decorated function as the reference implementation of an op.

    The function is called as ``fn(attrs, *inputs)`` with the node's attributes (a dict of
    int, float, str, lists and arrays) and one read-only NumPy array per input (``None`` for an
    empty optional input, a list of arrays for a sequence), and returns a list with one array
    per node output. A later registration of the same op replaces the earlier one (also a
    built-in kernel).

    Args:
        op (str): The op type, e.g. "MyOp".
        domain (str): The op's domain; "" (or "ai.onnx") is ONNX's default domain.
        since_version (int): The first opset of the domain served.
        until_version (int): The last opset served (inclusive); None serves every later one.
    """

    def register_impl(func):
        _parity.register_op(op, domain, since_version, until_version, func)
        return func

    return register_impl


def load_plugin(path):
    """Loads a plugin library (docs/plugins.md) and returns the ops it registered.

    The library may serve reference kernels for custom ops, backends, or both; its backends
    are then in :func:`parity.backend.registry.backends` and made with
    :func:`parity.backend.registry.make_runner`. A library is loaded once per process.
    """
    ops, _backends = _parity.load_any_plugin(path)
    return ops


__all__ = ["ParityException", "ParityUsageError", "register", "load_plugin", "__version__"]
