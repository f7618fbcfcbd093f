"""The bases of loaders and runners (Polygraphy's ``backend/base``)."""
from parity.logger import G_LOGGER


def invoke_if_callable(obj, *args, **kwargs):
    """Returns (obj(*args, **kwargs), True) for a callable (a loader), else (obj, False)."""
    if callable(obj):
        return obj(*args, **kwargs), True
    return obj, False


class BaseLoader:
    """A lazy loader: holds its arguments and builds its object when called."""

    def __call__(self, *args, **kwargs):
        return self.call_impl(*args, **kwargs)

    def call_impl(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define call_impl()")


class BaseRunner:
    """A runner: activate (or ``with``), infer, deactivate. Wraps one of Parity's C++ runners."""

    def __init__(self, runner):
        self._runner = runner

    @property
    def name(self):
        return self._runner.name

    @property
    def is_active(self):
        return self._runner.is_active

    def activate(self):
        self._runner.activate()

    def deactivate(self):
        self._runner.deactivate()

    def get_input_metadata(self, use_numpy_dtypes=None):
        """The inputs infer() expects: a TensorMetadata of name -> (np.dtype, shape)."""
        return self._runner.get_input_metadata()

    def infer(self, feed_dict, check_inputs=True):
        """Runs on a dict of name -> NumPy array and returns a dict of read-only arrays."""
        return self._runner.infer(feed_dict, check_inputs)

    def last_inference_time(self):
        """Seconds spent in the backend during the last infer(), or None."""
        return self._runner.last_inference_time()

    def __enter__(self):
        self.activate()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.deactivate()

    # The *_impl hooks of Polygraphy's BaseRunner. Parity's hooks are C++; calling these does
    # the same work through the public methods, with Polygraphy's warning.
    def _warn_impl(self, method):
        G_LOGGER.warning(
            f"Calling '{type(self).__name__}.{method}_impl()' directly is not recommended. "
            f"Please use '{method}()' instead."
        )

    def activate_impl(self):
        self._warn_impl("activate")
        if not self.is_active:
            self._runner.activate()

    def get_input_metadata_impl(self):
        self._warn_impl("get_input_metadata")
        return self._runner.get_input_metadata()

    def infer_impl(self, feed_dict):
        self._warn_impl("infer")
        return self._runner.infer(feed_dict, False)

    def deactivate_impl(self):
        self._warn_impl("deactivate")
        if self.is_active:
            self._runner.deactivate()
