"""Shared types (Polygraphy's ``polygraphy.common``)."""
from parity._parity import TensorMetadata

__all__ = ["TensorMetadata"]
