"""ONNX loaders (Polygraphy's ``polygraphy.backend.onnx``)."""
import os

from parity import _parity, constants
from parity.backend.base import BaseLoader, invoke_if_callable
from parity.common import TensorMetadata


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
    there, with Casts between (Polygraphy's ConvertToFp16, keep_io_types=True). Takes an
    onnx.ModelProto or a parity.Model (or a loader of either) and returns a converted copy of the
    same kind; the model given is not changed."""

    def __init__(self, model, copy=None):
        self._model = model

    def call_impl(self):
        model, _ = invoke_if_callable(self._model)
        return _like(model, _parity.convert_to_fp16(_model_bytes(model), _external_data_dir(model)))


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
    """Saves the model to `path` and passes it on (Polygraphy's SaveOnnx).

    external_data_path: None (no external data, unless the model passes protobuf's 2 GB limit),
    "" (the default file "<model file name>.data") or a file name beside the model.
    size_threshold: tensors smaller than this many bytes stay in the model file (default 1024).
    all_tensors_to_one_file: False writes one file per tensor (default True).
    """

    def __init__(self, model, path, external_data_path=None, size_threshold=None,
                 all_tensors_to_one_file=None):
        self._model = model
        self.path = str(path)
        self.external_data_path = external_data_path
        self.size_threshold = size_threshold
        self.all_tensors_to_one_file = all_tensors_to_one_file

    def call_impl(self):
        model, _ = invoke_if_callable(self._model)
        plain = (self.external_data_path is None and self.size_threshold is None
                 and self.all_tensors_to_one_file is None)
        if isinstance(model, _parity.Model) and plain:
            _parity.save_onnx(model, self.path)
            return model
        _parity.save_onnx_proto(
            _model_bytes(model), _external_data_dir(model), self.path,
            None if self.external_data_path is None else str(self.external_data_path),
            -1 if self.size_threshold is None else int(self.size_threshold),
            True if self.all_tensors_to_one_file is None else bool(self.all_tensors_to_one_file))
        return model


# The model tools below take what Polygraphy's take (an onnx.ModelProto, or a loader of one)
# and also a parity.Model; they return the kind of model they were given.
def _model_bytes(model):
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


def convert_to_fp16(model, copy=None):
    return ConvertToFp16(model, copy)()


def graph_from_onnx(model):
    return GraphFromOnnx(model)()


gs_from_onnx = graph_from_onnx


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
