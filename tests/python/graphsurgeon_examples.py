"""ONNX-GraphSurgeon's own examples (onnx-graphsurgeon/examples/01..10), written once as
functions of the `gs` module, so the same code runs on parity.graphsurgeon (the tests) and on
the real onnx_graphsurgeon (fixtures/graphsurgeon/make_fixtures.py). Each returns the models
the example saves, by name. ir_version 8: Debian's onnx 1.12 checks up to IR 8."""
import hashlib

import numpy as np
import onnx
from onnx import numpy_helper

IR = 8


def _saved(model):
    """A copy of a model at this point: the real GraphSurgeon renames the original model's
    TensorProtos when it exports an imported graph after edits (its exporter sets the name on
    the proto LazyValues holds), so the model an example saved first must be kept aside."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    return copy


def ex01_creating_a_model(gs):
    X = gs.Variable(name="X", dtype=np.float32, shape=(1, 3, 5, 5))
    Y = gs.Variable(name="Y", dtype=np.float32, shape=(1, 3, 1, 1))
    node = gs.Node(op="GlobalLpPool", attrs={"p": 2}, inputs=[X], outputs=[Y])
    graph = gs.Graph(nodes=[node], inputs=[X], outputs=[Y], ir_version=IR)
    return {"test_globallppool": gs.export_onnx(graph)}


def ex02_creating_a_model_with_initializer(gs):
    X = gs.Variable(name="X", dtype=np.float32, shape=(1, 3, 224, 224))
    W = gs.Constant(name="W", values=np.ones(shape=(5, 3, 3, 3), dtype=np.float32))
    Y = gs.Variable(name="Y", dtype=np.float32, shape=(1, 5, 222, 222))
    node = gs.Node(op="Conv", inputs=[X, W], outputs=[Y])
    graph = gs.Graph(nodes=[node], inputs=[X], outputs=[Y], ir_version=IR)
    return {"test_conv": gs.export_onnx(graph)}


def _mul_add_add_model(gs, shape):
    x0 = gs.Variable(name="x0", dtype=np.float32, shape=shape)
    x1 = gs.Variable(name="x1", dtype=np.float32, shape=shape)
    a = gs.Constant("a", values=np.full(shape, 2, dtype=np.float32))
    b = gs.Constant("b", values=np.full(shape, 3, dtype=np.float32))
    mul_out = gs.Variable(name="mul_out")
    add_out = gs.Variable(name="add_out")
    Y = gs.Variable(name="Y", dtype=np.float32, shape=shape)
    nodes = [
        gs.Node(op="Mul", inputs=[a, x1], outputs=[mul_out]),
        gs.Node(op="Add", inputs=[mul_out, b], outputs=[add_out]),
        gs.Node(op="Add", inputs=[x0, add_out], outputs=[Y]),
    ]
    graph = gs.Graph(nodes=nodes, inputs=[x0, x1], outputs=[Y], ir_version=IR)
    return gs.export_onnx(graph)


def ex03_isolating_a_subgraph(gs, shape=(1, 3, 4, 4)):
    model = _mul_add_add_model(gs, shape)
    saved = _saved(model)  # as onnx.save would have written it then
    graph = gs.import_onnx(model)
    tensors = graph.tensors()
    graph.inputs = [tensors["x1"].to_variable(dtype=np.float32)]
    graph.outputs = [tensors["add_out"].to_variable(dtype=np.float32)]
    graph.cleanup()
    return {"model": saved, "subgraph": gs.export_onnx(graph)}


def ex04_modifying_a_model(gs, shape=(1, 3, 4, 4)):
    model = _mul_add_add_model(gs, shape)
    saved = _saved(model)  # as onnx.save would have written it then
    graph = gs.import_onnx(model)
    first_add = [node for node in graph.nodes if node.op == "Add"][0]
    first_add.inputs = [inp for inp in first_add.inputs if inp.name != "b"]
    first_add.op = "LeakyRelu"
    first_add.attrs["alpha"] = 0.02
    identity_out = gs.Variable("identity_out", dtype=np.float32)
    identity = gs.Node(op="Identity", inputs=first_add.outputs, outputs=[identity_out])
    graph.nodes.append(identity)
    graph.outputs = [identity_out]
    graph.cleanup(remove_unused_graph_inputs=True).toposort()
    modified = onnx.shape_inference.infer_shapes(gs.export_onnx(graph))
    return {"model": saved, "modified": modified}


def ex05_generate(gs, shape=(1, 3)):
    input = gs.Variable("input", shape=shape, dtype=np.float32)
    a = gs.Constant("a", values=np.full(shape, 1.5, dtype=np.float32))
    b = gs.Constant("b", values=np.full(shape, 2.25, dtype=np.float32))
    c = gs.Variable("c")
    d = gs.Constant("d", values=np.arange(3, dtype=np.float32).reshape(shape))
    e = gs.Variable("e")
    output = gs.Variable("output", shape=shape, dtype=np.float32)
    nodes = [
        gs.Node("Add", inputs=[a, b], outputs=[c]),
        gs.Node("Add", inputs=[c, d], outputs=[e]),
        gs.Node("Add", inputs=[input, e], outputs=[output]),
    ]
    graph = gs.Graph(nodes=nodes, inputs=[input], outputs=[output], ir_version=IR)
    return gs.export_onnx(graph)


def ex05_folding_constants(gs):
    model = ex05_generate(gs)
    saved = _saved(model)  # as onnx.save would have written it then
    graph = gs.import_onnx(model)
    graph.fold_constants().cleanup()
    return {"model": saved, "folded": gs.export_onnx(graph)}


def ex06_removing_nodes(gs):
    x = gs.Variable(name="x", dtype=np.float32, shape=(1, 3, 4, 4))
    i0 = gs.Variable(name="i0")
    i1 = gs.Variable(name="i1")
    y = gs.Variable(name="y", dtype=np.float32)
    nodes = [
        gs.Node(op="Identity", inputs=[x], outputs=[i0]),
        gs.Node(op="FakeNodeToRemove", inputs=[i0], outputs=[i1]),
        gs.Node(op="Identity", inputs=[i1], outputs=[y]),
    ]
    graph = gs.Graph(nodes=nodes, inputs=[x], outputs=[y], ir_version=IR)
    model = onnx.shape_inference.infer_shapes(gs.export_onnx(graph))

    saved = _saved(model)  # as onnx.save would have written it then
    graph = gs.import_onnx(model)
    fake_node = [node for node in graph.nodes if node.op == "FakeNodeToRemove"][0]
    inp_node = fake_node.i()
    inp_node.outputs = fake_node.outputs
    fake_node.outputs.clear()
    graph.cleanup()
    removed = onnx.shape_inference.infer_shapes(gs.export_onnx(graph))
    return {"model": saved, "removed": removed}


def ex07_layer_api(gs):
    @gs.Graph.register()
    def add(self, a, b):
        return self.layer(op="Add", inputs=[a, b], outputs=["add_out_gs"])

    @gs.Graph.register()
    def mul(self, a, b):
        return self.layer(op="Mul", inputs=[a, b], outputs=["mul_out_gs"])

    @gs.Graph.register()
    def gemm(self, a, b, trans_a=False, trans_b=False):
        attrs = {"transA": int(trans_a), "transB": int(trans_b)}
        return self.layer(op="Gemm", inputs=[a, b], outputs=["gemm_out_gs"], attrs=attrs)

    @gs.Graph.register(opsets=[11])
    def relu(self, a):
        return self.layer(op="Relu", inputs=[a], outputs=["act_out_gs"])

    @gs.Graph.register(opsets=[1])
    def relu(self, a):  # noqa: F811 (GraphSurgeon's example registers relu for two opsets)
        raise NotImplementedError("This function has not been implemented!")

    graph = gs.Graph(opset=11, ir_version=IR)
    X = gs.Variable(name="X", shape=(8, 8), dtype=np.float32)
    graph.inputs = [X]
    A = np.arange(64, dtype=np.float32).reshape(8, 8) / 64
    axt = graph.gemm(A, X, trans_b=True)
    B = np.ones((8, 8), dtype=np.float32) * -0.5
    dense = graph.relu(*graph.add(*axt, B))
    C = gs.Constant(name="C", values=np.full((8, 8), 3, dtype=np.float32))
    D = np.ones(shape=(8, 8), dtype=np.float32)
    graph.outputs = graph.add(*graph.mul(*dense, C), D)
    for out in graph.outputs:
        out.dtype = np.float32
    return {"model": onnx.shape_inference.infer_shapes(gs.export_onnx(graph))}


def ex08_generate(gs):
    @gs.Graph.register()
    def min(self, *args):
        return self.layer(op="Min", inputs=args, outputs=["min_out"])[0]

    @gs.Graph.register()
    def max(self, *args):
        return self.layer(op="Max", inputs=args, outputs=["max_out"])[0]

    @gs.Graph.register()
    def identity(self, inp):
        return self.layer(op="Identity", inputs=[inp], outputs=["identity_out"])[0]

    graph = gs.Graph(ir_version=IR)
    graph.inputs = [gs.Variable("input", shape=(4, 4), dtype=np.float32)]
    MIN_VAL = np.array(0, np.float32)
    MAX_VAL = np.array(6, np.float32)
    inp = graph.identity(graph.inputs[0])
    max_out = graph.max(graph.min(inp, MAX_VAL), MIN_VAL)
    graph.outputs = [graph.identity(max_out)]
    graph.outputs[0].to_variable(dtype=np.float32, shape=(4, 4))
    return gs.export_onnx(graph)


def ex08_replacing_a_subgraph(gs):
    model = ex08_generate(gs)

    @gs.Graph.register()
    def replace_with_clip(self, inputs, outputs):
        for inp in inputs:
            inp.outputs.clear()
        for out in outputs:
            out.inputs.clear()
        return self.layer(op="Clip", inputs=inputs, outputs=outputs)

    saved = _saved(model)  # as onnx.save would have written it then
    graph = gs.import_onnx(model)
    tmap = graph.tensors()
    inputs = [tmap["identity_out_0"], tmap["onnx_graphsurgeon_constant_5"],
              tmap["onnx_graphsurgeon_constant_2"]]
    outputs = [tmap["max_out_6"]]
    graph.replace_with_clip(inputs, outputs)
    graph.cleanup().toposort()
    return {"model": saved, "replaced": gs.export_onnx(graph)}


def ex09_shape_operations(gs):
    @gs.Graph.register()
    def shape(self, a):
        return self.layer(op="Shape", inputs=[a], outputs=["shape_out_gs"])[0]

    @gs.Graph.register()
    def reduce_prod(self, a, axes, keepdims=True):
        return self.layer(op="ReduceProd", inputs=[a],
                          attrs={"axes": axes, "keepdims": int(keepdims)},
                          outputs=["reduce_prod_out_gs"])[0]

    @gs.Graph.register()
    def reshape(self, data, shape):
        return self.layer(op="Reshape", inputs=[data, shape], outputs=["reshape_out_gs"])[0]

    @gs.Graph.register()
    def gather(self, data, indices):
        return self.layer(op="Gather", inputs=[data, indices], outputs=["gather_out_gs"])[0]

    @gs.Graph.register()
    def concat(self, inputs, axis=0):
        return self.layer(op="Concat", inputs=inputs, attrs={"axis": axis},
                          outputs=["concat_out_gs"])[0]

    graph = gs.Graph(ir_version=IR)
    graph.inputs = [gs.Variable(name="data", dtype=np.float32,
                                shape=(gs.Tensor.DYNAMIC, 3, gs.Tensor.DYNAMIC, 5))]
    input_shape = graph.shape(graph.inputs[0])
    volume = graph.reduce_prod(input_shape, axes=[0])
    flattened = graph.reshape(graph.inputs[0], volume)
    NC = graph.gather(input_shape, indices=[0, 1])
    HW = graph.gather(input_shape, indices=[2, 3])
    new_shape = graph.concat([NC, graph.reduce_prod(HW, axes=[0])])
    partially_flattened = graph.reshape(graph.inputs[0], new_shape)
    flattened.name = "flattened"
    flattened.dtype = np.float32
    flattened.shape = (gs.Tensor.DYNAMIC,)
    partially_flattened.name = "partially_flattened"
    partially_flattened.dtype = np.float32
    partially_flattened.shape = (gs.Tensor.DYNAMIC, 3, gs.Tensor.DYNAMIC)
    graph.outputs = [flattened, partially_flattened]
    return {"model": onnx.shape_inference.infer_shapes(gs.export_onnx(graph))}


def ex10_dynamic_batch_size(gs):
    @gs.Graph.register()
    def conv(self, inp, weights, dilations, group, strides):
        out = self.layer(op="Conv", inputs=[inp, weights], outputs=["conv_out"],
                         attrs={"dilations": dilations, "group": group,
                                "kernel_shape": weights.shape[2:], "strides": strides})[0]
        out.dtype = inp.dtype
        return out

    @gs.Graph.register()
    def reshape(self, data, shape):
        out = self.layer(op="Reshape", inputs=[data, shape], outputs=["reshape_out"])[0]
        out.dtype = data.dtype
        return out

    @gs.Graph.register()
    def matmul(self, lhs, rhs):
        out = self.layer(op="MatMul", inputs=[lhs, rhs], outputs=["matmul_out"])[0]
        out.dtype = lhs.dtype
        return out

    X = gs.Variable(name="input_1", dtype=np.float32, shape=(1, 3, 6, 6))
    graph = gs.Graph(inputs=[X], ir_version=IR)
    rng = np.random.RandomState(0)
    conv_out = graph.conv(X, weights=rng.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32),
                          dilations=[1, 1], group=1, strides=[1, 1])
    reshape_out = graph.reshape(conv_out, np.array([1, 64], dtype=np.int64))
    matmul_out = graph.matmul(reshape_out, rng.uniform(-1, 1, (64, 10)).astype(np.float32))
    graph.outputs = [matmul_out]
    model = onnx.shape_inference.infer_shapes(gs.export_onnx(graph))

    saved = _saved(model)  # as onnx.save would have written it then
    graph = gs.import_onnx(model)
    for input in graph.inputs:
        input.shape[0] = "N"
    for node in [node for node in graph.nodes if node.op == "Reshape"]:
        node.inputs[1].values[0] = -1
    return {"model": saved, "dynamic": gs.export_onnx(graph)}


EXAMPLES = {f.__name__: f for f in [
    ex01_creating_a_model, ex02_creating_a_model_with_initializer, ex03_isolating_a_subgraph,
    ex04_modifying_a_model, ex06_removing_nodes, ex07_layer_api, ex08_replacing_a_subgraph,
    ex09_shape_operations, ex10_dynamic_batch_size,
]}


def summary(model):
    """What two exports must agree on: the model's fields, every node, every value info, and
    each initializer's name, type, dims and a digest of its values."""
    out = {
        "ir_version": model.ir_version,
        "opset_import": sorted([o.domain, o.version] for o in model.opset_import),
        "producer": [model.producer_name, model.producer_version],
    }
    out.update(graph_summary(model.graph))
    return out


def graph_summary(graph, subgraph=False):
    def values(info):
        return [[v.name, onnx.helper.printable_type(v.type) if v.type.ByteSize() else ""]
                for v in info]

    def attribute(attr):
        if attr.type == onnx.AttributeProto.GRAPH:
            return [attr.name, attr.type, graph_summary(attr.g, subgraph=True)]
        value = onnx.helper.get_attribute_value(attr)
        if isinstance(value, bytes):
            value = value.decode()
        if isinstance(value, list):
            value = [v.decode() if isinstance(v, bytes) else v for v in value]
        if isinstance(value, float):
            value = float(np.float32(value))
        return [attr.name, attr.type, value if not hasattr(value, "SerializeToString")
                else hashlib.sha256(value.SerializeToString()).hexdigest()]

    out = {
        "graph_name": graph.name,
        "nodes": [[n.name, n.op_type, n.domain, list(n.input), list(n.output),
                   [attribute(a) for a in n.attribute]] for n in graph.node],
        "inputs": values(graph.input),
        "outputs": values(graph.output),
        "initializers": [[t.name, t.data_type, list(t.dims),
                          hashlib.sha256(np.ascontiguousarray(
                              numpy_helper.to_array(t)).tobytes()).hexdigest()]
                         for t in graph.initializer],
    }
    # GraphSurgeon describes in a subgraph's value_info the outer tensors it uses; Parity
    # leaves them to the outer graph (docs/python.md), so subgraphs compare without it.
    if not subgraph:
        out["value_info"] = sorted(values(graph.value_info))
    return out


# --- Constant folding cases (the real GraphSurgeon evaluates them through the stand-in
# fixtures/graphsurgeon/ort_via_parity/onnxruntime, Parity through PluginRefRunner) ---------


def fold_shapes_case(gs):
    x = gs.Variable("x", np.float32, [2, 3, "n"])
    shape, dims = gs.Variable("shape"), gs.Variable("dims")
    y = gs.Variable("y", np.int64, [2])
    whole, z = gs.Variable("whole"), gs.Variable("z", np.int64, [3])
    graph = gs.Graph(opset=17, ir_version=IR, nodes=[
        gs.Node("Shape", inputs=[x], outputs=[shape]),
        gs.Node("Gather", inputs=[shape, gs.Constant("idx", np.array([1, 0], np.int64))],
                outputs=[dims]),
        gs.Node("Mul", inputs=[dims, gs.Constant("two", np.array([2, 2], np.int64))],
                outputs=[y]),
        gs.Node("Shape", inputs=[x], outputs=[whole]),
        gs.Node("Neg", inputs=[whole], outputs=[z]),
    ], inputs=[x], outputs=[y, z])
    model = gs.export_onnx(graph)
    saved = _saved(model)  # as onnx.save would have written it then
    graph = gs.import_onnx(model)
    graph.fold_constants().cleanup()
    return {"model": saved, "folded": gs.export_onnx(graph)}


def fold_if_case(gs):
    x = gs.Variable("x", np.float32, [2])
    w = gs.Constant("w", np.array([1, 2], np.float32))
    then_out = gs.Variable("then_out", np.float32, [2])
    else_out = gs.Variable("else_out", np.float32, [2])
    then_branch = gs.Graph(name="then", nodes=[gs.Node("Add", inputs=[x, w],
                                                       outputs=[then_out])],
                           outputs=[then_out], opset=17)
    else_branch = gs.Graph(name="else", nodes=[gs.Node("Sub", inputs=[x, w],
                                                       outputs=[else_out])],
                           outputs=[else_out], opset=17)
    cond, y = gs.Variable("cond"), gs.Variable("y", np.float32, [2])
    graph = gs.Graph(opset=17, ir_version=IR, nodes=[
        gs.Node("Not", inputs=[gs.Constant("f", np.array(False))], outputs=[cond]),
        gs.Node("If", inputs=[cond], outputs=[y],
                attrs={"then_branch": then_branch, "else_branch": else_branch}),
    ], inputs=[x], outputs=[y])
    model = gs.export_onnx(graph)
    saved = _saved(model)  # as onnx.save would have written it then
    graph = gs.import_onnx(model)
    graph.fold_constants().cleanup()
    return {"model": saved, "folded": gs.export_onnx(graph)}


def _bad_node_graph(gs):
    x = gs.Variable("x", np.float32, [2])
    good, bad, s1, y = (gs.Variable("good"), gs.Variable("bad"), gs.Variable("s1"),
                        gs.Variable("y", np.float32, [2]))
    c = gs.Constant("c", np.array([1, 4], np.float32))
    return gs.Graph(opset=17, ir_version=IR, import_domains=[
        onnx.helper.make_opsetid("", 17), onnx.helper.make_opsetid("nowhere", 1)], nodes=[
        gs.Node("Sqrt", name="good_sqrt", inputs=[c], outputs=[good]),
        gs.Node("NoSuchOp", name="bad_node", domain="nowhere", inputs=[c], outputs=[bad]),
        gs.Node("Add", name="add_s1", inputs=[good, bad], outputs=[s1]),
        gs.Node("Add", name="add_y", inputs=[x, s1], outputs=[y]),
    ], inputs=[x], outputs=[y])


def fold_partition_cases(gs):
    out = {}
    # "basic" is left out: with a failing part the real GraphSurgeon recurses on that same part
    # until Python's recursion limit (Parity warns and leaves the part unfolded).
    for partitioning in [None, "recursive"]:
        graph = _bad_node_graph(gs)
        graph.fold_constants(partitioning=partitioning).cleanup()
        out[f"partitioning_{partitioning}"] = gs.export_onnx(graph)
    return out


def fold_threshold_and_exclude_case(gs):
    x = gs.Variable("x", np.float32, [1000])
    big, small, s, y = (gs.Variable("big"), gs.Variable("small"), gs.Variable("s"),
                        gs.Variable("y", np.float32, [1000]))
    graph = gs.Graph(opset=17, ir_version=IR, nodes=[
        gs.Node("Neg", inputs=[gs.Constant("c", np.ones(1000, np.float32))], outputs=[big]),
        gs.Node("Abs", name="keep_me", inputs=[gs.Constant("d", np.ones(1, np.float32))],
                outputs=[small]),
        gs.Node("Add", inputs=[big, small], outputs=[s]),
        gs.Node("Add", inputs=[x, s], outputs=[y]),
    ], inputs=[x], outputs=[y])
    model = gs.export_onnx(graph)
    saved = _saved(model)  # as onnx.save would have written it then
    graph = gs.import_onnx(model)
    graph.fold_constants(size_threshold=1000,
                         should_exclude_node=lambda node: node.name == "keep_me").cleanup()
    return {"folded": gs.export_onnx(graph)}


FOLD_CASES = {f.__name__: f for f in [
    ex05_folding_constants, fold_shapes_case, fold_if_case, fold_partition_cases,
    fold_threshold_and_exclude_case,
]}


def ex11_local_function(gs, seed=0):
    """GraphSurgeon's example 11 at opset 17 (Debian's onnx 1.12 knows no later one), every
    function attribute required: onnx 1.12's FunctionProto has no attribute defaults. Returns
    the model and the weights of its layers."""
    from typing import List

    @gs.Graph.register()
    def add(self, lhs, rhs):
        out = self.layer(op="Add", inputs=[lhs, rhs], outputs=["add_out"])[0]
        out.dtype = lhs.dtype
        return out

    @gs.Graph.register()
    def div(self, lhs, rhs):
        out = self.layer(op="Div", inputs=[lhs, rhs], outputs=["div_out"])[0]
        out.dtype = lhs.dtype
        return out

    @gs.Graph.register()
    def matmul(self, lhs, rhs):
        out = self.layer(op="MatMul", inputs=[lhs, rhs], outputs=["matmul_out"])[0]
        out.dtype = lhs.dtype
        return out

    @gs.Graph.register()
    def constant_tensor_ref(self, ref_name, dtype):
        ref = gs.Node.AttributeRef(ref_name, gs.Tensor)
        out = self.layer(op="Constant", outputs=["constant_out"], attrs={"value": ref})[0]
        out.dtype = dtype
        return out

    @gs.Graph.register()
    def constant_float_ref(self, ref_name):
        ref = gs.Node.AttributeRef(ref_name, float)
        out = self.layer(op="Constant", outputs=["constant_out"], attrs={"value_float": ref})[0]
        out.dtype = np.float32
        return out

    @gs.Graph.register()
    def transpose(self, t, perm=()):
        out = self.layer(op="Transpose", inputs=[t], outputs=["transpose_out"],
                         attrs={"perm": perm})[0]
        out.dtype = t.dtype
        return out

    @gs.Graph.register()
    def relu(self, t):
        out = self.layer(op="Relu", inputs=[t], outputs=["relu_out"])[0]
        out.dtype = t.dtype
        return out

    @gs.Graph.register()
    def softmax(self, t):
        out = self.layer(op="Softmax", inputs=[t], outputs=["softmax_out"])[0]
        out.dtype = t.dtype
        return out

    embeds = gs.Variable("input", dtype=np.float32, shape=("batch", "seqlen", "emb_dim"))
    attrs = {"Wq": None, "Wk": None, "Wv": None, "transpose_perm": None, "sqrt_emb_dim": None}
    attn = gs.Function("SelfAttention", inputs=[embeds], attrs=attrs)
    q = attn.matmul(embeds, attn.constant_tensor_ref("Wq", dtype=np.float32))
    k = attn.matmul(embeds, attn.constant_tensor_ref("Wk", dtype=np.float32))
    v = attn.matmul(embeds, attn.constant_tensor_ref("Wv", dtype=np.float32))
    scale = attn.constant_float_ref("sqrt_emb_dim")
    perm = gs.Node.AttributeRef("transpose_perm", List[int])
    scores = attn.div(attn.matmul(q, attn.transpose(k, perm=perm)), scale)
    attn.outputs = [attn.matmul(attn.softmax(scores), v)]
    attn.opset = 17

    emb_dim, n_layers = 4, 2
    rng = np.random.RandomState(seed)
    weights = []

    def layer_attrs():
        w = {n: rng.randn(emb_dim, emb_dim).astype(np.float32) for n in ("Wq", "Wk", "Wv")}
        weights.append(w)
        return {"sqrt_emb_dim": float(np.sqrt(emb_dim)), "transpose_perm": [0, 2, 1],
                **{n: gs.Constant(n, a) for n, a in w.items()}}

    input_embeds = gs.Variable("input_embeds", dtype=np.float32,
                               shape=("batch", "seqlen", emb_dim))
    # opset 17 from the start: functions registered for opset 11 by other examples (ex07's
    # relu) would otherwise take precedence over this example's, as in GraphSurgeon.
    graph = gs.Graph(inputs=[input_embeds], functions=[attn], ir_version=IR, opset=17)
    out = input_embeds
    for _ in range(n_layers):
        attended = graph.SelfAttention(inputs=[out], attrs=layer_attrs())[0]
        out = graph.add(out, graph.relu(attended))
    out.shape = input_embeds.shape
    graph.outputs = [out]
    graph.opset = 17
    return gs.export_onnx(graph), weights
