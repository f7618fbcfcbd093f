"""A local function (GraphSurgeon's Function): a Graph of ops that serves as the default
implementation of a custom op, used by nodes whose op and domain are the function's name and
domain. ``function(graph, inputs=..., attrs=...)`` adds such a node to a graph."""
from typing import List

from parity.graphsurgeon.graph import Graph
from parity.graphsurgeon.tensor import Tensor
from parity.logger import G_LOGGER


class Function(Graph):
    """A local function.

    Args:
        name (str): The function's name: nodes with this op use it.
        domain (str): Its domain (default "onnx_graphsurgeon").
        nodes, inputs, outputs, doc_string, opset, import_domains: as for Graph.
        functions (List[Function]): The model's other functions.
        attrs (dict): Attribute name -> default value; None marks a required attribute.
    """

    DEFAULT_DOMAIN = "onnx_graphsurgeon"

    def __init__(self, name, domain=None, nodes=None, inputs=None, outputs=None,
                 doc_string=None, opset=None, import_domains=None, functions=None, attrs=None,
                 ir_version=None):
        super().__init__(nodes, inputs, outputs, name=name, doc_string=doc_string, opset=opset,
                         import_domains=import_domains, functions=functions,
                         ir_version=ir_version)
        self.domain = domain if domain is not None else Function.DEFAULT_DOMAIN
        self.attrs = dict(attrs) if attrs is not None else {}

    @property
    def unique_id(self):
        return (self.domain, self.name)

    def cleanup(self, remove_unused_node_outputs=False, recurse_subgraphs=True,
                remove_unused_graph_inputs=False, recurse_functions=False):
        return super().cleanup(remove_unused_node_outputs, recurse_subgraphs,
                               remove_unused_graph_inputs, recurse_functions)

    def toposort(self, recurse_subgraphs=True, recurse_functions=False, mode="nodes"):
        return super().toposort(recurse_subgraphs, recurse_functions, mode)

    def __call__(self, graph, inputs=None, outputs=None, *args, **kwargs) -> List[Tensor]:
        """Adds a node using this function to `graph` (inputs and outputs as for
        Graph.layer; outputs default to the function's output names, with their dtypes and
        shapes) and returns its outputs."""
        if inputs is not None and len(inputs) != len(self.inputs):
            G_LOGGER.warning(f"Function {self.name} expects {len(self.inputs)} inputs, but was "
                             f"called with {len(inputs)} inputs.")
        fresh = []
        if outputs is None:
            outputs = [t.name for t in self.outputs]
            fresh = list(range(len(outputs)))
        elif len(outputs) != len(self.outputs):
            G_LOGGER.warning(f"Function {self.name} expects {len(self.outputs)} outputs, but "
                             f"was called with {len(outputs)} outputs.")
        else:
            fresh = [i for i, t in enumerate(outputs) if not isinstance(t, Tensor)]
        attrs = kwargs.get("attrs")
        if attrs is not None:
            for name, default in self.attrs.items():
                if default is None and name not in attrs:
                    G_LOGGER.warning(f"Function {self.name} called without required attribute: "
                                     f"{name}")
        made = graph.layer(*args, **kwargs, op=self.name, domain=self.domain,
                           inputs=inputs or [], outputs=outputs)
        for i in fresh:
            made[i].dtype = self.outputs[i].dtype
            made[i].shape = self.outputs[i].shape
        return made

    def copy(self, tensor_map=None):
        graph = super().copy(tensor_map)
        function = Function(self.name, self.domain, nodes=graph.nodes, inputs=graph.inputs,
                            outputs=graph.outputs, doc_string=self.doc_string, opset=self.opset,
                            import_domains=self.import_domains, functions=self.functions,
                            attrs=dict(self.attrs), ir_version=self.ir_version)
        return function

    def __eq__(self, other):
        return (isinstance(other, Function) and self.unique_id == other.unique_id
                and super().__eq__(other))

    __hash__ = object.__hash__

    def __str__(self):
        nodes = "\n".join(str(node) for node in self.nodes)
        return (f"Function {self.name}, Domain {self.domain}, Opset {self.opset}\nInputs: "
                f"{self.inputs}\nNodes: {nodes}\nOutputs: {self.outputs}")
