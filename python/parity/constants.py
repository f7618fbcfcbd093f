"""Constants shared with Polygraphy's API."""

# Passed as `outputs` to ModifyOutputs: mark every tensor of the graph as an output.
MARK_ALL = "mark-all"
