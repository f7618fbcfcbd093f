"""Process-wide settings (Polygraphy's ``polygraphy.config``), read from the same environment
variables (``POLYGRAPHY_*``; ``PARITY_*`` also works)."""
import os
import sys


def _env(name, default):
    return os.environ.get(f"PARITY_{name}", os.environ.get(f"POLYGRAPHY_{name}", default))


# Whether internal correctness checks run (e.g. func.constantmethod checks its object).
INTERNAL_CORRECTNESS_CHECKS = _env("INTERNAL_CORRECTNESS_CHECKS", "0") != "0"

# Parity never installs Python packages at run time (its backends are C++); these exist so
# scripts that set or read them keep working.
AUTOINSTALL_DEPS = False
ASK_BEFORE_INSTALL = False
INSTALL_CMD = _env("INSTALL_CMD", f"{sys.executable} -m pip install").split()

# Polygraphy swaps large arrays to disk above this size; Parity keeps results in memory (or
# memory-maps them), so the value is accepted and has no effect. Negative: disabled.
ARRAY_SWAP_THRESHOLD_MB = int(_env("ARRAY_SWAP_THRESHOLD_MB", "-1"))

USE_TENSORRT_RTX = False
