"""The server's log lines: their layout, and their writing in batches."""

import logging
import sys
import threading
import time
from collections.abc import Callable

FLUSH_BYTES = 64 * 1024


# Each line: its local time to the millisecond, level, logger and message.
LINE = "%(asctime)s %(levelname)s %(name)s %(message)s"


class LineFormatter(logging.Formatter):
    """logging's own formatter of `LINE`, a line without a traceback written by one
    f-string, and the time of day written once a second, not at every line (`time.strftime`
    was a sixth of a line's cost; logging's general formatting, through the record's
    fields, a third of the rest)."""

    _seconds: tuple[int, str] = (-1, "")

    def __init__(self):
        super().__init__(LINE)

    def format(self, record: logging.LogRecord) -> str:
        if record.exc_info or record.exc_text or record.stack_info:
            return super().format(record)
        return self.line(self.formatTime(record), record.levelname, record.name,
                         record.getMessage())

    @staticmethod
    def line(when: str, level: str, name: str, message: str) -> str:
        """A line of `LINE`'s layout from its fields, written."""
        return f"{when} {level} {name} {message}"

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802 - logging's name
        return f"{self._second(record.created)},{int(record.msecs):03d}"

    def time_of(self, created: float) -> str:
        """The time `created` (seconds since the epoch) as a line begins with it."""
        return f"{self._second(created)},{int((created - int(created)) * 1000):03d}"

    def _second(self, created: float) -> str:
        second, text = self._seconds
        if int(created) != second:
            second = int(created)
            text = time.strftime("%Y-%m-%d %H:%M:%S", self.converter(created))
            self._seconds = (second, text)  # one assignment: threads see both or neither
        return text


class BatchingHandler(logging.StreamHandler):
    """Writes log lines to stderr in batches: at most `seconds` late, at once from
    `FLUSH_BYTES` buffered or a warning on. A write a line (the access log's, every request)
    was ~12% of an event loop's time serving cached answers."""

    def __init__(self, seconds: int):
        super().__init__(sys.stderr)
        self.seconds = seconds
        self._pending: list[str] = []
        self._size = 0
        threading.Thread(target=self._flushing, name="log-flush", daemon=True).start()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record) + self.terminator
        except Exception:  # noqa: BLE001 - as StreamHandler.emit: logging never raises
            self.handleError(record)
            return
        self.add(line, record.levelno)

    def add(self, line: str, level: int) -> None:
        """Add a written `line` of `level` to the batch."""
        with self.lock:
            self._pending.append(line)
            self._size += len(line)
            full = self._size >= FLUSH_BYTES
        if full or level >= logging.WARNING:
            self.flush()

    def flush(self) -> None:
        with self.lock:
            pending, self._pending, self._size = self._pending, [], 0
            if pending and self.stream:
                self.stream.write("".join(pending))
                self.stream.flush()

    def _flushing(self) -> None:
        while True:
            time.sleep(self.seconds)
            self.flush()


def direct_writer(logger: logging.Logger, level: int = logging.INFO
                  ) -> Callable[[str], None] | None:
    """A writer of `logger`'s lines of `level` (each a message, formatted already) straight
    into the batch of the one handler logging would hand them to, without a `LogRecord`
    made, filtered and formatted for each: where that is all logging would do, that is no
    filter on `logger`, and on its way up to the root (as far as its records propagate) one
    handler only, a `BatchingHandler` writing `LineFormatter`'s lines, without filters. Else
    None (another handler, such as a test's, or a filter: logging writes them). Each line is
    written only while `logger` and the handler let lines of `level` through, as logging
    would. Made once, for the access log's line of every request (~19 µs through logging,
    ~6% of a served-again answer's CPU, bench/RESULTS.md)."""
    found = []
    current: logging.Logger | None = logger
    while current is not None:
        found += current.handlers
        current = current.parent if current.propagate else None
    if logger.filters or len(found) != 1:
        return None
    handler = found[0]
    formatter = handler.formatter
    if not (isinstance(handler, BatchingHandler) and isinstance(formatter, LineFormatter)
            and not handler.filters):
        return None
    level_name = logging.getLevelName(level)

    def write(message: str) -> None:
        if logger.isEnabledFor(level) and level >= handler.level:
            handler.add(formatter.line(formatter.time_of(time.time()), level_name, logger.name,
                                       message) + handler.terminator, level)

    return write
