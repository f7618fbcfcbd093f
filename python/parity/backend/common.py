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
