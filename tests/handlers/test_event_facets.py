"""GET /events?facets=genre,city,date: counts of the whole list, each facet with every filter
but its own, checked against what the list itself holds when walked page by page."""

from __future__ import annotations

import collections
import datetime as dt
import random
import re
import threading
import time

import orjson
import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from models import facets
from tests import api, factories
from tests.api import day
from tests.factories import EventFactory, OrganisationFactory, VenueFactory

EVENTS = api.Listing("/v1/events")
SQLITE = "the counts kept by concurrent committing writers are PostgreSQL's deferred triggers"


def _expected(client, auth, filters: dict, facet: str, first: dt.date | None = None,
              last: dt.date | None = None) -> list[dict]:
    """A facet's counts worked out from the list itself (walked without the facet's filter)."""
    own = {"genre": "genre", "city": "city", "date": None}[facet]
    listed = EVENTS.walk(client, auth, limit=7, **{k: v for k, v in filters.items() if k != own})
    counted: collections.Counter = collections.Counter()
    for event in listed:
        if facet == "genre":
            counted.update(event["genres"])
        elif facet == "city":
            counted[event["venue"]["city"]] += 1
        else:
            start = dt.date.fromisoformat(event["date"])
            end = dt.date.fromisoformat(event["end_date"] or event["date"])
            for offset in range((end - start).days + 1):
                moment = start + dt.timedelta(days=offset)
                if first <= moment <= last:
                    counted[moment.isoformat()] += 1
    if facet == "date":
        return [{"value": value, "count": n} for value, n in sorted(counted.items())]
    ranked = sorted(counted.items(), key=lambda item: (-item[1], item[0]))[:facets.TOP]
    return [{"value": value, "count": n} for value, n in ranked]


@pytest.fixture
def agenda(db):
    """Events in three cities over a few weeks: multi-day ones, some that began before
    today, one not approved and one in the past; most of them by one organisation (`club`)
    in two cities."""
    amsterdam = VenueFactory(city="Amsterdam")
    rotterdam = VenueFactory(city="Rotterdam")
    utrecht = VenueFactory(city="Utrecht")
    club = OrganisationFactory()
    EventFactory(date=day(-2), end_date=day(1), venue=amsterdam, genre_names=["Techno", "House"],
                 organisation=club)
    EventFactory(date=day(0), venue=amsterdam, genre_names=["Techno"], title="Warehouse night",
                 organisation=club)
    EventFactory(date=day(1), venue=amsterdam, genre_names=["House"], price=5)
    EventFactory(date=day(1), venue=rotterdam, genre_names=["Techno", "Hardstyle"],
                 organisation=club)
    EventFactory(date=day(3), end_date=day(5), venue=utrecht, genre_names=["Techno"],
                 title="Warehouse weekend")
    EventFactory(date=day(3), venue=rotterdam, genre_names=["Hardstyle"], cancelled=True,
                 organisation=club)
    EventFactory(date=day(8), venue=amsterdam, genre_names=["Techno"], price=40,
                 organisation=club)
    EventFactory(date=day(20), venue=utrecht, genre_names=["House", "Disco"])
    EventFactory(date=day(2), venue=utrecht, genre_names=["Techno"], status="pending",
                 organisation=club)
    EventFactory(date=day(-9), venue=amsterdam, genre_names=["Techno"], organisation=club)
    return {"amsterdam": amsterdam.id, "utrecht": utrecht.id, "club": club.id}


@pytest.mark.parametrize("filters", [
    {}, {"city": "amsterdam"}, {"genre": "Techno"}, {"genre": "House", "city": "Utrecht"},
    {"from": day(1).isoformat(), "to": day(4).isoformat()},
    {"venue_id": "amsterdam"}, {"q": "warehouse", "venue_id": "utrecht"},
    {"max_price": "20", "genre": "Techno", "venue_id": "amsterdam"},
    {"has_tickets": "true", "venue_id": "amsterdam", "city": "Amsterdam"},
    # Tickets are on sale until an event has ended, today, however early the window starts.
    {"has_tickets": "true", "venue_id": "amsterdam", "from": day(-10).isoformat()},
    {"organisation_id": "club"}, {"organisation_id": "club", "genre": "Techno"},
    {"organisation_id": "club", "city": "Amsterdam", "from": day(1).isoformat(),
     "to": day(8).isoformat()},
    {"organisation_id": "club", "q": "warehouse"},
], ids=lambda filters: ",".join(filters) or "none")
def test_facets_count_the_whole_list_with_every_filter_but_their_own(client, auth, agenda,
                                                                     filters):
    for name in ("venue_id", "organisation_id"):
        if name in filters:
            filters = {**filters, name: agenda[filters[name]]}
    body = EVENTS.page(client, auth, limit=2, facets="genre,city,date", **filters)
    first = dt.date.fromisoformat(filters.get("from", api.day(0).isoformat()))
    last = dt.date.fromisoformat(filters["to"]) if "to" in filters else (
        first + dt.timedelta(days=facets.MAX_DAYS - 1))
    assert body["meta"]["facets"] == {
        "genre": _expected(client, auth, filters, "genre"),
        "city": _expected(client, auth, filters, "city"),
        "date": _expected(client, auth, filters, "date", first, last),
    }


def test_facets_over_text_price_tickets_or_radius_need_one_venue_artist_or_organisation(
        client, auth, agenda):
    for unkept in ({"q": "warehouse"}, {"max_price": "20"}, {"has_tickets": "false"},
                   {"lat": "52.37", "lng": "4.9"}, {"min_price": "1", "city": "Amsterdam"}):
        assert EVENTS.bad(client, auth, facets="genre", **unkept) == {"facets"}
    body = EVENTS.page(client, auth, facets="genre", q="warehouse",
                       venue_id=agenda["utrecht"])
    assert body["meta"]["facets"] == {"genre": [{"value": "Techno", "count": 1}]}


def test_a_menu_still_counts_the_genres_beside_the_one_taken(client, auth, agenda):
    counted = EVENTS.page(client, auth, genre="Techno", facets="genre")["meta"]["facets"]
    assert counted == {"genre": [{"value": "Techno", "count": 5}, {"value": "House", "count": 3},
                                 {"value": "Hardstyle", "count": 2},
                                 {"value": "Disco", "count": 1}]}


def test_a_multi_day_event_counts_on_each_of_its_days_in_the_window(client, auth, agenda):
    counted = EVENTS.page(client, auth, facets="date", city="Utrecht",
                          **{"from": day(4).isoformat(), "to": day(30).isoformat()})
    assert counted["meta"]["facets"]["date"] == [
        {"value": day(4).isoformat(), "count": 1}, {"value": day(5).isoformat(), "count": 1},
        {"value": day(20).isoformat(), "count": 1}]


def test_counts_are_written_alike_whichever_way_they_were_counted(client, auth, agenda):
    """The kept counts are written as JSON by the database, counts added up or counted over
    the rows by the service (models/facets.py `CountsJSON`): the same bytes as orjson
    writes the rest of the answer (no spaces, text as UTF-8), so that an answer and its
    ETag do not depend on the way its counts went."""
    liege, bosch = VenueFactory(city="Liège"), VenueFactory(city="'s-Hertogenbosch")
    EventFactory(date=day(12), venue=liege, genre_names=["Drum & Bass"])
    EventFactory(date=day(13), venue=bosch, genre_names=["R&B"])
    # Kept counts alone; with events begun before `from` (their tops read again, their days
    # added up here); counted over one venue's rows.
    for filters in ({"from": day(10).isoformat()}, {"from": day(4).isoformat()}, {},
                    {"venue_id": liege.id}):
        response = client.get("/v1/events", headers=auth,
                              params={"facets": "genre,city,date", **filters})
        assert response.status_code == 200, response.text
        counted = response.json()["meta"]["facets"]
        assert orjson.dumps(counted) in response.content, (filters, response.content)
        assert {"value": "Liège", "count": 1} in counted["city"], (filters, counted)
        assert {"value": "Drum & Bass", "count": 1} in counted["genre"], (filters, counted)
        assert "venue_id" in filters or {"value": "'s-Hertogenbosch", "count": 1} in counted["city"]


def test_the_page_itself_is_unchanged_by_facets(client, auth, agenda):
    plain = EVENTS.page(client, auth, limit=3, city="Amsterdam")
    faceted = EVENTS.page(client, auth, limit=3, city="Amsterdam", facets="city")
    assert faceted["data"] == plain["data"]
    assert {k: v for k, v in faceted["meta"].items() if k not in ("facets", "request_id",
                                                                  "next_cursor")} == \
        {k: v for k, v in plain["meta"].items() if k not in ("request_id", "next_cursor")}
    assert "facets" not in plain["meta"]


def test_a_cursor_keeps_its_facets_bound(client, auth, agenda):
    first = EVENTS.page(client, auth, limit=2, facets="genre,date")
    cursor = first["meta"]["next_cursor"]
    following = EVENTS.page(client, auth, limit=2, facets="date,genre", cursor=cursor)
    assert following["meta"]["facets"] == first["meta"]["facets"]
    assert EVENTS.bad(client, auth, limit=2, cursor=cursor) == {"cursor"}
    assert EVENTS.bad(client, auth, limit=2, cursor=cursor, facets="genre") == {"cursor"}


def test_a_faceted_answer_is_revalidated_with_its_own_etag(client, auth, agenda):
    faceted = client.get("/v1/events", headers=auth, params={"facets": "city"})
    plain = client.get("/v1/events", headers=auth)
    assert faceted.headers["ETag"] != plain.headers["ETag"]
    again = client.get("/v1/events", params={"facets": "city"},
                       headers={**auth, "If-None-Match": faceted.headers["ETag"]})
    assert again.status_code == 304
    assert again.headers["Cache-Control"] == "public, max-age=60"


def test_genres_and_cities_are_the_top_50_by_count_then_by_name(client, auth, db):
    for number in range(52):
        EventFactory(date=day(1), venue=VenueFactory(city=f"Stad {number:02d}"))
    EventFactory(date=day(2), venue=VenueFactory(city="Stad 51"))
    cities = EVENTS.page(client, auth, facets="city")["meta"]["facets"]["city"]
    assert len(cities) == facets.TOP
    assert cities[0] == {"value": "Stad 51", "count": 2}
    assert [city["value"] for city in cities[1:]] == [f"Stad {n:02d}" for n in range(49)]


def test_bad_facets_and_a_window_over_62_days_are_a_400_naming_facets(client, auth, db):
    assert EVENTS.bad(client, auth, facets="colour") == {"facets"}
    assert EVENTS.bad(client, auth, facets="genre,") == {"facets"}
    assert EVENTS.bad(client, auth, facets="date", **{
        "from": day(0).isoformat(), "to": day(62).isoformat()}) == {"facets"}
    response = client.get("/v1/events", headers=auth, params={
        "facets": "date", "to": day(100).isoformat()})
    assert "62 days" in response.json()["error"]["details"]["params"][0]["message"]
    # At the ends of the calendar too.
    EVENTS.page(client, auth, facets="genre,city,date", **{"from": "9999-12-20"})
    # (Days before 1900 are a 400 of the list itself: tests/edge/test_inputs.py.)
    assert EVENTS.bad(client, auth, facets="genre,city,date", **{
        "from": "0001-01-01", "to": "0001-01-31"}) == {"from", "to"}
    # Without the day counts any window is fine; 62 days with them too.
    EVENTS.page(client, auth, facets="genre,city", to=day(400).isoformat())
    EVENTS.page(client, auth, facets="date", to=day(61).isoformat())


def test_the_kept_counts_follow_every_change_to_the_agenda(client, auth, db):
    venue = VenueFactory(city="Amsterdam")
    moved = EventFactory(date=day(2), venue=venue, genre_names=["Techno"])
    dropped = EventFactory(date=day(3), venue=venue, genre_names=["House"])
    db.flush()
    moved.date = moved.last_date = day(4)
    dropped.status = "rejected"
    db.flush()
    db.execute(text("UPDATE event_genres SET genre = 'Disco' WHERE event_id = :id"),
               {"id": moved.id})
    db.execute(text("DELETE FROM events WHERE id = :id"), {"id": dropped.id})
    counted = EVENTS.page(client, auth, facets="genre,date")["meta"]["facets"]
    assert counted == {"genre": [{"value": "Disco", "count": 1}],
                       "date": [{"value": day(4).isoformat(), "count": 1}]}
    assert factories.kept_counts(db) == factories.recounted_counts(db)


def test_an_organisations_counts_follow_its_events_whoever_moves_them(client, auth, db):
    club, other = OrganisationFactory(), OrganisationFactory()
    EventFactory(date=day(2), genre_names=["Techno"], organisation=club)
    moved = EventFactory(date=day(3), genre_names=["House"], organisation=club)
    db.flush()
    db.execute(text("UPDATE events SET organisation_id = :other WHERE id = :id"),
               {"other": other.id, "id": moved.id})
    for organisation, genre, moment in ((club, "Techno", day(2)), (other, "House", day(3))):
        counted = EVENTS.page(client, auth, facets="genre,date",
                              organisation_id=organisation.id)["meta"]["facets"]
        assert counted == {"genre": [{"value": genre, "count": 1}],
                           "date": [{"value": moment.isoformat(), "count": 1}]}
    assert factories.kept_counts(db) == factories.recounted_counts(db)


@pytest.mark.parametrize("change", [
    "UPDATE event_genres SET genre = 'Disco' WHERE event_id = :id",
    "UPDATE organisations SET suspended = true "
    "WHERE id = (SELECT organisation_id FROM events WHERE id = :id)",
], ids=["genres", "suspension"])
def test_a_change_read_from_an_event_another_transaction_moves_counts_its_new_day(
        committing, change):
    """A change to an event's genres or its organisation, made while another transaction
    moves the event to another day, is counted on the day it moved to. The organisation's
    change lets the move commit first; the genres' waits for it (it writes the event's copy
    of its genres, migration 0022, so the move waits for the event's row), and then moves
    the event as it is."""
    _url, engine = committing
    with Session(engine) as session, session.begin():
        factories.bind(session)
        moved = EventFactory(date=day(2), genre_names=["Techno"]).id
    with engine.connect() as changing, engine.connect() as moving:
        changing.begin()
        changing.execute(text(change), {"id": moved})  # sees the event on day 2

        def move() -> None:
            with moving.begin():
                moving.execute(text("UPDATE events SET date = date + 1, last_date = last_date "
                                    "+ 1 WHERE id = :id"), {"id": moved})

        mover = threading.Thread(target=move)
        mover.start()
        waits = change.startswith("UPDATE event_genres")
        mover.join(timeout=1 if waits else 30)
        assert mover.is_alive() == waits
        changing.commit()
        mover.join(timeout=30)
        assert not mover.is_alive()
    with engine.begin() as connection:
        assert factories.kept_counts(connection) == factories.recounted_counts(connection)
        assert connection.execute(text("SELECT date, listed_genres FROM events WHERE id = :id"),
                                  {"id": moved}).one() == (
            day(3), ["Techno"] if change.startswith("UPDATE organisations") else ["Disco"])


def test_sqlite_counts_an_events_day_again_when_a_column_the_counts_read_changes():
    """SQLite's trigger counts a changed event's day again only when one of
    `COUNTED_COLUMNS` changes: every column of the event its statements read is one of them
    (a column read but not named would leave a count stale when it alone changes)."""
    update, = [trigger for trigger in facets.sqlite_triggers(("events",))
               if trigger.startswith("CREATE TRIGGER event_days_update_events ")]
    read = set(re.findall(r"\b(?:events|NEW|OLD)\.(\w+)", update))
    assert {"date", "status"} <= read and read - {"id"} <= set(facets.COUNTED_COLUMNS), read


def test_concurrent_committing_writers_leave_exact_counts(committing, db):
    """Writers committing at the same time (PostgreSQL counts a day afresh as a change
    commits) leave the counts that a recount of the committed events gives."""
    _url, engine = committing
    with Session(engine) as session, session.begin():
        factories.bind(session)
        venues = [VenueFactory(city=city) for city in ("Amsterdam", "Rotterdam", "Gent")]
        ids = [EventFactory(date=day(index % 5), venue=venues[index % 3],
                            genre_names=[("Techno", "House")[index % 2]]).id
               for index in range(30)]
    factories.bind(db)
    changes = [
        "UPDATE events SET date = date + 1, last_date = last_date + 1 WHERE id = :id",
        "UPDATE events SET status = CASE WHEN status = 'approved' THEN 'pending' "
        "ELSE 'approved' END WHERE id = :id",
        "UPDATE event_genres SET genre = CASE WHEN genre = 'Disco' THEN 'Techno' "
        "ELSE 'Disco' END WHERE event_id = :id",
        "UPDATE events SET city_key = CASE WHEN city_key = 'gent' THEN 'amsterdam' "
        "ELSE 'gent' END WHERE id = :id",
        "UPDATE events SET organisation_id = (SELECT min(organisation_id) FROM events e "
        "WHERE e.organisation_id <> events.organisation_id) WHERE id = :id",
    ]

    def writer(number: int) -> None:
        chosen = random.Random(number)
        for _ in range(25):
            # Each transaction changes its events in the order of their ids, as careful
            # writers do: two taking the same two rows the other way round would deadlock.
            picked = sorted((chosen.choice(ids), chosen.choice(changes)) for _ in range(3))
            with engine.begin() as connection:
                for event_id, change in picked:
                    connection.execute(text(change), {"id": event_id})
                time.sleep(chosen.random() / 200)

    threads = [threading.Thread(target=writer, args=(number,)) for number in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with engine.begin() as connection:
        assert factories.kept_counts(connection) == factories.recounted_counts(connection)
        assert connection.scalar(text("SELECT count(*) FROM event_counts_pending")) == 0


@pytest.mark.parametrize(("window", "ambient"), [
    ({"from": "2031-01-03"}, True), ({"from": "2031-01-03", "to": "2031-01-29"}, False),
    ({"from": "2031-01-20", "to": "2031-02-27"}, True),
    ({"from": "2031-01-01", "to": "2031-01-31"}, True)],
    ids=["from the 3rd", "within a month", "to the 27th", "a whole month"])
def test_a_months_count_less_its_days_outside_the_window_counts_the_window(client, auth, db,
                                                                           window, ambient):
    """An edge month read as its count less its days outside the window
    (models/facets.py `_spans`) counts only the window's events: a genre whose events of
    the month all fall outside it is not shown (its count sums to none), one that began
    before `from` and still runs is."""
    for moment in (dt.date(2031, 1, 2), dt.date(2031, 1, 30), dt.date(2031, 2, 28)):
        EventFactory(date=moment, genre_names=["Ambient"])
    EventFactory(date=dt.date(2031, 1, 1), end_date=dt.date(2031, 1, 22), genre_names=["House"])
    EventFactory(date=dt.date(2031, 1, 10), genre_names=["Techno"])
    EventFactory(date=dt.date(2031, 2, 3), genre_names=["Techno", "Disco"])
    counted = EVENTS.page(client, auth, limit=2, facets="genre,city", **window)["meta"]["facets"]
    assert counted["genre"] == _expected(client, auth, window, "genre")
    assert counted["city"] == _expected(client, auth, window, "city")
    assert ("Ambient" in {count["value"] for count in counted["genre"]}) == ambient
    assert "House" in {count["value"] for count in counted["genre"]}


def test_kept_counts_cover_any_window_day_by_day_exactly_once():
    """Whole months come from the month counts, the edges from the day counts: a month's
    days in the window added, or the month's count less its days outside it, whichever
    reads fewer days (at most half a month's at each edge)."""
    horizon = dt.date(2032, 12, 31)
    for first in (dt.date(2031, 1, 1), dt.date(2031, 1, 3), dt.date(2031, 1, 31),
                  dt.date(2031, 2, 14), dt.date(2031, 2, 15), dt.date(2031, 3, 29)):
        for length in (0, 1, 2, 13, 14, 27, 28, 45, 59, 60, 400, None):
            last = None if length is None else first + dt.timedelta(days=length)
            covered: collections.Counter = collections.Counter()
            days_read = 0
            for table, low, high, sign in facets._spans(first, last):
                assert sign in (1, -1)
                moment = low
                while moment <= (high or horizon):
                    if table == "days":
                        covered[moment] += sign
                        days_read += 1
                        moment += dt.timedelta(days=1)
                    else:
                        assert moment.day == 1
                        following = (moment + dt.timedelta(days=32)).replace(day=1)
                        for offset in range((following - moment).days):
                            covered[moment + dt.timedelta(days=offset)] += sign
                        moment = following
            wanted = {first + dt.timedelta(days=offset)
                      for offset in range(((last or horizon) - first).days + 1)}
            assert {d for d, n in covered.items() if n} == wanted, (first, last)
            assert all(covered[d] == 1 for d in wanted), (first, last)
            assert days_read <= 2 * 16, (first, last, days_read)

