"""Maps and sequences fed to runners from Python: a dict is a map and a list a sequence, as ONNX
Runtime's Python binding takes them; ONNX Runtime and the reference backend agree, and the
outputs equal NumPy's restatement of the ops."""
import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as oh

from parity.backend.onnx import GsFromOnnx, OnnxFromPath
from parity.backend.onnxrt import OnnxrtRunner, SessionFromOnnx
from parity.backend.pluginref import PluginRefRunner


def map_type(key, value):  # onnx 1.12 has no helper.make_map_type_proto
    t = onnx.TypeProto()
    t.map_type.key_type = key
    t.map_type.value_type.CopyFrom(oh.make_tensor_type_proto(value, []))
    return t


def save(tmp_path, nodes, inputs, outputs):
    g = oh.make_graph(nodes, "g", inputs, outputs)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 17), oh.make_opsetid("ai.onnx.ml", 1)])
    m.ir_version = 8
    path = str(tmp_path / "model.onnx")
    onnx.save(m, path)
    return path


def run_both(path, feed):
    with OnnxrtRunner(SessionFromOnnx(path)) as ort, PluginRefRunner(GsFromOnnx(OnnxFromPath(path))) as ref:
        return ort.infer(feed), ref.infer(feed)


def test_dict_vectorizer_fed_a_dict(tmp_path):
    vocab = ["x", "a", "q", "b"]
    path = save(
        tmp_path,
        [oh.make_node("DictVectorizer", ["m"], ["y"], domain="ai.onnx.ml", string_vocabulary=vocab)],
        [oh.make_value_info("m", map_type(TP.STRING, TP.FLOAT))],
        [oh.make_tensor_value_info("y", TP.FLOAT, None)],
    )
    feed = {"m": {"b": np.float32(2.5), "a": np.float32(-1.0), "zz": np.float32(9.0)}}
    from_ort, from_ref = run_both(path, feed)
    expected = np.array([[feed["m"].get(k, 0.0) for k in vocab]], np.float32)
    for out in (from_ort, from_ref):
        assert out["y"].dtype == np.float32
        assert np.array_equal(out["y"].reshape(expected.shape), expected)
    assert np.array_equal(from_ort["y"], from_ref["y"])


def test_sequence_ops_fed_a_list(tmp_path):
    seq = oh.make_sequence_type_proto(oh.make_tensor_type_proto(TP.FLOAT, [2, 3]))
    one = oh.make_node("Constant", [], ["one"], value=oh.make_tensor("one", TP.INT64, [], [1]))
    path = save(
        tmp_path,
        [one, oh.make_node("SequenceAt", ["s", "one"], ["at"]),
         oh.make_node("ConcatFromSequence", ["s"], ["cat"], axis=0)],
        [oh.make_value_info("s", seq)],
        [oh.make_tensor_value_info("at", TP.FLOAT, [2, 3]),
         oh.make_tensor_value_info("cat", TP.FLOAT, [None, 3])],
    )
    rng = np.random.RandomState(0)
    items = [rng.rand(2, 3).astype(np.float32) for _ in range(3)]
    from_ort, from_ref = run_both(path, {"s": items})
    for out in (from_ort, from_ref):
        assert np.array_equal(out["at"], items[1])
        assert np.array_equal(out["cat"], np.concatenate(items, axis=0))


def test_data_loader_generates_sequence_and_map_inputs(tmp_path):
    # A sequence (SequenceLength, ConcatFromSequence) and a map (DictVectorizer) as graph
    # inputs: the DataLoader, given a runner's metadata, draws each tensor and each map value
    # in one RandomState stream, input after input, and yields lists and dicts that both
    # backends run.
    seq = oh.make_sequence_type_proto(oh.make_tensor_type_proto(TP.FLOAT, [2, 3]))
    path = save(
        tmp_path,
        [oh.make_node("SequenceLength", ["s"], ["len"]),
         oh.make_node("ConcatFromSequence", ["s"], ["cat"], axis=0),
         oh.make_node("DictVectorizer", ["m"], ["y"], domain="ai.onnx.ml",
                      int64_vocabulary=[3, 0, 1, 7])],
        [oh.make_value_info("s", seq), oh.make_value_info("m", map_type(TP.INT64, TP.FLOAT))],
        [oh.make_tensor_value_info("len", TP.INT64, []),
         oh.make_tensor_value_info("cat", TP.FLOAT, [None, 3]),
         oh.make_tensor_value_info("y", TP.FLOAT, None)],
    )
    from parity.comparator import DataLoader

    with OnnxrtRunner(SessionFromOnnx(path)) as ort, PluginRefRunner(GsFromOnnx(OnnxFromPath(path))) as ref:
        for runner in (ort, ref):
            loader = DataLoader(seed=5, sequence_length=3, map_size=2)
            loader.input_metadata = runner.get_input_metadata()
            feed = loader[0]
            assert list(feed) == ["s", "m"]
            rng = np.random.RandomState(5)
            items = [rng.random_sample((2, 3)).astype(np.float32) for _ in range(3)]
            values = rng.random_sample(2).astype(np.float32)
            assert len(feed["s"]) == 3
            for got, want in zip(feed["s"], items):
                assert got.dtype == np.float32 and np.array_equal(got, want)
            assert list(feed["m"]) == [0, 1]
            assert np.array_equal(np.array([feed["m"][0], feed["m"][1]]), values)
            from_ort, from_ref = ort.infer(feed), ref.infer(feed)
            for out in (from_ort, from_ref):
                assert int(out["len"]) == 3
                assert np.array_equal(out["cat"], np.concatenate(items, axis=0))
                want = np.array([0, values[0], values[1], 0], np.float32)
                assert np.array_equal(out["y"].reshape(want.shape), want)


def test_data_loader_rejects_a_negative_sequence_length():
    import pytest
    from parity.comparator import DataLoader
    from parity.exception import ParityUsageError

    with pytest.raises(ParityUsageError, match="sequence_length=-1"):
        DataLoader(sequence_length=-1)
