"""Polygraphy's ``polygraphy.tools.args``: the argument-parsing helpers (``util``) that data
loader scripts, model scripts and custom tools use to read values given on a command line.
Parity's command-line option groups themselves are C++ (src/cli)."""
from parity.tools.args import util

__all__ = ["util"]
