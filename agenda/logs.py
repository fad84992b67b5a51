"""The server's log lines: their layout, and their writing in batches."""

import logging
import sys
import threading
import time

FLUSH_BYTES = 64 * 1024


# Each line: its local time to the millisecond, level, logger and message.
LINE = "%(asctime)s %(levelname)s %(name)s %(message)s"


class LineFormatter(logging.Formatter):
    """logging's own formatter of `LINE`, a line without a traceback written by one
    f-string, and the time of day written once a second, not at every line (`time.strftime`
    was a sixth of a line's cost; logging's general formatting, through the record's
    fields, a third of the rest)."""

    _second: tuple[int, str] = (-1, "")

    def __init__(self):
        super().__init__(LINE)

    def format(self, record: logging.LogRecord) -> str:
        if record.exc_info or record.exc_text or record.stack_info:
            return super().format(record)
        return f"{self.formatTime(record)} {record.levelname} {record.name} {record.getMessage()}"

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802 - logging's name
        second, text = self._second
        if int(record.created) != second:
            second = int(record.created)
            text = time.strftime("%Y-%m-%d %H:%M:%S", self.converter(record.created))
            self._second = (second, text)  # one assignment: threads see both or neither
        return f"{text},{int(record.msecs):03d}"


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
        with self.lock:
            self._pending.append(line)
            self._size += len(line)
            full = self._size >= FLUSH_BYTES
        if full or record.levelno >= logging.WARNING:
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
