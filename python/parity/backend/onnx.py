"""ONNX loaders (Polygraphy's ``polygraphy.backend.onnx``)."""
from parity import _parity, constants
from parity.backend.base import BaseLoader, invoke_if_callable


class OnnxFromPath(BaseLoader):
    """Loads an ONNX model from a file (external data mapped, not copied)."""

    def __init__(self, path, external_data_dir=None, ignore_external_data=None):
        self.path = str(path)
        self.external_data_dir = external_data_dir
        self.ignore_external_data = ignore_external_data

    def call_impl(self):
        return _parity.onnx_from_path(
            self.path, str(self.external_data_dir or ""), bool(self.ignore_external_data)
        )


class OnnxFromBytes(BaseLoader):
    """Loads an ONNX model from its serialized bytes (or a loader of them)."""

    def __init__(self, serialized_onnx, external_data_dir=None, ignore_external_data=None):
        self._serialized_onnx = serialized_onnx
        self.external_data_dir = external_data_dir
        self.ignore_external_data = ignore_external_data

    def call_impl(self):
        data, _ = invoke_if_callable(self._serialized_onnx)
        return _parity.onnx_from_bytes(
            bytes(data), str(self.external_data_dir or ""), bool(self.ignore_external_data)
        )


class BytesFromOnnx(BaseLoader):
    """Serializes a model (or what a loader returns) to bytes."""

    def __init__(self, model):
        self._model = model

    def call_impl(self):
        model, _ = invoke_if_callable(self._model)
        return _parity.bytes_from_onnx(model)


class ModifyOutputs(BaseLoader):
    """Marks tensors as graph outputs (``constants.MARK_ALL`` marks every tensor) and unmarks
    ``exclude_outputs``. The model given is not changed: a modified copy is returned."""

    def __init__(self, model, outputs=None, exclude_outputs=None, copy=None):
        self._model = model
        self.outputs = outputs
        self.exclude_outputs = exclude_outputs

    def call_impl(self):
        model, _ = invoke_if_callable(self._model)
        if self.outputs is None and not self.exclude_outputs:
            return model
        mark_all = self.outputs == constants.MARK_ALL
        names = [] if mark_all or self.outputs is None else list(self.outputs)
        return _parity.modify_outputs(model, names, mark_all, list(self.exclude_outputs or []))


class ConvertToFp16(BaseLoader):
    """Converts the float tensors of the model to float16, keeping in float32 what must stay
    there, with Casts between (Polygraphy's ConvertToFp16, keep_io_types=True). A converted copy
    is returned; the model given is not changed."""

    def __init__(self, model, copy=None):
        self._model = model

    def call_impl(self):
        model, _ = invoke_if_callable(self._model)
        return _parity.convert_to_fp16(model)


class GraphFromOnnx(BaseLoader):
    """The graph the reference backend runs: Parity's IR is already a graph, so the model."""

    def __init__(self, model):
        self._model = model

    def call_impl(self):
        model, _ = invoke_if_callable(self._model)
        return model


# Polygraphy's name for the same step (its reference runner takes an onnx-graphsurgeon graph).
GsFromOnnx = GraphFromOnnx


class SaveOnnx(BaseLoader):
    """Saves the model to `path` and passes it on."""

    def __init__(self, model, path):
        self._model = model
        self.path = str(path)

    def call_impl(self):
        model, _ = invoke_if_callable(self._model)
        _parity.save_onnx(model, self.path)
        return model


def onnx_from_path(path, external_data_dir=None, ignore_external_data=None):
    return OnnxFromPath(path, external_data_dir, ignore_external_data)()


def onnx_from_bytes(serialized_onnx, external_data_dir=None, ignore_external_data=None):
    return OnnxFromBytes(serialized_onnx, external_data_dir, ignore_external_data)()


def bytes_from_onnx(model):
    return BytesFromOnnx(model)()


def modify_outputs(model, outputs=None, exclude_outputs=None, copy=None):
    return ModifyOutputs(model, outputs, exclude_outputs, copy)()


def convert_to_fp16(model, copy=None):
    return ConvertToFp16(model, copy)()


def graph_from_onnx(model):
    return GraphFromOnnx(model)()


gs_from_onnx = graph_from_onnx


def save_onnx(model, path):
    return SaveOnnx(model, path)()
