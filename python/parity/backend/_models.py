"""What Polygraphy's ONNX loaders pass around (an onnx.ModelProto, a GraphSurgeon graph) turned
into the model Parity's C++ backends run (``parity._parity.Model``), with as few copies as
Polygraphy makes.

Two ways in:
- A chain of Parity's own loaders (``OnnxFromPath``, ``ModifyOutputs``, ``GsFromOnnx``, ...)
  given to a runner is never turned into a ModelProto at all: each loader has a
  ``_parity_model()`` that does its step in C++ (files mapped, external data left where it is).
- Anything else (a ModelProto a script built or edited, a gs Graph, a user's loader) is
  serialized once and parsed by C++; a model over protobuf's 2 GB limit is written once with
  its large tensors as external data in a temporary folder and loaded from there.
"""
import os
import tempfile

from parity import _parity

EXPECTED = "an onnx.ModelProto, a parity.graphsurgeon.Graph or a parity.Model"
# protobuf refuses to serialize a message of 2 GiB or more.
_PROTOBUF_LIMIT = (1 << 31) - 1


def _is_proto(obj):
    return type(obj).__name__ == "ModelProto" and hasattr(obj, "SerializeToString")


def _is_graph(obj):
    from parity.graphsurgeon import Graph

    return isinstance(obj, Graph)


def describe(obj):
    return type(obj).__name__


def proto_from_model(obj):
    """An onnx.ModelProto of a parity.Model, ModelProto or gs Graph (a ModelProto as it is)."""
    import onnx

    if _is_proto(obj):
        return obj
    if _is_graph(obj):
        from parity.graphsurgeon import export_onnx

        return export_onnx(obj, do_type_check=False)
    if isinstance(obj, _parity.Model):
        return onnx.load_model_from_string(_parity.bytes_from_onnx(obj))
    raise TypeError(f"expected {EXPECTED}, got {describe(obj)}")


def bytes_from_proto(model):
    return model.SerializeToString()


def _load_externalized(model, base_dir, limit):
    """Loads a ModelProto too big to serialize: its tensors of 1 KiB and more are written to
    one data file (moved out of the proto while it is serialized, then put back), and the
    C++ loader maps that file."""
    import onnx
    from onnx.external_data_helper import _get_all_tensors

    with tempfile.TemporaryDirectory(prefix="parity-model-") as folder:
        data_name = "model.data"
        moved = []
        with open(os.path.join(folder, data_name), "wb") as data:
            for tensor in _get_all_tensors(model):
                if not tensor.HasField("raw_data") or len(tensor.raw_data) < 1024:
                    continue
                offset = data.tell()
                data.write(tensor.raw_data)
                length = data.tell() - offset
                tensor.ClearField("raw_data")
                tensor.data_location = onnx.TensorProto.EXTERNAL
                for key, value in (("location", data_name), ("offset", str(offset)),
                                   ("length", str(length))):
                    entry = tensor.external_data.add()
                    entry.key, entry.value = key, value
                moved.append((tensor, offset, length))
        try:
            if model.ByteSize() > limit:
                raise _parity.ParityException(
                    f"failed to pass a model of {model.ByteSize()} bytes to Parity: even with "
                    f"its weights moved out it is over protobuf's {limit}-byte limit; save it "
                    "with onnx.save(..., save_as_external_data=True) and load it by path"
                )
            path = os.path.join(folder, "model.onnx")
            with open(path, "wb") as f:
                f.write(model.SerializeToString())
            return _parity.onnx_from_path(path, "", False)
        finally:
            # Put the weights back, so the caller's ModelProto is as it was.
            with open(os.path.join(folder, data_name), "rb") as data:
                for tensor, offset, length in moved:
                    data.seek(offset)
                    tensor.raw_data = data.read(length)
                    tensor.ClearField("external_data")
                    tensor.ClearField("data_location")


def parity_model(obj, base_dir="", limit=_PROTOBUF_LIMIT):
    """The parity.Model of a parity.Model, onnx.ModelProto or gs Graph. `base_dir` is where
    the ModelProto's external data references point (its model's folder)."""
    if isinstance(obj, _parity.Model):
        return obj
    if _is_graph(obj):
        obj = proto_from_model(obj)
    if not _is_proto(obj):
        raise TypeError(f"expected {EXPECTED}, got {describe(obj)}")
    if obj.ByteSize() > limit:
        return _load_externalized(obj, base_dir, limit)
    return _parity.onnx_from_bytes(obj.SerializeToString(), base_dir, False)


def model_loader(obj, what="model"):
    """A callable making the parity.Model of `obj`: a model of any kind above, one of Parity's
    loaders (its C++ fast path), or any loader returning a model of any kind."""
    if isinstance(obj, _parity.Model):
        return obj
    fast = getattr(obj, "_parity_model", None)
    if fast is not None:
        return fast
    if _is_proto(obj) or _is_graph(obj):
        return lambda: parity_model(obj)
    if callable(obj):
        def load():
            value = obj()
            if not (isinstance(value, _parity.Model) or _is_proto(value) or _is_graph(value)):
                raise TypeError(f"the loader returned {describe(value)}, expected {EXPECTED}")
            return parity_model(value)

        return load
    raise TypeError(f"expected {EXPECTED} or a loader that returns one as the {what}, got "
                    f"{describe(obj)}")


def parity_model_of(obj):
    """model_loader(obj), called: the parity.Model itself."""
    loader = model_loader(obj)
    return loader if isinstance(loader, _parity.Model) else loader()
