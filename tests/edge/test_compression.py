"""Compression: answers over about 1 KB are sent in gzip or br when the client asks for it
(Accept-Encoding, q-values honoured), decompress to the very answer sent uncompressed, say
`Vary: Accept-Encoding`, and have a tag per form; kept answers are compressed once.
"""

import asyncio
import gzip

import brotli
import pytest
import redis

from agenda.app import create_app
from edge import cache, compression
from edge.compression import negotiate
from tests.conftest import APP_SETTINGS
from tests.edge.test_cache import bearer, catalogue_committed  # noqa: F401 - a fixture
from tests.factories import EventFactory

REQUEST_ID = "0b0e4a4e-8a2e-4c53-9d0c-5d1e3f0a7b21"
PAGE = "/v1/events?limit=100"


def raw(client, path: str, headers: dict):
    """An answer's status, headers and bytes as sent (the client decodes otherwise)."""
    with client.stream("GET", path, headers=headers) as answer:
        return answer.status_code, answer.headers, b"".join(answer.iter_raw())


def decoded(coding: str | None, body: bytes) -> bytes:
    return {"gzip": gzip.decompress, "br": brotli.decompress}.get(coding, bytes)(body)


def asking(auth: dict, accept_encoding: str) -> dict:
    return {**auth, "Accept-Encoding": accept_encoding, "X-Request-Id": REQUEST_ID}


@pytest.fixture
def compressions(monkeypatch) -> list[str]:
    """The codings kept answers' starts are compressed in, one item each time."""
    made = []
    real = compression.Head.of

    def counted(start, coding):
        made.append(coding)
        return real(start, coding)

    monkeypatch.setattr(compression.Head, "of", staticmethod(counted))
    return made


@pytest.fixture
def hundred(db):
    EventFactory.create_batch(100)


@pytest.mark.parametrize("accept_encoding, coding", [
    ("gzip", "gzip"), ("gzip, deflate, br", "br"), ("br;q=0.5, gzip", "gzip"),
    ("gzip;q=0, br", "br"), ("*", "br"), ("br;q=0, *;q=0.3", "gzip")])
def test_a_100_event_page_is_sent_compressed_as_asked_and_is_the_identity_answer(
        client, auth, hundred, accept_encoding, coding):
    plain = raw(client, PAGE, asking(auth, "identity"))
    built = raw(client, PAGE, asking(auth, accept_encoding))
    kept = raw(client, PAGE, asking(auth, accept_encoding))
    assert (plain[0], built[0], kept[0]) == (200, 200, 200)
    assert "content-encoding" not in plain[1]
    for _status, headers, body in (built, kept):
        assert headers["content-encoding"] == coding
        assert int(headers["content-length"]) == len(body)
        # A 100-event page is ~80 KB raw.
        assert len(body) < len(plain[2]) / 4
        assert decoded(coding, body) == plain[2]


def test_a_page_is_sent_uncompressed_to_a_client_that_does_not_ask_and_says_it_varies(
        client, auth, hundred):
    for accept_encoding in ("", "identity", "gzip;q=0", "*;q=0", "deflate"):
        status, headers, body = raw(client, PAGE, asking(auth, accept_encoding))
        assert status == 200
        assert "content-encoding" not in headers
        assert int(headers["content-length"]) == len(body)
        assert headers["vary"] == "Authorization, Accept-Encoding"


def test_a_compressed_answer_says_it_varies_with_accept_encoding(client, auth, hundred):
    for _ in range(2):  # built, then kept
        answer = client.get(PAGE, headers=asking(auth, "br"))
        assert answer.headers["vary"] == "Authorization, Accept-Encoding"


def test_a_small_answer_is_not_compressed(client, auth):
    EventFactory()
    # Kept (the cities, built then served again), built the full way (the caller's token).
    for path in ("/v1/cities", "/v1/cities", "/v1/me", "/healthz"):
        answer = client.get(path, headers=asking(auth, "gzip, br"))
        assert answer.status_code == 200
        assert len(answer.content) < compression.MIN_BYTES
        assert "content-encoding" not in answer.headers
        assert "Accept-Encoding" not in answer.headers.get("vary", "")


def test_a_kept_answer_is_compressed_once_per_coding(client, auth, hundred, compressions):
    for _ in range(4):
        for accept_encoding in ("gzip", "br", "identity"):
            answer = client.get(PAGE, headers={**auth, "Accept-Encoding": accept_encoding})
            assert answer.status_code == 200
    assert sorted(compressions) == ["br", "gzip"]


def test_each_form_has_its_own_tag_and_any_of_them_revalidates(client, auth, hundred):
    tags = {coding: client.get(PAGE, headers=asking(auth, coding or "identity")).headers["etag"]
            for coding in (None, "gzip", "br")}
    plain = tags[None]
    assert plain.startswith('W/"')
    assert tags == {None: plain, "gzip": plain[:-1] + '-gz"', "br": plain[:-1] + '-br"'}
    for held in tags.values():
        for coding, tag in tags.items():
            again = client.get(PAGE, headers={**asking(auth, coding or "identity"),
                                              "If-None-Match": held})
            assert again.status_code == 304
            # The 304 names the form this request would be sent, and says it varies.
            assert again.headers["etag"] == tag
            assert "Accept-Encoding" in again.headers["vary"]
            assert again.content == b""


def test_an_answer_built_the_full_way_is_compressed_with_its_length_right(client, auth, hundred):
    # `1e3` is not plainly written: the cache leaves it to Connexion and Flask.
    page = "/v1/events?limit=100&max_price=1e3"
    full = raw(client, page, asking(auth, "gzip"))
    plain = raw(client, page, asking(auth, "identity"))
    assert (full[0], plain[0]) == (200, 200)
    assert (full[1]["x-cache"], plain[1]["x-cache"]) == ("miss", "hit")
    assert full[1]["content-encoding"] == "gzip"
    assert full[1]["etag"] == plain[1]["etag"][:-1] + '-gz"'
    assert full[1]["vary"] == "Authorization, Accept-Encoding"
    assert int(full[1]["content-length"]) == len(full[2])
    assert gzip.decompress(full[2]) == plain[2]


def test_head_answers_are_not_compressed(client, auth, hundred):
    answer = client.head(PAGE, headers=asking(auth, "gzip, br"))
    assert answer.status_code == 200
    assert "content-encoding" not in answer.headers


def test_the_document_is_compressed_once_and_sent_in_that_form(app, client):
    kept = app.service.kept["/v1/openapi.json"]
    for coding in ("gzip", "br"):
        status, headers, body = raw(client, "/v1/openapi.json", {"Accept-Encoding": coding})
        assert status == 200
        assert headers["content-encoding"] == coding
        assert headers["vary"] == "Accept-Encoding"
        assert int(headers["content-length"]) == len(body)
        assert body == kept.forms[coding]
        assert decoded(coding, body) == app.service.document_json


def test_the_accept_encoding_header_is_read_as_rfc_9110_says():
    assert negotiate("") is None
    assert negotiate("identity") is None
    assert negotiate("gzip;q=0, identity") is None
    assert negotiate("GZIP") == "gzip"
    assert negotiate("gzip, br") == "br"
    assert negotiate("gzip;q=1.0, br;q=0.9") == "gzip"
    assert negotiate("*;q=0.5, br;q=0") == "gzip"
    assert negotiate("br;q=zero, gzip;q=0.1") == "gzip"


def test_a_kept_answer_read_by_another_worker_is_not_compressed_again(
        catalogue_committed, compressions, redis_url):  # noqa: F811 - the imported fixture
    url, token = catalogue_committed
    settings = {"database_url": url, **APP_SETTINGS, "ratelimit_storage": redis_url}
    workers = [create_app(settings), create_app(settings)]
    page = "/v1/events?limit=50"
    try:
        with workers[0].test_client() as first, workers[1].test_client() as second:
            plain = first.get(page, headers={**bearer(token), "Accept-Encoding": "identity"})
            # Left by an earlier run: this test starts with the head uncompressed.
            redis.Redis.from_url(redis_url).delete(
                cache.SharedEntries.head_key(plain.headers["etag"], "gzip"))
            answers = [client.get(page, headers={**bearer(token), "Accept-Encoding": "gzip"})
                       for client in (first, second, second, first)]
    finally:
        for worker in workers:
            worker.service.close()
    assert len(plain.content) > compression.MIN_BYTES
    assert [answer.headers["x-cache"] for answer in answers] == ["hit"] * 4
    assert {answer.headers["content-encoding"] for answer in answers} == {"gzip"}
    assert {answer.content.split(b'"meta"')[0] for answer in answers} == {
        plain.content.split(b'"meta"')[0]}
    assert compressions == ["gzip"]


def test_an_event_stream_and_an_answer_already_coded_pass_as_they_are():
    """MCP's event streams reach the client as each event is written, not once whole."""
    written = []

    def app_sending(content_type: str, extra: list):
        async def app(scope, receive, send):
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", content_type.encode()), *extra]})
            for index in range(3):
                # Each chunk must have reached the client before the next is written.
                assert len(written) == 1 + index
                await send({"type": "http.response.body", "body": b"x" * 2000,
                            "more_body": index < 2})
        return app

    async def client(message):
        written.append(message)

    scope = {"type": "http", "method": "GET", "path": "/mcp",
             "headers": [(b"accept-encoding", b"gzip, br")]}
    for content_type, extra in (("text/event-stream", []),
                                ("application/json", [(b"content-encoding", b"gzip")])):
        written.clear()
        asyncio.run(compression.Compression(app_sending(content_type, extra), {})(
            scope, None, client))
        assert [message.get("body") for message in written[1:]] == [b"x" * 2000] * 3
        assert dict(written[0]["headers"]).get(b"content-encoding") == (
            b"gzip" if extra else None)
        assert b"vary" not in dict(written[0]["headers"])
