"""Polygraphy's ``func.extend``: reach what a loader builds without leaving the pipeline."""
import functools
import inspect

from parity.logger import G_LOGGER


def _name_of(fn):
    return getattr(fn, "__name__", repr(fn))


def extend(extend_func):
    """Decorates a function so that it extends ``extend_func``.

    Calling the decorated function calls ``extend_func`` with the same arguments, then the
    decorated function with what ``extend_func`` returned (a returned tuple gives one parameter
    per element). When the decorated function returns None, ``extend_func``'s return value is
    passed on; otherwise its own return value replaces it::

        @extend(OnnxFromPath("model.onnx"))
        def load_model(model):
            print(model.graph.input)      # returns None: the model is passed on

        model = load_model()

    A decorated function whose parameter count does not match the values it receives is an
    error naming both functions.
    """

    def extend_decorator(func):
        @functools.wraps(func)
        def extended_func(*args, **kwargs):
            values = extend_func(*args, **kwargs)
            as_tuple = values if isinstance(values, tuple) else (values,)
            num_params = len(inspect.signature(func).parameters)
            if num_params == 0 and len(as_tuple) == 1 and as_tuple[0] is None:
                ret = func()
            elif num_params == len(as_tuple):
                ret = func(*as_tuple)
            else:
                G_LOGGER.critical(
                    f"Function: {_name_of(func)} accepts {num_params} parameter(s), but needs to "
                    f"accept {len(as_tuple)} parameter(s) from: {_name_of(extend_func)} instead."
                    f"\nNote: Parameters should be: {tuple(type(v) for v in as_tuple)}"
                )
            return values if ret is None else ret

        return extended_func

    return extend_decorator
