"""Constants shared with Polygraphy's API (``polygraphy.constants``)."""
from parity.config import AUTOINSTALL_DEPS, INTERNAL_CORRECTNESS_CHECKS  # noqa: F401

# The value of a dynamic dimension when no shape is given.
DEFAULT_SHAPE_VALUE = 1
DEFAULT_SEED = 1
TAB = " " * 4

# Passed as `outputs` to ModifyOutputs: mark every tensor of the graph as an output.
MARK_ALL = "mark-all"

# The keys that name a class in Polygraphy's JSON files.
LEGACY_TYPE_MARKER = "polygraphy_serialized_json_type"
TYPE_MARKER = "polygraphy_class"
