"""Helpers of Polygraphy's ``polygraphy.tools`` that user scripts import (``tools.args``)."""
