"""The logger: Polygraphy's ``G_LOGGER`` over Parity's C++ logger (same severities, same lines)."""
import enum

from parity import _parity
from parity._parity import ParityException


class LogMode(enum.IntEnum):
    """How often a message is shown: EACH time it is logged, or ONCE per process."""

    EACH = 0
    ONCE = 1


class _Verbosity:
    """`with G_LOGGER.verbosity(severity):` -- the severity for the block, then the old one."""

    def __init__(self, logger, severity):
        self.logger = logger
        self.severity = severity

    def __enter__(self):
        self.old = self.logger.module_severity
        self.logger.module_severity = self.severity
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.logger.module_severity = self.old


class _Indent:
    """`with G_LOGGER.indent(level):` -- every line of the block indented `level` more tabs."""

    def __init__(self, level):
        self._indent = _parity.LoggerIndent(int(level))

    def __enter__(self):
        self._indent.enter()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self._indent.exit()


class Logger:
    ULTRA_VERBOSE = -20
    SUPER_VERBOSE = -10
    EXTRA_VERBOSE = 0
    VERBOSE = 10
    INFO = 20
    START = 22
    FINISH = 28
    WARNING = 30
    ERROR = 40
    CRITICAL = 50

    @property
    def severity(self):
        return _parity.get_severity()

    @severity.setter
    def severity(self, value):
        _parity.set_severity(int(value))

    @property
    def module_severity(self):
        return self.severity

    @module_severity.setter
    def module_severity(self, value):
        # Polygraphy accepts one severity or a dict of path -> severity; Parity has a single
        # logger, so the default entry ("") of a dict applies.
        if isinstance(value, dict):
            value = value.get("", self.INFO)
        self.severity = value

    @property
    def colors(self):
        raise AttributeError("colors can only be set")

    @colors.setter
    def colors(self, on):
        _parity.set_colors(bool(on))

    @property
    def log_file(self):
        raise AttributeError("log_file can only be set")

    @log_file.setter
    def log_file(self, path):
        _parity.set_log_file(str(path))

    def log(self, message, severity, mode=LogMode.EACH, stack_depth=None, error_ok=False):
        if severity >= self.severity:
            text = message() if callable(message) else str(message)
            if mode == LogMode.ONCE:
                _parity.log_once(severity, text)
            else:
                _parity.log(severity, text)

    def verbosity(self, severity=CRITICAL):
        """A context manager: messages below `severity` (default CRITICAL: all) are hidden
        for the duration of the `with` block."""
        return _Verbosity(self, severity)

    def indent(self, level=1):
        """A context manager: lines logged in the `with` block are indented `level` more
        levels of 4 spaces."""
        return _Indent(level)

    @property
    def logging_indent(self):
        return _parity.logger_indent()

    def internal_error(self, message):
        """An invariant of the calling code failed: raises PolygraphyInternalException when
        internal correctness checks are on; otherwise does nothing, as in Polygraphy."""
        from parity import config
        from parity.exception import PolygraphyInternalException

        if config.INTERNAL_CORRECTNESS_CHECKS:
            raise PolygraphyInternalException(message() if callable(message) else str(message))

    def ultra_verbose(self, message, mode=LogMode.EACH):
        self.log(message, self.ULTRA_VERBOSE, mode)

    def super_verbose(self, message, mode=LogMode.EACH):
        self.log(message, self.SUPER_VERBOSE, mode)

    def extra_verbose(self, message, mode=LogMode.EACH):
        self.log(message, self.EXTRA_VERBOSE, mode)

    def verbose(self, message, mode=LogMode.EACH):
        self.log(message, self.VERBOSE, mode)

    def info(self, message, mode=LogMode.EACH):
        self.log(message, self.INFO, mode)

    def start(self, message, mode=LogMode.EACH):
        self.log(message, self.START, mode)

    def finish(self, message, mode=LogMode.EACH):
        self.log(message, self.FINISH, mode)

    def warning(self, message, mode=LogMode.EACH):
        self.log(message, self.WARNING, mode)

    def error(self, message, mode=LogMode.EACH):
        self.log(message, self.ERROR, mode)

    def critical(self, message):
        """Raises ParityException with the message (the caller reports it, as in Polygraphy)."""
        raise ParityException(message() if callable(message) else str(message))


G_LOGGER = Logger()
