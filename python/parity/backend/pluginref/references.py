"""Reference implementations of ops in Python (Polygraphy's
``polygraphy.backend.pluginref.references``)::

    from parity.backend.pluginref.references import OP_REGISTRY, register

    @register("MyOp", domain="my.domain")
    def run_my_op(attrs, x):
        return [x * attrs["scale"]]

The function is called as ``fn(attrs, *inputs)`` and returns one array per node output, as in
Polygraphy. Parity's reference backend runs the built-in ops itself (C++); registering one of
them replaces the built-in kernel. A node matches a registration when both its op type and its
domain do: give the domain of a custom op's nodes (Polygraphy's pluginref ignores domains).
"""
from parity import register as _register_op

# op type -> the Python function registered for it (the last one, whatever its domain);
# (domain, op type) -> the same, for ops of several domains.
OP_REGISTRY = {}


def register(op, domain="", since_version=1, until_version=None):
    """Registers the decorated function as the reference implementation of `op` in `domain`
    ("" or "ai.onnx" for ONNX's own ops), for opsets since_version..until_version (None: every
    later one)."""

    def register_impl(func):
        _register_op(op, domain, since_version, until_version)(func)
        OP_REGISTRY[op] = func
        OP_REGISTRY[(domain, op)] = func
        return func

    return register_impl


__all__ = ["OP_REGISTRY", "register"]
