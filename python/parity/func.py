"""Polygraphy's ``func.extend``: reach what a loader builds without leaving the pipeline."""
import copy
import functools
import inspect

from parity import config
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

    When the decorated function takes ``extend_func``'s parameters before its return values,
    it gets both: ``@extend(x) def y(x_arg, x_ret)`` is called as ``y(x_arg, x(x_arg))``.

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
            elif num_params == len(as_tuple) + len(args) + len(kwargs):
                # `func` takes extend_func's own arguments first, then its return values: the
                # return values go by name so that they come after **kwargs.
                names = list(inspect.signature(func).parameters)[-len(as_tuple):]
                ret = func(*args, **kwargs, **dict(zip(names, as_tuple)))
            else:
                G_LOGGER.critical(
                    f"Function: {_name_of(func)} accepts {num_params} parameter(s), but needs to "
                    f"accept {len(as_tuple)} parameter(s) from: {_name_of(extend_func)} instead."
                    f"\nNote: Parameters should be: {tuple(type(v) for v in as_tuple)}"
                )
            return values if ret is None else ret

        return extended_func

    return extend_decorator


def constantmethod(func):
    """Marks a method that must not change its object. With internal correctness checks on
    (POLYGRAPHY_INTERNAL_CORRECTNESS_CHECKS=1 or PARITY_INTERNAL_CORRECTNESS_CHECKS=1), a call
    that changes the object's attributes raises PolygraphyInternalException; otherwise the
    method is returned unchanged."""
    if not config.INTERNAL_CORRECTNESS_CHECKS:
        return func

    @functools.wraps(func)
    def checked(self, *args, **kwargs):
        from parity.exception import PolygraphyInternalException

        before = copy.copy(vars(self))
        try:
            return func(self, *args, **kwargs)
        finally:
            if vars(self) != before:
                raise PolygraphyInternalException(
                    f"{self} was mutated in a constant method! Note:\nOld state: {before}\n"
                    f"New state: {vars(self)}"
                )

    return checked
