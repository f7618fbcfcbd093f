"""Graph.fold_constants: GraphSurgeon's constant folding, evaluated on Parity's reference
backend. The foldable part of the graph is exported as its own model and run once with
PluginRefRunner (exact values, no ONNX Runtime); partitioning re-runs smaller parts when a
node cannot run, so one bad node spoils only the values that need it."""
import numpy as np

from parity.graphsurgeon import dtypes
from parity.graphsurgeon.node import Node
from parity.graphsurgeon.tensor import Constant
from parity.logger import G_LOGGER

_PARTITIONING_MODES = [None, "basic", "recursive"]
# Folding these would remove the quantization a backend is meant to see.
_NO_FOLD_OPS = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear"}
_CONSTANT_ATTRS = {"value", "value_float", "value_floats", "value_int", "value_ints"}


def _evaluate(graph):
    """Runs a graph without inputs on the reference backend; returns name -> array."""
    from parity.backend.pluginref import PluginRefRunner
    from parity.graphsurgeon.onnx_io import export_onnx

    names = [t.name for t in graph.outputs]
    model = export_onnx(graph, do_type_check=False)
    with PluginRefRunner(model, name="fold-constants") as runner:
        outputs = runner.infer({})
    # Writable copies: scripts edit Constant values in place.
    return {name: np.array(outputs[name]) for name in names}


def _constant_nodes_to_constants(graph):
    """Outputs of Constant nodes become Constants (the node is then unused)."""
    for tensor in graph.tensors().values():
        if len(tensor.inputs) != 1 or tensor.inputs[0].op != "Constant":
            continue
        node = tensor.inputs[0]
        if len(node.attrs) != 1:
            G_LOGGER.warning("Constant node must contain exactly one attribute")
            continue
        attr, value = next(iter(node.attrs.items()))
        if attr not in _CONSTANT_ATTRS:
            G_LOGGER.warning(f"Unsupported attribute for Constant node: {attr}")
            continue
        if isinstance(value, Node.AttributeRef):
            continue
        if isinstance(value, Constant):
            array = value._values
        else:
            array = np.array(value, dtype=np.float32 if "float" in attr else np.int64)
        tensor.to_constant(array)
        tensor.inputs.clear()


def _static(shape):
    return shape is not None and all(isinstance(d, int) and d >= 0 for d in shape)


def _shape_value(tensor, constants):
    """The value of Shape(x), Gather(Shape(x), const) or Slice(Shape(x), ...) when x's shape
    is static there (x need not be constant), else None."""

    def producer(t, op):
        return t.inputs[0] if len(t.inputs) == 1 and t.inputs[0].op == op else None

    def shape_of(t):
        shape_node = producer(t, "Shape")
        if shape_node is None or shape_node.inputs[0].name in constants:
            return None
        shape = shape_node.inputs[0].shape
        if shape is None:
            return None
        start, end = shape_node.attrs.get("start", 0), shape_node.attrs.get("end")
        return list(shape)[start:end]

    def scalar(t):
        values = np.asarray(t.values).reshape(-1)
        return int(values[0]) if values.size else None

    node = producer(tensor, "Shape")
    if node is not None:
        shape = shape_of(tensor)
        return np.array(shape, dtype=np.int64) if _static(shape) else None
    node = producer(tensor, "Gather")
    if node is not None and isinstance(node.inputs[1], Constant) and node.attrs.get("axis", 0) == 0:
        shape = shape_of(node.inputs[0])
        if shape is None:
            return None
        indices = np.asarray(node.inputs[1].values)
        picked = np.array(shape, dtype=object)[indices.astype(np.int64)]
        picked = picked.tolist() if indices.ndim else [picked]
        return np.array(picked if indices.ndim else picked[0], dtype=np.int64) if _static(
            picked) else None
    node = producer(tensor, "Slice")
    if node is not None and len(node.inputs) >= 3:
        shape = shape_of(node.inputs[0])
        if shape is None or not all(isinstance(t, Constant) for t in node.inputs[1:]):
            return None
        starts, ends = scalar(node.inputs[1]), scalar(node.inputs[2])
        if len(node.inputs) > 3 and scalar(node.inputs[3]) not in (0, -1):
            return None  # a shape is 1-D: only axis 0 (or -1) slices it
        steps = scalar(node.inputs[4]) if len(node.inputs) > 4 else 1
        if steps == 0:
            return None
        part = shape[slice(starts, ends, steps)]
        return np.array(part, dtype=np.int64) if _static(part) else None
    return None


def _partition_and_evaluate(graph, partitioning, error_ok):
    """Evaluates each output node's part on its own; a failed part is warned about and, for
    "recursive", split again without its last node."""
    values = {}
    producers = []
    for tensor in graph.outputs:
        for node in tensor.inputs:
            if not tensor.outputs and all(node is not p for p in producers):
                producers.append(node)
    for node in producers:
        part = graph.copy()
        index = [i for i, n in enumerate(graph.nodes) if n is node][0]
        out_node = part.nodes[index]
        part.outputs = [t for t in out_node.outputs if not t.is_empty()]
        part.name = f"Folding: {[t.name for t in part.outputs]}"
        part.cleanup(remove_unused_graph_inputs=True)
        try:
            values.update(_evaluate(part))
        except Exception as err:
            G_LOGGER.warning(f"Inference failed for subgraph: {part.name}. Note: Error was:\n{err}")
            if partitioning == "recursive":
                part.outputs = [t for t in out_node.inputs if not isinstance(t, Constant)
                                and not t.is_empty()]
                part.nodes.remove(out_node)
                out_node.inputs.clear()
                out_node.outputs.clear()
                if part.outputs:
                    values.update(_partition_and_evaluate(part, partitioning, error_ok))
            else:
                G_LOGGER.info("You may see better results if you set partitioning='recursive'")
                if not error_ok:
                    raise
    return values


def _flatten_constant_ifs(graph):
    """Replaces an If whose condition is constant by the nodes of the branch it takes."""
    index = 0
    while index < len(graph.nodes):
        node = graph.nodes[index]
        if node.op == "If" and isinstance(node.inputs[0], Constant):
            taken = bool(np.asarray(node.inputs[0].values).reshape(-1)[0])
            branch = node.attrs["then_branch" if taken else "else_branch"]
            for tensor in branch._local_tensors().values():
                tensor.name += f"_subg_{index}_{branch.name}"
            for node_out, branch_out in zip(list(node.outputs), branch.outputs):
                node_out.inputs.clear()
                for producer in list(branch_out.inputs):
                    for i, t in enumerate(producer.outputs):
                        if t is branch_out:
                            producer.outputs[i] = node_out
            node.inputs.clear()
            node.outputs.clear()
            del graph.nodes[index]
            graph.nodes[index:index] = branch.nodes
            index += len(branch.nodes) - 1
        index += 1


def fold_constants(graph, fold_shapes, recurse_subgraphs, partitioning, error_ok,
                   flatten_subgraphs, size_threshold, should_exclude_node):
    if partitioning not in _PARTITIONING_MODES:
        G_LOGGER.critical(
            f"failed to fold constants with partitioning '{partitioning}': unknown mode; valid "
            f"choices are {_PARTITIONING_MODES}"
        )
    exclude = should_exclude_node or (lambda node: False)

    def excluded(node):
        return (any(isinstance(v, Node.AttributeRef) for v in node.attrs.values())
                or exclude(node))

    _constant_nodes_to_constants(graph)

    # Decide on a copy, so a failed evaluation leaves the graph as it was.
    clone = graph.copy()
    clone_tensors = clone.tensors()
    constants = {n: t for n, t in clone_tensors.items() if isinstance(t, Constant)}

    def all_constant(tensors):
        return all(t.name in constants for t in tensors if not t.is_empty())

    def mark_foldable():
        for node in clone.nodes:  # topological order: a node's inputs are decided before it
            if node.op in _NO_FOLD_OPS or not all_constant(node.inputs):
                continue
            if not all(all_constant(s._foreign_tensors().values()) for s in node.subgraphs()):
                continue
            if excluded(node):
                continue
            constants.update({t.name: t for t in node.outputs if not t.is_empty()})

    mark_foldable()
    if fold_shapes:
        for name, tensor in clone_tensors.items():
            if name in constants:
                continue
            value = _shape_value(tensor, constants)
            if value is not None:
                constants[name] = tensor.to_constant(value)
                tensor.inputs.clear()
        mark_foldable()  # what consumes a folded shape may now fold too

    def over_threshold(tensor):
        return (size_threshold is not None and _static(tensor.shape) and tensor.dtype is not None
                and int(np.prod(tensor.shape, dtype=np.int64)) * dtypes.itemsize(tensor.dtype)
                > size_threshold)

    clone.outputs = [t for t in constants.values()
                     if not isinstance(t, Constant) and not over_threshold(t)]
    clone.cleanup(remove_unused_graph_inputs=True)
    values = {n: t._values for n, t in constants.items() if isinstance(t, Constant)}
    if clone.outputs:
        if partitioning:
            values.update(_partition_and_evaluate(clone, partitioning, error_ok))
        else:
            try:
                values.update(_evaluate(clone))
            except Exception as err:
                G_LOGGER.warning(
                    "Inference failed. You may want to try enabling partitioning to see better "
                    f"results. Note: Error was:\n{err}"
                )
                if not error_ok:
                    raise

    large = {}
    tensors = graph.tensors()
    for name, value in values.items():
        tensor = tensors.get(name)
        if tensor is None or isinstance(tensor, Constant):
            continue
        nbytes = value.nbytes
        if size_threshold is not None and nbytes > size_threshold:
            G_LOGGER.verbose(f"Will not fold: '{name}' since its size in bytes ({nbytes}) "
                             f"exceeds the size threshold ({size_threshold})")
            continue
        if size_threshold is None and nbytes > (1 << 20):
            large[name] = f"{nbytes // (1 << 20)} MiB"
        tensor.to_constant(value)
        tensor.inputs.clear()
    if large:
        G_LOGGER.warning(
            "It looks like this model contains foldable nodes that produce large outputs.\nIn "
            "order to avoid bloating the model, you may want to set a constant-folding size "
            f"threshold.\nNote: Large tensors and their corresponding sizes were: {large}"
        )

    if recurse_subgraphs:
        for subgraph in graph.subgraphs():
            fold_constants(subgraph, fold_shapes, True, partitioning, error_ok, flatten_subgraphs,
                           size_threshold, should_exclude_node)
    if flatten_subgraphs:
        _flatten_constant_ifs(graph)
    return graph
