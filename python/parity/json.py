"""Polygraphy's JSON (``polygraphy.json``): run results (``--save-outputs``), input lists
(``--save-inputs``), and any JSON value holding NumPy arrays.

Run results and input lists are written by Parity's C++ library; other values (an array, a
dict of arrays, numbers, strings, lists) are encoded here as Polygraphy encodes them: arrays
as base64 of the whole ``.npy`` file under "array" with ``"polygraphy_class": "ndarray"``,
indented by 4 spaces. The files are byte-identical to Polygraphy's, so they move both ways.
"""
import base64
import io
import json as _json

from parity import _parity, constants
from parity._parity import RunResults
from parity.logger import G_LOGGER


def _encode_array(array):
    import numpy as np

    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return {"array": base64.b64encode(buffer.getvalue()).decode(),
            constants.TYPE_MARKER: "ndarray"}


def _decode_array(text):
    import numpy as np

    return np.load(io.BytesIO(base64.b64decode(text)), allow_pickle=False)


class _Encoder(_json.JSONEncoder):
    def default(self, o):
        import numpy as np

        if isinstance(o, np.ndarray):
            return _encode_array(o)
        if isinstance(o, np.generic):
            return o.item()
        return super().default(o)


def _decode_object(pairs):
    obj = dict(pairs)
    marker = obj.get(constants.TYPE_MARKER, obj.get(constants.LEGACY_TYPE_MARKER))
    if marker == "ndarray" and "array" in obj:
        return _decode_array(obj["array"])
    return obj


def _is_feed_list(obj):
    import numpy as np

    return isinstance(obj, (list, tuple)) and all(
        isinstance(feed, dict) and all(isinstance(v, np.ndarray) for v in feed.values())
        for feed in obj
    ) and len(obj) > 0


def to_json(obj):
    """Encodes RunResults, a list of feed dicts, or any JSON value that may hold NumPy arrays
    (an array, a dict of arrays, ...) in Polygraphy's JSON format."""
    if isinstance(obj, RunResults):
        return obj.to_json()
    if _is_feed_list(obj):
        return _parity.inputs_to_json(list(obj))
    return _json.dumps(obj, cls=_Encoder, indent=constants.TAB)


def _is_run_results(parsed):
    return isinstance(parsed, dict) and parsed.get(constants.TYPE_MARKER,
                                                   parsed.get(constants.LEGACY_TYPE_MARKER)) == "RunResults"


def from_json(text):
    """Decodes what to_json writes: RunResults, a list of feed dicts, arrays (as NumPy
    arrays), dicts and plain values."""
    parsed = _json.loads(text, object_pairs_hook=_decode_object)
    if _is_run_results(parsed):
        return RunResults.from_json(text)
    if isinstance(parsed, list) and parsed and all(isinstance(f, dict) for f in parsed):
        # An input list: the C++ reader also takes Polygraphy's legacy and .npz payloads.
        try:
            return _parity.inputs_from_json(text)
        except _parity.ParityException:
            return parsed  # a list of dicts that are not feeds
    return parsed


def save_json(obj, dest, description=None):
    """Writes what to_json encodes to the file `dest` (atomically)."""
    if description:
        G_LOGGER.info(f"Saving {description} to {dest}")
    _parity.write_file(str(dest), to_json(obj))


def load_json(src, description=None):
    """Reads what save_json writes from the file `src`."""
    if description:
        G_LOGGER.info(f"Loading {description} from {src}")
    return from_json(_parity.read_file(str(src)))


def load_results(src):
    """Reads RunResults saved by ``--save-outputs`` (Parity's or Polygraphy's)."""
    return RunResults.load(str(src))


def load_inputs(src):
    """Reads a list of feed dicts saved by ``--save-inputs`` (Parity's or Polygraphy's)."""
    return _parity.inputs_from_json(_parity.read_file(str(src)))
