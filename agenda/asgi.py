"""The ASGI entry point for servers: `uvicorn agenda.asgi:app`."""

import gc
import logging
import sys
import threading
import time

from agenda.app import create_app
from agenda.settings import load

FLUSH_BYTES = 64 * 1024


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
logging.basicConfig(level=logging.INFO, handlers=[BatchingHandler(settings.log_flush_seconds)],
                    format="%(asctime)s %(levelname)s %(name)s %(message)s")
app = create_app()
# What is loaded now (~200,000 objects: modules, the document, Connexion's operations) lives
# as long as the process. Frozen, the cyclic collector skips it: on the full path of GET
# /events a full collection came every ~170 requests and took ~120 ms (12% of the CPU,
# every request of the worker waiting); frozen, ~3 ms.
gc.collect()
gc.freeze()
