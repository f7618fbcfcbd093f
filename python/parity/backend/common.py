"""Helpers shared by backends (Polygraphy's ``polygraphy.backend.common``)."""
import importlib.util
import os

from parity.backend.base import BaseLoader
from parity.logger import G_LOGGER


class BytesFromPath(BaseLoader):
    """Reads a file's bytes."""

    def __init__(self, path):
        self.path = str(path)

    def call_impl(self):
        with open(self.path, "rb") as f:
            return f.read()


class InvokeFromScript(BaseLoader):
    """Imports a Python script and calls one of its functions with the loader's arguments
    (``--data-loader-script``, ``--compare-func-script``)."""

    def __init__(self, path, name):
        self.path = str(path)
        self.name = name
        self._func = None

    def _load(self):
        if self._func is None:
            if not os.path.isfile(self.path):
                G_LOGGER.critical(f"failed to load script '{self.path}': no such file")
            module_name = "parity_user_script_" + os.path.splitext(os.path.basename(self.path))[0]
            spec = importlib.util.spec_from_file_location(module_name, self.path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            func = getattr(module, self.name, None)
            if func is None:
                G_LOGGER.critical(
                    f"failed to find '{self.name}' in script '{self.path}': it defines "
                    f"{sorted(n for n in vars(module) if not n.startswith('_'))}"
                )
            self._func = func
        return self._func

    def call_impl(self, *args, **kwargs):
        return self._load()(*args, **kwargs)


def invoke_from_script(path, name, *args, **kwargs):
    return InvokeFromScript(path, name)(*args, **kwargs)


def bytes_from_path(path):
    return BytesFromPath(path)()


# ONNX's protobuf limit: a model this large keeps its tensors in a file beside it. The
# environment variable lowers it (the tests write small models that way).
def _max_inline_bytes():
    return int(os.environ.get("PARITY_MODEL_SCRIPT_MAX_INLINE_BYTES", 2**31 - 1))


def model_from_script(path, name, save_to=None):
    """Calls the function `name` of the script `path` (``--model-type onnx-script``) and
    returns the model it builds as a Parity model; with `save_to`, writes it there as ONNX
    instead (large models with their tensors in `save_to`.data) and returns None.

    The function takes no arguments and returns an ``onnx.ModelProto``, a Parity model, or a
    loader (a callable) of either.
    """
    from parity import _parity, mod

    func = mod.import_from_script(path, name)
    if not callable(func):
        G_LOGGER.critical(
            f"failed to load the model from script '{path}' with function '{name}': '{name}' "
            f"is a {type(func).__name__}, not a function; define def {name}(): returning an "
            f"onnx.ModelProto"
        )
    model = func()
    while callable(model) and not isinstance(model, _parity.Model):
        model = model()  # a loader, e.g. OnnxFromPath(...) or a func.extend function
    if isinstance(model, _parity.Model):
        if save_to is None:
            return model
        _parity.save_onnx(model, str(save_to))
        return None
    if type(model).__name__ != "ModelProto" or not hasattr(model, "SerializeToString"):
        G_LOGGER.critical(
            f"failed to load the model from script '{path}' with function '{name}': it "
            f"returned {type(model).__name__}; return an onnx.ModelProto or a Parity model "
            f"(parity.backend.onnx.OnnxFromPath(...)())"
        )
    if save_to is None:
        return _parity.onnx_from_bytes(model.SerializeToString())
    if model.ByteSize() < _max_inline_bytes():
        with open(save_to, "wb") as f:
            f.write(model.SerializeToString())
    else:
        import onnx

        onnx.save_model(model, str(save_to), save_as_external_data=True,
                        all_tensors_to_one_file=True, size_threshold=0,
                        location=os.path.basename(str(save_to)) + ".data")
    return None


class ModelFromScript(BaseLoader):
    """A loader of the model a user's script builds (``--model-type onnx-script``): calls
    the function `name` of the script `path`; see :func:`model_from_script`."""

    def __init__(self, path, name="load_model"):
        self.path = str(path)
        self.name = name

    def call_impl(self):
        return model_from_script(self.path, self.name)
