"""A node: an op applied to input tensors, producing output tensors (GraphSurgeon's Node)."""
from collections import OrderedDict
from dataclasses import dataclass

from parity.graphsurgeon.lists import SynchronizedList, assign_io


class Node:
    """One operation of a graph.

    Args:
        op (str): The op type, e.g. "Add".
        name (str): The node's name.
        attrs (Dict[str, object]): Attribute name -> value: int, float, str, lists of those,
            a Constant (tensor attribute), a Graph (subgraph attribute), a list of Graphs.
        inputs (List[Tensor]): The tensors it consumes (it is added to their ``outputs``).
        outputs (List[Tensor]): The tensors it produces (it is added to their ``inputs``).
        domain (str): The op's domain; None is ONNX's default one.
    """

    @dataclass
    class AttributeRef:
        """An attribute that refers to an attribute of the function holding the node."""

        name: str
        type: type

    def __init__(self, op, name=None, attrs=None, inputs=None, outputs=None, domain=None):
        # The node's inputs list it in their outputs, its outputs list it in their inputs.
        object.__setattr__(self, "inputs", SynchronizedList(self, "outputs", inputs or []))
        object.__setattr__(self, "outputs", SynchronizedList(self, "inputs", outputs or []))
        self.op = op
        self.name = name if name is not None else ""
        self.attrs = attrs if attrs is not None else OrderedDict()
        self.domain = domain
        self.doc_string = ""

    def __setattr__(self, name, value):
        if name in ("inputs", "outputs"):
            assign_io(self, name, value)
        else:
            super().__setattr__(name, value)

    def i(self, tensor_idx=0, producer_idx=0):
        """The producer of an input: ``node.inputs[tensor_idx].inputs[producer_idx]``."""
        return self.inputs[tensor_idx].inputs[producer_idx]

    def o(self, consumer_idx=0, tensor_idx=0):
        """A consumer of an output: ``node.outputs[tensor_idx].outputs[consumer_idx]``."""
        return self.outputs[tensor_idx].outputs[consumer_idx]

    def subgraphs(self, recursive=False):
        """The Graphs in this node's attributes (If/Loop/Scan bodies), and theirs if recursive."""
        from parity.graphsurgeon.graph import Graph

        pending, seen = [self], set()
        while pending:
            node = pending.pop()
            for value in node.attrs.values():
                for graph in value if isinstance(value, (list, tuple)) else [value]:
                    if isinstance(graph, Graph) and id(graph) not in seen:
                        seen.add(id(graph))
                        if recursive:
                            pending.extend(graph.nodes)
                        yield graph

    def copy(self, inputs=None, outputs=None, tensor_map=None):
        """A copy wired to `inputs` and `outputs`; subgraph attributes are copied too, and the
        other attribute values shared."""
        from parity.graphsurgeon.graph import Graph

        def copy_attr(value):
            if isinstance(value, Graph):
                return value.copy(tensor_map)
            if isinstance(value, list) and value and all(isinstance(v, Graph) for v in value):
                return [v.copy(tensor_map) for v in value]
            return value

        attrs = OrderedDict((k, copy_attr(v)) for k, v in self.attrs.items())
        node = Node(self.op, self.name, attrs, inputs=inputs, outputs=outputs, domain=self.domain)
        node.doc_string = self.__dict__.get("doc_string", "")
        return node

    def __str__(self):
        text = f"{self.name} ({self.op})"
        for title, tensors in (("Inputs", self.inputs), ("Outputs", self.outputs)):
            text += f"\n\t{title}: ["
            for tensor in tensors:
                text += f"\n\t\t{tensor}"
            text += "\n\t]"
        if self.attrs:
            text += f"\nAttributes: {self.attrs}"
        if self.domain:
            text += f"\nDomain: {self.domain}"
        return text

    def __repr__(self):
        return self.__str__()

    def __eq__(self, other):
        if not isinstance(other, Node):
            return False
        return (self.name == other.name and self.op == other.op and self.attrs == other.attrs
                and self.domain == other.domain and list(self.inputs) == list(other.inputs)
                and list(self.outputs) == list(other.outputs))

    __hash__ = object.__hash__
