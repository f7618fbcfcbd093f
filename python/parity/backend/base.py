"""The bases of loaders and runners (Polygraphy's ``backend/base``)."""
from parity import _parity
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
    """A runner: activate (or ``with``), infer, deactivate.

    Parity's own runners (PluginRefRunner, OnnxrtRunner, registry.make_runner) wrap a C++
    runner. A runner written in Python subclasses this class as in Polygraphy::

        class MyRunner(BaseRunner):
            def __init__(self, name=None):
                super().__init__(name=name, prefix="my-runner")

            def activate_impl(self): ...                 # optional
            def get_input_metadata_impl(self):           # a TensorMetadata
                return TensorMetadata().add("x", np.float32, (1, 3))
            def infer_impl(self, feed_dict):             # a dict of output arrays
                self.inference_time = ...                # optional, in seconds
                return {"y": feed_dict["x"] * 2}
            def deactivate_impl(self): ...               # optional

    and is run by ``Comparator.run`` beside the C++ runners, through the same contract: the
    state checks, Polygraphy's feed checks and input coercion are the C++ ones.
    """

    def __init__(self, name=None, prefix=None):
        # BaseRunner(cpp_runner): a wrapper of one of Parity's C++ runners.
        if isinstance(name, _parity.Runner):
            self._runner = name
            self._python_impl = False
        else:
            self._python_impl = True
            self._inference_time = None
            self._runner = _parity.make_python_runner(self, name or "", prefix or "Runner")

    @property
    def name(self):
        return self._runner.name

    @property
    def is_active(self):
        return self._runner.is_active

    @property
    def inference_time(self):
        """Seconds spent in the backend during the last infer(); None before any (a Python
        runner's infer_impl sets it)."""
        if self._python_impl:
            return self._inference_time
        return self._runner.inference_time  # an attribute read, which never warns

    @inference_time.setter
    def inference_time(self, seconds):
        if not self._python_impl:
            raise AttributeError(f"{type(self).__name__}.inference_time is measured by Parity")
        self._inference_time = seconds

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

    # Polygraphy's *_impl hooks. A Python runner overrides them (activate_impl and
    # deactivate_impl do nothing by default). For a wrapped C++ runner the hooks are C++;
    # calling these does the same work through the public methods, with Polygraphy's warning.
    def _warn_impl(self, method):
        G_LOGGER.warning(
            f"Calling '{type(self).__name__}.{method}_impl()' directly is not recommended. "
            f"Please use '{method}()' instead."
        )

    def activate_impl(self):
        if self._python_impl:
            return
        self._warn_impl("activate")
        if not self.is_active:
            self._runner.activate()

    def get_input_metadata_impl(self):
        if self._python_impl:
            raise NotImplementedError(
                f"{type(self).__name__} must define get_input_metadata_impl()"
            )
        self._warn_impl("get_input_metadata")
        return self._runner.get_input_metadata()

    def infer_impl(self, feed_dict):
        if self._python_impl:
            raise NotImplementedError(f"{type(self).__name__} must define infer_impl()")
        self._warn_impl("infer")
        return self._runner.infer(feed_dict, False)

    def deactivate_impl(self):
        if self._python_impl:
            return
        self._warn_impl("deactivate")
        if self.is_active:
            self._runner.deactivate()
