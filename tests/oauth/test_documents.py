"""Client ID Metadata Documents: fetched carefully, or refused."""

from __future__ import annotations

import http.server
import threading

import orjson
import pytest

from models import oauth
from models.db import now
from oauth import documents


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


@pytest.fixture(autouse=True)
def empty_cache():
    documents._cache.clear()
    yield
    documents._cache.clear()


def test_a_good_document_becomes_a_client_record(db, origin):
    url = f"{origin}/good"
    document = documents.fetch(url, allow_loopback=True)
    client = oauth.document_client(db, url, document, now=now())
    assert (client.name, client.redirect_uris, client.token_endpoint_auth_method) == (
        "Doc App", ["http://127.0.0.1:9999/cb"], "none")
    # Seen again: the same record, not a second one.
    assert oauth.document_client(db, url, document, now=now()).id == client.id


def test_a_loopback_or_private_document_is_refused_unless_configured(origin):
    with pytest.raises(documents.DocumentError, match="https on a public address"):
        documents.fetch(f"{origin}/good", allow_loopback=False)
    with pytest.raises(documents.DocumentError, match="public address"):
        documents.fetch("https://10.0.0.1/client.json", allow_loopback=False)


@pytest.mark.parametrize("path, problem", [
    ("/moved", "redirects"), ("/big", "64 KiB"), ("/text", "not JSON"),
    ("/list", "JSON object"), ("/gone", "could not be fetched")])
def test_a_bad_document_is_refused(origin, path, problem):
    with pytest.raises(documents.DocumentError, match=problem):
        documents.fetch(f"{origin}{path}", allow_loopback=True)


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
        documents.fetch(f"{origin}{path}", allow_loopback=True)
    assert list(documents._cache) == [f"{origin}/good?a", f"{origin}/good?b"]
