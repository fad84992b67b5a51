"""The public pages: each kind renders its object in Dutch and English, a missing one is a 404
page, everything is escaped, and every `url` the API hands out opens a page."""

from __future__ import annotations

import datetime as dt
import html
import re

import pytest
from sqlalchemy import event as sqlalchemy_events

from models import badges
from pages import views
from tests import api
from tests.api import SITE
from tests.factories import (ArtistFactory, EventFactory, OrganisationFactory, PersonFactory,
                             TicketFactory, TokenReportFactory, VenueFactory)

NIGHT = dt.date(2031, 5, 2)  # a Friday, in the future for years to come


def _get(client, path: str, lang: str = "en", **headers):
    return client.get(path, params={"lang": lang} if lang else None, headers=headers)


def _text(response) -> str:
    """The page's visible text: inline tags dropped, block tags as spaces, entities decoded."""
    body = response.text.split("<body>", 1)[1]
    body = re.sub(r"</?(a|time|strong|span|del|code|small)\b[^>]*>", "", body)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body)))


@pytest.fixture
def night(db):
    """An event at a venue with two acts, by an organisation."""
    venue = VenueFactory(name="Shelter", city="Amsterdam", address="Overhoeksplein 3")
    acts = [ArtistFactory(name="Joost van Bellen"), ArtistFactory(name="Marcel Dettmann")]
    return EventFactory(title="Shelter Nights", date=NIGHT, start="23:00", end="06:00",
                        venue=venue, acts=acts, organisation=OrganisationFactory(name="Dekmantel"))


# --- event pages ---------------------------------------------------------------------------

def test_an_event_page_shows_title_date_venue_and_lineup_in_english(client, night):
    response = _get(client, f"/events/{night.slug}")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert '<html lang="en">' in response.text
    assert "<title>Shelter Nights · Event Agenda Service</title>" in response.text
    text = _text(response)
    assert "Friday 2 May 2031, 23:00–06:00" in text
    assert "Shelter, Overhoeksplein 3, Amsterdam" in text
    assert "Line-up Joost van Bellen Marcel Dettmann" in text
    assert "Price € 15.00 – € 25.00" in text
    assert f'href="{SITE}/venues/{night.venue.id}"' in response.text
    assert f'href="{SITE}/artists/{night.lineup[0].artist_id}"' in response.text
    assert f'href="{SITE}/organisations/{night.organisation.id}"' in response.text
    assert f'href="{SITE}/events/{night.slug}.ics"' in response.text


def test_an_event_page_speaks_dutch_by_query_or_by_accept_language(client, night):
    by_query = _get(client, f"/events/{night.slug}", lang="nl")
    by_header = _get(client, f"/events/{night.slug}", lang="",
                     **{"Accept-Language": "nl-BE,nl;q=0.9,en;q=0.5"})
    for response in (by_query, by_header):
        assert '<html lang="nl">' in response.text
        text = _text(response)
        assert "vrijdag 2 mei 2031" in text
        assert "Wanneer" in text and "Zet in je agenda (.ics)" in text
        assert "Prijs € 15,00 – € 25,00" in text
    assert '<html lang="en">' in _get(client, f"/events/{night.slug}", lang="",
                                      **{"Accept-Language": "de, en;q=0.5"}).text


def test_a_cancelled_event_says_so_with_its_reason(client, db):
    event = EventFactory(title="Washed Out", cancelled=True, cancel_reason="Storm warning")
    english = _text(_get(client, f"/events/{event.slug}"))
    assert "Cancelled: This event is cancelled. Reason: Storm warning" in english
    assert "Geannuleerd: Dit evenement is geannuleerd." in _text(
        _get(client, f"/events/{event.slug}", lang="nl"))
    assert "Buy tickets" not in english


def test_a_postponed_event_shows_its_new_date(client, db):
    event = EventFactory(date=NIGHT, postponed_to=NIGHT + dt.timedelta(days=14))
    text = _text(_get(client, f"/events/{event.slug}"))
    assert "Postponed: This event is postponed to Friday 16 May 2031." in text


def test_an_unapproved_or_missing_event_is_a_404_page(client, db):
    pending = EventFactory(status="pending")
    for path in (f"/events/{pending.slug}", f"/events/{pending.id}", "/events/no-such-night",
                 f"/events/{pending.slug}.ics", "/events/no-such-night/token-prices"):
        response = _get(client, path)
        assert response.status_code == 404, path
        assert response.headers["content-type"].startswith("text/html")
        assert "Page not found" in response.text
    assert "Pagina niet gevonden" in _get(client, "/events/nothing", lang="nl").text


def test_pages_are_public_cacheable_and_locked_down(client, night):
    response = _get(client, f"/events/{night.slug}")
    assert response.headers["Cache-Control"] == "public, max-age=60"
    assert "Accept-Language" in response.headers["Vary"]
    policy = response.headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "script-src" not in policy
    assert "frame-ancestors 'none'" in policy
    # No JavaScript: the one script element is the event's JSON-LD, a data block that the
    # policy (no script-src) would not run anyway.
    assert re.findall(r"<script[^>]*>", response.text) == ['<script type="application/ld+json">']


def test_everything_shown_is_escaped(client, db):
    event = EventFactory(title='<script>alert("x")</script>', slug="scripted",
                         description="a & b <b>bold</b>",
                         venue=VenueFactory(name='"><img src=x onerror=alert(1)>'))
    response = _get(client, f"/events/{event.slug}")
    assert "<script>alert" not in response.text and "<img src=x" not in response.text
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in response.text
    assert "a &amp; b &lt;b&gt;bold&lt;/b&gt;" in response.text
    reflected = client.get(f"/events/{event.slug}", params={"lang": '"><script>'})
    assert "<script>" not in reflected.text


def test_every_page_credits_the_data_and_links_the_terms(client, night):
    response = _get(client, f"/events/{night.slug}")
    assert "Data: Event Agenda Service B.V. (http://127.0.0.1:8080)" in _text(response)
    # The terms as a page in the visitor's language (issue 24), not the API's JSON.
    assert f'href="{SITE}/terms?lang=en"' in response.text
    assert f'href="{SITE}/v1/terms"' not in response.text
    assert "Gebruiksvoorwaarden" in _get(client, f"/events/{night.slug}", lang="nl").text


def test_a_festival_edition_has_a_token_prices_page(client, db):
    festival = EventFactory(title="Lowlands", festival_key="lowlands", season=2031, date=NIGHT)
    for _ in range(3):
        TokenReportFactory(event_id=festival.id)
    event_page = _get(client, f"/events/{festival.slug}")
    assert f'href="{SITE}/events/{festival.slug}/token-prices"' in event_page.text
    text = _text(_get(client, f"/events/{festival.slug}/token-prices"))
    assert "Drink-token prices: Lowlands" in text
    assert "Price of one token € 2.50" in text and "Reports 3" in text
    assert "Prijs van één muntje € 2,50" in _text(
        _get(client, f"/events/{festival.slug}/token-prices", lang="nl"))


def test_a_festival_without_reports_has_no_token_prices_page(client, db):
    festival = EventFactory(festival_key="quiet", season=2031)
    assert "/token-prices" not in _get(client, f"/events/{festival.slug}").text
    assert _get(client, f"/events/{festival.slug}/token-prices").status_code == 404


# --- venues, artists, organisations, cities --------------------------------------------------

def test_a_venue_page_shows_its_profile_and_events(client, night):
    venue = night.venue
    response = _get(client, f"/venues/{venue.id}")
    text = _text(response)
    assert "<h1>Shelter</h1>" in response.text
    assert 'alt="Photo of Shelter"' in response.text
    assert "Capacity 800" in text and "Step-free entrance." in text
    assert "Events coming up: 1" in text and "Shelter Nights" in text
    assert "Capaciteit 800" in _text(_get(client, f"/venues/{venue.id}", lang="nl"))
    assert _get(client, "/venues/ven_missing").status_code == 404


def test_an_artist_page_shows_bio_and_next_dates(client, night):
    artist_id = night.lineup[1].artist_id
    response = _get(client, f"/artists/{artist_id}")
    text = _text(response)
    assert "<h1>Marcel Dettmann</h1>" in response.text
    assert 'alt="Photo of Marcel Dettmann"' in response.text
    assert "Plays records." in text and "Shelter Nights" in text
    assert "Binnenkort" in _text(_get(client, f"/artists/{artist_id}", lang="nl"))
    assert _get(client, "/artists/art_missing").status_code == 404


def test_an_organisation_page_shows_its_events(client, night):
    response = _get(client, f"/organisations/{night.organisation.id}")
    text = _text(response)
    assert "<h1>Dekmantel</h1>" in response.text
    assert "Events in the agenda: 1" in text and "Shelter Nights" in text
    assert "Evenementen in de agenda: 1" in _text(
        _get(client, f"/organisations/{night.organisation.id}", lang="nl"))
    # Ids only, as GET /organisations/{id}: a name is no address.
    assert _get(client, "/organisations/Dekmantel").status_code == 404


def test_a_city_page_lists_its_next_events(client, db):
    event = EventFactory(title="Zomernacht", date=NIGHT,
                         venue=VenueFactory(city="'s-Hertogenbosch", country="NL"))
    response = _get(client, "/cities/s-hertogenbosch")
    assert response.status_code == 200
    assert "Nightlife in 's-Hertogenbosch" in _text(response)
    assert "Zomernacht" in _text(response)
    assert f'href="{SITE}/events/{event.slug}"' in response.text
    assert "Uitgaan in 's-Hertogenbosch" in _text(_get(client, "/cities/s-hertogenbosch",
                                                         lang="nl"))
    assert _get(client, "/cities/atlantis").status_code == 404


@pytest.mark.parametrize("path", ["/events/%00", "/venues/v%00", "/artists/%00", "/users/%00",
                                  "/organisations/%00", "/events/a%00.ics",
                                  "/events/%00/token-prices", "/cities/%00", "/docs?lang=%00"])
def test_an_address_with_a_nul_is_the_not_found_page(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")


def test_a_city_page_lists_a_full_page_of_its_own_countrys_events(client, db):
    """A same-named city across the border, with sooner events, takes no place on the page
    (the busier Baarle, in NL, is the one its address names)."""
    for offset in range(views.UPCOMING_LIMIT):
        EventFactory(date=NIGHT + dt.timedelta(days=offset),
                     venue=VenueFactory(city="Baarle", country="BE"))
    ours = [EventFactory(date=NIGHT + dt.timedelta(days=views.UPCOMING_LIMIT + offset),
                         venue=VenueFactory(city="Baarle", country="NL"))
            for offset in range(views.UPCOMING_LIMIT + 1)]
    response = _get(client, "/cities/baarle")
    assert response.status_code == 200
    listed = re.findall(rf'href="{SITE}/events/([^"]+)"', response.text)
    assert listed == [event.slug for event in ours[:views.UPCOMING_LIMIT]]


def test_a_city_pages_statements_do_not_grow_with_its_venues(client, db):
    """The page keeps the events in the city's country: the venues' countries come with
    the list, not in one query a venue."""
    for city, venues in (("Zwolle", 1), ("Kampen", 3)):
        for _ in range(venues):
            EventFactory(date=NIGHT, venue=VenueFactory(city=city, country="NL"))
    counted = {}
    for slug in ("zwolle", "kampen"):
        statements = []

        def count(*_args, seen=statements):
            seen.append(1)

        sqlalchemy_events.listen(db.get_bind(), "before_cursor_execute", count)
        try:
            assert _get(client, f"/cities/{slug}").status_code == 200
        finally:
            sqlalchemy_events.remove(db.get_bind(), "before_cursor_execute", count)
        counted[slug] = len(statements)
    assert counted["kampen"] == counted["zwolle"], counted


# --- public profiles -------------------------------------------------------------------------

def test_a_public_profile_shows_its_badges_in_both_languages(client, db):
    person = PersonFactory(name="Sam", handle="sam")
    TicketFactory(event_id=EventFactory(date=dt.date(2025, 1, 1)).id, person_id=person.id,
                  status="used", scanned_at=1_760_000_000)
    badges.award(db, [person.id])
    english = _text(_get(client, "/users/sam"))
    assert "Sam @sam" in english
    assert "First night — A night out: a ticket scanned at the door." in english
    assert "1 of 24 badges" in english
    dutch = _text(_get(client, "/users/sam", lang="nl"))
    assert "Eerste nacht — Een avond uit: een ticket gescand aan de deur." in dutch
    assert "verdiend op" in dutch


@pytest.mark.parametrize("visibility", ["private", "suspended", None])
def test_a_private_suspended_or_missing_profile_is_the_same_404(client, db, visibility):
    if visibility is not None:
        PersonFactory(handle="hidden", visibility=visibility)
    response = _get(client, "/users/hidden")
    assert response.status_code == 404
    assert "<h1>Page not found</h1>" in response.text


# --- every url of the API opens a page ----------------------------------------------------------

def _urls(value):
    """Every `url` field anywhere in an API answer."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "url" and isinstance(item, str):
                yield item
            else:
                yield from _urls(item)
    elif isinstance(value, list):
        for item in value:
            yield from _urls(item)


def test_every_url_the_api_returns_opens_a_page(client, auth, db, night):
    festival = EventFactory(festival_key="pinkpop", season=2031, date=NIGHT,
                            venue=VenueFactory(city="Landgraaf"))
    TokenReportFactory(event_id=festival.id)
    person = PersonFactory(handle="walker")
    EventFactory(status="pending")
    lists = [api.page(client, auth, path, limit=100) for path in (
        "/v1/events", "/v1/venues", "/v1/artists", "/v1/organisations", "/v1/cities",
        f"/v1/users/{person.handle}/badges")]
    ones = [api.page(client, auth, path) for path in (
        f"/v1/events/{night.slug}", f"/v1/events/{festival.id}/token-prices",
        f"/v1/venues/{night.venue.id}", f"/v1/artists/{night.lineup[0].artist_id}",
        f"/v1/organisations/{night.organisation.id}")]
    answers = [*lists, *ones]
    urls = set(_urls(answers)) - {SITE}
    kinds = {url.removeprefix(SITE).split("/")[1] for url in urls}
    assert kinds == {"events", "venues", "artists", "organisations", "cities", "users"}
    assert f"{SITE}/events/{festival.slug}/token-prices" in urls
    for url in sorted(urls):
        response = client.get(url.removeprefix(SITE))
        assert response.status_code == 200, url
        assert response.headers["content-type"].startswith("text/html"), url


def test_the_sources_page_of_the_terms_lists_each_source_with_its_records(client, auth, db):
    EventFactory(source="nachtwerk-feed", venue=VenueFactory(source="nachtwerk-feed"))
    EventFactory(source="nachtwerk-feed", status="draft")  # not served, not counted
    terms = client.get("/v1/terms").json()["data"]
    response = client.get(terms["sources_url"].removeprefix(SITE), params={"lang": "en"})
    assert response.status_code == 200
    text = _text(response)
    assert "Where the data comes from" in text and "nachtwerk-feed: 2 records" in text
    dutch = _text(client.get("/sources", params={"lang": "nl"}))
    assert "Waar de gegevens vandaan komen" in dutch


def test_anonymous_limits_everywhere_the_readme_promises_them_on_pages(app, client, night,
                                                                      monkeypatch):
    # Issue 22: public pages and /docs, 60 a minute per address; the 61st gets a page to wait.
    moment = [1_795_000_025.0]  # 5 seconds into a clock minute
    monkeypatch.setattr(app.service.usage, "clock", lambda: moment[0])
    paths = ["/docs", f"/events/{night.slug}", "/events/missing", "/sources"]
    for count in range(60):
        assert client.get(paths[count % 4]).status_code in (200, 404), count
    refused = client.get(f"/events/{night.slug}", params={"lang": "en"})
    assert refused.status_code == 429
    assert refused.headers["content-type"].startswith("text/html")
    assert refused.headers["retry-after"] == "55"
    assert refused.headers["cache-control"] == "no-store"
    assert "more than 60 pages in a minute" in refused.text
    assert "wait 55 seconds" in refused.text
    assert client.get("/docs").status_code == 429
    moment[0] += 55
    assert client.get(f"/events/{night.slug}").status_code == 200
