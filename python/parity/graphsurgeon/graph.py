"""The graph: nodes, its input and output tensors, and the edits GraphSurgeon scripts make
(cleanup, toposort, fold_constants, layer, copy), with GraphSurgeon's names and semantics."""
import copy as copy_module
import numbers
from collections import OrderedDict, defaultdict

import numpy as np

from parity.graphsurgeon.node import Node
from parity.graphsurgeon.tensor import Constant, Tensor, Variable
from parity.logger import G_LOGGER


class Graph:
    """A graph of nodes and tensors.

    Args:
        nodes (Sequence[Node]): The nodes, in the order they are exported.
        inputs (Sequence[Tensor]): The graph inputs.
        outputs (Sequence[Tensor]): The graph outputs.
        name (str): Default "onnx_graphsurgeon_graph" (GraphSurgeon's, so ported scripts
            export the same names).
        doc_string (str): The graph's doc string.
        opset (int): The default domain's opset version (default 11, GraphSurgeon's).
        import_domains (List[onnx.OperatorSetIdProto]): The model's opset imports.
        producer_name, producer_version (str): The model's producer.
        functions (List[Function]): The model's local functions (Function; an
            onnx.FunctionProto is also accepted and exported as it is).
        ir_version (int): The model's IR version; None lets onnx choose on export.
    """

    DEFAULT_OPSET = 11
    OPSET_FUNC_MAP = defaultdict(dict)  # opset -> name -> function (Graph.register(opsets=))
    GLOBAL_FUNC_MAP = {}  # name -> function registered for every opset

    @staticmethod
    def register(opsets=None):
        """Makes the decorated function a method of every Graph (``graph.name(...)``), for
        the given opsets only when `opsets` is set; a later registration of a name replaces
        the earlier one for the same opsets."""

        def register_func(func):
            if hasattr(Graph, func.__name__):
                G_LOGGER.warning(
                    f"Registered function: {func.__name__} is hidden by a Graph attribute or "
                    "function with the same name. This function will never be called!"
                )
            if opsets is None:
                Graph.GLOBAL_FUNC_MAP[func.__name__] = func
            else:
                for opset in opsets:
                    Graph.OPSET_FUNC_MAP[opset][func.__name__] = func
            return func

        return register_func

    def __init__(self, nodes=None, inputs=None, outputs=None, name=None, doc_string=None,
                 opset=None, import_domains=None, producer_name=None, producer_version=None,
                 functions=None, ir_version=None):
        self.nodes = list(nodes) if nodes is not None else []
        self.inputs = inputs if inputs is not None else []
        self.outputs = outputs if outputs is not None else []
        self.name = name if name is not None else "onnx_graphsurgeon_graph"
        self.__name__ = self.name
        self.doc_string = doc_string if doc_string is not None else ""
        self.opset = opset if opset is not None else Graph.DEFAULT_OPSET
        self.import_domains = import_domains
        self.producer_name = producer_name if producer_name is not None else ""
        self.producer_version = producer_version if producer_version is not None else ""
        self.functions = list(functions) if functions is not None else []
        self.ir_version = ir_version
        # Fields of the ModelProto / GraphProto GraphSurgeon does not model (metadata, the
        # model's doc string, quantization annotations, ...), written back by export_onnx.
        self.model_extras = None
        self.graph_extras = None
        # Names of the initializers import_onnx found in this graph: one only subgraphs use
        # is exported here again, not copied into each subgraph.
        self.initializer_names = set()
        # Their ValueInfoProtos where the model also listed them as graph inputs.
        self.initializer_inputs = []
        self.name_idx = 0  # the counter layer() appends to generated names

    def __setattr__(self, name, value):
        # Graph inputs and outputs are plain lists: a tensor does not list the graph.
        if name in ("inputs", "outputs"):
            value = list(value)
        super().__setattr__(name, value)

    def __getattr__(self, name):
        # Only reached when normal lookup fails: functions added by Graph.register().
        if name.startswith("__"):
            raise AttributeError(name)
        opset = self.__dict__.get("opset")
        func = Graph.OPSET_FUNC_MAP.get(opset, {}).get(name) or Graph.GLOBAL_FUNC_MAP.get(name)
        if func is None:  # then a local function of that name adds a node using it
            func = next((f for f in self.__dict__.get("functions", [])
                         if hasattr(f, "unique_id") and f.name == name), None)
        if func is not None:
            return lambda *args, **kwargs: func(self, *args, **kwargs)
        elsewhere = sorted(o for o, funcs in Graph.OPSET_FUNC_MAP.items() if name in funcs)
        note = f"; it is registered for opsets {elsewhere}" if elsewhere else ""
        registered = sorted(set(Graph.GLOBAL_FUNC_MAP) |
                            set(Graph.OPSET_FUNC_MAP.get(opset, {})))
        raise AttributeError(
            f"failed to find Graph attribute '{name}': it is neither an attribute nor a function "
            f"registered with Graph.register() for opset {opset}{note}; registered functions "
            f"are {registered}"
        )

    def __eq__(self, other):
        if not isinstance(other, Graph):
            return False
        return (self.opset == other.opset and self.nodes == other.nodes
                and self.inputs == other.inputs and self.outputs == other.outputs)

    __hash__ = object.__hash__

    # --- Walking the graph -----------------------------------------------------------------

    def node_ids(self):
        """A context manager giving each node an ``id`` attribute (its index) while it lasts."""
        graph = self

        class NodeIds:
            def __enter__(self):
                for index, node in enumerate(graph.nodes):
                    node.id = index
                return graph

            def __exit__(self, *exc):
                for node in graph.nodes:
                    node.__dict__.pop("id", None)

        return NodeIds()

    def subgraphs(self, recursive=False):
        """The Graphs held by this graph's nodes (If/Loop/Scan bodies)."""
        for node in self.nodes:
            yield from node.subgraphs(recursive=recursive)

    def tensors(self, check_duplicates=False):
        """An OrderedDict of name -> tensor over inputs, every node's tensors (in node order)
        and outputs; empty (omitted optional) tensors are left out. Two distinct tensors with
        one name are a warning, an error when `check_duplicates`."""
        tensor_map = OrderedDict()

        def add(tensor):
            if tensor.is_empty():
                return
            known = tensor_map.get(tensor.name)
            if known is not None and known is not tensor:
                message = (
                    f"Found distinct tensors that share the same name:\n[id: {id(known)}] "
                    f"{known}\n[id: {id(tensor)}] {tensor}\nNote: Producer node(s) of first "
                    f"tensor:\n{known.inputs}\nProducer node(s) of second tensor:\n"
                    f"{tensor.inputs}"
                )
                if check_duplicates:
                    G_LOGGER.critical(message)
                G_LOGGER.warning(message)
            tensor_map[tensor.name] = tensor

        for tensor in self.inputs:
            add(tensor)
        for node in self.nodes:
            for tensor in list(node.inputs) + list(node.outputs):
                add(tensor)
        for tensor in self.outputs:
            add(tensor)
        return tensor_map

    def _local_tensors(self):
        """Tensors made in this graph: node outputs, graph inputs, constants."""
        local = {t.name: t for node in self.nodes for t in node.outputs if not t.is_empty()}
        local.update({t.name: t for t in self.inputs})
        local.update({n: t for n, t in self.tensors().items() if isinstance(t, Constant)})
        return local

    def _foreign_tensors(self):
        """Tensors this graph (or its subgraphs) uses from an outer graph."""
        local = self._local_tensors()
        foreign = {}
        for node in self.nodes:
            foreign.update({t.name: t for t in node.inputs
                            if not t.is_empty() and t.name not in local})
            for subgraph in node.subgraphs():
                foreign.update({n: t for n, t in subgraph._foreign_tensors().items()
                                if n not in local})
        return foreign

    def _node_inputs_with_captures(self, node):
        """A node's input tensors plus the outer tensors its subgraphs use."""
        used = list(node.inputs)
        for subgraph in node.subgraphs():
            used += list(subgraph._foreign_tensors().values())
        return used

    def _not_in_graph(self, node):
        G_LOGGER.critical(
            f"Encountered a node not in the graph:\n{node}.\n\nTo fix this, please append the "
            "node to this graph's `nodes` attribute."
        )

    # --- Editing ---------------------------------------------------------------------------

    def cleanup(self, remove_unused_node_outputs=False, recurse_subgraphs=True,
                remove_unused_graph_inputs=False, recurse_functions=True):
        """Removes the nodes and tensors no graph output depends on (and producers of graph
        inputs). Graph outputs are never changed. Returns self."""
        if recurse_subgraphs:
            for subgraph in self.subgraphs():
                subgraph.cleanup(remove_unused_node_outputs, True, remove_unused_graph_inputs,
                                 recurse_functions=False)
        if recurse_functions:
            for function in self.functions:
                if hasattr(function, "unique_id"):
                    function.cleanup(remove_unused_node_outputs, recurse_subgraphs,
                                     remove_unused_graph_inputs, recurse_functions=False)
        for tensor in self.inputs:
            tensor.inputs.clear()  # a graph input has no producer in this graph

        local = self._local_tensors()
        members = {id(n) for n in self.nodes}
        used_nodes, used_names = set(), set()
        pending = list(self.outputs)
        while pending:
            tensor = pending.pop()
            if not tensor.is_empty():
                if tensor.name in used_names or tensor.name not in local:
                    continue
                used_names.add(tensor.name)
            for node in tensor.inputs:
                if id(node) not in members:
                    self._not_in_graph(node)
                if id(node) not in used_nodes:
                    used_nodes.add(id(node))
                    pending.extend(self._node_inputs_with_captures(node))

        if remove_unused_graph_inputs:
            self.inputs = [t for t in self.inputs if t.name in used_names]
        kept = []
        for node in self.nodes:
            if id(node) in used_nodes:
                kept.append(node)
            else:
                node.inputs.clear()
                node.outputs.clear()
        if remove_unused_node_outputs:
            output_names = {t.name for t in self.outputs}
            for node in kept:
                for tensor in [t for t in node.outputs if not t.is_empty() and not t.outputs
                               and t.name not in output_names]:
                    node.outputs.remove(tensor)
        self.nodes = kept
        return self

    def toposort(self, recurse_subgraphs=True, recurse_functions=True, mode="full"):
        """Sorts the nodes so every node comes after its producers, in place (stable: nodes
        at the same depth keep their order). A cycle is an error. Returns self."""
        modes = ["full", "nodes", "functions"]
        if mode not in modes:
            G_LOGGER.critical(f"failed to toposort with mode '{mode}': valid choices are {modes}")
        if mode == "functions":
            return self  # local functions keep their order
        if recurse_functions:
            for function in self.functions:
                if hasattr(function, "unique_id"):
                    function.toposort(recurse_subgraphs, recurse_functions=False, mode="nodes")
        if recurse_subgraphs:
            for subgraph in self.subgraphs():
                subgraph.toposort(recurse_subgraphs=True, recurse_functions=False, mode="nodes")
        local = self._local_tensors()
        members = {id(n) for n in self.nodes}
        level = {}

        def depth(node):
            # Iterative depth-first walk: long chains must not hit Python's recursion limit.
            stack, on_path = [(node, False)], set()
            while stack:
                current, expanded = stack.pop()
                key = id(current)
                if key in level:
                    continue
                producers = [p for t in self._node_inputs_with_captures(current)
                             if t.name in local for p in t.inputs]
                if expanded:
                    on_path.discard(key)
                    level[key] = 1 + max((level[id(p)] for p in producers), default=-1)
                    continue
                if key in on_path:
                    G_LOGGER.critical(
                        f"failed to toposort graph '{self.name}': node '{current.name}' "
                        f"({current.op}) depends on itself (a cycle); are there tensors with "
                        "duplicate names in the graph?"
                    )
                on_path.add(key)
                stack.append((current, True))
                for producer in producers:
                    if id(producer) not in members:
                        self._not_in_graph(producer)
                    if id(producer) in on_path:
                        G_LOGGER.critical(
                            f"failed to toposort graph '{self.name}': node '{producer.name}' "
                            f"({producer.op}) is part of a cycle; are there tensors with "
                            "duplicate names in the graph?"
                        )
                    if id(producer) not in level:
                        stack.append((producer, False))
            return level[id(node)]

        order = {id(n): i for i, n in enumerate(self.nodes)}
        self.nodes = sorted(self.nodes, key=lambda n: (depth(n), order[id(n)]))
        return self

    def fold_constants(self, fold_shapes=True, recurse_subgraphs=True, partitioning=None,
                       error_ok=True, flatten_subgraphs=True, size_threshold=None,
                       should_exclude_node=None, recurse_functions=True):
        """Replaces tensors computable from constants by Constants, evaluated by Parity's
        reference backend (exact values; no ONNX Runtime needed). The graph must be
        topologically sorted; folded nodes stay until cleanup().

        Args:
            fold_shapes (bool): Fold Shape (and Gather/Slice of a Shape) of static shapes.
            recurse_subgraphs (bool): Fold inside subgraphs too.
            partitioning (str): None: one evaluation, all or nothing; "basic": one per
                output node, so a failing node spoils only its part; "recursive": a failing
                part is split again until what can run is folded.
            error_ok (bool): Warn on a failed evaluation instead of raising.
            flatten_subgraphs (bool): Inline the taken branch of an If with a constant
                condition.
            size_threshold (int): Tensors over this many bytes are not folded.
            should_exclude_node (Callable[[Node], bool]): Nodes not to fold.
            recurse_functions (bool): Accepted for GraphSurgeon's signature; local functions
                are kept as they are.
        Returns:
            self
        """
        from parity.graphsurgeon.folding import fold_constants

        return fold_constants(self, fold_shapes, recurse_subgraphs, partitioning, error_ok,
                              flatten_subgraphs, size_threshold, should_exclude_node)

    def _generate_name(self, prefix, existing_names):
        while True:
            name = f"{prefix}_{self.name_idx}"
            self.name_idx += 1
            if name not in existing_names:
                return name

    def layer(self, inputs=None, outputs=None, *args, **kwargs):
        """Makes a node, appends it to the graph and returns its output tensors.

        Inputs and outputs may be Tensors (used as they are), strings (a new Variable named
        "<string>_<n>"), NumPy arrays (a Constant "onnx_graphsurgeon_constant_<n>"), or
        numbers and lists of numbers (a float32 or int64 Constant
        "onnx_graphsurgeon_lst_constant_<n>"). Other arguments go to Node().
        """
        existing = set(self.tensors().keys())

        def make_tensors(elems):
            made = []
            for elem in elems or []:
                if isinstance(elem, Tensor):
                    tensor = elem
                elif isinstance(elem, str):
                    tensor = Variable(name=self._generate_name(elem, existing))
                elif isinstance(elem, np.ndarray):
                    tensor = Constant(self._generate_name("onnx_graphsurgeon_constant",
                                                          existing), values=elem)
                elif isinstance(elem, (list, tuple, numbers.Number)):
                    values = list(elem) if isinstance(elem, (list, tuple)) else [elem]
                    dtype = np.float32 if any(isinstance(v, float) for v in values) else np.int64
                    tensor = Constant(self._generate_name("onnx_graphsurgeon_lst_constant",
                                                          existing),
                                      values=np.array(elem, dtype=dtype))
                else:
                    G_LOGGER.critical(
                        f"failed to use {elem!r} as a layer input or output: unrecognized type "
                        f"{type(elem).__name__} (did you forget to unpack a list with `*`?); "
                        "valid choices are Tensor, str, numpy.ndarray, numbers and lists of them"
                    )
                if tensor.name:
                    existing.add(tensor.name)
                made.append(tensor)
            return made

        inputs = make_tensors(inputs)
        outputs = make_tensors(outputs)
        if "name" not in kwargs:
            kwargs["name"] = self._generate_name("onnx_graphsurgeon_node",
                                                 {n.name for n in self.nodes})
        node = Node(*args, **kwargs, inputs=inputs, outputs=outputs)
        self.nodes.append(node)
        return node.outputs

    def copy(self, tensor_map=None):
        """A copy with new nodes and tensors (weights and attribute values shared; subgraphs
        copied). `tensor_map`: the outer graph's copied tensors, for a subgraph."""
        copies = {n: t.copy() for n, t in self.tensors().items()}
        copies.update(tensor_map or {})
        copies.update({n: t.copy() for n, t in self._local_tensors().items()})

        def tensor(name):
            return copies[name] if name else Variable.empty()

        nodes = [node.copy(inputs=[tensor(t.name) for t in node.inputs],
                           outputs=[tensor(t.name) for t in node.outputs], tensor_map=copies)
                 for node in self.nodes]
        graph = Graph(nodes=nodes, inputs=[tensor(t.name) for t in self.inputs],
                      outputs=[tensor(t.name) for t in self.outputs], name=self.name,
                      doc_string=self.doc_string, opset=self.opset,
                      import_domains=copy_module.copy(self.import_domains),
                      producer_name=self.producer_name, producer_version=self.producer_version,
                      functions=self.functions, ir_version=self.ir_version)
        graph.model_extras = self.model_extras
        graph.graph_extras = self.graph_extras
        graph.initializer_names = set(self.initializer_names)
        graph.initializer_inputs = list(self.initializer_inputs)
        graph.name_idx = self.name_idx
        return graph

    def __str__(self):
        nodes = "\n".join(str(node) for node in self.nodes)
        functions = ",".join(f.name for f in self.functions)
        return (f"Graph {self.name} (Opset {self.opset})\nLocal Functions: [{functions}]\n"
                f"Inputs: {self.inputs}\nNodes: {nodes}\nOutputs: {self.outputs}")

    def __repr__(self):
        return self.__str__()
