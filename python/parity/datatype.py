"""Data types (Polygraphy's ``polygraphy.datatype``): one ``DataType`` member per element type,
converted to and from NumPy and ONNX types::

    DataType.from_dtype(np.float32) is DataType.FLOAT32
    DataType.to_dtype(DataType.INT64, "numpy") == np.int64
    DataType.FLOAT16.numpy(), DataType.FLOAT16.onnx()

Members are accepted wherever Parity takes a dtype (``TensorMetadata.add``, a Python runner's
input metadata).
"""
import enum

from parity.exception import DataTypeConversionException

# Polygraphy member name -> (name, itemsize, kind, NumPy type name or None, ONNX enum value).
_FLOATING, _INTEGRAL, _OTHER = "floating", "integral", "other"
_TYPES = {
    "FLOAT64": ("float64", 8, _FLOATING, "float64", 11),
    "FLOAT32": ("float32", 4, _FLOATING, "float32", 1),
    "FLOAT16": ("float16", 2, _FLOATING, "float16", 10),
    "FLOAT4": ("float4", 0.5, _FLOATING, None, 23),
    "INT16": ("int16", 2, _INTEGRAL, "int16", 5),
    "INT32": ("int32", 4, _INTEGRAL, "int32", 6),
    "INT64": ("int64", 8, _INTEGRAL, "int64", 7),
    "INT8": ("int8", 1, _INTEGRAL, "int8", 3),
    "INT4": ("int4", 0.5, _INTEGRAL, None, 22),
    "UINT16": ("uint16", 2, _INTEGRAL, "uint16", 4),
    "UINT32": ("uint32", 4, _INTEGRAL, "uint32", 12),
    "UINT64": ("uint64", 8, _INTEGRAL, "uint64", 13),
    "UINT8": ("uint8", 1, _INTEGRAL, "uint8", 2),
    "BOOL": ("bool", 1, _OTHER, "bool", 9),
    "STRING": ("string", 0, _OTHER, "object", 8),
    "BFLOAT16": ("bfloat16", 2, _FLOATING, None, 16),
    "FLOAT8E4M3FN": ("float8e4m3fn", 1, _FLOATING, None, 17),
    "FLOAT8E4M3FNUZ": ("float8e4m3fnuz", 1, _FLOATING, None, 18),
    "FLOAT8E5M2": ("float8e5m2", 1, _FLOATING, None, 19),
    "FLOAT8E5M2FNUZ": ("float8e5m2fnuz", 1, _FLOATING, None, 20),
}


class DataTypeEntry:
    """One data type: ``name``, ``itemsize`` (bytes), ``is_floating``, ``is_integral``."""

    def __init__(self, name, itemsize, kind, numpy_name, onnx_value):
        self.name = name
        self.itemsize = itemsize
        self._kind = kind
        self._numpy_name = numpy_name
        self._onnx_value = onnx_value
        # Read by Parity's C++ side (dtype_from_object) to take a member as a dtype.
        self._parity_dtype_name = name

    @property
    def is_floating(self):
        return self._kind == _FLOATING

    @property
    def is_integral(self):
        return self._kind == _INTEGRAL

    def numpy(self):
        return DataType.to_dtype(self, "numpy")

    def onnx(self):
        return DataType.to_dtype(self, "onnx")

    def __str__(self):
        return self.name

    def __repr__(self):
        return f"DataType.{self.name.upper()}"


def _numpy_import(dtype):
    import numpy as np

    if isinstance(dtype, str):
        for entry in DataType.__members__.values():
            if entry.name == dtype:
                return entry
    try:
        np_dtype = np.dtype(dtype)
    except TypeError:
        return None
    if np_dtype.kind in "OUS":
        return DataType.STRING
    for entry in DataType.__members__.values():
        if entry._numpy_name and entry._numpy_name != "object" and np.dtype(entry._numpy_name) == np_dtype:
            return entry
    return None


def _onnx_import(dtype):
    if isinstance(dtype, bool) or not isinstance(dtype, (int, enum.IntEnum)):
        return None
    for entry in DataType.__members__.values():
        if entry._onnx_value == int(dtype):
            return entry
    return None


class DataType:
    """The data types, as class members: ``DataType.FLOAT32``, ``DataType.INT64``, ..."""

    __members__ = {key: DataTypeEntry(*value) for key, value in _TYPES.items()}

    @staticmethod
    def from_dtype(dtype, source_module=None):
        """The member for a NumPy dtype or type, a type name, or (source_module="onnx", or an
        int) an ONNX TensorProto data type. Raises DataTypeConversionException otherwise."""
        if isinstance(dtype, DataTypeEntry):
            return dtype
        importers = {"numpy": _numpy_import, "onnx": _onnx_import}
        if source_module is not None and source_module not in importers:
            raise DataTypeConversionException(
                f"failed to convert {dtype!r} from module '{source_module}': unknown module; "
                f"valid choices are {sorted(importers)}"
            )
        order = [importers[source_module]] if source_module else [_onnx_import, _numpy_import]
        if dtype is not None:
            for importer in order:
                entry = importer(dtype)
                if entry is not None:
                    return entry
        raise DataTypeConversionException(
            f"Could not convert: {dtype} to a corresponding Polygraphy data type"
        )

    @staticmethod
    def to_dtype(dtype, target_module):
        """The NumPy dtype (target_module="numpy") or ONNX TensorProto value ("onnx") of a
        member."""
        if not isinstance(dtype, DataTypeEntry):
            return dtype
        if target_module == "numpy":
            if dtype._numpy_name is None:
                raise DataTypeConversionException(
                    f"failed to convert {dtype.name} to NumPy: NumPy has no such type"
                )
            import numpy as np

            return np.dtype(dtype._numpy_name)
        if target_module == "onnx":
            return dtype._onnx_value
        raise DataTypeConversionException(
            f"failed to convert {dtype.name} to module '{target_module}': unknown module; valid "
            f"choices are ['numpy', 'onnx']"
        )


for _key, _entry in DataType.__members__.items():
    setattr(DataType, _key, _entry)

__all__ = ["DataType", "DataTypeEntry"]
