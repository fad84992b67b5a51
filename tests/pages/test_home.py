"""Issue 24: the home page at / (what the attribution link opens), the terms as a page, the
one stylesheet, and pages a browser may keep (ETag, max-age)."""

from __future__ import annotations

import datetime as dt
import re
from urllib.parse import urlsplit

import pytest

from edge import limits
from pages import home, site
from tests.api import SITE, day
from tests.factories import EventFactory, VenueFactory
from tests.pages.test_pages import _get, _text


@pytest.fixture
def agenda(db):
    """Tonight in Utrecht, a night this weekend in Gent, and one in three weeks; Utrecht is
    the busiest city."""
    first, _last = home.weekend(day(0))
    utrecht = VenueFactory(name="Tivoli", city="Utrecht")
    return {
        "tonight": EventFactory(title="Vanavond Techno", date=day(0), venue=utrecht,
                                genre_names=("Techno",)),
        "weekend": EventFactory(title="Weekend Disco", date=first, genre_names=("Disco",),
                                venue=VenueFactory(name="Kompass", city="Gent", country="BE")),
        "later": EventFactory(title="Later House", date=day(21), venue=utrecht,
                              genre_names=("House",)),
    }


def _section(page: str, heading_id: str) -> str:
    return page.split(f'id="{heading_id}"', 1)[1].split("</section>", 1)[0]


def test_the_attribution_link_opens_the_home_page(client, auth, agenda):
    meta = client.get("/v1/events", headers=auth).json()["meta"]
    link = urlsplit(meta["attribution"]["url"])
    assert f"{link.scheme}://{link.netloc}" == SITE
    response = client.get(link.path or "/", params={"lang": "en"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "Going out in the Netherlands and Belgium" in _text(response)
    # The footer's first link is that same link.
    footer = response.text.split('<footer class="site-footer">', 1)[1]
    assert re.search(r'<a href="([^"]+)"', footer).group(1) == meta["attribution"]["url"]


def test_the_home_page_shows_today_this_weekend_and_the_busiest_cities(client, agenda):
    page = _get(client, "/").text
    assert "Vanavond Techno" in _section(page, "today")
    assert "Weekend Disco" in _section(page, "weekend")
    assert "Later House" not in page
    cities = _section(page, "cities")
    assert cities.index(f'href="{SITE}/cities/utrecht?lang=en"') < cities.index("/cities/gent")
    for link in (f'href="{SITE}/docs"', f'href="{SITE}/portal?lang=en"'):
        assert link in _section(page, "more")
    dutch = _get(client, "/", lang="nl")
    assert '<html lang="nl">' in dutch.text and "Dit weekend" in _text(dutch)


def test_the_home_page_searches_by_city_genre_and_date(client, agenda):
    def found(**query) -> str:
        response = client.get("/", params={"lang": "en", **query})
        assert response.status_code == 200
        return _text(response).split("Found", 1)[1].split("Today", 1)[0]

    assert "Later House" in found(city="utrecht") and "Weekend Disco" not in found(city="utrecht")
    assert "Weekend Disco" in found(genre="Disco") and "Later House" not in found(genre="Disco")
    on_day = found(date=day(21).isoformat())
    assert "Later House" in on_day and "Vanavond Techno" not in on_day
    assert "Nothing matches this search." in found(city="Utrecht", genre="Disco")


@pytest.mark.parametrize(("query", "says"), [
    ({"date": "31-12-2031"}, "The date is not a date"),
    ({"genre": "Polka"}, "Choose a genre from the list."),
    ({"city": "x" * 101}, "A city name is at most 100 characters."),
])
def test_a_bad_search_is_a_400_page_that_says_what_is_wrong(client, db, query, says):
    response = client.get("/", params={"lang": "en", **query})
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("text/html")
    assert says in _text(response) and "Nothing matches this search." not in response.text


@pytest.mark.parametrize(("today", "first", "last"), [
    (dt.date(2031, 5, 1), dt.date(2031, 5, 2), dt.date(2031, 5, 4)),   # a Thursday
    (dt.date(2031, 5, 2), dt.date(2031, 5, 3), dt.date(2031, 5, 4)),   # Friday: from tomorrow
    (dt.date(2031, 5, 4), dt.date(2031, 5, 9), dt.date(2031, 5, 11)),  # Sunday: the next one
])
def test_this_weekend_is_friday_to_sunday_after_today(today, first, last):
    assert home.weekend(today) == (first, last)


@pytest.mark.parametrize(("lang", "heading", "limits"), [
    ("en", "Terms of use", "Per token: 120 requests a minute and 10000 a day."),
    ("nl", "Gebruiksvoorwaarden", "Per token: 120 verzoeken per minuut en 10000 per dag."),
])
def test_the_terms_page_shows_the_terms_of_the_api(client, db, lang, heading, limits):
    terms = client.get("/v1/terms").json()["data"]
    response = _get(client, "/terms", lang=lang)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    text = _text(response)
    assert f" {heading} " in text and limits in text
    for rule in terms["rules"]:
        assert rule in text
    for value in (terms["contact"], terms["provider"]["name"], terms["provider"]["vat"],
                  terms["attribution"]["text"]):
        assert value in text


def test_the_stylesheet_is_served_with_an_etag_and_kept_while_it_is_the_same(client, db):
    page = _get(client, "/")
    address = re.search(r'<link rel="stylesheet" href="([^"]+)"', page.text).group(1)
    assert address == site.STYLESHEET_URL
    response = client.get(address)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/css")
    assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert ".card" in response.text
    again = client.get(address, headers={"If-None-Match": response.headers["ETag"]})
    assert again.status_code == 304 and again.content == b""
    # An old or hand-typed address is kept only an hour.
    assert client.get(site.STYLESHEET_PATH).headers["Cache-Control"] == "public, max-age=3600"


def test_a_public_page_has_an_etag_and_answers_304_when_unchanged(client, agenda):
    first = _get(client, "/")
    assert first.headers["Cache-Control"] == "public, max-age=60"
    tag = first.headers["ETag"]
    again = client.get("/", params={"lang": "en"}, headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.content == b""
    EventFactory(title="Nog Een Nacht", date=day(0))
    changed = client.get("/", params={"lang": "en"}, headers={"If-None-Match": tag})
    assert changed.status_code == 200 and "Nog Een Nacht" in changed.text


def test_pages_portal_and_sign_in_share_the_stylesheet_header_and_footer(client, agenda):
    pages = [_get(client, "/"), _get(client, f"/events/{agenda['tonight'].slug}"),
             _get(client, "/docs"), _get(client, "/signin"),
             client.get("/portal", follow_redirects=True, params={"lang": "en"})]
    for response in pages:
        assert response.status_code == 200
        body = response.text
        assert f'<link rel="stylesheet" href="{site.STYLESHEET_URL}">' in body
        assert "<style" not in body and " style=" not in body
        assert '<header class="site-header">' in body and '<footer class="site-footer">' in body
        policy = response.headers["Content-Security-Policy"]
        assert "style-src 'self'" in policy and "unsafe-inline" not in policy
    assert 'class="lang"' in pages[3].text, "sign-in has the language switch"


def test_the_stylesheet_is_not_counted_as_a_page(app, client, db, monkeypatch):
    # One clock minute throughout (the windows are clock-aligned: edge/limits.py).
    monkeypatch.setattr(app.service.usage, "clock", lambda: 1_795_000_025.0)
    for _ in range(limits.PAGES_PER_MINUTE + 5):
        assert client.get(site.STYLESHEET_URL).status_code == 200
    assert _get(client, "/terms").status_code == 200
    for _ in range(limits.PAGES_PER_MINUTE):
        _get(client, "/terms")
    assert _get(client, "/terms").status_code == 429, "pages are still limited"
