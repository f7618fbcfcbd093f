"""Exceptions (Polygraphy's ``polygraphy.exception``).

Every error of the module is a :class:`PolygraphyException`: it is Parity's own
``ParityException`` (raised by the C++ library and by ``G_LOGGER.critical``) under Polygraphy's
name, so ``except PolygraphyException`` in a ported script catches what Parity raises.
"""
from parity._parity import ParityException, ParityUsageError

PolygraphyException = ParityException


class PolygraphyInternalException(Exception):
    """A check of Parity's own invariants failed (a bug in Parity, not in the input); like
    Polygraphy's, not a subclass of PolygraphyException."""


class DataTypeConversionException(PolygraphyException):
    """A data type could not be converted to or from a :class:`parity.datatype.DataType`."""


__all__ = [
    "PolygraphyException", "PolygraphyInternalException", "DataTypeConversionException",
    "ParityException", "ParityUsageError",
]
