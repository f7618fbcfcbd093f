"""The logger: Polygraphy's ``G_LOGGER`` over Parity's C++ logger (same severities, same lines)."""
from parity import _parity
from parity._parity import ParityException


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

    def log(self, message, severity):
        if severity >= self.severity:
            _parity.log(severity, message() if callable(message) else str(message))

    def ultra_verbose(self, message):
        self.log(message, self.ULTRA_VERBOSE)

    def super_verbose(self, message):
        self.log(message, self.SUPER_VERBOSE)

    def extra_verbose(self, message):
        self.log(message, self.EXTRA_VERBOSE)

    def verbose(self, message):
        self.log(message, self.VERBOSE)

    def info(self, message):
        self.log(message, self.INFO)

    def start(self, message):
        self.log(message, self.START)

    def finish(self, message):
        self.log(message, self.FINISH)

    def warning(self, message):
        self.log(message, self.WARNING)

    def error(self, message):
        self.log(message, self.ERROR)

    def critical(self, message):
        """Raises ParityException with the message (the caller reports it, as in Polygraphy)."""
        raise ParityException(message() if callable(message) else str(message))


G_LOGGER = Logger()
