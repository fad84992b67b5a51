"""Demo data: deterministic for a seed, realistic, consistent with what the domain writes."""

import datetime as dt

import pytest
from sqlalchemy import func, select, text

from agenda.demo import catalogue as demo_data
from models.artists import Artist
from models.events import MAX_SPAN_DAYS, STATUSES, Event, EventArtist, denormalize
from models.genres import GENRES
from models.organisations import Organisation
from models.releases import Release
from models.venues import Venue
from tests import factories

TODAY = dt.date(2026, 11, 25)
GENRE_NAMES = {name for name, _group in GENRES}
# (lat, lng) boxes around each country.
BOXES = {"NL": ((50.75, 53.7), (3.2, 7.25)), "BE": ((49.49, 51.51), (2.54, 6.41))}
# The demo organisation's own nights, written with every agenda (agenda.demo.people).
NIGHTS = 10


def _rows(events: int, seed: int) -> dict[str, list[dict]]:
    rows: dict[str, list[dict]] = {}
    for table, batch in demo_data.generate(events=events, seed=seed, today=TODAY):
        rows.setdefault(table.name, []).extend(batch)
    return rows


def _of_seed(model, seed: int):
    return model.id.like(f"demo{seed}-%")


@pytest.fixture(scope="module")
def agenda() -> dict[str, list[dict]]:
    """The rows of a 3,000-event agenda (built once for the module's checks)."""
    return _rows(3000, 7)


def test_the_same_seed_builds_the_same_agenda():
    assert _rows(100, 5) == _rows(100, 5)
    other = _rows(100, 6)
    assert other["events"][0]["id"] == "demo6-evt-0"
    titles = lambda rows: [event["title"] for event in rows["events"]]  # noqa: E731
    assert titles(other) != titles(_rows(100, 5))


def test_pools_grow_with_the_agenda_within_caps():
    small, large = demo_data.Sizes.of(100), demo_data.Sizes.of(1_000_000)
    assert (small.venues, small.artists, small.organisations) == (12, 40, 8)
    assert demo_data.Sizes.of(100_000).venues == 2000
    assert (large.venues, large.artists) == (3000, 6000)
    assert len(_rows(100, 5)["events"]) == 100


def test_venues_lie_in_their_country_near_a_real_city(agenda):
    centres = {city.name: city for city in demo_data.CITIES}
    for venue in agenda["venues"]:
        (low_lat, high_lat), (low_lng, high_lng) = BOXES[venue["country"]]
        assert low_lat <= venue["lat"] <= high_lat and low_lng <= venue["lng"] <= high_lng
        city = centres[venue["city"]]
        assert abs(venue["lat"] - city.lat) <= 0.08 and abs(venue["lng"] - city.lng) <= 0.12
        assert set(venue["facts"]) <= {"capacity", "rooms", "lockers", "cashless", "smoking",
                                       "cloakroom", "parking"}
    assert {venue["country"] for venue in agenda["venues"]} == {"NL", "BE"}


def test_events_are_consistent_with_the_rest_of_the_agenda(agenda):
    artists = {artist["id"]: artist for artist in agenda["artists"]}
    venues = {venue["id"] for venue in agenda["venues"]}
    organisations = {organisation["id"] for organisation in agenda["organisations"]}
    for event in agenda["events"]:
        assert event["venue_id"] in venues and event["organisation_id"] in organisations
        assert event["status"] in STATUSES
        if event["end_date"]:
            assert 0 < (event["end_date"] - event["date"]).days <= MAX_SPAN_DAYS
        if event["price"] is not None and event["price_max"] is not None:
            assert event["price_max"] >= event["price"]
        for sets in event["timetable"].values():
            assert all(len(slot) == 2 and len(slot[0]) == 5 for slot in sets)
    assert {genre["genre"] for genre in agenda["event_genres"]} <= GENRE_NAMES
    assert {artist["genre"] for artist in agenda["artists"]} <= GENRE_NAMES
    for act in agenda["event_artists"]:
        assert artists[act["artist_id"]]["name"] == act["name"]
    assert len({event["slug"] for event in agenda["events"]}) == len(agenda["events"])


def test_the_agenda_has_every_case_a_client_meets(agenda):
    events = agenda["events"]
    future = [event for event in events if event["date"] >= TODAY]
    assert 0.75 < len(future) / len(events) < 0.95
    assert any(event["cancelled"] and event["cancel_reason"] for event in events)
    postponed = [event for event in events if event["postponed_to"]]
    assert postponed and all(event["postponed_to"] > event["date"] for event in postponed)
    prices = [event["price"] for event in events]
    assert 0 in prices and None in prices
    assert {event["status"] for event in events} == set(STATUSES)
    assert sum(event["ticket_url"] is not None for event in events) > len(events) / 2
    festivals = [event for event in events if event["festival_key"]]
    key = festivals[0]["festival_key"]
    assert sorted(event["season"] for event in festivals if event["festival_key"] == key) == \
        [2024, 2025, 2026, 2027]
    assert all(event["maps"] for event in festivals)
    assert any(event["end_date"] for event in festivals)
    assert any(len(event["timetable"]) > 1 for event in festivals)
    releases = [release["release_date"] for release in agenda["releases"]]
    assert any((TODAY - day).days < 56 for day in releases)
    assert any((TODAY - day).days > 56 for day in releases)
    assert {release["type"] for release in agenda["releases"]} == {"single", "ep", "album"}
    assert any(organisation["verified"] for organisation in agenda["organisations"])
    assert any(artist["agency"] for artist in agenda["artists"])


def test_written_events_carry_the_copies_denormalize_would_write(db):
    demo_data.add_demo_data(db, events=3000, seed=11, today=TODAY)
    events = db.scalars(select(Event).where(_of_seed(Event, 11))).all()
    assert len(events) == 3000 + NIGHTS

    def copies(event):
        return (event.last_date, event.city_key, event.lat, event.lng, event.search_key,
                [(genre.date, genre.start) for genre in event.genres],
                [act.date for act in event.lineup])

    written = [copies(event) for event in events]
    for event in events:
        denormalize(event)
    assert [copies(event) for event in events] == written
    # Every act on a bill is an artist of the agenda, under that artist's name.
    mismatched = db.scalar(select(func.count()).select_from(EventArtist).join(Artist).where(
        EventArtist.name != Artist.name, _of_seed(Artist, 11)))
    assert mismatched == 0


def test_running_it_again_adds_nothing_twice(db):
    first = demo_data.add_demo_data(db, events=100, seed=12, today=TODAY)
    assert first.added["events"] == 100 + NIGHTS and not first.present["events"]
    counts = {model: db.scalar(select(func.count()).where(_of_seed(model, 12)))
              for model in (Organisation, Venue, Artist, Release, Event)}
    again = demo_data.add_demo_data(db, events=100, seed=12, today=TODAY)
    assert sum(again.added.values()) == 0 and again.present["events"] == 100 + NIGHTS
    assert {model: db.scalar(select(func.count()).where(_of_seed(model, 12)))
            for model in counts} == counts
    # A later day adds only that day's nights of the demo organisation (tickets to scan).
    later = demo_data.add_demo_data(db, events=100, seed=12, today=TODAY + dt.timedelta(days=3))
    assert later.added["events"] == 2 and later.added["tickets"] > 0
    assert later.added["people"] == later.added["venues"] == 0
    counts[Event] += 2
    assert {model: db.scalar(select(func.count()).where(_of_seed(model, 12)))
            for model in counts} == counts
    # A larger agenda of the same seed adds only the events (and pools) it lacks.
    more = demo_data.add_demo_data(db, events=200, seed=12, today=TODAY)
    assert more.added["events"] == 100
    assert "100 events" in more.summary() and "were there already" in more.summary()


def test_an_organisation_name_taken_elsewhere_gets_the_seed(db):
    name = _rows(100, 13)["organisations"][0]["name"]
    db.add(Organisation(id="org-taken", name=name, since=2000, created_at=0))
    db.flush()
    demo_data.add_demo_data(db, events=100, seed=13, today=TODAY)
    assert db.get(Organisation, "demo13-org-0").name == f"{name} (13)"


def test_has_events_tells_whether_the_agenda_is_empty(db):
    def count():
        return db.scalar(select(func.count()).select_from(Event))

    assert demo_data.has_events(db) == (count() > 0)
    demo_data.add_demo_data(db, events=100, seed=14, today=TODAY)
    assert demo_data.has_events(db) and count() >= 100


def test_a_load_leaves_the_counts_a_recount_gives_and_later_writes_are_counted(db,
                                                                              monkeypatch):
    """The kept day and month counts (models/facets.py) after a load are those a recount
    of the events gives, and what is written afterwards is counted as it is written. On
    SQLite a load of at least as many events as are there goes without the counts' row
    triggers (each counted its row's day and month afresh) and counts every day once at
    its end; the triggers are then back as they were."""
    sqlite = db.get_bind().dialect.name == "sqlite"
    triggers = text("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' "
                    "AND name GLOB 'event_days_*' ORDER BY name")
    before = db.execute(triggers).all() if sqlite else None
    during = []
    insert = demo_data._insert

    def watched_insert(session, table, rows):
        if sqlite and table.name in ("events", "event_genres"):
            during.append(len(session.execute(triggers).all()))
        insert(session, table, rows)

    monkeypatch.setattr(demo_data, "_insert", watched_insert)
    demo_data.add_demo_data(db, events=400, seed=16, today=TODAY)
    factories.settled(db)
    assert factories.kept_counts(db) == factories.recounted_counts(db)
    if sqlite:
        # The agenda's events written without them, the demo organisation's nights after
        # the load with them.
        assert before and during[0] == 0 and during[-1] == len(before), during
        assert db.execute(triggers).all() == before
    # Afterwards each write counts its day at once again.
    counted = len(factories.kept_counts(db))
    factories.bind(db)
    factories.EventFactory(date=TODAY + dt.timedelta(days=700), genre_names=["Techno"])
    factories.settled(db)
    kept = factories.kept_counts(db)
    assert len(kept) > counted and kept == factories.recounted_counts(db)


def test_a_large_load_on_postgresql_gets_its_indexes_and_keys_back(db, monkeypatch):
    if db.get_bind().dialect.name != "postgresql":
        pytest.skip("only PostgreSQL loads without indexes")
    schema = text(
        "SELECT indexdef FROM pg_indexes WHERE tablename IN "
        "('events', 'event_genres', 'event_artists') UNION ALL "
        "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE contype = 'f' "
        "AND conrelid::regclass::text IN ('events', 'event_genres', 'event_artists')")
    before = sorted(db.scalars(schema))
    during = []
    insert = demo_data._insert

    def watched_insert(session, table, rows):
        during.append(len(session.scalars(schema).all()))
        insert(session, table, rows)

    monkeypatch.setattr(demo_data, "_rebuilds", lambda session, events, seed: True)
    monkeypatch.setattr(demo_data, "_insert", watched_insert)
    added = demo_data.add_demo_data(db, events=100, seed=15, today=TODAY)
    assert added.added["events"] == 100 + NIGHTS
    assert min(during) < len(before)  # the load did run without them
    assert sorted(db.scalars(schema)) == before
    assert any("gin_trgm_ops" in definition for definition in before)
