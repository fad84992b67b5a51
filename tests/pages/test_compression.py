"""Pages, the reference at /docs and the stylesheet are sent compressed to browsers that
ask (they all do), each form with its own tag, and the ones that never change in the form
compressed once as the service started.
"""

import pytest

from pages import site
from tests.edge.test_compression import decoded, raw
from tests.factories import EventFactory


@pytest.mark.parametrize("coding", ["gzip", "br"])
def test_an_event_search_page_is_sent_compressed_and_is_the_page_sent_uncompressed(
        client, db, coding):
    EventFactory.create_batch(40)
    status, plain_headers, plain = raw(client, "/events?lang=en", {"Accept-Encoding": "identity"})
    assert status == 200
    status, headers, body = raw(client, "/events?lang=en", {"Accept-Encoding": coding})
    assert status == 200
    assert headers["content-encoding"] == coding
    assert int(headers["content-length"]) == len(body) < len(plain) / 3
    assert decoded(coding, body) == plain
    assert headers["vary"] == plain_headers["vary"] == "Accept-Language, Accept-Encoding"
    assert headers["etag"] == plain_headers["etag"][:-1] + {"gzip": '-gz"', "br": '-br"'}[coding]
    # The browser revalidates the form it holds, and is told that form is still current.
    again = client.get("/events?lang=en", headers={"Accept-Encoding": coding,
                                                   "If-None-Match": headers["etag"]})
    assert again.status_code == 304
    assert again.headers["etag"] == headers["etag"]
    plain_again = client.get("/events?lang=en", headers={"Accept-Encoding": "identity",
                                                         "If-None-Match": headers["etag"]})
    assert plain_again.status_code == 304
    assert plain_again.headers["etag"] == plain_headers["etag"]


@pytest.mark.parametrize("coding", ["gzip", "br"])
def test_the_reference_is_sent_in_the_form_compressed_as_the_service_started(app, client,
                                                                              coding):
    status, headers, body = raw(client, "/docs", {"Accept-Encoding": coding})
    assert status == 200
    assert headers["content-encoding"] == coding
    assert body == app.service.kept["/docs"].forms[coding]
    assert b"EventSummary" in decoded(coding, body)


@pytest.mark.parametrize("coding", ["gzip", "br"])
def test_the_stylesheet_is_sent_in_the_form_compressed_once_and_revalidated_by_it(
        client, coding):
    status, headers, body = raw(client, site.STYLESHEET_URL, {"Accept-Encoding": coding})
    assert status == 200
    assert headers["content-encoding"] == coding
    assert headers["vary"] == "Accept-Encoding"
    assert int(headers["content-length"]) == len(body)
    assert body == site.STYLESHEET.forms[coding]
    assert decoded(coding, body) == site.STYLESHEET.identity
    again = client.get(site.STYLESHEET_URL, headers={"Accept-Encoding": coding,
                                                     "If-None-Match": headers["etag"]})
    assert (again.status_code, again.headers["etag"]) == (304, headers["etag"])


def test_the_stylesheet_is_sent_uncompressed_to_a_client_that_does_not_ask(client):
    status, headers, body = raw(client, site.STYLESHEET_URL, {"Accept-Encoding": "identity"})
    assert status == 200
    assert "content-encoding" not in headers
    assert headers["vary"] == "Accept-Encoding"
    assert body == site.STYLESHEET.identity


def test_a_calendar_feed_is_sent_compressed_to_a_calendar_app_that_asks(client, db):
    EventFactory.create_batch(20)
    status, plain_headers, plain = raw(client, "/calendar.ics", {"Accept-Encoding": "identity"})
    status, headers, body = raw(client, "/calendar.ics", {"Accept-Encoding": "gzip"})
    assert status == 200
    assert headers["content-type"].startswith("text/calendar")
    assert headers["content-encoding"] == "gzip"
    assert headers["vary"] == plain_headers["vary"] == "Accept-Encoding"
    assert decoded("gzip", body) == plain
