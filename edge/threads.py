"""Threads for a request's blocking work (a statement, Redis), handed over from the event
loop and back.

`loop.run_in_executor` on a `ThreadPoolExecutor` hands a call over through two futures (the
executor's and asyncio's, chained by callbacks, each under its own lock) and the executor's
own locks and semaphore: ~15 µs of CPU a call when requests overlap, on the event loop
and the thread, each taking the interpreter in turn. `Threads` puts the call on a queue
its threads take from, and the thread that ran it hands its outcome straight to the asyncio
future the request awaits: ~3 µs (bench/RESULTS.md, "Handed to a thread and back").
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable

# Put on the queue once a thread, they end.
_STOP = None


class Threads:
    """`count` threads (named `name-N`, started at the first call) running calls handed over
    from an event loop (`run`), each call's outcome set on the future its caller awaits."""

    def __init__(self, count: int, name: str):
        self._count = count
        self._name = name
        self._calls: queue.SimpleQueue = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._started = threading.Lock()
        self._stopped = False

    def run(self, function: Callable, *args) -> asyncio.Future:
        """`function(*args)` on one of the threads; the future of its outcome, on the
        running event loop. Cancelled before a thread takes it, the call is not run (its
        request went on without it: a deadline passed); once running, it runs to its end
        and its outcome is dropped (as with an executor)."""
        if self._stopped:
            raise RuntimeError(f"the {self._name} threads are shut down")
        if len(self._threads) < self._count:
            self._start()
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._calls.put((loop, future, function, args))
        return future

    def shutdown(self) -> None:
        """The threads end once the calls queued before are done."""
        self._stopped = True
        for _ in self._threads:
            self._calls.put(_STOP)

    def _start(self) -> None:
        with self._started:
            while len(self._threads) < self._count and not self._stopped:
                thread = threading.Thread(target=self._serve, daemon=True,
                                          name=f"{self._name}-{len(self._threads)}")
                thread.start()
                self._threads.append(thread)

    def _serve(self) -> None:
        while (call := self._calls.get()) is not _STOP:
            loop, future, function, args = call
            if future.cancelled():  # a plain read of its state, as the GIL keeps it whole
                continue
            try:
                outcome, failed = function(*args), False
            except BaseException as error:  # noqa: BLE001 - handed to the awaiting request
                outcome, failed = error, True
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody awaits it
                loop.call_soon_threadsafe(_settle, future, outcome, failed)
            del call, loop, future, function, args, outcome  # not held while it waits


def _settle(future: asyncio.Future, outcome, failed: bool) -> None:
    if future.done():  # cancelled: its request went on without it
        return
    if failed:
        future.set_exception(outcome)
    else:
        future.set_result(outcome)
