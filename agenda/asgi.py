"""The ASGI entry point for servers: `uvicorn agenda.asgi:app`."""

import gc
import logging
import sys
import threading
import time

from agenda.app import create_app
from agenda.settings import load

FLUSH_BYTES = 64 * 1024


class LineFormatter(logging.Formatter):
    """logging's own formatter with the time of day written once a second, not at every
    line (`time.strftime` was a sixth of a line's cost)."""

    _second: tuple[int, str] = (-1, "")

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


settings = load()
# What a log line does not show is not looked up for each (the logging HOWTO's
# "Optimization"): the caller's file and line, the thread, the process. With the time
# written once a second, a line costs ~19 µs instead of ~32 (one a request: the access log).
logging._srcfile = None  # noqa: SLF001 - the documented switch
logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
handler = BatchingHandler(settings.log_flush_seconds)
handler.setFormatter(LineFormatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
logging.basicConfig(level=logging.INFO, handlers=[handler])
app = create_app()
# What is loaded now (~200,000 objects: modules, the document, Connexion's operations) lives
# as long as the process. Frozen, the cyclic collector skips it: on the full path of GET
# /events a full collection came every ~170 requests and took ~120 ms (12% of the CPU,
# every request of the worker waiting); frozen, ~3 ms.
gc.collect()
gc.freeze()
