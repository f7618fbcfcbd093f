"""ONNX loaders (Polygraphy's ``polygraphy.backend.onnx``).

As in Polygraphy, calling a loader gives ONNX's own objects: ``OnnxFromPath(p)()`` is an
``onnx.ModelProto``, ``GsFromOnnx`` a ``parity.graphsurgeon.Graph``, and every loader taking a
model takes a ModelProto, a gs Graph or a loader of either. Given to a runner, a chain of these
loaders does its work in C++ instead (``_parity_model``: the file mapped, external data left
in place), so a runner never holds a Python copy of the weights (backend/_models.py).
"""
import os

from parity import _parity, constants
from parity.backend import _models
from parity.backend.base import BaseLoader, invoke_if_callable
from parity.logger import G_LOGGER


def _inner_parity_model(obj):
    return _models.parity_model_of(obj)


class OnnxFromPath(BaseLoader):
    """Loads an ONNX model from a file.

    Called, returns an onnx.ModelProto with its external data loaded (Polygraphy's result;
    ``ignore_external_data`` leaves the references). Given to a runner, the file is loaded by
    Parity's C++ loader instead, external data mapped rather than read.
    """

    def __init__(self, path, external_data_dir=None, ignore_external_data=None):
        self.path = str(path)
        self.external_data_dir = external_data_dir
        self.ignore_external_data = ignore_external_data

    def _check_path(self):
        if not os.path.isfile(self.path):
            G_LOGGER.critical(f"failed to load model '{self.path}': no such file")

    def call_impl(self):
        import onnx
        from onnx.external_data_helper import load_external_data_for_model

        self._check_path()
        G_LOGGER.info(f"Loading model: {os.path.abspath(self.path)}")
        model = onnx.load(self.path, load_external_data=False)
        if not self.ignore_external_data:
            base_dir = str(self.external_data_dir or os.path.dirname(os.path.abspath(self.path)))
            load_external_data_for_model(model, base_dir)
        return model

    def _parity_model(self):
        return _parity.onnx_from_path(
            self.path, str(self.external_data_dir or ""), bool(self.ignore_external_data)
        )


class OnnxFromBytes(BaseLoader):
    """Loads an ONNX model from its serialized bytes (or a loader of them): an onnx.ModelProto."""

    def __init__(self, serialized_onnx, external_data_dir=None, ignore_external_data=None):
        self._serialized_onnx = serialized_onnx
        self.external_data_dir = external_data_dir
        self.ignore_external_data = ignore_external_data

    def call_impl(self):
        import onnx
        from onnx.external_data_helper import load_external_data_for_model

        data, _ = invoke_if_callable(self._serialized_onnx)
        model = onnx.load_model_from_string(bytes(data))
        if self.external_data_dir and not self.ignore_external_data:
            load_external_data_for_model(model, str(self.external_data_dir))
        return model

    def _parity_model(self):
        data, _ = invoke_if_callable(self._serialized_onnx)
        return _parity.onnx_from_bytes(
            bytes(data), str(self.external_data_dir or ""), bool(self.ignore_external_data)
        )


class BytesFromOnnx(BaseLoader):
    """Serializes a model (a ModelProto, gs Graph, parity.Model, or a loader of one) to bytes."""

    def __init__(self, model):
        self._model = model

    def call_impl(self):
        model, _ = invoke_if_callable(self._model)
        if isinstance(model, _parity.Model):
            return _parity.bytes_from_onnx(model)
        return _models.proto_from_model(model).SerializeToString()


class ModifyOutputs(BaseLoader):
    """Marks tensors as graph outputs (``constants.MARK_ALL`` marks every tensor) and unmarks
    ``exclude_outputs``, with the same rules as ``--onnx-outputs`` (done by Parity's C++
    loader). A ModelProto in gives a new ModelProto out; the model given is not changed."""

    def __init__(self, model, outputs=None, exclude_outputs=None, copy=None):
        self._model = model
        self.outputs = outputs
        self.exclude_outputs = exclude_outputs

    def _nothing_to_do(self):
        return self.outputs is None and not self.exclude_outputs

    def _modify(self, model):
        mark_all = self.outputs == constants.MARK_ALL
        names = [] if mark_all or self.outputs is None else list(self.outputs)
        return _parity.modify_outputs(model, names, mark_all, list(self.exclude_outputs or []))

    def call_impl(self):
        import onnx

        model, _ = invoke_if_callable(self._model)
        if self._nothing_to_do():
            return model
        if isinstance(model, _parity.Model):
            return self._modify(model)
        modified = self._modify(_models.parity_model(model))
        result = onnx.load_model_from_string(_parity.bytes_from_onnx(modified))
        if _models._is_graph(model):
            from parity.graphsurgeon import import_onnx

            return import_onnx(result)
        return result

    def _parity_model(self):
        model = _inner_parity_model(self._model)
        return model if self._nothing_to_do() else self._modify(model)


class GsFromOnnx(BaseLoader):
    """The editable graph of a model: a ``parity.graphsurgeon.Graph`` (GraphSurgeon's API)."""

    def __init__(self, model):
        self._model = model

    def call_impl(self):
        from parity.graphsurgeon import import_onnx

        model, _ = invoke_if_callable(self._model)
        if _models._is_graph(model):
            return model
        base_dir = ""
        if isinstance(self._model, OnnxFromPath):
            base_dir = str(self._model.external_data_dir or
                           os.path.dirname(os.path.abspath(self._model.path)))
        return import_onnx(_models.proto_from_model(model), base_dir=base_dir)

    def _parity_model(self):
        # The graph would be imported and exported unchanged: run the model underneath.
        return _inner_parity_model(self._model)


# The name older Parity scripts use.
GraphFromOnnx = GsFromOnnx


class OnnxFromGs(BaseLoader):
    """The onnx.ModelProto of a gs Graph (or a loader of one)."""

    def __init__(self, graph, do_type_check=True):
        self._graph = graph
        self.do_type_check = do_type_check

    def call_impl(self):
        from parity.graphsurgeon import export_onnx

        graph, _ = invoke_if_callable(self._graph)
        if not _models._is_graph(graph):
            raise TypeError(f"expected a parity.graphsurgeon.Graph, got {type(graph).__name__}")
        return export_onnx(graph, do_type_check=self.do_type_check)


class SaveOnnx(BaseLoader):
    """Saves the model to `path` and passes it on, as Polygraphy's SaveOnnx.

    Args:
        model: A ModelProto, gs Graph, parity.Model, or a loader of one.
        path (str): Where to write the model.
        external_data_path (str): The external data file, relative to the model's folder ("":
            onnx's default name); None keeps the data in the model, unless the model is over
            protobuf's 2 GB limit, which then goes to "".
        size_threshold (int): Tensors of at least this many bytes go to external data
            (default 1024).
        all_tensors_to_one_file (bool): One data file for all tensors (default True).

    As in Polygraphy, saving a ModelProto with external data changes it to refer to the
    written data.
    """

    def __init__(self, model, path, external_data_path=None, size_threshold=None,
                 all_tensors_to_one_file=None):
        self._model = model
        self.path = str(path)
        self.external_data_path = external_data_path
        self.size_threshold = size_threshold
        self.all_tensors_to_one_file = all_tensors_to_one_file

    def _external(self):
        return self.external_data_path is not None

    def _save_proto(self, model):
        import onnx
        from onnx.external_data_helper import convert_model_to_external_data

        G_LOGGER.info(f"Saving ONNX model to: {self.path}")
        location = self.external_data_path
        if location is None and model.ByteSize() > _models._PROTOBUF_LIMIT:
            location = ""
            G_LOGGER.warning(
                f"Model size ({model.ByteSize() // 1024.0 ** 2} MiB) exceeds protobuf size "
                "threshold (2048 MiB). Will save weight data to an external file.\nTo control "
                "the location of this file, use the `external_data_path` parameter or the "
                "`--external-data-path` command-line option. "
            )
        if location is not None:
            convert_model_to_external_data(
                model, location=location or None,
                all_tensors_to_one_file=(True if self.all_tensors_to_one_file is None
                                         else bool(self.all_tensors_to_one_file)),
                size_threshold=1024 if self.size_threshold is None else int(self.size_threshold))
        onnx.save(model, self.path)

    def call_impl(self):
        model, _ = invoke_if_callable(self._model)
        if isinstance(model, _parity.Model) and not self._external():
            G_LOGGER.info(f"Saving ONNX model to: {self.path}")
            _parity.save_onnx(model, self.path)
        elif _models._is_graph(model) or isinstance(model, _parity.Model):
            self._save_proto(_models.proto_from_model(model))
        else:
            self._save_proto(model)
        return model

    def _parity_model(self):
        model = _inner_parity_model(self._model)
        if self._external():
            self._save_proto(_models.proto_from_model(model))
        else:
            G_LOGGER.info(f"Saving ONNX model to: {self.path}")
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


def gs_from_onnx(model):
    return GsFromOnnx(model)()


graph_from_onnx = gs_from_onnx


def onnx_from_gs(graph, do_type_check=True):
    return OnnxFromGs(graph, do_type_check)()


def save_onnx(model, path, external_data_path=None, size_threshold=None,
              all_tensors_to_one_file=None):
    return SaveOnnx(model, path, external_data_path, size_threshold, all_tensors_to_one_file)()
