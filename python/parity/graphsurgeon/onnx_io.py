"""``import_onnx`` (onnx.ModelProto -> Graph) and ``export_onnx`` (Graph -> onnx.ModelProto).

Export writes back what import read and no edit touched: unchanged initializers are their
original TensorProtos (external data references included, so weights never pass through NumPy),
and the model fields GraphSurgeon does not model (metadata, doc strings, local functions,
quantization annotations, attributes of types it skips) are kept on the Graph and restored.
"""
from collections import OrderedDict

import numpy as np
import onnx
from onnx import AttributeProto, numpy_helper

from parity.graphsurgeon import dtypes
from parity.graphsurgeon.graph import Graph
from parity.graphsurgeon.node import Node
from parity.graphsurgeon.tensor import Constant, LazyValues, SparseValues, Tensor, Variable
from parity.logger import G_LOGGER

# Fields import_onnx turns into Graph attributes; every other field is kept as it is.
_MODEL_FIELDS = {"graph", "functions", "opset_import", "producer_name", "producer_version",
                 "ir_version"}
_GRAPH_FIELDS = {"node", "input", "output", "initializer", "sparse_initializer", "value_info",
                 "name", "doc_string"}
_TYPE_NAMES = ("tensor_type", "sequence_type", "map_type", "optional_type",
               "sparse_tensor_type", "opaque_type")


def _extras(proto, modeled):
    """A message of the same type holding only the fields not in `modeled` (cheap: the big
    fields, nodes and weights, are the modeled ones)."""
    extras = type(proto)()
    for field, _ in proto.ListFields():
        if field.name not in modeled:
            if field.label == field.LABEL_REPEATED:
                getattr(extras, field.name).extend(getattr(proto, field.name))
            elif field.message_type is not None:
                getattr(extras, field.name).CopyFrom(getattr(proto, field.name))
            else:
                setattr(extras, field.name, getattr(proto, field.name))
    return extras if extras.ListFields() else None


# --- import ------------------------------------------------------------------------------


def _element_type(type_proto):
    kind = type_proto.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        return getattr(type_proto, kind).elem_type
    if kind == "sequence_type":
        return _element_type(type_proto.sequence_type.elem_type)
    if kind == "optional_type":
        return _element_type(type_proto.optional_type.elem_type)
    if kind == "map_type":
        return type_proto.map_type.value_type.tensor_type.elem_type
    return None


def _shape(type_proto):
    kind = type_proto.WhichOneof("value")
    holder = getattr(type_proto, kind) if kind in ("tensor_type", "sparse_tensor_type") else None
    if kind == "sequence_type":
        holder = type_proto.sequence_type.elem_type.tensor_type
    if holder is None or not holder.HasField("shape"):
        return None
    dims = []
    for dim in holder.shape.dim:
        if dim.HasField("dim_param"):
            dims.append(dim.dim_param)
        elif dim.HasField("dim_value"):
            dims.append(dim.dim_value)
        else:
            dims.append(None)
    return dims


def _fill_variable(tensor, value_info):
    """Sets a Variable's dtype, shape and type from a ValueInfoProto (what is still unset)."""
    if not isinstance(tensor, Variable) or value_info.type.ByteSize() == 0:
        return
    elem = _element_type(value_info.type)
    if tensor.dtype is None and elem:
        tensor.dtype = dtypes.numpy_dtype(elem)
    if tensor.shape is None:
        tensor.shape = _shape(value_info.type)
    tensor.type = value_info.type.WhichOneof("value") or "tensor_type"
    if tensor.type not in ("tensor_type", "sequence_type", "sparse_tensor_type"):
        tensor._type_proto = onnx.TypeProto()
        tensor._type_proto.CopyFrom(value_info.type)
    if value_info.doc_string:
        tensor.doc_string = value_info.doc_string


def _import_attributes(node_proto, tensor_maps, base_dir):
    attrs, types = OrderedDict(), {}
    for attr in node_proto.attribute:
        types[attr.name] = attr.type
        if attr.ref_attr_name:
            attrs[attr.name] = Node.AttributeRef(attr.ref_attr_name, attr.type)
        elif attr.type == AttributeProto.FLOAT:
            attrs[attr.name] = attr.f
        elif attr.type == AttributeProto.INT:
            attrs[attr.name] = attr.i
        elif attr.type == AttributeProto.STRING:
            attrs[attr.name] = attr.s.decode("utf-8", errors="surrogateescape")
        elif attr.type == AttributeProto.TENSOR:
            attrs[attr.name] = Constant(attr.t.name, LazyValues(attr.t, base_dir))
        elif attr.type == AttributeProto.GRAPH:
            attrs[attr.name] = _import_graph(attr.g, tensor_maps, base_dir)
        elif attr.type == AttributeProto.GRAPHS:
            attrs[attr.name] = [_import_graph(g, tensor_maps, base_dir) for g in attr.graphs]
        elif attr.type == AttributeProto.FLOATS:
            attrs[attr.name] = list(attr.floats)
        elif attr.type == AttributeProto.INTS:
            attrs[attr.name] = list(attr.ints)
        elif attr.type == AttributeProto.STRINGS:
            attrs[attr.name] = [s.decode("utf-8", errors="surrogateescape") for s in attr.strings]
        else:
            # Sparse tensors, type protos, lists of tensors: kept as the AttributeProto itself
            # (GraphSurgeon drops these; exporting them unchanged loses nothing).
            attrs[attr.name] = attr
    return attrs, types


def _import_node(node_proto, node_input, node_output, tensor_maps, base_dir):
    attrs, types = _import_attributes(node_proto, tensor_maps, base_dir)
    node = Node(op=node_proto.op_type, name=node_proto.name, attrs=attrs,
                inputs=[node_input(n) for n in node_proto.input],
                outputs=[node_output(n) for n in node_proto.output],
                domain=node_proto.domain if node_proto.HasField("domain") else None)
    node.doc_string = node_proto.doc_string
    node._attr_types = types
    return node


def _import_function(proto, opset, import_domains):
    """A FunctionProto as a Function (its own opset imports, or the model's)."""
    from parity.graphsurgeon.function import Function

    local = OrderedDict()

    def tensor(name):
        if not name:
            return Variable.empty()
        if name not in local:
            local[name] = Variable(name)
        return local[name]

    inputs = [tensor(n) for n in proto.input]
    outputs = [tensor(n) for n in proto.output]
    nodes = [_import_node(p, tensor, tensor, [local], "") for p in proto.node]
    own_imports = [_copy_opsetid(e) for e in proto.opset_import]
    function = Function(proto.name, proto.domain, nodes=nodes, inputs=inputs, outputs=outputs,
                        doc_string=proto.doc_string,
                        opset=_default_opset(proto.opset_import) or opset,
                        import_domains=own_imports or import_domains,
                        attrs={name: None for name in proto.attribute})
    # Export writes opset imports back only when the function had its own.
    function.own_opset_import = bool(own_imports)
    return function


def _copy_opsetid(entry):
    copy = onnx.OperatorSetIdProto()
    copy.CopyFrom(entry)
    return copy


def _import_graph(graph_proto, outer_maps, base_dir, opset=None, import_domains=None):
    """One GraphProto; `outer_maps` are the tensors of the enclosing graphs (for subgraphs)."""
    local = OrderedDict()
    outer = OrderedDict()
    for tensor_map in outer_maps:
        outer.update(tensor_map)

    for init in graph_proto.initializer:
        data_location = int(init.data_location) if init.HasField("data_location") else None
        local[init.name] = Constant(init.name, LazyValues(init, base_dir), data_location)
    for init in graph_proto.sparse_initializer:
        local[init.values.name] = Constant(init.values.name, SparseValues(init, base_dir))
    for info in graph_proto.value_info:
        if info.name not in local:
            local[info.name] = Variable(info.name)
        _fill_variable(local[info.name], info)

    def io_tensor(info):
        if info.name not in local:
            local[info.name] = Variable(info.name)
        _fill_variable(local[info.name], info)
        return local[info.name]

    initializer_names = {t.name for t in graph_proto.initializer}
    initializer_names |= {t.values.name for t in graph_proto.sparse_initializer}
    # Initializers may also be listed as inputs (required before IR 4, overridable defaults
    # after); GraphSurgeon drops them from the inputs. They are kept aside and listed again
    # on export while the initializer is.
    inputs = [io_tensor(i) for i in graph_proto.input if i.name not in initializer_names]
    initializer_inputs = [i for i in graph_proto.input if i.name in initializer_names]
    outputs = [io_tensor(o) for o in graph_proto.output]

    def node_input(name):
        if name in local:
            return local[name]
        if name in outer:
            return outer[name]
        if not name:
            return Variable.empty()
        local[name] = Variable(name)
        return local[name]

    def node_output(name):
        if not name:
            return Variable.empty()
        if name not in local:
            local[name] = Variable(name)
        return local[name]

    nodes = [_import_node(p, node_input, node_output, list(outer_maps) + [local], base_dir)
             for p in graph_proto.node]

    graph = Graph(nodes=nodes, inputs=inputs, outputs=outputs, name=graph_proto.name,
                  doc_string=graph_proto.doc_string, opset=opset, import_domains=import_domains)
    graph.graph_extras = _extras(graph_proto, _GRAPH_FIELDS)
    graph.initializer_names = initializer_names
    graph.initializer_inputs = initializer_inputs
    return graph


def _default_opset(opset_import):
    for entry in opset_import:
        if entry.domain in ("", "ai.onnx"):
            return entry.version
    return None


def import_onnx(onnx_model, base_dir=""):
    """The Graph of an onnx.ModelProto. Initializers are not read: their values load when a
    script asks for ``Constant.values`` (external data from `base_dir`, the model's folder).

    The Graph holds references to the model's TensorProtos; keep the model unchanged while
    the Graph is in use."""
    if not isinstance(onnx_model, onnx.ModelProto):
        G_LOGGER.critical(
            f"failed to import a graph from {type(onnx_model).__name__}: import_onnx takes an "
            "onnx.ModelProto; valid choices are onnx.load(path), or OnnxFromPath(path)()"
        )
    import_domains = []
    for entry in onnx_model.opset_import:
        copy = onnx.OperatorSetIdProto()
        copy.CopyFrom(entry)
        import_domains.append(copy)
    opset = _default_opset(onnx_model.opset_import)
    if opset is None:
        G_LOGGER.warning("Model does not contain ONNX domain opset information! Using default "
                         "opset.")
    graph = _import_graph(onnx_model.graph, [], base_dir, opset, import_domains)
    for subgraph in graph.subgraphs(recursive=True):
        subgraph.opset, subgraph.import_domains = graph.opset, import_domains
    graph.producer_name = onnx_model.producer_name
    graph.producer_version = onnx_model.producer_version
    graph.ir_version = onnx_model.ir_version
    graph.functions = [_import_function(f, graph.opset, import_domains)
                       for f in onnx_model.functions]
    for function in graph.functions:
        function.functions = graph.functions  # one list, shared as in GraphSurgeon
    graph.model_extras = _extras(onnx_model, _MODEL_FIELDS)
    return graph


# --- export ------------------------------------------------------------------------------


def _bfloat16_bits(values):
    """float32 -> bfloat16 bit patterns, rounded to nearest even (NaN stays NaN)."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(values)
    rounded[nan] = 0x7FC0
    return rounded


def _tensor_proto(constant, target):
    """Writes a Constant into the TensorProto `target`."""
    values = constant._values
    if isinstance(values, LazyValues) and not isinstance(values, SparseValues):
        target.CopyFrom(values.tensor)  # unchanged: the original, external data and all
        if target.name != constant.name:
            target.name = constant.name
        return
    array = constant.values
    export_type = dtypes.onnx_type(constant.export_dtype)
    source_type = dtypes.onnx_type(array.dtype)
    if export_type == source_type:
        target.CopyFrom(numpy_helper.from_array(np.asarray(array), constant.name))
    elif export_type == onnx.TensorProto.BFLOAT16 and source_type == onnx.TensorProto.FLOAT:
        target.name = constant.name
        target.data_type = export_type
        target.dims.extend(array.shape)
        target.raw_data = _bfloat16_bits(array).tobytes()
    else:
        G_LOGGER.critical(
            f"failed to export Constant '{constant.name}' as ONNX type {export_type}: its values "
            f"are {array.dtype}; the rule is that export_dtype differs from the values' dtype "
            "only for float32 values; valid choices are export_dtype=None or "
            "onnx.TensorProto.BFLOAT16 for float32 values"
        )
    if constant.data_location is not None:
        target.data_location = constant.data_location


def _value_info(tensor, target, do_type_check):
    target.name = tensor.name
    if isinstance(tensor, Variable) and tensor.__dict__.get("doc_string"):
        target.doc_string = tensor.doc_string
    dtype = tensor.dtype
    if dtype is None:
        if do_type_check:
            G_LOGGER.critical(
                "Graph input and output tensors must include dtype information. Please set the "
                f"dtype attribute for: {tensor}"
            )
        return
    kind = "tensor_type" if isinstance(tensor, Constant) else tensor.type
    type_proto = getattr(tensor, "_type_proto", None)
    if kind not in ("tensor_type", "sequence_type", "sparse_tensor_type") and type_proto:
        target.type.CopyFrom(type_proto)
        return
    made = {
        "sequence_type": onnx.helper.make_tensor_sequence_value_info,
        "sparse_tensor_type": onnx.helper.make_sparse_tensor_value_info,
    }.get(kind, onnx.helper.make_tensor_value_info)(tensor.name, dtypes.onnx_type(dtype),
                                                     tensor.shape)
    target.type.CopyFrom(made.type)


def _ref_type(ref_type):
    """The AttributeProto type of an AttributeRef's type: an enum value, or GraphSurgeon's
    Python types (float, int, str, Tensor, Graph, List[float], ...)."""
    from typing import List

    if isinstance(ref_type, int):
        return ref_type
    types = {float: AttributeProto.FLOAT, int: AttributeProto.INT, str: AttributeProto.STRING,
             Tensor: AttributeProto.TENSOR, Graph: AttributeProto.GRAPH,
             List[float]: AttributeProto.FLOATS, List[int]: AttributeProto.INTS,
             List[str]: AttributeProto.STRINGS, List[Tensor]: AttributeProto.TENSORS,
             List[Graph]: AttributeProto.GRAPHS}
    for python_type, proto_type in types.items():
        if ref_type == python_type or (isinstance(ref_type, type) and isinstance(python_type, type)
                                       and issubclass(ref_type, python_type)):
            return proto_type
    G_LOGGER.critical(f"failed to export an attribute reference of type {ref_type}: valid "
                      f"choices are {list(types)} or an onnx.AttributeProto type")


def _attribute(name, value, attr_type, target, outer):
    target.name = name
    if isinstance(value, AttributeProto):
        target.CopyFrom(value)
        target.name = name
    elif isinstance(value, Node.AttributeRef):
        target.ref_attr_name = value.name
        target.type = _ref_type(value.type)
    elif isinstance(value, Tensor):
        target.type = AttributeProto.TENSOR
        _tensor_proto(value, target.t)
    elif isinstance(value, Graph):
        target.type = AttributeProto.GRAPH
        _export_graph(value, target.g, False, outer)
    elif isinstance(value, (list, tuple)) and value and all(isinstance(v, Graph) for v in value):
        target.type = AttributeProto.GRAPHS
        for graph in value:
            _export_graph(graph, target.graphs.add(), False, outer)
    elif isinstance(value, (list, tuple)) and not value:
        # An empty list has no type of its own: keep the imported one (INTS by default).
        target.type = attr_type if attr_type is not None else AttributeProto.INTS
    else:
        if isinstance(value, (type, np.dtype)):
            try:
                value = dtypes.onnx_type(value)  # e.g. Cast's "to" given as np.float32
            except TypeError:
                pass
        target.CopyFrom(onnx.helper.make_attribute(name, value))


def _export_nodes(nodes, target, outer):
    names = {}
    for node in nodes:
        if node.name and node.name in names and names[node.name] is not node:
            G_LOGGER.warning(f"Found distinct Nodes that share the same name: '{node.name}'")
        names.setdefault(node.name, node)
        proto = target.node.add()
        proto.op_type = node.op
        if node.name:
            proto.name = node.name
        if node.domain is not None:
            proto.domain = node.domain
        proto.input.extend(t.name for t in node.inputs)
        proto.output.extend(t.name for t in node.outputs)
        if node.__dict__.get("doc_string"):
            proto.doc_string = node.doc_string
        types = node.__dict__.get("_attr_types", {})
        for name, value in node.attrs.items():
            _attribute(name, value, types.get(name), proto.attribute.add(), outer)


def _export_function(function):
    """A Function as a FunctionProto. Its Constants become Constant nodes (a function has no
    initializers); onnx 1.12 has no attribute defaults, so only the names are written."""
    if not hasattr(function, "unique_id"):
        return function  # an onnx.FunctionProto kept as it is
    proto = onnx.FunctionProto()
    proto.name = function.name
    if function.domain:
        proto.domain = function.domain
    proto.input.extend(t.name for t in function.inputs)
    proto.output.extend(t.name for t in function.outputs)
    proto.attribute.extend(function.attrs)
    defaults = sorted(n for n, v in function.attrs.items() if v is not None)
    if defaults:
        G_LOGGER.warning(f"Function {function.name}: onnx {onnx.__version__} cannot store "
                         f"attribute defaults; {defaults} are written as required attributes")
    constants = [Node("Constant", attrs={"value": t}, outputs=[t.copy()])
                 for t in function.tensors().values() if isinstance(t, Constant)]
    _export_nodes(constants + list(function.nodes), proto, frozenset())
    for node in constants:
        node.outputs.clear()
    if function.doc_string:
        proto.doc_string = function.doc_string
    if getattr(function, "own_opset_import", True):
        proto.opset_import.extend(_opset_imports(function))
    return proto


def _export_graph(graph, target, do_type_check=True, outer=None):
    """Writes `graph` into the GraphProto `target`. `outer`: ids of the Constants enclosing
    graphs already hold as initializers; a subgraph uses those and does not copy them (where
    GraphSurgeon writes each again into every subgraph using it)."""
    is_subgraph = outer is not None
    outer = outer or frozenset()
    tensor_map = graph.tensors()
    own_constants = [t for t in tensor_map.values()
                     if isinstance(t, Constant) and id(t) not in outer]
    # Initializers this graph was imported with that only its subgraphs use stay here.
    imported = getattr(graph, "initializer_names", None) or ()
    listed = {id(t) for t in own_constants}
    for subgraph in graph.subgraphs(recursive=True):
        for tensor in subgraph.tensors().values():
            if (isinstance(tensor, Constant) and tensor.name in imported
                    and id(tensor) not in outer and id(tensor) not in listed):
                own_constants.append(tensor)
                listed.add(id(tensor))
    inner = outer | {id(t) for t in own_constants}
    _export_nodes(graph.nodes, target, inner)

    target.name = graph.name
    if graph.doc_string:
        target.doc_string = graph.doc_string
    for tensor in graph.inputs:
        _value_info(tensor, target.input.add(), do_type_check)
    for tensor in graph.outputs:
        _value_info(tensor, target.output.add(), do_type_check)
    for tensor in own_constants:
        if isinstance(tensor._values, SparseValues):
            sparse = target.sparse_initializer.add()
            sparse.CopyFrom(tensor._values.tensor)
            sparse.values.name = tensor.name
        else:
            _tensor_proto(tensor, target.initializer.add())
    listed = {i.name for i in target.input}
    exported = {t.name for t in target.initializer}
    for info in getattr(graph, "initializer_inputs", None) or ():
        if info.name in exported and info.name not in listed:
            target.input.add().CopyFrom(info)
            listed.add(info.name)
    if graph.ir_version is not None and graph.ir_version < 4:
        # IR < 4: every initializer must also be a graph input.
        for init in target.initializer:
            if init.name not in listed:
                target.input.add().CopyFrom(
                    onnx.helper.make_tensor_value_info(init.name, init.data_type, init.dims))
    io_names = {t.name for t in list(graph.inputs) + list(graph.outputs)}
    # A subgraph describes its own tensors; the outer ones it uses are described outside.
    local = graph._local_tensors() if is_subgraph else tensor_map
    for name, tensor in tensor_map.items():
        if (name not in io_names and name in local and isinstance(tensor, Variable)
                and (tensor.dtype is not None or tensor.shape is not None)):
            _value_info(tensor, target.value_info.add(), do_type_check=False)
    if graph.graph_extras is not None:
        target.MergeFrom(graph.graph_extras)


def _opset_imports(graph):
    """The graph's opset imports with the default domain at graph.opset, plus every domain a
    node uses (custom ones at version 1, as GraphSurgeon adds them). A model importing no
    default domain gets one only when a node needs it."""
    imports = []
    for entry in graph.import_domains or []:
        copy = onnx.OperatorSetIdProto()
        copy.CopyFrom(entry)
        imports.append(copy)
    used = {n.domain for n in graph.nodes}
    for subgraph in graph.subgraphs(recursive=True):
        used |= {n.domain for n in subgraph.nodes}
    default = [e for e in imports if e.domain in ("", "ai.onnx")]
    if default:
        default[0].version = graph.opset
    elif graph.import_domains is None or used & {None, "", "ai.onnx"}:
        imports.insert(0, onnx.helper.make_opsetid("", graph.opset))
    known = {e.domain for e in imports} | {"ai.onnx", ""}
    for domain in sorted(d for d in used if d is not None and d not in known):
        imports.append(onnx.helper.make_opsetid(domain, 1))
        known.add(domain)
    return imports


def export_onnx(graph, do_type_check=True, **kwargs):
    """The onnx.ModelProto of a Graph.

    Args:
        graph (Graph): The graph.
        do_type_check (bool): Require a dtype on every graph input and output.
        kwargs: Fields of the ModelProto to set (as for onnx.helper.make_model), e.g.
            opset_imports=[...], producer_name="...".
    """
    if not isinstance(graph, Graph):
        G_LOGGER.critical(
            f"failed to export {type(graph).__name__}: export_onnx takes a "
            "parity.graphsurgeon.Graph; valid choices are gs.import_onnx(model) or gs.Graph(...)"
        )
    model = onnx.ModelProto()
    if graph.model_extras is not None:
        model.CopyFrom(graph.model_extras)
    _export_graph(graph, model.graph, do_type_check)
    opset_imports = kwargs.pop("opset_imports", None)
    model.opset_import.extend(opset_imports if opset_imports is not None
                              else _opset_imports(graph))
    model.functions.extend(_export_function(f) for f in kwargs.pop("functions", graph.functions))
    model.ir_version = graph.ir_version if graph.ir_version is not None else onnx.IR_VERSION
    # Set only when there is one, so an imported model without them stays without them.
    if graph.producer_name:
        model.producer_name = graph.producer_name
    if graph.producer_version:
        model.producer_version = graph.producer_version
    for key, value in kwargs.items():
        if key == "ir_version":
            model.ir_version = value
        else:
            setattr(model, key, value)
    return model
