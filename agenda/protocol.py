"""uvicorn's HTTP protocol (httptools) with a connection's writes sent at the end of the
event loop's turn, together: `agenda serve` runs uvicorn with
`--http agenda.protocol:Protocol`.

uvicorn writes an answer's status line and headers, then its body, each at once with a
system call of its own: two sends, two TCP segments, and the client woken as the worker
is still in the middle of its turn (on a busy machine, to take the CPU the worker needs
for the requests waiting behind it). Held until the turn ends and sent together
(`writelines`: one system call), a kept page was served 15-24% faster for 8-15% less CPU
a request (bench/RESULTS.md, "Writes at the end of the turn"). An answer waits at most for
the turn it was written in: the requests that were ready with it. The same bytes go, in
the same order, on the same connection.
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

# Bytes held from which they go at once: a body streamed in one turn is not held whole.
RELEASE_BYTES = 64 * 1024


class TurnWrites:
    """A connection's transport whose writes are held until the end of the event loop's
    turn (or `RELEASE_BYTES`), then sent at once. Flow control sees them as they go: the
    transport pauses the protocol as its own buffer fills."""

    __slots__ = ("_held", "_loop", "_size", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop):
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] = []
        self._size = 0

    def write(self, data: bytes) -> None:
        if not data:  # a 304's or a HEAD's body
            return
        self._held.append(data)
        self._size += len(data)
        if self._size >= RELEASE_BYTES:
            self.release()
        elif len(self._held) == 1:
            self._loop.call_soon(self.release)

    def release(self) -> None:
        """Send what is held, if anything (and the connection is still there to take it)."""
        held, self._held, self._size = self._held, [], 0
        if held and not self._transport.is_closing():
            self._transport.writelines(held)

    def writelines(self, data) -> None:
        for part in data:
            self.write(part)

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + self._size

    def write_eof(self) -> None:
        self.release()
        self._transport.write_eof()

    def close(self) -> None:
        """Close once what is held and buffered is sent (the transport's close sends it)."""
        self.release()
        self._transport.close()

    def abort(self) -> None:
        self._held, self._size = [], 0
        self._transport.abort()

    def __getattr__(self, name: str):
        # The rest (reading paused and resumed, is_closing, get_extra_info, ...) as is.
        return getattr(self._transport, name)


class Protocol(HttpToolsProtocol):
    """uvicorn's httptools protocol on a `TurnWrites` transport."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(TurnWrites(transport, self.loop))
