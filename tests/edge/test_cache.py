"""The response cache: a public answer served again is the same answer, admitted the
same way, and never outlives a change to the catalogue; private answers are never kept.

Whether an answer came from the cache shows in the SQL it ran: served again, it
reads only the token row (with the catalogue stamp), never the catalogue tables.
"""

import asyncio
import concurrent.futures
import contextlib
import datetime as dt
import random
import re
import sqlite3
import time
from pathlib import Path
from unittest.mock import ANY

import orjson
import pytest
import redis
import zstandard
from flask import request
from sqlalchemy import delete, event, text, update

from adapters.direct import PLANNED_ONCE_RUNNER
from agenda.app import create_app
from agenda.demo import catalogue as demo_data
from edge.answers import data_of
from edge.cache import (DICTIONARY, KNOWN_URLS, PACK_LEVEL, Entry, HostEntries, Keys,
                        LocalEntries)
from edge.state import PublicAnswer
from models import importing, organisations, tokens
from models.artists import Artist
from models.events import Event, EventArtist, EventGenre
from models.organisations import Organisation
from models.venues import Venue
from models.people import Person
from models.releases import Release, ReleaseArtist
from models.stamp import CATALOGUE_TABLES
from tests import api
from tests.conftest import APP_SETTINGS
from tests.factories import (ArtistFactory, EventFactory, OrganisationFactory, PersonFactory,
                             ReleaseFactory, settled)
from tests.servers import committed, drop_database, migrated_database

EXAMPLE = Path(__file__).parents[2] / "docs" / "example-import.jsonl"


def read_catalogue(seen: list[str], table: str = "events") -> bool:
    return any(re.search(rf"\bFROM {table}\b", statement) for statement in seen)


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def test_an_answer_asked_again_is_served_without_reading_the_catalogue(app, client, auth):
    EventFactory(title="Kept Night")
    first = client.get("/v1/events?limit=5", headers=auth)
    with api.statements(app.service.engine) as seen:
        again = client.get("/v1/events?limit=5", headers=auth)
    assert again.status_code == 200
    assert not read_catalogue(seen)
    assert again.json()["data"] == first.json()["data"]
    assert again.json()["data"][0]["title"] == "Kept Night"


@contextlib.contextmanager
def framework_requests(app):
    """The paths of the requests Flask's handlers saw inside the block."""
    seen: list[str] = []

    def hook():
        seen.append(request.path)

    app.app.before_request_funcs.setdefault(None, []).append(hook)
    try:
        yield seen
    finally:
        app.app.before_request_funcs[None].remove(hook)


def test_a_miss_is_built_by_the_handler_before_the_framework_as_the_full_way_builds_it(
        app, client, auth):
    EventFactory(title="Near")
    with framework_requests(app) as seen:
        here = client.get("/v1/events?lat=52.37&lng=4.9&radius_km=200", headers=auth)
        # HEAD goes the full way (the cache answers GET): Connexion and Flask run the handler.
        full = client.head("/v1/events?lat=52.37&lng=4.9&radius_km=200", headers=auth)
    assert (here.status_code, full.status_code) == (200, 200)
    assert here.headers["x-cache"] == "miss" and "x-cache" not in full.headers
    assert seen == ["/v1/events"]
    assert [event["title"] for event in here.json()["data"]] == ["Near"]
    # The same data and meta (the ETag is over both), the same length (ids are UUIDs).
    assert here.headers["etag"] == full.headers["etag"]
    assert here.headers["content-length"] == full.headers["content-length"]


def test_a_handlers_error_before_the_framework_is_answered_the_full_way(app, client, auth):
    with framework_requests(app) as seen:
        missing = client.get("/v1/events/no-such-event", headers=auth)
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "not_found"
    assert seen == ["/v1/events/no-such-event"]


def test_an_answer_served_again_carries_the_full_paths_headers_and_its_own_request_id(
        client, auth):
    EventFactory()
    first = client.get("/v1/events", headers=auth)
    again = client.get("/v1/events", headers=auth)
    per_request = {"x-request-id", "x-ratelimit-remaining", "ratelimit", "content-length",
                   "date", "server", "x-cache"}
    assert (first.headers["x-cache"], again.headers["x-cache"]) == ("miss", "hit")
    assert ({k: v for k, v in again.headers.items() if k not in per_request}
            == {k: v for k, v in first.headers.items() if k not in per_request})
    assert again.headers["x-request-id"] != first.headers["x-request-id"]
    assert again.json()["meta"]["request_id"] == again.headers["x-request-id"]
    assert again.json()["meta"] == {**first.json()["meta"],
                                    "request_id": again.headers["x-request-id"]}
    assert int(again.headers["content-length"]) == len(again.content)
    assert (int(again.headers["x-ratelimit-remaining"])
            == int(first.headers["x-ratelimit-remaining"]) - 1)


def test_an_incoming_request_id_is_echoed_in_a_served_again_answer(client, auth):
    client.get("/v1/genres", headers=auth)
    mine = "0b0e4a4e-8a2e-4c53-9d0c-5d1e3f0a7b21"
    again = client.get("/v1/genres", headers={**auth, "X-Request-Id": mine})
    assert again.headers["x-request-id"] == mine
    assert again.json()["meta"]["request_id"] == mine


@pytest.mark.parametrize("change", ["insert", "update", "delete"])
def test_a_change_to_the_catalogue_is_visible_at_once(app, client, auth, db, change):
    kept = EventFactory(title="Before")
    first = client.get("/v1/events", headers=auth)
    if change == "insert":
        EventFactory(title="Added")
    elif change == "update":
        db.execute(update(Event).where(Event.id == kept.id).values(title="Renamed"))
    else:
        db.execute(delete(Event).where(Event.id == kept.id))
    with api.statements(app.service.engine) as seen:
        after = client.get("/v1/events", headers=auth)
    assert read_catalogue(seen)
    titles = [item["title"] for item in after.json()["data"]]
    assert {"insert": "Added" in titles, "update": "Renamed" in titles and "Before" not in titles,
            "delete": "Before" not in titles}[change]
    assert after.headers["etag"] != first.headers["etag"]


def test_a_kept_list_a_change_left_as_it_was_is_served_again_once_checked(app, client, auth,
                                                                          db):
    """On PostgreSQL (row versions; on SQLite a stale answer is built again)."""
    EventFactory(title="In Amsterdam")
    elsewhere = EventFactory(title="In Utrecht", venue__city="Utrecht")
    first = client.get("/v1/events?city=Amsterdam", headers=auth)
    db.execute(update(Event).where(Event.id == elsewhere.id).values(title="Renamed"))
    with api.statements(app.service.engine) as seen:
        again = client.get("/v1/events?city=Amsterdam", headers=auth)
    assert read_catalogue(seen)  # checked against the catalogue as it is now
    assert again.headers["etag"] == first.headers["etag"]
    assert again.json()["data"] == first.json()["data"]
    utrecht = client.get("/v1/events?city=Utrecht", headers=auth).json()["data"]
    assert [event["title"] for event in utrecht] == ["Renamed"]
    if db.bind.dialect.name != "postgresql":
        assert again.headers["x-cache"] == "miss"
        return
    assert again.headers["x-cache"] == "revalidated"
    assert again.json()["meta"]["request_id"] != first.json()["meta"]["request_id"]
    with api.statements(app.service.engine) as seen:
        assert client.get("/v1/events?city=Amsterdam", headers=auth).headers["x-cache"] == "hit"
    assert not read_catalogue(seen)  # renewed under the new stamp


def _listed_changes(db, listed) -> dict:
    return {
        "its title": lambda: db.execute(
            update(Event).where(Event.id == listed.id).values(title="Renamed")),
        "deleted": lambda: db.execute(delete(Event).where(Event.id == listed.id)),
        "another event on the page": lambda: EventFactory(title="Added", venue=listed.venue,
                                                           start="20:00"),
        "its venue renamed": lambda: db.execute(
            update(Venue).where(Venue.id == listed.venue_id).values(name="Renamed Venue")),
        "its organisation renamed": lambda: db.execute(update(Organisation).where(
            Organisation.id == listed.organisation_id).values(name="Renamed Organisation")),
        "its organisation suspended": lambda: db.execute(update(Organisation).where(
            Organisation.id == listed.organisation_id).values(suspended=True)),
    }


@pytest.mark.parametrize("change", ["its title", "deleted", "another event on the page",
                                    "its venue renamed", "its organisation renamed",
                                    "its organisation suspended"])
def test_a_change_to_what_a_kept_list_shows_builds_it_again_at_once(app, client, auth, db,
                                                                    change):
    """On PostgreSQL too, where a list the change left as it was is served again: a change
    to a listed event, its venue or its organisation, or one that adds or takes an event
    from the page, is in the very next answer."""
    listed = EventFactory(title="Listed")
    first = client.get("/v1/events?city=Amsterdam", headers=auth)
    assert [event["title"] for event in first.json()["data"]] == ["Listed"]
    _listed_changes(db, listed)[change]()
    after = client.get("/v1/events?city=Amsterdam", headers=auth)
    assert after.headers["x-cache"] == "miss"
    shown = [(event["title"], event["venue"]["name"], event["organisation"]["name"])
             for event in after.json()["data"]]
    assert shown == {
        "its title": [("Renamed", listed.venue.name, listed.organisation.name)],
        "deleted": [],
        "another event on the page": [("Added", listed.venue.name, ANY),
                                      ("Listed", listed.venue.name, listed.organisation.name)],
        "its venue renamed": [("Listed", "Renamed Venue", listed.organisation.name)],
        "its organisation renamed": [("Listed", listed.venue.name, "Renamed Organisation")],
        "its organisation suspended": [],
    }[change]


def test_a_kept_list_with_facets_is_built_again_after_any_change(app, client, auth, db):
    """Its counts are of the whole list: a change off its page may change them."""
    EventFactory(title="First", start="20:00")
    later = EventFactory(title="Later", start="23:00")
    faceted = "/v1/events?city=Amsterdam&limit=1&facets=date"
    before = client.get(faceted, headers=auth).json()["meta"]["facets"]["date"]
    db.execute(update(Event).where(Event.id == later.id).values(
        date=later.date + dt.timedelta(days=1), last_date=later.date + dt.timedelta(days=1)))
    after = client.get(faceted, headers=auth)
    assert after.headers["x-cache"] == "miss"
    assert after.json()["data"][0]["title"] == "First"
    assert after.json()["meta"]["facets"]["date"] != before


def test_a_kept_detail_a_change_left_as_it_was_is_served_again_once_checked(app, client,
                                                                            auth, db):
    """On PostgreSQL an event's detail is kept with its basis too (its row's and its acts'
    versions); on SQLite a stale one is built again."""
    shown = EventFactory(title="Shown", acts=[ArtistFactory(name="Ida")])
    elsewhere = EventFactory(title="Elsewhere", acts=[ArtistFactory(name="Jan")])
    first = client.get(f"/v1/events/{shown.slug}", headers=auth)
    db.execute(update(Event).where(Event.id == elsewhere.id).values(title="Renamed"))
    db.execute(update(EventArtist).where(EventArtist.event_id == elsewhere.id)
               .values(name="Jan Renamed"))
    with api.statements(app.service.engine) as seen:
        again = client.get(f"/v1/events/{shown.slug}", headers=auth)
    assert read_catalogue(seen)  # checked against the catalogue as it is now
    assert again.headers["etag"] == first.headers["etag"]
    assert again.json()["data"] == first.json()["data"]
    assert client.get(f"/v1/events/{elsewhere.id}", headers=auth).json()["data"]["lineup"][0][
        "name"] == "Jan Renamed"
    if db.bind.dialect.name != "postgresql":
        assert again.headers["x-cache"] == "miss"
        return
    assert again.headers["x-cache"] == "revalidated"
    with api.statements(app.service.engine) as seen:
        assert client.get(f"/v1/events/{shown.slug}", headers=auth).headers["x-cache"] == "hit"
    assert not read_catalogue(seen)  # renewed under the new stamp


def _detail_changes(db, shown) -> dict:
    """The changes to a listed event (`_listed_changes`) that its detail shows too, and
    those to its bill and its genres."""
    acts = update(EventArtist).where(EventArtist.event_id == shown.id)
    changes = _listed_changes(db, shown)
    del changes["another event on the page"]
    return changes | {
        "an act's billed name": lambda: db.execute(
            acts.where(EventArtist.position == 1).values(name="Sim")),
        "its bill reordered": lambda: db.execute(acts.values(position=1 - EventArtist.position)),
        "an act added": lambda: db.add(EventArtist(
            event_id=shown.id, artist_id=ArtistFactory(name="Noa").id, name="Noa",
            position=2, date=shown.date)),
        "an act removed": lambda: db.execute(delete(EventArtist).where(
            EventArtist.event_id == shown.id, EventArtist.position == 1)),
        "its genres": lambda: db.execute(update(EventGenre).where(
            EventGenre.event_id == shown.id).values(genre="Disco")),
    }


@pytest.mark.parametrize("change", ["its title", "an act's billed name", "its bill reordered",
                                    "an act added", "an act removed", "its genres",
                                    "its venue renamed", "its organisation renamed",
                                    "its organisation suspended", "deleted"])
def test_a_change_to_what_a_kept_detail_shows_is_in_the_next_answer(app, client, auth, db,
                                                                    change):
    """On PostgreSQL too, where a detail the change left as it was is served again: a change
    to the event, its bill, its genres, its venue or its organisation is in the very next
    answer, by id and by slug."""
    shown = EventFactory(title="Shown", acts=[ArtistFactory(name="Ida"),
                                              ArtistFactory(name="Jan")])
    for key in (shown.id, shown.slug):
        assert client.get(f"/v1/events/{key}", headers=auth).status_code == 200
    _detail_changes(db, shown)[change]()
    db.flush()
    for key in (shown.id, shown.slug):
        after = client.get(f"/v1/events/{key}", headers=auth)
        if change in ("its organisation suspended", "deleted"):
            assert after.status_code == 404
            continue
        assert after.headers["x-cache"] == "miss"
        data = after.json()["data"]
        assert (data["title"], [(act["name"], act["order"]) for act in data["lineup"]],
                data["genres"], data["venue"]["name"], data["organisation"]["name"]) == {
            "its title": ("Renamed", [("Ida", 0), ("Jan", 1)], ["Techno"], shown.venue.name,
                          shown.organisation.name),
            "an act's billed name": ("Shown", [("Ida", 0), ("Sim", 1)], ["Techno"],
                                     shown.venue.name, shown.organisation.name),
            "its bill reordered": ("Shown", [("Jan", 0), ("Ida", 1)], ["Techno"],
                                   shown.venue.name, shown.organisation.name),
            "an act added": ("Shown", [("Ida", 0), ("Jan", 1), ("Noa", 2)], ["Techno"],
                             shown.venue.name, shown.organisation.name),
            "an act removed": ("Shown", [("Ida", 0)], ["Techno"], shown.venue.name,
                               shown.organisation.name),
            "its genres": ("Shown", [("Ida", 0), ("Jan", 1)], ["Disco"], shown.venue.name,
                           shown.organisation.name),
            "its venue renamed": ("Shown", [("Ida", 0), ("Jan", 1)], ["Techno"],
                                  "Renamed Venue", shown.organisation.name),
            "its organisation renamed": ("Shown", [("Ida", 0), ("Jan", 1)], ["Techno"],
                                         shown.venue.name, "Renamed Organisation"),
        }[change]


def test_a_kept_venue_a_change_left_as_it_was_is_served_again_once_checked(app, client,
                                                                           auth, db):
    """On PostgreSQL a venue's profile is kept with its basis (its row's version and the
    number of its upcoming events); on SQLite a stale one is built again."""
    shown = EventFactory(title="At the venue").venue
    elsewhere = EventFactory(title="Elsewhere")
    _served_again_once_checked(client, auth, db, f"/v1/venues/{shown.id}", lambda: (
        db.execute(update(Event).where(Event.id == elsewhere.id).values(title="Renamed")),
        db.execute(update(Venue).where(Venue.id == elsewhere.venue_id).values(name="Renamed"))))


def _served_again_once_checked(client, auth, db, path: str, change) -> None:
    """`path`'s answer, kept, then asked again after `change` (which leaves it as it was):
    the same answer, checked and served again on PostgreSQL, built again on SQLite."""
    first = client.get(path, headers=auth)
    change()
    again = client.get(path, headers=auth)
    assert again.headers["etag"] == first.headers["etag"]
    assert again.json()["data"] == first.json()["data"]
    assert again.headers["x-cache"] == (
        "revalidated" if db.bind.dialect.name == "postgresql" else "miss")


@pytest.mark.parametrize("change", ["its name", "an event added", "its event deleted",
                                    "its event moved to the past",
                                    "its event's organisation suspended", "deleted"])
def test_a_change_to_what_a_kept_venue_shows_is_in_the_next_answer(app, client, auth, db,
                                                                   change):
    """On PostgreSQL too: a change to the venue or to the number of its upcoming events
    (an event added, deleted, gone by, hidden by its organisation's suspension) is in the
    very next answer."""
    event = EventFactory(title="At the venue")
    venue = event.venue
    assert client.get(f"/v1/venues/{venue.id}", headers=auth).json()["data"][
        "upcoming_events"] == 1
    {"its name": lambda: db.execute(
        update(Venue).where(Venue.id == venue.id).values(name="Renamed Venue")),
     "an event added": lambda: EventFactory(venue=venue),
     "its event deleted": lambda: db.execute(delete(Event).where(Event.id == event.id)),
     "its event moved to the past": lambda: db.execute(update(Event).where(
         Event.id == event.id).values(date=dt.date(2020, 1, 1), last_date=dt.date(2020, 1, 1))),
     "its event's organisation suspended": lambda: db.execute(update(Organisation).where(
         Organisation.id == event.organisation_id).values(suspended=True)),
     "deleted": lambda: (db.execute(delete(Event).where(Event.id == event.id)),
                         db.execute(delete(Venue).where(Venue.id == venue.id))),
     }[change]()
    after = client.get(f"/v1/venues/{venue.id}", headers=auth)
    if change == "deleted":
        assert after.status_code == 404
        return
    assert after.headers["x-cache"] == "miss"
    data = after.json()["data"]
    assert (data["name"], data["upcoming_events"]) == {
        "its name": ("Renamed Venue", 1), "an event added": (venue.name, 2),
        "its event deleted": (venue.name, 0), "its event moved to the past": (venue.name, 0),
        "its event's organisation suspended": (venue.name, 0)}[change]


def test_a_kept_artist_a_change_left_as_it_was_is_served_again_once_checked(app, client,
                                                                            auth, db):
    """On PostgreSQL an artist's profile is kept with its basis (its row's version, its
    releases' and its next dates' page's); on SQLite a stale one is built again."""
    shown, other = ArtistFactory(name="Ida"), ArtistFactory(name="Jan")
    ReleaseFactory(title="Ida's", credits=[shown])
    EventFactory(title="With Ida", acts=[shown])
    elsewhere = EventFactory(title="With Jan", acts=[other])
    ReleaseFactory(title="Jan's", credits=[other])
    _served_again_once_checked(client, auth, db, f"/v1/artists/{shown.id}", lambda: (
        db.execute(update(Event).where(Event.id == elsewhere.id).values(title="Renamed")),
        db.execute(update(Artist).where(Artist.id == other.id).values(bio="Renamed"))))


@pytest.mark.parametrize("change", ["its bio", "a release's title", "a release added",
                                    "a credit removed", "its event's title",
                                    "an event added", "its event's venue renamed",
                                    "its event's organisation suspended", "deleted"])
def test_a_change_to_what_a_kept_artist_shows_is_in_the_next_answer(app, client, auth, db,
                                                                    change):
    """On PostgreSQL too: a change to the artist, its releases or its next dates is in the
    very next answer."""
    artist = ArtistFactory(name="Ida", bio="Before")
    release = ReleaseFactory(title="First", credits=[artist])
    event = EventFactory(title="With Ida", acts=[artist])
    assert client.get(f"/v1/artists/{artist.id}", headers=auth).status_code == 200
    {"its bio": lambda: db.execute(
        update(Artist).where(Artist.id == artist.id).values(bio="After")),
     "a release's title": lambda: db.execute(
        update(Release).where(Release.id == release.id).values(title="Renamed")),
     "a release added": lambda: ReleaseFactory(
        title="Second", credits=[artist], release_date=api.day(0)),
     "a credit removed": lambda: db.execute(delete(ReleaseArtist).where(
         ReleaseArtist.release_id == release.id)),
     "its event's title": lambda: db.execute(
        update(Event).where(Event.id == event.id).values(title="Renamed")),
     "an event added": lambda: EventFactory(title="Again", acts=[artist], start="20:00"),
     "its event's venue renamed": lambda: db.execute(
        update(Venue).where(Venue.id == event.venue_id).values(name="Renamed Venue")),
     "its event's organisation suspended": lambda: db.execute(update(Organisation).where(
         Organisation.id == event.organisation_id).values(suspended=True)),
     "deleted": lambda: (db.execute(delete(Event).where(Event.id == event.id)),
                         db.execute(delete(ReleaseArtist).where(
                             ReleaseArtist.artist_id == artist.id)),
                         db.execute(delete(Artist).where(Artist.id == artist.id))),
     }[change]()
    after = client.get(f"/v1/artists/{artist.id}", headers=auth)
    if change == "deleted":
        assert after.status_code == 404
        return
    assert after.headers["x-cache"] == "miss"
    data = after.json()["data"]
    shown = (data["bio"], [release["title"] for release in data["releases"]],
             [(event["title"], event["venue"]["name"]) for event in data["upcoming_events"]])
    venue = event.venue.name
    assert shown == {
        "its bio": ("After", ["First"], [("With Ida", venue)]),
        "a release's title": ("Before", ["Renamed"], [("With Ida", venue)]),
        "a release added": ("Before", ["Second", "First"], [("With Ida", venue)]),
        "a credit removed": ("Before", [], [("With Ida", venue)]),
        "its event's title": ("Before", ["First"], [("Renamed", venue)]),
        "an event added": ("Before", ["First"], [("Again", ANY), ("With Ida", venue)]),
        "its event's venue renamed": ("Before", ["First"], [("With Ida", "Renamed Venue")]),
        "its event's organisation suspended": ("Before", ["First"], []),
    }[change]


def test_an_import_is_visible_at_once(client, auth, db):
    before = client.get("/v1/venues?limit=100", headers=auth).json()["data"]
    importing.import_lines(db, lines=EXAMPLE.read_text().splitlines())
    after = client.get("/v1/venues?limit=100", headers=auth).json()["data"]
    assert len(after) == len(before) + 3


def test_a_profile_made_private_leaves_the_public_badges_at_once(client, auth, db):
    person = PersonFactory(handle="fenna", visibility="public")
    assert client.get("/v1/users/fenna/badges", headers=auth).status_code == 200
    db.execute(update(Person).where(Person.id == person.id).values(visibility="private"))
    assert client.get("/v1/users/fenna/badges", headers=auth).status_code == 404


def test_etags_stay_the_same_while_nothing_changes(client, auth):
    EventFactory()
    tags = {client.get("/v1/events", headers=auth).headers["etag"] for _ in range(3)}
    assert len(tags) == 1


def test_a_matching_if_none_match_is_a_304_like_the_full_paths_and_costs_no_daily_quota(
        client, make_token):
    token = make_token("read", per_day=10)
    EventFactory()
    first = client.get("/v1/events?limit=3", headers=bearer(token))
    tag = first.headers["etag"]
    # A fresh URL: the full path answers the revalidation (and keeps nothing).
    full = client.get("/v1/events?limit=4", headers={**bearer(token), "If-None-Match": "x"})
    full_304 = client.get("/v1/events?limit=4",
                          headers={**bearer(token), "If-None-Match": full.headers["etag"]})
    served = client.get("/v1/events?limit=3", headers={**bearer(token), "If-None-Match": tag})
    assert (full_304.status_code, served.status_code) == (304, 304)
    assert served.content == b""
    assert served.headers["etag"] == tag
    assert set(served.headers) == set(full_304.headers)
    for name in ("cache-control", "vary"):
        assert served.headers[name] == full_304.headers[name]
    me = client.get("/v1/me", headers=bearer(token)).json()["data"]
    # Counted today: the two 200s of /v1/events?limit=3|4 and this GET /me; the 304s not.
    assert me["rate_limit"]["used_today"] == 3


def test_every_token_is_counted_and_limited_on_a_served_again_answer(client, make_token):
    client.get("/v1/genres", headers=bearer(make_token("read")))
    token = make_token("read", per_day=2)
    answers = [client.get("/v1/genres", headers=bearer(token)) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert answers[1].headers["x-ratelimit-remaining"] == str(
        int(answers[0].headers["x-ratelimit-remaining"]) - 1)
    refused = answers[2]
    assert refused.json()["error"]["code"] == "rate_limited"
    assert "retry-after" in refused.headers
    assert refused.json()["meta"]["request_id"] == refused.headers["x-request-id"]


def test_a_revoked_token_is_refused_although_the_answer_is_kept(client, db, make_token):
    keeper, token = make_token("read"), make_token("read")
    client.get("/v1/genres", headers=bearer(keeper))
    assert client.get("/v1/genres", headers=bearer(token)).status_code == 200
    tokens.revoke_token(db, token[:len(tokens.LIVE_PREFIX) + tokens.VISIBLE_CHARS])
    refused = client.get("/v1/genres", headers=bearer(token))
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "unauthorized"
    assert client.get("/v1/genres", headers={"Authorization": "Bearer svc_live_guess"}
                      ).status_code == 401


def test_a_token_without_the_scope_or_of_a_suspended_organisation_is_refused(client, make_token):
    client.get("/v1/genres", headers=bearer(make_token("read")))
    scan_only = client.get("/v1/genres", headers=bearer(make_token("scan")))
    assert scan_only.status_code == 403
    assert "insufficient_scope" in scan_only.headers["www-authenticate"]
    suspended = OrganisationFactory(suspended=True, ticket_shop_url="https://shop.example")
    refused = client.get("/v1/genres", headers=bearer(make_token("read", organisation=suspended)))
    assert refused.status_code == 403


def test_private_answers_are_never_kept_or_served_to_another_token(app, client, make_token):
    first, second = make_token("read"), make_token("read")
    mine = client.get("/v1/me", headers=bearer(first)).json()["data"]
    theirs = client.get("/v1/me", headers=bearer(second)).json()["data"]
    assert mine["token"]["prefix"] != theirs["token"]["prefix"]
    assert client.get("/v1/me", headers=bearer(first)).headers["cache-control"] == \
        "private, no-store"
    # A public answer beside them is kept (whatever other tests left in the cache).
    assert client.get("/v1/genres", headers=bearer(first)).status_code == 200
    kept = app.service.cache.local.keys()
    assert Keys.of("/v1/genres", {"limit": 25}) in kept
    assert not any(key.lstrip("=").startswith("/v1/me") for key in kept)


def test_an_answer_of_another_hour_is_not_served(app, client, auth, monkeypatch):
    EventFactory()
    moment = 1_790_000_000.0
    monkeypatch.setattr(app.service.usage, "clock", lambda: moment)
    client.get("/v1/events", headers=auth)
    monkeypatch.setattr(app.service.usage, "clock", lambda: moment + 3600)
    with api.statements(app.service.engine) as seen:
        later = client.get("/v1/events", headers=auth)
    assert read_catalogue(seen)
    assert later.headers["x-cache"] == "miss"  # built again, not checked: its cursor's hour


def test_urls_asking_for_the_same_arguments_share_one_kept_answer(app, client, auth):
    EventFactory(title="Spelled", venue__city="Amsterdam")
    first = client.get("/v1/events?city=Amsterdam&limit=5", headers=auth)
    assert first.headers["x-cache"] == "miss"
    # Parameters in another order, a number or a letter written another way: the same
    # arguments of the handler, so the same answer, served from what was kept.
    for spelled in ("/v1/events?limit=5&city=Amsterdam", "/v1/events?city=Am%73terdam&limit=05"):
        with api.statements(app.service.engine) as seen:
            again = client.get(spelled, headers=auth)
        assert again.headers["x-cache"] == "hit" and not read_catalogue(seen)
        assert (again.headers["etag"], again.json()["data"]) == (first.headers["etag"],
                                                                 first.json()["data"])
    # The default written out or left out.
    assert client.get("/v1/events?city=Amsterdam", headers=auth).headers["x-cache"] == "miss"
    assert client.get("/v1/events?limit=25&city=Amsterdam",
                      headers=auth).headers["x-cache"] == "hit"
    # Other values are other answers.
    other = client.get("/v1/events?city=Rotterdam&limit=5", headers=auth)
    assert other.headers["x-cache"] == "miss" and other.json()["data"] == []


def test_a_url_the_reader_does_not_read_is_kept_under_itself(app, client, auth):
    EventFactory()
    # A boolean written `True` is not read before the framework (edge/arguments.py):
    # Connexion answers it, and the answer is kept under the URL as written.
    url = "/v1/events?has_tickets=True"
    with framework_requests(app) as seen:
        first = client.get(url, headers=auth)
        again = client.get(url, headers=auth)
    assert (first.status_code, again.status_code) == (200, 200)
    assert (first.headers["x-cache"], again.headers["x-cache"]) == ("miss", "hit")
    assert seen == ["/v1/events"]
    assert client.get("/v1/events?has_tickets=true", headers=auth).headers["x-cache"] == "miss"


def test_a_process_remembers_the_keys_of_the_urls_asked_most_recently():
    keys = Keys(size=2)
    for url in ("/a", "/b"):
        keys.put(url, "=" + url)
    assert keys.get("/a") == "=/a"  # /a is now the most recently asked
    keys.put("/c", "=/c")
    assert [keys.get(url) for url in ("/a", "/b", "/c")] == ["=/a", None, "=/c"]
    assert KNOWN_URLS >= 5_000  # a long tail's URLs, each read once
    assert Keys.of("/v1/events", {"limit": 5, "city": "A"}) == Keys.of(
        "/v1/events", {"city": "A", "limit": 5}) != Keys.of("/v1/events", {"limit": 5})


def test_bad_requests_are_answered_the_full_way(client, auth):
    assert client.get("/v1/events?limit=0", headers=auth).status_code == 400
    assert client.get("/v1/events?limit=0", headers=auth).status_code == 400
    assert client.get("/v1/events?cursor=nonsense", headers=auth).status_code == 400


def test_every_catalogue_table_renews_the_stamp(db):
    if db.get_bind().dialect.name == "postgresql":
        rows = db.execute(text(
            "SELECT c.relname, count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "WHERE t.tgname LIKE 'catalogue_%' GROUP BY c.relname")).all()
        assert dict(rows) == {**{table: 4 for table in CATALOGUE_TABLES},
                              "catalogue_pending": 1}
    else:
        rows = db.execute(text(
            "SELECT tbl_name, count(*) FROM sqlite_master WHERE type = 'trigger' "
            "AND name LIKE 'catalogue_%' GROUP BY tbl_name")).all()
        assert dict(rows) == {table: 3 for table in CATALOGUE_TABLES}


def test_a_statement_that_changes_nothing_keeps_the_stamp(db):
    def stamp_as_if_committed() -> str:
        settled(db)  # renewed at commit: run that now
        return db.execute(text("SELECT stamp FROM catalogue_stamp")).scalar_one()

    stamp = stamp_as_if_committed()
    db.execute(update(Event).where(Event.id == "evt_none").values(title="x"))
    assert stamp_as_if_committed() == stamp
    EventFactory(date=api.day(0))
    assert stamp_as_if_committed() != stamp


def kept(data: bytes, basis: bytes | None = None) -> Entry:
    return Entry("s", 1, PublicAnswer(data, b'{"next_cursor":null}', 'W/"t"', basis))


def test_the_cache_of_a_process_keeps_within_its_bytes_dropping_the_least_used():
    rng = random.Random(1)  # bytes that do not compress: each one's size is what it costs
    local = LocalEntries(max_bytes=5_200)  # room for three of them
    for url in ("/a", "/b", "/c"):
        local.put(url, kept(rng.randbytes(900)))
    assert local.get("/a") is not None  # /a is now the most recently used
    local.put("/d", kept(rng.randbytes(900)))
    assert [url for url in ("/a", "/b", "/c", "/d") if local.get(url)] == ["/a", "/c", "/d"]
    assert local.size <= 5_200
    local.put("/huge", kept(rng.randbytes(5_000)))
    assert local.get("/huge") is None
    local.put("/a", kept(rng.randbytes(5_000)))  # a new answer too big: not the old one either
    assert local.get("/a") is None


def page(rng: random.Random) -> bytes:
    """A list's data: items alike, their values not."""
    return orjson.dumps([{"id": f"evt_{rng.getrandbits(48):012x}",
                          "title": f"Night {rng.randint(1, 10**6)}",
                          "date": f"2026-12-{rng.randint(10, 28)}",
                          "venue": {"name": rng.choice(["Paradiso", "Melkweg", "Ancienne"]),
                                    "city": rng.choice(["Amsterdam", "Brussel"])},
                          "genres": rng.sample(["Techno", "House", "Disco", "Jazz"], 2)}
                         for _ in range(100)])


def test_the_cache_of_a_process_keeps_answers_compressed_and_serves_each_as_built():
    rng = random.Random(1)
    pages = {f"/{number}": page(rng) for number in range(110)}  # ~14 KB each
    local = LocalEntries(max_bytes=480_000)  # whole, room for one of them
    assert sum(map(len, pages.values())) > 3 * local.packed.bound
    for url, data in pages.items():
        local.put(url, kept(data))
    assert local.size <= 480_000
    for url, data in pages.items():  # every one, though whole they take 3 times the room
        entry = local.get(url)
        assert (entry.answer.data, entry.answer.meta, entry.answer.etag) == (
            data, b'{"next_cursor":null}', 'W/"t"')
    assert local.get("/109") is local.get("/109")  # served again as it is, not decompressed


@pytest.mark.parametrize("basis", [None, bytes(range(16))])
def test_an_answer_shared_through_redis_is_compressed_and_comes_back_as_built(basis):
    data = page(random.Random(2))
    shared = kept(data, basis).pack()
    assert len(shared) < len(data) / 3
    back = Entry.unpack(shared)
    assert (back.stamp, back.hour, back.answer) == ("s", 1, PublicAnswer(
        data, b'{"next_cursor":null}', 'W/"t"', basis))


def test_a_kept_answer_is_compressed_with_the_dictionary_smaller_than_without_it(
        client, auth, db):
    demo_data.add_demo_data(db, events=300, seed=5)  # not the agenda it was trained on
    data = data_of(client.get("/v1/events?limit=50", headers=auth).content)
    packed = kept(data).packed().data
    assert zstandard.get_frame_parameters(packed).dict_id == DICTIONARY.dict_id()
    plain = zstandard.ZstdCompressor(level=PACK_LEVEL).compress(data)
    assert len(packed) < 0.9 * len(plain)
    assert Entry.unpack(kept(data).pack()).answer.data == data


# Each case a URL of its own (`limit`): the tests of other processes share the Redis.
@pytest.mark.parametrize(("written", "limit"), [
    ("garbage", 41), ("cut short", 42), ("another dictionary's", 43)])
def test_an_answer_in_redis_that_cannot_be_read_is_built_again_and_replaced(
        catalogue_committed, redis_url, written, limit, caplog):
    url, token = catalogue_committed
    settings = {"database_url": url, **APP_SETTINGS, "ratelimit_storage": redis_url}
    workers = [create_app(settings), create_app(settings)]
    page = f"/v1/venues?limit={limit}"
    store = redis.Redis.from_url(redis_url)
    try:
        with workers[0].test_client() as first, workers[1].test_client() as second:
            key = workers[0].service.cache.shared.key(Keys.of("/v1/venues", {"limit": limit}))
            store.delete(key)
            built = first.get(page, headers=bearer(token))
            shared = store.get(key)
            # The entry as written, its data compressed with the same dictionary under
            # another id (as another release's would be).
            head = shared[:-len(Entry.unpack(shared).packed().data)]
            mine = DICTIONARY.as_bytes()
            other = zstandard.ZstdCompressionDict(
                mine[:4] + (DICTIONARY.dict_id() + 1).to_bytes(4, "little") + mine[8:])
            store.set(key, {
                "garbage": b"\x00garbage",
                "cut short": shared[:len(shared) // 2],
                "another dictionary's": head + zstandard.ZstdCompressor(
                    dict_data=other).compress(data_of(built.content)),
            }[written])
            again = second.get(page, headers=bearer(token))
            replaced = Entry.unpack(store.get(key))
    finally:
        for worker in workers:
            worker.service.close()
    assert again.status_code == 200
    assert again.headers["x-cache"] == "miss"
    assert again.json()["data"] == built.json()["data"]
    assert replaced.answer.data == data_of(built.content)
    assert "could not be read" in caplog.text


def in_host_file(path: Path, key: str, *, seconds: float = 10) -> bool:
    """Whether an entry is in the host's file under `key` (`Shared.key`: its writer writes a
    moment after the answer is kept), waiting up to `seconds` for it."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with (contextlib.closing(sqlite3.connect(path)) as file,
              contextlib.suppress(sqlite3.OperationalError)):  # no table yet
            if file.execute("SELECT 1 FROM answers WHERE key = ?", (key,)).fetchone():
                return True
        time.sleep(0.02)
    return False


def test_an_answer_one_worker_built_is_served_by_another_from_the_hosts_file(
        catalogue_committed, tmp_path):
    url, token = catalogue_committed
    file = tmp_path / "answers.sqlite3"
    settings = {"database_url": url, **APP_SETTINGS, "host_cache_path": str(file)}
    workers = [create_app(settings), create_app(settings)]
    try:
        with workers[0].test_client() as first, workers[1].test_client() as second:
            built = first.get("/v1/venues?limit=7", headers=bearer(token))
            assert in_host_file(file, workers[0].service.cache.shared.key(
                Keys.of("/v1/venues", {"limit": 7})))
            with catalogue_reads(workers[1].service) as reads:
                # Another spelling of the same arguments: the same entry.
                served = second.get("/v1/venues?limit=0007", headers=bearer(token))
            with committed(url) as session:
                session.execute(text("UPDATE venues SET name = 'Renamed By SQL' "
                                     "WHERE id = 'hangar-noord'"))
            renamed = [worker.get("/v1/venues?limit=7", headers=bearer(token))
                       for worker in (second, first)]
    finally:
        for worker in workers:
            worker.service.close()
    assert (built.headers["x-cache"], served.headers["x-cache"]) == ("miss", "hit")
    assert reads == []
    assert served.json()["data"] == built.json()["data"]
    assert served.json()["meta"]["request_id"] != built.json()["meta"]["request_id"]
    assert "Hangar Noord" in {venue["name"] for venue in built.json()["data"]}
    for answer in renamed:  # the stamp moved: neither worker serves the kept answer
        assert {"Renamed By SQL"} <= {venue["name"] for venue in answer.json()["data"]}
        assert "Hangar Noord" not in {venue["name"] for venue in answer.json()["data"]}


@pytest.mark.parametrize("other", ["secret_key", "site_url"])
def test_a_server_with_another_key_or_site_is_not_served_anothers_answers(
        catalogue_committed, tmp_path, other):
    """Its cursors are signed with its key, its links point to its site: what a server
    configured otherwise kept in the same store is not its answer."""
    url, token = catalogue_committed
    file = tmp_path / "answers.sqlite3"
    settings = {"database_url": url, **APP_SETTINGS, "host_cache_path": str(file)}
    workers = [create_app(settings),
               create_app({**settings, other: "http://elsewhere.example"})]
    try:
        with workers[0].test_client() as first, workers[1].test_client() as second:
            built = first.get("/v1/events?limit=1", headers=bearer(token))
            assert in_host_file(file, workers[0].service.cache.shared.key(
                Keys.of("/v1/events", {"limit": 1})))
            own = second.get("/v1/events?limit=1", headers=bearer(token))
    finally:
        for worker in workers:
            worker.service.close()
    assert (built.headers["x-cache"], own.headers["x-cache"]) == ("miss", "miss")
    cursors = (built.json()["meta"]["next_cursor"], own.json()["meta"]["next_cursor"])
    links = (built.json()["data"][0]["url"], own.json()["data"][0]["url"])
    assert (cursors[0] != cursors[1]) if other == "secret_key" else (links[0] != links[1])


def test_the_hosts_file_keeps_within_its_bytes_dropping_the_oldest(tmp_path):
    rng = random.Random(3)  # bytes that do not compress: each entry takes ~3 KB
    host = HostEntries(str(tmp_path / "answers.sqlite3"), max_bytes=256 * 1024)
    data = {f"/{number}": rng.randbytes(3_000) for number in range(300)}  # 3.5 times as much

    async def kept_all() -> dict[str, Entry | None]:
        for name, value in data.items():
            await host.put(name, kept(value))
        deadline = time.monotonic() + 10
        while await host.get("/299") is None and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.02)  # the writer's thread: nothing to wait on here
        return {name: await host.get(name) for name in data}

    try:
        found = asyncio.run(kept_all())
    finally:
        host.close()
    with contextlib.closing(sqlite3.connect(tmp_path / "answers.sqlite3")) as file:
        pages = file.execute("PRAGMA page_count").fetchone()[0]
    assert pages <= host.max_pages == 64
    newest = [name for name in list(data)[-40:] if found[name] is not None]
    assert newest == list(data)[-40:]
    assert all(found[name].answer.data == data[name] for name in newest)
    assert found["/0"] is None
    assert 40 <= sum(entry is not None for entry in found.values()) < 100


def test_entries_for_a_hosts_file_that_cannot_be_written_wait_within_a_bound(
        tmp_path, monkeypatch):
    monkeypatch.setattr(HostEntries, "QUEUED", 10)
    path = tmp_path / "answers.sqlite3"
    host = HostEntries(str(path), max_bytes=1024 * 1024)
    rng = random.Random(4)

    async def put(names) -> None:
        for name in names:
            await host.put(name, kept(rng.randbytes(100)))

    try:
        asyncio.run(put(["/first"]))
        assert in_host_file(path, host.key("/first"))
        with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as other:
            other.execute("BEGIN EXCLUSIVE")  # another process holds the file
            asyncio.run(put(["/held"]))
            time.sleep(0.3)  # the writer has taken it, and waits for the file
            asyncio.run(put([f"/{number}" for number in range(40)]))
            waiting = host._writes.qsize()
            other.execute("ROLLBACK")
        assert in_host_file(path, host.key("/9"))  # what waited is written once the file is free
    finally:
        host.close()
    with contextlib.closing(sqlite3.connect(path)) as file:
        written = {row[0] for row in file.execute("SELECT key FROM answers")}
    assert waiting == 10
    assert written == {host.key(name)
                       for name in ["/first", "/held", *(f"/{n}" for n in range(10))]}


def test_a_hosts_file_that_cannot_be_read_costs_only_sharing(catalogue_committed, tmp_path,
                                                             caplog):
    url, token = catalogue_committed
    file = tmp_path / "answers.sqlite3"
    file.write_bytes(b"not a database" * 1000)
    app = create_app({"database_url": url, **APP_SETTINGS, "host_cache_path": str(file)})
    try:
        with app.test_client() as client:
            answers = [client.get("/v1/venues?limit=9", headers=bearer(token))
                       for _ in range(3)]
    finally:
        app.service.close()
    assert [answer.status_code for answer in answers] == [200] * 3
    assert [answer.headers["x-cache"] for answer in answers] == ["miss", "hit", "hit"]
    assert "not shared" in caplog.text


def test_a_header_out_of_the_documents_bounds_is_refused_although_the_answer_is_kept(
        client, auth):
    assert client.get("/v1/genres", headers=auth).status_code == 200
    refused = client.get("/v1/genres", headers={**auth, "If-None-Match": "0" * 1025})
    assert refused.status_code == 400
    assert client.get("/v1/genres", headers={**auth, "If-None-Match": "0" * 1024}
                      ).status_code == 200


@pytest.fixture
def catalogue_committed(worker_id):
    """A database of this test's own with the example import and a read token, committed
    (requests at once need connections of their own, not the test's transaction)."""
    url = migrated_database(f"{worker_id}_flight")
    with committed(url) as session, EXAMPLE.open(encoding="utf-8") as lines:
        importing.import_lines(session, lines=lines, source="example")
        owner = organisations.create_organisation(session, name="Flight")
        token = tokens.create_token(session, organisation=owner, name="flight",
                                    scopes=["read"])[1]
    yield url, token
    drop_database(url)


@contextlib.contextmanager
def catalogue_reads(service):
    """The statements reading the catalogue inside the block: those of the service's engine
    that name a catalogue table, and on PostgreSQL the public answers' statements planned
    once, each run by the reads' runner on a connection of `catalogue_engine`
    (adapters/direct.py `PLANNED_ONCE_RUNNER`)."""
    seen: list[str] = []
    runners = service.reads.kw.get("info") or {}
    runner = runners.get(PLANNED_ONCE_RUNNER)

    def planned_once(statement, params):
        seen.append("planned once")
        return runner(statement, params)

    if runner is not None:
        service.reads.configure(info={PLANNED_ONCE_RUNNER: planned_once})
    try:
        with api.statements(service.engine) as statements:
            yield seen
        seen += [statement for statement in statements if read_catalogue([statement])]
    finally:
        if runner is not None:
            service.reads.configure(info=runners)


def test_a_list_built_on_postgresql_plans_once_on_its_own_connections(catalogue_committed):
    """A public list's statements planned once run on connections that plan every prepared
    statement once: no session's connection opened for the answer, no plan mode set and
    reset around each statement (a miss of the long tail cost the workers 11-16% less);
    that connection held between them (adapters/direct.py), not checked out for each."""
    url, token = catalogue_committed
    if not url.startswith("postgresql"):
        pytest.skip("SQLite has no plan cache")
    app = create_app({"database_url": url, **APP_SETTINGS})
    checkouts = {"session": 0, "catalogue": 0}

    def counted(name):
        def count(*_args):
            checkouts[name] += 1
        return count

    try:
        event.listen(app.service.engine, "checkout", counted("session"))
        event.listen(app.service.catalogue_engine, "checkout", counted("catalogue"))
        with catalogue_reads(app.service) as listing, app.test_client() as client:
            listed = client.get("/v1/events?limit=5", headers=bearer(token))
            assert listed.status_code == 200 and listed.headers["x-cache"] == "miss"
            assert listed.json()["data"]
            within = client.get("/v1/events?lat=52.37&lng=4.89&radius_km=25",
                                headers=bearer(token))
            assert within.status_code == 200 and within.headers["x-cache"] == "miss"
        # The page and its summaries kept (models/events.py `KEPT_SUMMARIES`); the venues,
        # the page (its events' summaries kept already).
        assert listing == ["planned once"] * 4
        with catalogue_reads(app.service) as faceting, app.test_client() as client:
            faceted = client.get("/v1/events?limit=5&facets=genre,city,date",
                                 headers=bearer(token))
            assert faceted.status_code == 200 and faceted.json()["meta"]["facets"]["date"]
        # The page; the genres', the cities' and the days' kept counts with the multi-day
        # events still running, in one statement: planned once too (models/facets.py).
        assert faceting == ["planned once"] * 2
        assert checkouts == {"session": 0, "catalogue": 1}
        with app.service.catalogue_engine.connect() as connection:
            settings = tuple(connection.exec_driver_sql(
                "SELECT current_setting('plan_cache_mode'), current_setting('enable_seqscan')"
            ).one())
        assert settings == ("force_generic_plan", "off")
    finally:
        app.service.close()


def test_requests_arriving_while_an_answer_is_built_wait_for_it(catalogue_committed):
    url, token = catalogue_committed
    app = create_app({"database_url": url, **APP_SETTINGS})
    try:
        with app.test_client() as client:
            with catalogue_reads(app.service) as alone:
                assert client.get("/v1/events?limit=3", headers=bearer(token)).status_code == 200
            with (catalogue_reads(app.service) as together,
                  concurrent.futures.ThreadPoolExecutor(16) as pool):
                answers = list(pool.map(
                    lambda _: client.get("/v1/events?limit=4", headers=bearer(token)), range(16)))
    finally:
        app.service.close()
    assert {answer.status_code for answer in answers} == {200}
    assert len({answer.json()["meta"]["request_id"] for answer in answers}) == 16
    assert len({answer.content.split(b'"meta"')[0] for answer in answers}) == 1
    assert len(alone) >= 1
    assert len(together) == len(alone)
