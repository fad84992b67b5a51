"""Client ID Metadata Documents: fetched carefully, or refused."""

from __future__ import annotations

import asyncio
import collections
import http.server
import select
import socket
import threading
import time

import httpx
import orjson
import pytest

from models import oauth, organisations, tokens
from models.db import now
from oauth import documents
from tests.servers import agenda_serve, committed, drop_database, migrated_database


class _Documents(http.server.BaseHTTPRequestHandler):
    """A tiny origin: a good document, a redirect, one too big, one not JSON."""

    def do_GET(self):  # noqa: N802 - the http.server name
        url = f"http://127.0.0.1:{self.server.server_address[1]}{self.path}"
        answers = {
            "/good": (200, orjson.dumps({"client_id": url, "client_name": "Doc App",
                                         "redirect_uris": ["http://127.0.0.1:9999/cb"]})),
            "/big": (200, b'{"pad": "' + b"x" * (documents.MAX_BYTES + 10) + b'"}'),
            "/text": (200, b"hello"),
            "/list": (200, b"[1, 2]"),
            "/gone": (404, b"{}"),
        }
        if self.path == "/moved":
            self.send_response(302)
            self.send_header("Location", "/good")
            self.end_headers()
            return
        status, body = answers.get(self.path.split("?")[0], (404, b""))
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args):
        pass


@pytest.fixture(scope="module")
def origin():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Documents)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def fetch(url: str, *, allow_loopback: bool) -> dict:
    """The document at `url`, fetched on the documents' thread as a server fetches it."""
    return documents.fetch_soon(url, allow_loopback=allow_loopback).result(timeout=10)


@pytest.fixture(autouse=True)
def empty_cache():
    documents._cache.clear()
    yield
    documents._cache.clear()


def test_a_good_document_becomes_a_client_record(db, origin):
    url = f"{origin}/good"
    document = fetch(url, allow_loopback=True)
    client = oauth.document_client(db, url, document, now=now())
    assert (client.name, client.redirect_uris, client.token_endpoint_auth_method) == (
        "Doc App", ["http://127.0.0.1:9999/cb"], "none")
    # Seen again: the same record, not a second one.
    assert oauth.document_client(db, url, document, now=now()).id == client.id


def test_a_loopback_or_private_document_is_refused_unless_configured(origin):
    with pytest.raises(documents.DocumentError, match="https on a public address"):
        fetch(f"{origin}/good", allow_loopback=False)
    with pytest.raises(documents.DocumentError, match="public address"):
        fetch("https://10.0.0.1/client.json", allow_loopback=False)


@pytest.mark.parametrize("path, problem", [
    ("/moved", "redirects"), ("/big", "64 KiB"), ("/text", "not JSON"),
    ("/list", "JSON object"), ("/gone", "could not be fetched")])
def test_a_bad_document_is_refused(origin, path, problem):
    with pytest.raises(documents.DocumentError, match=problem):
        fetch(f"{origin}{path}", allow_loopback=True)


@pytest.mark.parametrize("document, problem", [
    ({"client_id": "https://other.example/doc", "redirect_uris": ["https://a.example/cb"]},
     "its own URL"),
    ({"client_id": "URL", "redirect_uris": ["https://a.example/cb"],
      "token_endpoint_auth_method": "client_secret_basic"}, "'none'"),
    ({"client_id": "URL", "redirect_uris": ["http://evil.example/cb"]}, "https"),
])
def test_a_document_must_describe_itself_as_a_public_client(db, document, problem):
    url = "https://app.example/client.json"
    document = {**document, "client_id": url if document["client_id"] == "URL"
                else document["client_id"]}
    with pytest.raises(oauth.RegistrationError, match=problem):
        oauth.document_client(db, url, document, now=now())


def test_the_cache_keeps_a_bounded_number_of_documents(monkeypatch, origin):
    monkeypatch.setattr(documents, "CACHE_SIZE", 2)
    for path in ("/good", "/good?a", "/good?b"):
        fetch(f"{origin}{path}", allow_loopback=True)
    assert list(documents._cache) == [f"{origin}/good?a", f"{origin}/good?b"]


class _Trickle:
    """An origin that answers every request with a status line and then one byte every half
    second, for ever: what a hostile client id URL may point at. Counts its connections:
    at each new one, those still open (a connection the client closed counts as closed at
    once, however late its thread notices)."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connections: list[socket.socket] = []
        self.most_at_once = 0
        self.paths: collections.Counter = collections.Counter()
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stopped.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                self.connections = [*filter(_open, self.connections), connection]
                self.most_at_once = max(self.most_at_once, len(self.connections))
            threading.Thread(target=self._trickle, args=(connection,), daemon=True).start()

    def _trickle(self, connection):
        try:
            request = connection.recv(4096)
            if not request:
                return  # a fetch that reached its deadline as it connected
            path = request.split(b" ")[1].decode()
            with self.lock:
                self.paths[path] += 1
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                               b"Content-Length: 100000\r\n\r\n")
            connection.settimeout(0.5)
            while not self.stopped.is_set():
                try:
                    if not connection.recv(1):
                        return  # the client closed
                except TimeoutError:
                    connection.sendall(b" ")
        except OSError:
            pass
        finally:
            with self.lock:
                self.connections = [c for c in self.connections if c is not connection]
            connection.close()

    def close(self):
        self.stopped.set()
        self.listener.close()


def _open(connection: socket.socket) -> bool:
    """Whether the client has not closed `connection` (its end of stream or reset is already
    in the kernel, whether or not a thread has read it)."""
    try:
        readable, _, _ = select.select([connection], [], [], 0)
        return not readable or connection.recv(1, socket.MSG_PEEK) != b""
    except (OSError, ValueError):
        return False


@pytest.fixture
def trickle():
    origin = _Trickle()
    yield origin
    origin.close()


def test_a_trickling_document_fails_at_the_deadline_and_the_failure_is_kept(trickle,
                                                                           monkeypatch):
    monkeypatch.setattr(documents, "DEADLINE", 1.0)
    url = f"http://127.0.0.1:{trickle.port}/slow"
    started = time.monotonic()
    with pytest.raises(documents.DocumentError, match="longer than 1 s"):
        fetch(url, allow_loopback=True)
    assert time.monotonic() - started < 5
    assert isinstance(documents.cached(url), documents.DocumentError)
    with pytest.raises(documents.DocumentError, match="longer than 1 s"):
        fetch(url, allow_loopback=True)
    assert trickle.paths["/slow"] == 1


def test_a_document_is_fetched_from_the_address_that_was_checked(origin, monkeypatch):
    """DNS rebinding: a name that resolves to an allowed address for the check and to an
    internal one afterwards is fetched from the first (the only) resolution."""
    port = int(origin.rsplit(":", 1)[1])
    answers = iter(["127.0.0.1", "10.0.0.1", "10.0.0.1"])
    real = socket.getaddrinfo

    def rebinding(host, *args, **kwargs):
        if host != "rebind.example":
            return real(host, *args, **kwargs)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (next(answers), port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    document = fetch(f"http://rebind.example:{port}/good", allow_loopback=True)
    assert document["client_name"] == "Doc App"
    assert next(answers) == "10.0.0.1"  # resolved once: the second answer was never asked for


@pytest.mark.parametrize("url", ["http://10.0.0.1/client.json", "http://192.168.1.1/c.json",
                                 "http://169.254.169.254/latest/meta-data",
                                 "http://[fe80::1]/client.json"])
def test_private_and_link_local_addresses_are_refused_even_when_loopback_is_allowed(url):
    with pytest.raises(documents.DocumentError, match="public address"):
        fetch(url, allow_loopback=True)


@pytest.fixture
def served_with_a_token(worker_id):
    """`agenda serve` (one worker: 10 handler threads) taking loopback client documents,
    every REST answer the full way; its URL and a read token."""
    url = migrated_database(f"{worker_id}_documents")
    with committed(url) as session:
        owner = organisations.create_organisation(session, name="Documents")
        token = tokens.create_token(session, organisation=owner, name="documents",
                                    scopes=["read"])[1]
    env = {"AGENDA_DATABASE_URL": url, "AGENDA_SECRET_KEY": "documents",
           "AGENDA_OAUTH_METADATA_DOCUMENTS_ON_LOOPBACK": "true",
           "AGENDA_RESPONSE_CACHE": "false"}
    try:
        with agenda_serve(env, workers=1) as base:
            yield base, token
    finally:
        drop_database(url)


def test_metadata_document_client_ids_cannot_hang_the_server(served_with_a_token, trickle):
    """100 authorization requests whose documents trickle in (half one URL, half a URL
    each, from four addresses within their limit) while /healthz and a REST call answer."""
    base, token = served_with_a_token
    shared = f"http://127.0.0.1:{trickle.port}/shared"
    urls = [shared] * 50 + [f"http://127.0.0.1:{trickle.port}/own/{n}" for n in range(50)]

    async def scenario():
        senders = [httpx.AsyncClient(base_url=base, timeout=30, transport=httpx.AsyncHTTPTransport(
            local_address=f"127.0.0.{number}")) for number in range(2, 6)]
        pending = [asyncio.create_task(senders[n % 4].get("/oauth/authorize", params={
            "response_type": "code", "client_id": url, "code_challenge_method": "S256"}))
            for n, url in enumerate(urls)]
        await asyncio.sleep(1)
        async with httpx.AsyncClient(base_url=base, timeout=3) as probe:
            health = await probe.get("/healthz")
            events = await probe.get("/v1/events", params={"city": "amsterdam"},
                                     headers={"Authorization": f"Bearer {token}"})
        waiting = sum(not task.done() for task in pending)
        async with asyncio.timeout(30):
            answers = await asyncio.gather(*pending)
        for sender in senders:
            await sender.aclose()
        return health, events, waiting, answers

    health, events, waiting, answers = asyncio.run(scenario())
    assert (health.status_code, health.json()) == (200, {"status": "ok"})
    assert events.status_code == 200 and events.json()["data"] == []
    assert waiting == 100
    # Every authorization request ended with the authorization endpoint's error page.
    assert {(answer.status_code, answer.headers["content-type"].split(";")[0])
            for answer in answers} == {(400, "text/html")}
    assert {"invalid_client" in answer.text for answer in answers} == {True}
    # One fetch for the shared URL, never more than the cap at once.
    assert trickle.paths["/shared"] == 1
    assert trickle.most_at_once <= documents.MAX_FETCHES
    # The shared URL's failure is kept: asked again, it is not fetched again.
    again = httpx.get(f"{base}/oauth/authorize", params={"client_id": shared}, timeout=3)
    assert again.status_code == 400 and trickle.paths["/shared"] == 1
