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
from parity.common import TensorMetadata
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
        # The absolute path, as "Loading model: ..." shows it (Polygraphy's line).
        return _parity.onnx_from_path(
            os.path.abspath(self.path),
            str(self.external_data_dir or ""),
            bool(self.ignore_external_data),
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


class ConvertToFp16(BaseLoader):
    """Converts the float tensors of the model to float16, keeping in float32 what must stay
    there, with Casts between (Polygraphy's ConvertToFp16, keep_io_types=True). Takes an
    onnx.ModelProto or a parity.Model (or a loader of either) and returns a converted copy of the
    same kind; the model given is not changed."""

    def __init__(self, model, copy=None):
        self._model = model

    def call_impl(self):
        model, _ = invoke_if_callable(self._model)
        return _like(model, _parity.convert_to_fp16(_model_bytes(model), _external_data_dir(model)))


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
            "<model file name>.data"); None keeps the data in the model, unless the model is
            over protobuf's 2 GB limit, which then goes to "".
        size_threshold (int): Tensors of at least this many bytes go to external data
            (default 1024).
        all_tensors_to_one_file (bool): One data file for all tensors (default True).

    The ModelProto passed on is the one given, unchanged (under 2 GB; over it, onnx's helper
    moves its weights out as Polygraphy's does).
    """

    def __init__(self, model, path, external_data_path=None, size_threshold=None,
                 all_tensors_to_one_file=None):
        self._model = model
        self.path = str(path)
        self.external_data_path = external_data_path
        self.size_threshold = size_threshold
        self.all_tensors_to_one_file = all_tensors_to_one_file

    def _options(self):
        one_file = True if self.all_tensors_to_one_file is None else bool(
            self.all_tensors_to_one_file)
        threshold = -1 if self.size_threshold is None else int(self.size_threshold)
        location = None if self.external_data_path is None else str(self.external_data_path)
        return location, threshold, one_file

    def _save_proto(self, model):
        G_LOGGER.info(f"Saving ONNX model to: {self.path}")
        location, threshold, one_file = self._options()
        if model.ByteSize() > _models._PROTOBUF_LIMIT:
            # Too big to cross into C++ serialized: onnx's own helper moves the weights out.
            import onnx
            from onnx.external_data_helper import convert_model_to_external_data

            if location is None:
                location = ""
                G_LOGGER.warning(
                    f"Model size ({model.ByteSize() // 1024.0 ** 2} MiB) exceeds protobuf size "
                    "threshold (2048 MiB). Will save weight data to an external file.\nTo "
                    "control the location of this file, use the `external_data_path` parameter "
                    "or the `--external-data-path` command-line option. ")
            convert_model_to_external_data(
                model, location=location or None, all_tensors_to_one_file=one_file,
                size_threshold=1024 if threshold < 0 else threshold)
            onnx.save(model, self.path)
            return
        # The one model writer of Parity (onnx/save_model.h), as every tool that writes a model.
        _parity.save_onnx_proto(model.SerializeToString(), "", self.path, location, threshold,
                                one_file)

    def _save_parity_model(self, model):
        # The same writer, from the model's own protobuf, its external data read where it lives.
        G_LOGGER.info(f"Saving ONNX model to: {self.path}")
        _parity.save_onnx(model, self.path, *self._options())

    def call_impl(self):
        model, _ = invoke_if_callable(self._model)
        if isinstance(model, _parity.Model):
            self._save_parity_model(model)
        elif _models._is_graph(model):
            self._save_proto(_models.proto_from_model(model))
        else:
            self._save_proto(model)
        return model

    def _parity_model(self):
        model = _inner_parity_model(self._model)
        self._save_parity_model(model)
        return model


# The model tools below take what Polygraphy's take (an onnx.ModelProto, or a loader of one)
# and also a parity.Model; they return the kind of model they were given.
def _model_bytes(model):
    if _models._is_graph(model):
        return _models.proto_from_model(model).SerializeToString()
    if isinstance(model, _parity.Model):
        return _parity.bytes_from_onnx(model)
    if isinstance(model, (bytes, bytearray)):
        return bytes(model)
    if hasattr(model, "SerializeToString"):
        return model.SerializeToString()
    raise TypeError(f"expected an onnx.ModelProto or a parity.Model, got {type(model).__name__}")


def _external_data_dir(model):
    if isinstance(model, _parity.Model) and model.path:
        return os.path.dirname(model.path) or "."
    return ""


def _like(original, data):
    if isinstance(original, _parity.Model):
        return _parity.onnx_from_bytes(data, _external_data_dir(original), False)
    import onnx

    return onnx.load_model_from_string(data)


def _metadata(meta):
    if meta is None:
        return TensorMetadata()
    if isinstance(meta, TensorMetadata):
        return meta
    out = TensorMetadata()
    for name, value in dict(meta).items():
        dtype, shape = value if isinstance(value, (tuple, list)) else (value, None)
        out.add(name, dtype, shape)
    return out


class FoldConstants(BaseLoader):
    """Folds constants on Parity's reference backend (no ONNX Runtime): every node whose inputs
    are all constant becomes an initializer holding exactly the value it computes."""

    def __init__(self, model, num_passes=None, do_shape_inference=None, partitioning=None,
                 fold_shapes=None, copy=None, error_ok=None, size_threshold=None,
                 allow_onnxruntime_shape_inference=None):
        self._model = model
        self.num_passes = num_passes
        self.do_shape_inference = True if do_shape_inference is None else do_shape_inference
        self.partitioning = partitioning
        self.fold_shapes = True if fold_shapes is None else fold_shapes
        self.error_ok = True if error_ok is None else error_ok
        self.size_threshold = size_threshold

    def call_impl(self):
        model, _ = invoke_if_callable(self._model)
        data = _parity.fold_constants(
            _model_bytes(model), _external_data_dir(model),
            -1 if self.num_passes is None else int(self.num_passes), bool(self.fold_shapes),
            -1 if self.size_threshold is None else int(self.size_threshold),
            self.partitioning or "", bool(self.do_shape_inference), bool(self.error_ok))
        return _like(model, data)


class InferShapes(BaseLoader):
    """Runs ONNX's shape inference (libonnx) on the model."""

    def __init__(self, model, error_ok=None, external_data_dir=None, save_to_disk_threshold_bytes=None,
                 allow_onnxruntime=None):
        self._model = model
        self.error_ok = True if error_ok is None else error_ok

    def call_impl(self):
        model, _ = invoke_if_callable(self._model)
        return _like(model, _parity.infer_shapes(_model_bytes(model), bool(self.error_ok)))

    def _parity_model(self):
        # Given to a runner: inferred in C++ on the model's own protobuf, external data mapped.
        return _parity.infer_shapes_model(_inner_parity_model(self._model), bool(self.error_ok))


class ExtractSubgraph(BaseLoader):
    """The subgraph between `input_metadata` and `output_metadata` (TensorMetadata, or dicts
    of name -> (dtype, shape)); None keeps the model's own inputs or outputs."""

    def __init__(self, model, input_metadata=None, output_metadata=None, check_meta=None):
        self._model = model
        self.input_metadata = input_metadata
        self.output_metadata = output_metadata

    def call_impl(self):
        model, _ = invoke_if_callable(self._model)
        data = _parity.extract_subgraph(
            _model_bytes(model), _metadata(self.input_metadata), _metadata(self.output_metadata))
        return _like(model, data)


class SetUpperBound(BaseLoader):
    """Bounds tensors with unbounded data-dependent shapes by a Min. `upper_bounds`: one bound
    for every such tensor, or a dict of tensor name -> bound ("" for the others)."""

    def __init__(self, model, upper_bounds, copy=None):
        self._model = model
        self.upper_bounds = upper_bounds

    def call_impl(self):
        model, _ = invoke_if_callable(self._model)
        bounds = (dict(self.upper_bounds) if isinstance(self.upper_bounds, dict)
                  else {"": self.upper_bounds})
        data, _applied = _parity.set_upper_bound(
            _model_bytes(model), {k: int(v) for k, v in bounds.items()})
        return _like(model, data)


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


def convert_to_fp16(model, copy=None):
    return ConvertToFp16(model, copy)()


graph_from_onnx = gs_from_onnx


def onnx_from_gs(graph, do_type_check=True):
    return OnnxFromGs(graph, do_type_check)()


def save_onnx(model, path, external_data_path=None, size_threshold=None,
              all_tensors_to_one_file=None):
    return SaveOnnx(model, path, external_data_path, size_threshold, all_tensors_to_one_file)()


def fold_constants(model, num_passes=None, do_shape_inference=None, partitioning=None,
                   fold_shapes=None, copy=None, error_ok=None, size_threshold=None,
                   allow_onnxruntime_shape_inference=None):
    return FoldConstants(model, num_passes, do_shape_inference, partitioning, fold_shapes, copy,
                         error_ok, size_threshold, allow_onnxruntime_shape_inference)()


def infer_shapes(model, error_ok=None, external_data_dir=None, save_to_disk_threshold_bytes=None,
                 allow_onnxruntime=None):
    return InferShapes(model, error_ok, external_data_dir, save_to_disk_threshold_bytes,
                       allow_onnxruntime)()


def extract_subgraph(model, input_metadata=None, output_metadata=None, check_meta=None):
    return ExtractSubgraph(model, input_metadata, output_metadata, check_meta)()


def set_upper_bound(model, upper_bounds, copy=None):
    return SetUpperBound(model, upper_bounds, copy)()
