"""Polygraphy's JSON files: run results (``--save-outputs``) and input lists (``--save-inputs``).

The files are byte-identical to Polygraphy's, so they move both ways between the two tools.
"""
from parity import _parity
from parity._parity import RunResults
from parity.logger import G_LOGGER


def to_json(obj):
    """Encodes RunResults, or a list of feed dicts, in Polygraphy's JSON format."""
    if isinstance(obj, RunResults):
        return obj.to_json()
    return _parity.inputs_to_json(list(obj))


def from_json(text):
    """Decodes what to_json writes: RunResults, or a list of feed dicts."""
    if text.lstrip().startswith("["):
        return _parity.inputs_from_json(text)
    return RunResults.from_json(text)


def save_json(obj, dest, description=None):
    """Writes RunResults or a list of feed dicts to the file `dest` (atomically)."""
    if description:
        G_LOGGER.info(f"Saving {description} to {dest}")
    _parity.write_file(str(dest), to_json(obj))


def load_json(src, description=None):
    """Reads RunResults or a list of feed dicts from the file `src`."""
    if description:
        G_LOGGER.info(f"Loading {description} from {src}")
    return from_json(_parity.read_file(str(src)))


def load_results(src):
    """Reads RunResults saved by ``--save-outputs`` (Parity's or Polygraphy's)."""
    return RunResults.load(str(src))


def load_inputs(src):
    """Reads a list of feed dicts saved by ``--save-inputs`` (Parity's or Polygraphy's)."""
    return _parity.inputs_from_json(_parity.read_file(str(src)))
