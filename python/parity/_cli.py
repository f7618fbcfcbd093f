"""The `parity` command of a pip-installed Parity (pyproject.toml's console script).

The wheel carries the C++ command as parity/_bin/parity; this replaces the Python process with
it. The scripts the command runs (--data-loader-script, --compare-func-script) then run with
the interpreter this package is installed for, which imports this package, instead of the one
compiled into the command (PARITY_PYTHON, when set, still wins).
"""
import os
import sys


def main():
    exe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "parity")
    if not os.access(exe, os.X_OK):
        sys.stderr.write(
            f"[!] failed to run the parity command: '{exe}' is missing or not executable; "
            f"reinstall the wheel (pip install --force-reinstall parity-*.whl)\n"
        )
        return 1
    os.environ.setdefault("PARITY_PYTHON", sys.executable)
    os.execv(exe, [sys.argv[0], *sys.argv[1:]])
