"""Tensors of a graph: ``Variable`` (known at run time) and ``Constant`` (values known now).

As in ONNX-GraphSurgeon, a tensor's ``inputs`` are the nodes producing it and its ``outputs`` the
nodes consuming it, kept in step with the nodes' own lists (lists.py). ``to_constant`` and
``to_variable`` change a tensor in place, so every node holding it sees the change.
"""
import numpy as np

from parity.graphsurgeon import dtypes
from parity.graphsurgeon.lists import SynchronizedList, assign_io
from parity.logger import G_LOGGER


class Tensor:
    """The base of Variable and Constant; not constructed directly."""

    DYNAMIC = -1

    def __init__(self):
        raise NotImplementedError("Tensor is an abstract class: make a Variable or a Constant")

    def __setattr__(self, name, value):
        if name in ("inputs", "outputs"):
            assign_io(self, name, value)
        else:
            super().__setattr__(name, value)

    def _init_io(self):
        # A tensor's producers list it in their outputs; its consumers list it in their inputs.
        object.__setattr__(self, "inputs", SynchronizedList(self, "outputs", []))
        object.__setattr__(self, "outputs", SynchronizedList(self, "inputs", []))

    def is_empty(self):
        """Whether this is the nameless tensor of an omitted optional input or output."""
        return self.name == ""

    def to_constant(self, values, data_location=None, export_dtype=None):
        """Turns this tensor into a Constant holding `values`, in place."""
        self.__dict__.pop("dtype", None)
        self.__dict__.pop("shape", None)
        self.__class__ = Constant
        self._values = values
        self.data_location = data_location
        self._export_dtype = export_dtype
        return self

    def to_variable(self, dtype=None, shape=()):
        """Turns this tensor into a Variable, in place (a Constant keeps its dtype by default)."""
        if isinstance(self, Constant):
            dtype = dtype if dtype is not None else self.export_dtype
            self.__dict__.pop("_values", None)
            self.__dict__.pop("_export_dtype", None)
            self.__dict__.pop("data_location", None)
        self.__class__ = Variable
        self.dtype = dtype
        self.shape = list(shape) if shape is not None else None
        if "type" not in self.__dict__:
            self.type = "tensor_type"
        return self

    def i(self, tensor_idx=0, producer_idx=0):
        """``tensor.inputs[producer_idx].inputs[tensor_idx]``."""
        return self.inputs[producer_idx].inputs[tensor_idx]

    def o(self, consumer_idx=0, tensor_idx=0):
        """``tensor.outputs[consumer_idx].outputs[tensor_idx]``."""
        return self.outputs[consumer_idx].outputs[tensor_idx]

    def __str__(self):
        return f"{type(self).__name__} ({self.name}): (shape={self.shape}, dtype={self.dtype})"

    def __repr__(self):
        return self.__str__()

    def __eq__(self, other):
        # GraphSurgeon's rule: tensor names are unique in a graph, so the name is the identity.
        return isinstance(other, Tensor) and self.name == other.name

    __hash__ = object.__hash__


class Variable(Tensor):
    """A tensor whose values are known only when the model runs.

    Args:
        name (str): The tensor's name ("" for an omitted optional input or output).
        dtype: A NumPy dtype, or an onnx.TensorProto data type NumPy has no dtype for.
        shape (Sequence[Union[int, str]]): Dims; strings are named (dim_param) dims, None an
            unknown one. None: the shape is unknown.
        type (str): "tensor_type", "sequence_type", "sparse_tensor_type", ...
    """

    @staticmethod
    def empty():
        return Variable(name="")

    def __init__(self, name, dtype=None, shape=None, type="tensor_type"):
        self._init_io()
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self.type = type
        self.doc_string = ""

    def to_constant(self, values, export_dtype=None):
        return super().to_constant(values, export_dtype=export_dtype)

    def copy(self):
        """A copy without producers and consumers (copy a Graph rather than its tensors)."""
        out = Variable(self.name, self.dtype, self.shape, self.type)
        out.doc_string = self.__dict__.get("doc_string", "")
        if "_type_proto" in self.__dict__:  # a map or optional type, exported as it was
            out._type_proto = self._type_proto
        return out


class LazyValues:
    """The values of an initializer, read only when asked for (``Constant.values``).

    ``tensor`` is the onnx.TensorProto itself: exporting an unchanged Constant writes it back as
    it was, so weights in external data stay there and are never read.
    """

    def __init__(self, tensor, base_dir=""):
        self.tensor = tensor
        # Where the tensor's external data lives (the model's folder), for load().
        self.base_dir = base_dir
        self.shape = tuple(tensor.dims)
        self.dtype = dtypes.numpy_dtype(tensor.data_type)
        self.nbytes = int(np.ceil(int(np.prod(self.shape, dtype=np.int64)) *
                                  dtypes.itemsize(self.dtype)))

    def load(self):
        """The values as a NumPy array (external data read from ``base_dir``)."""
        from onnx import numpy_helper

        if isinstance(self.dtype, int):
            G_LOGGER.warning(
                f"Tensor '{self.tensor.name}' has ONNX data type {self.dtype}, which NumPy cannot "
                "hold: its values are converted, and exported in the converted type"
            )
        return np.array(numpy_helper.to_array(self.tensor, self.base_dir))

    def __str__(self):
        return f"LazyValues (shape={self.shape}, dtype={self.dtype})"

    __repr__ = __str__


class SparseValues(LazyValues):
    """The values of a sparse initializer (onnx.SparseTensorProto), densified when asked for."""

    def __init__(self, tensor, base_dir=""):
        self.tensor = tensor
        self.base_dir = base_dir
        self.shape = tuple(tensor.dims)
        self.dtype = dtypes.numpy_dtype(tensor.values.data_type)
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * dtypes.itemsize(self.dtype)

    def load(self):
        from onnx import numpy_helper

        values = numpy_helper.to_array(self.tensor.values, self.base_dir)
        indices = numpy_helper.to_array(self.tensor.indices, self.base_dir).astype(np.int64)
        dense = np.zeros(self.shape, dtype=values.dtype)
        if indices.ndim == 1:  # linear indices into the flattened tensor
            dense.reshape(-1)[indices] = values.reshape(-1)
        else:  # one row of coordinates per value
            dense[tuple(indices.T)] = values.reshape(-1)
        return dense

    def __str__(self):
        return f"SparseValues (shape={self.shape}, dtype={self.dtype})"


class Constant(Tensor):
    """A tensor whose values are known: a NumPy array, or LazyValues read when first asked for.

    Args:
        name (str): The tensor's name.
        values (Union[numpy.ndarray, LazyValues]): Its values.
        data_location (int): onnx.TensorProto.DataLocation for export, or None.
        export_dtype: The ONNX type to export as, when NumPy has no dtype for it.
    """

    def __init__(self, name, values, data_location=None, export_dtype=None):
        self._init_io()
        self.name = name
        if not isinstance(values, (np.ndarray, LazyValues)):
            G_LOGGER.critical(
                f"failed to make Constant '{name}' from values of type {type(values).__name__}: "
                "values must be a NumPy array or LazyValues; valid choices are numpy.ndarray, "
                "LazyValues, SparseValues"
            )
        self._values = values
        self.data_location = data_location
        self._export_dtype = export_dtype

    def copy(self):
        return Constant(self.name, self._values, self.data_location, self._export_dtype)

    @property
    def values(self):
        if isinstance(self._values, LazyValues):
            self._values = self._values.load()
        return self._values

    @values.setter
    def values(self, values):
        self._values = values

    @property
    def shape(self):
        return self._values.shape

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def export_dtype(self):
        return self._export_dtype if self._export_dtype is not None else self.dtype

    @export_dtype.setter
    def export_dtype(self, value):
        self._export_dtype = value

    def __repr__(self):
        return f"{self}\n{self._values}"
