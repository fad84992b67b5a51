"""The server's HTTP protocol (agenda/protocol.py): a connection's writes held until the
end of the event loop's turn and sent together, every byte as the app wrote it."""

import asyncio
import http.client
import json
import socket
from urllib.parse import urlsplit

import pytest
import uvloop

from agenda.protocol import RELEASE_BYTES, TurnWrites
from models import organisations, tokens
from tests.servers import agenda_serve, committed, drop_database, migrated_database

LOOPS = {"asyncio": asyncio.new_event_loop, "uvloop": uvloop.new_event_loop}


def _on_a_loop(kind: str, test) -> None:
    """Run `test(loop, transport, peer)` on a new loop of `kind`: `transport` a `TurnWrites`
    on one end of a real socket pair, `peer` the other end (non-blocking)."""
    loop = LOOPS[kind]()
    ours, peer = socket.socketpair()
    peer.setblocking(False)

    async def run():
        transport, _ = await loop.create_unix_connection(asyncio.Protocol, sock=ours)
        try:
            await test(loop, TurnWrites(transport, loop), peer)
        finally:
            transport.close()

    try:
        loop.run_until_complete(run())
    finally:
        loop.close()
        peer.close()


def _received(peer: socket.socket) -> bytes:
    try:
        return peer.recv(1 << 20)
    except BlockingIOError:
        return b""


async def _turn() -> None:
    """Let the loop end its turn (the release is called soon: the next one runs it)."""
    await asyncio.sleep(0)
    await asyncio.sleep(0)


@pytest.mark.parametrize("kind", LOOPS)
def test_a_head_and_body_go_together_at_the_end_of_the_turn(kind):
    async def test(loop, transport, peer):
        transport.write(b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\n")
        transport.write(b"")  # a 304's body: nothing to send
        transport.write(b"body")
        assert _received(peer) == b""
        assert transport.get_write_buffer_size() == 42
        await _turn()
        assert _received(peer) == b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nbody"
        assert transport.get_write_buffer_size() == 0

    _on_a_loop(kind, test)


@pytest.mark.parametrize("kind", LOOPS)
def test_from_release_bytes_held_writes_go_at_once(kind):
    async def test(loop, transport, peer):
        transport.write(b"head")
        transport.write(b"x" * (RELEASE_BYTES - 5))
        assert _received(peer) == b""
        transport.write(b"yz")  # RELEASE_BYTES + 1 held: sent without waiting for the turn
        got = b""
        while len(got) < RELEASE_BYTES + 1:
            more = await loop.sock_recv(peer, 1 << 20)
            assert more, "the connection closed early"
            got += more
        assert got == b"head" + b"x" * (RELEASE_BYTES - 5) + b"yz"

    _on_a_loop(kind, test)


@pytest.mark.parametrize("kind", LOOPS)
def test_closing_sends_what_is_held_first_and_abort_drops_it(kind):
    async def test(loop, transport, peer):
        transport.write(b"last words")
        transport.close()
        got = b""
        while True:
            more = await loop.sock_recv(peer, 1024)
            if not more:
                break
            got += more
        assert got == b"last words"

    _on_a_loop(kind, test)

    async def aborted(loop, transport, peer):
        transport.write(b"never")
        transport.abort()
        await _turn()
        assert await loop.sock_recv(peer, 1024) == b""

    _on_a_loop(kind, aborted)


@pytest.fixture
def served(worker_id):
    """`agenda serve` (one worker, the protocol in place) on a database of its own, and a
    read token."""
    url = migrated_database(f"{worker_id}_protocol")
    with committed(url) as session:
        owner = organisations.create_organisation(session, name="Protocol")
        token = tokens.create_token(session, organisation=owner, name="p", scopes=["read"])[1]
    try:
        with agenda_serve({"AGENDA_DATABASE_URL": url, "AGENDA_SECRET_KEY": "protocol"},
                          workers=1) as base:
            yield base, token
    finally:
        drop_database(url)


def test_answers_on_one_kept_connection_arrive_whole_and_in_order(served):
    base, token = served
    address = urlsplit(base)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    auth = {"Authorization": f"Bearer {token}"}

    connection.request("GET", "/v1/openapi.json")  # over RELEASE_BYTES: released at once
    document = connection.getresponse()
    body = document.read()
    assert document.status == 200 and len(body) > RELEASE_BYTES
    assert json.loads(body)["openapi"].startswith("3.1")

    connection.request("GET", "/v1/venues?limit=5", headers=auth)
    first = connection.getresponse()
    assert first.status == 200 and json.loads(first.read())["data"] == []
    connection.request("GET", "/v1/venues?limit=5",
                       headers={**auth, "If-None-Match": first.headers["ETag"]})
    unchanged = connection.getresponse()
    assert unchanged.status == 304 and unchanged.read() == b""
    connection.request("HEAD", "/healthz")
    head = connection.getresponse()
    assert head.status == 200 and head.read() == b""
    connection.request("GET", "/v1/venues/nowhere", headers=auth)
    missing = connection.getresponse()
    assert missing.status == 404
    assert json.loads(missing.read())["error"]["code"] == "not_found"

    connection.request("GET", "/v1/venues?limit=5", headers={**auth, "Connection": "close"})
    last = connection.getresponse()
    assert json.loads(last.read())["data"] == [] and last.will_close
    connection.close()
