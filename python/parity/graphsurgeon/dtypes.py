"""ONNX element types <-> NumPy dtypes (onnx 1.12 has only ``onnx.mapping``)."""
import numpy as np
import onnx
from onnx import TensorProto

# Types NumPy has no dtype for: GraphSurgeon keeps them as the ONNX enum value.
_NO_NUMPY = {TensorProto.BFLOAT16, TensorProto.STRING} | {
    getattr(TensorProto, n) for n in ("FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
                                      "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1")
    if hasattr(TensorProto, n)
}
_TO_NUMPY = {k: np.dtype(v) for k, v in onnx.mapping.TENSOR_TYPE_TO_NP_TYPE.items()
             if k not in _NO_NUMPY}
_TO_ONNX = {v: k for k, v in _TO_NUMPY.items()}
_TO_NUMPY[TensorProto.STRING] = np.dtype(object)
_TO_ONNX[np.dtype(object)] = TensorProto.STRING


def numpy_dtype(onnx_type):
    """The NumPy dtype of an ONNX element type, or the enum value itself when NumPy has none."""
    if not isinstance(onnx_type, int):
        return onnx_type
    return _TO_NUMPY.get(onnx_type, onnx_type)


def onnx_type(dtype):
    """The ONNX element type (an int) of a NumPy dtype, a NumPy type, or an ONNX enum value."""
    if isinstance(dtype, int):
        return dtype
    try:
        return _TO_ONNX[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise TypeError(
            f"failed to export dtype '{dtype}': it has no ONNX element type; valid choices are "
            f"{sorted(str(d) for d in _TO_ONNX)} or an onnx.TensorProto data type"
        ) from None


def itemsize(dtype):
    """Bytes per element (0.5 for 4-bit types)."""
    dtype = numpy_dtype(dtype)
    if not isinstance(dtype, int):
        return np.dtype(dtype).itemsize
    if dtype == TensorProto.BFLOAT16:
        return 2
    if dtype in (getattr(TensorProto, "UINT4", -1), getattr(TensorProto, "INT4", -1),
                 getattr(TensorProto, "FLOAT4E2M1", -1)):
        return 0.5
    return 1
