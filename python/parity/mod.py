"""Module helpers (Polygraphy's ``polygraphy.mod``): importing a symbol from a user's script
(what ``--data-loader-script`` scripts are loaded with), lazy imports, deprecation warnings."""
import contextlib
import importlib
import importlib.util
import os
import sys
import warnings

from parity.logger import G_LOGGER


def import_from_script(path, name):
    """Imports the symbol `name` from the Python script at `path` (its folder is on sys.path
    while it is imported, so the script may import its neighbours)."""
    path = str(path)
    folder = os.path.dirname(os.path.abspath(path))
    module_name = os.path.splitext(os.path.basename(path))[0]
    sys.path.insert(0, folder)
    with contextlib.ExitStack() as stack:

        def reset():
            sys.path.remove(folder)
            sys.modules.pop(module_name, None)

        stack.callback(reset)
        try:
            importlib.invalidate_caches()
            if not os.path.isfile(path):
                raise FileNotFoundError(f"no such file: '{path}'")
            spec = importlib.util.spec_from_file_location(module_name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module
            spec.loader.exec_module(module)
            return getattr(module, name)
        except Exception as err:
            message = f"Could not import symbol: {name} from script: {path}"
            ext = os.path.splitext(path)[1]
            if ext != ".py":
                message += (
                    "\nThis could be because the extension of the file is not '.py'. Note: The "
                    f"extension is: {ext}"
                )
            message += f"\nNote: Error was: {err}"
            G_LOGGER.critical(message)


class _LazyModule:
    def __init__(self, name):
        self._name = name
        self._module = None

    def __getattr__(self, attr):
        if self._module is None:
            try:
                self._module = importlib.import_module(self._name)
            except ImportError as err:
                G_LOGGER.critical(
                    f"Module: '{self._name}' is required but could not be imported.\nNote: "
                    f"Error was: {err}\nParity does not install packages; install it with apt "
                    f"or pip."
                )
        return getattr(self._module, attr)


def lazy_import(name, log=None, pkg_name=None, install_flags=None, requires=None):
    """A stand-in for the module `name` that imports it on first use."""
    return _LazyModule(name)


def has_mod(modname):
    """Whether the module `modname` can be imported."""
    return importlib.util.find_spec(modname) is not None


def export(funcify=False, func_name=None):
    """Polygraphy's export decorator: marks a public symbol (here it changes nothing)."""

    def export_impl(obj):
        return obj

    return export_impl


def warn_deprecated(name, use_instead, remove_in, module_name=None, always_show_warning=False):
    """Issues Polygraphy's DeprecationWarning for `name`."""
    full_name = f"{module_name}.{name}" if module_name else name
    message = f"{full_name} is deprecated and will be removed in Polygraphy {remove_in}."
    if use_instead is not None:
        message += f" Use {use_instead} instead."
    warnings.warn(message, DeprecationWarning, stacklevel=3)
    if always_show_warning:
        G_LOGGER.warning(message)


def deprecate(remove_in, use_instead, module_name=None, name=None):
    """Decorates a function or class so that using it warns it is deprecated."""

    def deprecate_impl(obj):
        import functools

        obj_name = name or getattr(obj, "__name__", str(obj))

        if isinstance(obj, type):
            original_init = obj.__init__

            @functools.wraps(original_init)
            def init(self, *args, **kwargs):
                warn_deprecated(obj_name, use_instead, remove_in, module_name)
                original_init(self, *args, **kwargs)

            obj.__init__ = init
            return obj

        @functools.wraps(obj)
        def wrapped(*args, **kwargs):
            warn_deprecated(obj_name, use_instead, remove_in, module_name)
            return obj(*args, **kwargs)

        return wrapped

    return deprecate_impl


__all__ = ["import_from_script", "lazy_import", "has_mod", "export", "warn_deprecated",
           "deprecate"]
