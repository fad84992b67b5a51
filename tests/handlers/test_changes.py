"""GET /changes: the change feed, its parameters and errors at their edges, and a tombstone
for each reason a resource stops being public. (Writers that commit, the command line and
concurrent writers: tests/models/test_changes.py.)"""

import time

from sqlalchemy import text, update

from models import records
from models.changes import RETENTION
from models.events import Event
from models.organisations import Organisation
from tests import api
from tests.models.test_changes import committed_change
from tests.factories import (ArtistFactory, EventFactory, OrganisationFactory, ReleaseFactory,
                             VenueFactory)

CHANGES = "/v1/changes"
DAY = 24 * 3600


def feed(client, auth, **params) -> list[dict]:
    """Every change from the oldest kept (or from `since` or `cursor`), following the
    cursors up to the end."""
    items = []
    while True:
        body = api.page(client, auth, CHANGES, limit=1000, **params)
        items += body["data"]
        params = {"cursor": body["meta"]["next_cursor"],
                  **({"types": params["types"]} if "types" in params else {})}
        if body["meta"]["count"] < 1000:
            return items


def of(items: list[dict], *resources) -> list[tuple]:
    """(type, id, op) of the items about `resources` (ids), in order; repeats in a row once
    (SQLite notes an event once for each of its genres, PostgreSQL once per transaction)."""
    ids = {getattr(r, "id", r) for r in resources}
    found = []
    for item in items:
        entry = (item["type"], item["id"], item["op"])
        if item["id"] in ids and (not found or found[-1] != entry):
            found.append(entry)
    return found


def test_every_type_of_resource_appears_with_type_id_op_and_time(client, auth, db):
    organisation = OrganisationFactory()
    venue = VenueFactory()
    artist = ArtistFactory()
    event = EventFactory(organisation=organisation, venue=venue, acts=[artist])
    release = ReleaseFactory(credits=[artist])
    before = int(time.time())
    items = feed(client, auth)
    assert of(items, organisation, venue, artist, event, release) == [
        ("organisation", organisation.id, "upsert"), ("venue", venue.id, "upsert"),
        ("artist", artist.id, "upsert"), ("event", event.id, "upsert"),
        ("release", release.id, "upsert")]
    mine = [item for item in items if item["id"] == event.id]
    assert set(mine[0]) == {"type", "id", "op", "at"}
    assert before - 5 <= mine[0]["at"] <= time.time() + 1


def test_a_change_after_the_cursor_is_handed_once_by_the_next_page(client, auth, db):
    VenueFactory()
    cursor = _end(client, auth)
    empty = api.page(client, auth, CHANGES, cursor=cursor)
    assert empty["data"] == [] and empty["meta"]["count"] == 0
    assert isinstance(empty["meta"]["next_cursor"], str)
    venue = VenueFactory()
    after = api.page(client, auth, CHANGES, cursor=empty["meta"]["next_cursor"])
    assert of(after["data"], venue) == [("venue", venue.id, "upsert")]
    again = api.page(client, auth, CHANGES, cursor=after["meta"]["next_cursor"])
    assert again["data"] == []


def test_pages_follow_each_other_without_repeats_or_gaps(client, auth, db):
    venues = [VenueFactory() for _ in range(7)]
    whole = of(feed(client, auth), *venues)
    paged, cursor = [], None
    while True:
        body = api.page(client, auth, CHANGES, limit=3, types="venue",
                        **({"cursor": cursor} if cursor else {}))
        assert body["meta"]["limit"] == 3 and body["meta"]["count"] == len(body["data"]) <= 3
        paged += body["data"]
        cursor = body["meta"]["next_cursor"]
        if not body["data"]:
            break
    assert of(paged, *venues) == whole == [("venue", v.id, "upsert") for v in venues]


def test_types_selects_the_kinds_of_resources(client, auth, db):
    venue, artist = VenueFactory(), ArtistFactory()
    event = EventFactory(venue=venue)
    items = feed(client, auth, types="venue,artist")
    assert {item["type"] for item in items} <= {"artist", "venue"}
    assert feed(client, auth, types="artist,venue,artist") == items
    assert of(items, venue, artist, event) == [("venue", venue.id, "upsert"),
                                               ("artist", artist.id, "upsert")]


def test_limit_is_1_to_1000_and_100_by_default(client, auth, db):
    assert api.page(client, auth, CHANGES)["meta"]["limit"] == 100
    assert api.page(client, auth, CHANGES, limit=1000)["meta"]["limit"] == 1000
    assert api.page(client, auth, CHANGES, limit=1)["meta"]["limit"] == 1
    assert api.bad_params(client, auth, CHANGES, limit=0) == {"limit"}
    assert api.bad_params(client, auth, CHANGES, limit=1001) == {"limit"}


def test_unknown_types_and_parameters_are_400s(client, auth, db):
    assert api.bad_params(client, auth, CHANGES, types="event,ticket") == {"types"}
    assert api.bad_params(client, auth, CHANGES, types="") == {"types"}
    assert api.bad_params(client, auth, CHANGES, types="event,") == {"types"}
    assert api.bad_params(client, auth, CHANGES, page=2, since="soon") == {"page", "since"}


def test_since_starts_at_the_changes_committed_from_then(client, auth, db):
    now = int(time.time())
    committed_change(db, type_="venue", id_="ven_older", op="upsert", at=now - 2 * 3600)
    committed_change(db, type_="venue", id_="ven_newer", op="delete", at=now - 3600)
    items = feed(client, auth, since=now - 5400)
    assert of(items, "ven_older", "ven_newer") == [("venue", "ven_newer", "delete")]
    items = feed(client, auth, since=now - 3 * 3600)
    assert of(items, "ven_older", "ven_newer") == [("venue", "ven_older", "upsert"),
                                                   ("venue", "ven_newer", "delete")]


def test_since_is_at_most_30_days_back_and_not_in_the_future(client, auth, db):
    now = int(time.time())
    assert api.page(client, auth, CHANGES, since=now - RETENTION + 60)["meta"]["next_cursor"]
    assert api.bad_params(client, auth, CHANGES, since=now - RETENTION - 60) == {"since"}
    assert api.bad_params(client, auth, CHANGES, since=now + 3600) == {"since"}
    assert api.bad_params(client, auth, CHANGES, since=-1) == {"since"}


def test_since_with_a_cursor_is_a_400_naming_since(client, auth, db):
    cursor = api.page(client, auth, CHANGES)["meta"]["next_cursor"]
    assert api.bad_params(client, auth, CHANGES, cursor=cursor,
                          since=int(time.time())) == {"since"}


def _error(client, auth, **params) -> dict:
    response = client.get(CHANGES, headers=auth, params=params)
    assert response.status_code == 400, response.text
    return response.json()["error"]["details"]["params"]


def test_a_forged_cursor_or_one_of_other_types_is_a_400_naming_cursor(client, auth, db):
    cursor = _end(client, auth, types="event")
    body, _, signature = cursor.partition(".")
    forged = f"{body[:-2]}{'A' if body[-2] != 'A' else 'B'}{body[-1]}.{signature}"
    assert [p["name"] for p in _error(client, auth, cursor=forged, types="event")] == ["cursor"]
    assert [p["name"] for p in _error(client, auth, cursor=cursor)] == ["cursor"]
    assert [p["name"] for p in _error(client, auth, cursor=cursor, types="venue")] == ["cursor"]
    assert api.page(client, auth, CHANGES, cursor=cursor, types="event")["data"] == []
    events_cursor = api.page(client, auth, "/v1/genres", limit=1)["meta"]["next_cursor"]
    assert [p["name"] for p in _error(client, auth, cursor=events_cursor)] == ["cursor"]


def test_a_cursor_older_than_30_days_is_a_400_that_says_to_start_from_since(
        client, auth, db, monkeypatch):
    cursor = _end(client, auth)
    now = int(time.time())
    monkeypatch.setattr("handlers.changes.now", lambda: now + RETENTION - DAY)
    assert api.page(client, auth, CHANGES, cursor=cursor)["data"] == []
    monkeypatch.setattr("handlers.changes.now", lambda: now + RETENTION + 3600)
    [problem] = _error(client, auth, cursor=cursor, limit=99)
    assert problem["name"] == "cursor" and "since" in problem["message"]


def test_the_feed_is_a_public_answer_with_an_etag_and_304(client, auth, db):
    VenueFactory()
    first = client.get(CHANGES, headers=auth)
    assert first.status_code == 200
    assert first.headers["Cache-Control"] == "public, max-age=60"
    assert "attribution" in first.json()["meta"]
    again = client.get(CHANGES, headers={**auth, "If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304 and again.content == b""


def test_the_feed_needs_the_read_scope(client, bearer_of, db):
    assert client.get(CHANGES).status_code == 401
    assert client.get(CHANGES, headers=bearer_of("scan")).status_code == 403
    assert client.get(CHANGES, headers=bearer_of("read")).status_code == 200


# Tombstones: `delete` when a resource stops being public, for each reason.

def test_a_deleted_resource_is_a_tombstone(client, auth, db):
    event, venue = EventFactory(), VenueFactory()
    cursor = _end(client, auth)
    db.execute(text("DELETE FROM event_genres WHERE event_id = :id"), {"id": event.id})
    db.execute(text("DELETE FROM event_artists WHERE event_id = :id"), {"id": event.id})
    db.execute(text("DELETE FROM events WHERE id = :id"), {"id": event.id})
    db.execute(text("DELETE FROM venues WHERE id = :id"), {"id": venue.id})
    items = _after(client, auth, cursor)
    assert of(items, event, venue)[-2:] == [("event", event.id, "delete"),
                                            ("venue", venue.id, "delete")]


def test_an_event_no_longer_approved_is_a_tombstone_and_approved_again_an_upsert(
        client, auth, db):
    event = EventFactory()
    cursor = _end(client, auth)
    db.execute(update(Event).where(Event.id == event.id).values(status="rejected"))
    db.execute(update(Event).where(Event.id == event.id).values(title="Changed while hidden"))
    db.execute(update(Event).where(Event.id == event.id).values(status="approved"))
    items = _after(client, auth, cursor)
    assert of(items, event)[-1] == ("event", event.id, "upsert")
    if db.get_bind().dialect.name == "sqlite":  # PostgreSQL keeps one per transaction
        assert of(items, event) == [("event", event.id, "delete"),
                                    ("event", event.id, "upsert")]


def test_a_suspended_organisation_and_its_events_are_tombstones(client, auth, db):
    organisation = OrganisationFactory()
    shown, draft = EventFactory(organisation=organisation), EventFactory(
        organisation=organisation, status="draft")
    cursor = _end(client, auth)
    db.execute(update(Organisation).where(Organisation.id == organisation.id)
               .values(suspended=True))
    assert sorted(of(_after(client, auth, cursor), organisation, shown, draft)) == sorted([
        ("organisation", organisation.id, "delete"), ("event", shown.id, "delete")])
    cursor = _end(client, auth)
    db.execute(update(Event).where(Event.id == shown.id).values(title="Still hidden"))
    assert of(_after(client, auth, cursor), shown) == []
    db.execute(update(Organisation).where(Organisation.id == organisation.id)
               .values(suspended=False))
    assert sorted(of(_after(client, auth, cursor), organisation, shown, draft)) == sorted([
        ("organisation", organisation.id, "upsert"), ("event", shown.id, "upsert")])


def test_a_cancelled_event_is_an_upsert_and_a_draft_is_never_listed(client, auth, db):
    event, draft = EventFactory(), EventFactory(status="draft")
    cursor = _end(client, auth)
    db.execute(update(Event).where(Event.id == event.id)
               .values(cancelled=True, cancel_reason="Storm"))
    db.execute(update(Event).where(Event.id == draft.id).values(title="Not yet"))
    assert of(_after(client, auth, cursor), event, draft) == [("event", event.id, "upsert")]
    assert of(feed(client, auth), draft) == []


def test_a_change_to_an_events_genres_is_a_change_of_the_event(client, auth, db):
    event = EventFactory()
    cursor = _end(client, auth)
    db.execute(text("DELETE FROM event_genres WHERE event_id = :id"), {"id": event.id})
    assert of(_after(client, auth, cursor), event) == [("event", event.id, "upsert")]



def test_a_venue_or_organisation_changed_is_not_listed_again_for_its_events(
        client, auth, db):
    """As the feed's document says: an event shows its venue's and organisation's names
    (copies it carries), but their change is theirs, not listed again for each event."""
    venue, organisation = VenueFactory(), OrganisationFactory()
    event = EventFactory(venue=venue, organisation=organisation)
    cursor = _end(client, auth)
    records.save_venue(db, **{**_written(venue), "name": "Hangar West"})  # its events' words
    db.execute(text("UPDATE venues SET name = 'Hangar Zuid', city = 'Gent', city_key = 'gent', "
                    "lat = 51.05, lng = 3.72 WHERE id = :id"), {"id": venue.id})
    db.execute(text("UPDATE organisations SET name = 'Renamed Nights' WHERE id = :id"),
               {"id": organisation.id})
    assert of(_after(client, auth, cursor), venue, organisation, event) == [
        ("venue", venue.id, "upsert"), ("organisation", organisation.id, "upsert")]
    db.execute(update(Event).where(Event.id == event.id).values(title="Its own change"))
    assert of(_after(client, auth, cursor), event) == [("event", event.id, "upsert")]


def _written(venue) -> dict:
    """The fields of `venue` as `records.save_venue` takes them."""
    return {"id": venue.id, "name": venue.name, "city": venue.city, "country": venue.country,
            "address": venue.address, "lat": venue.lat, "lng": venue.lng}


def _end(client, auth, **params) -> str:
    """The cursor after every change so far (other tests' may have committed some)."""
    body = api.page(client, auth, CHANGES, limit=1000, **params)
    while body["meta"]["count"] == 1000:
        body = api.page(client, auth, CHANGES, limit=1000, cursor=body["meta"]["next_cursor"],
                        **params)
    return body["meta"]["next_cursor"]


def _after(client, auth, cursor: str) -> list[dict]:
    """Every change after `cursor`."""
    return feed(client, auth, cursor=cursor)
