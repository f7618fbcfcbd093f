"""Runs a user's model script for the `parity` command (``--model-type onnx-script``) and
writes the model it returns as an ONNX file the command then loads::

    python3 -m parity._model_script SCRIPT FUNCTION OUT.onnx

The function takes no arguments and returns an ``onnx.ModelProto``, a Parity model, or a
loader of either (e.g. a function decorated with ``func.extend``). Exit status 1, with one
message, when it cannot.
"""
import sys

from parity.backend.common import model_from_script
from parity.exception import PolygraphyException


def main(argv):
    script, function, out_path = argv
    try:
        model_from_script(script, function, save_to=out_path)
    except PolygraphyException as err:
        sys.stderr.write(f"[E] {err}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
