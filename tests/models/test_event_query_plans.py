"""The hot filters of GET /events are index scans, so a page costs the same at any size.

Fills the events table with 10,000 rows inside the test's transaction, refreshes the
planner's statistics and reads the plan of the query `list_events` actually runs.
"""

import datetime as dt
import json
import random

import pytest
from psycopg import RawCursor, sql
from sqlalchemy import event as sa_event
from sqlalchemy import func, insert, select, text

from adapters import direct
from models import cities, events, facets, organisations, words
from models.artists import Artist
from models.events import Event, EventGenre
from models.venues import Venue
from tests import api, factories
from tests.factories import OrganisationFactory

ROWS = 10_000
CITIES = [("Amsterdam", 52.37, 4.89), ("Rotterdam", 51.92, 4.48), ("Utrecht", 52.09, 5.12),
          ("Gent", 51.05, 3.72), ("Antwerpen", 51.22, 4.40), ("Eindhoven", 51.44, 5.47),
          ("Groningen", 53.22, 6.57), ("Brussel", 50.85, 4.35)]
WORDS = ["kompas", "bassline", "nachtwacht", "zomerfeest", "lichtstad", "underground",
         "rave", "marathon", "sessions", "weekender", "ampere", "dockyard", "loveland",
         "awakenings", "soenda", "verknipt", "paradigm", "pleinvrees", "draaimolen", "extrema"]
GENRES = ["Techno", "House", "Trance", "Hardstyle", "Drum & Bass", "Disco", "Hip-Hop", "Acid"]
TODAY = dt.date(2026, 11, 25)


@pytest.fixture
def big_agenda(db):
    rng = random.Random(7)
    organisation = OrganisationFactory()
    venues = []
    for i in range(80):
        city, lat, lng = CITIES[i % len(CITIES)]
        venues.append({"id": f"v{i}", "name": f"Venue {i}", "name_key": f"venue {i}",
                       "city": city, "city_key": city.lower(), "country": "NL",
                       "lat": lat + rng.uniform(-0.05, 0.05), "lng": lng + rng.uniform(-0.05, 0.05),
                       "updated_at": 0})
    db.execute(insert(Venue), venues)
    rows, genre_rows = [], []
    for i in range(ROWS):
        venue = venues[i % len(venues)]
        date = TODAY + dt.timedelta(days=rng.randint(-200, 200))
        start = f"{rng.randint(18, 23)}:00"
        title = f"{WORDS[i % len(WORDS)].title()} {i}"
        rows.append({"id": f"e{i:06d}", "slug": f"e{i:06d}", "title": title, "date": date,
                     "last_date": date, "start": start, "end": "04:00", "status": "approved",
                     "price": rng.choice([None, 0, 10, 20, 35]), "venue_id": venue["id"],
                     "organisation_id": organisation.id, "updated_at": 0,
                     "city_key": venue["city_key"], "lat": venue["lat"], "lng": venue["lng"],
                     "search_key": f"{title.lower()} {venue['name_key']}", "timetable": {},
                     "maps": [], "rules": [],
                     # Its genres' copy written with it, as the demo data's load does: the
                     # triggers of `event_genres` then find it right and leave the row as is.
                     "listed_genres": [GENRES[i % len(GENRES)]]})
        genre_rows.append({"event_id": f"e{i:06d}", "genre": GENRES[i % len(GENRES)],
                           "position": 0, "date": date, "start": start,
                           "city_key": venue["city_key"]})
    # In statements of a few hundred rows, each under the request deadline; on SQLite the
    # days counted once at the end, as a bulk load of the demo data does.
    with facets.counted_at_the_end(db):
        for table, table_rows in ((Event, rows), (EventGenre, genre_rows)):
            for start in range(0, len(table_rows), 500):
                db.execute(insert(table), table_rows[start:start + 500])
    if db.bind.dialect.name == "postgresql":
        db.execute(text("ANALYZE venues, events, event_genres"))
        words.forget()  # this transaction's sample of the events' words, not an earlier one's
    else:
        db.execute(text("ANALYZE"))
    return db


@pytest.fixture
def postgres(db):
    """Skips a test of what PostgreSQL alone has (its plan cache, its statistics' histogram,
    its trigram index, its row versions) on SQLite, before the test's agenda is loaded (over
    a minute there on a slow machine): named before `big_agenda`."""
    if db.bind.dialect.name != "postgresql":
        pytest.skip("PostgreSQL's own: SQLite has no plan cache, histogram of words, trigram "
                    "index nor row versions")


def _first_page(session, filters: events.EventFilters) -> None:
    events.list_events(session, filters=filters, today=TODAY, after=None, limit=25)


def _run(session, filters: events.EventFilters, *, table: str = "events",
         run=_first_page) -> list[tuple[str, tuple]]:
    """Each statement (SQL and parameters) `run(session, filters)` (a first page of
    `list_events`) runs on `table`."""
    captured = []

    def capture(_conn, _cursor, statement, parameters, _context, _many):
        if f"FROM {table}" in statement:
            captured.append((statement, parameters))

    engine = session.get_bind().engine
    sa_event.listen(engine, "before_cursor_execute", capture)
    try:
        run(session, filters)
    finally:
        sa_event.remove(engine, "before_cursor_execute", capture)
    return captured


def _plans(session, filters: events.EventFilters) -> list[str]:
    """The plan of each statement `list_events` runs on the events table, as text."""
    captured = _run(session, filters)
    connection = session.connection().connection.driver_connection
    postgres = session.bind.dialect.name == "postgresql"
    # On PostgreSQL the statements are its own SQL ($1, $2, ...), run as they are.
    cursor = RawCursor(connection) if postgres else connection.cursor()
    plans = []
    for statement, parameters in captured:
        if postgres:
            cursor.execute("EXPLAIN (FORMAT JSON) " + statement, parameters)
            plans.append(json.dumps(cursor.fetchone()[0]))
        else:
            cursor.execute("EXPLAIN QUERY PLAN " + statement, parameters)
            plans.append("\n".join(str(row[-1]) for row in cursor.fetchall()))
    return plans


HOT_FILTERS = {
    "no filter": events.EventFilters(),
    "date window": events.EventFilters(date_from=TODAY + dt.timedelta(days=30),
                                       date_to=TODAY + dt.timedelta(days=37)),
    "city": events.EventFilters(city="Gent"),
    "genre": events.EventFilters(genre="Acid"),
    "radius": events.EventFilters(lat=52.37, lng=4.89, radius_km=10),
    "q": events.EventFilters(q="Kompas"),
    "price": events.EventFilters(max_price=0),
}
# A word with a filter that walks an index of its own.
WORD_IN_A_CITY = events.EventFilters(q="Kompas", city="Gent")


def test_hot_filters_never_scan_the_whole_events_table(big_agenda):
    postgres = big_agenda.bind.dialect.name == "postgresql"
    scanned = {}
    for name, filters in HOT_FILTERS.items():
        for plan in _plans(big_agenda, filters):
            if postgres:
                if "events" in _seq_scans(plan) or "Index" not in plan:
                    scanned[name] = plan
            elif "SCAN events" in plan.replace("SCAN events USING", "USING"):
                scanned[name] = plan
    assert not scanned, scanned


def test_running_multi_day_events_are_found_through_their_own_small_index(big_agenda):
    # The first statement reads the multi-day events still running on `from`.
    plan = _plans(big_agenda, events.EventFilters())[0]
    assert "ix_events_running" in plan, plan


def _listed(session, filters: events.EventFilters, limit: int = 40) -> list[str]:
    """The ids of every page of the list, following its cursors."""
    found, after = [], None
    while True:
        page = events.list_events(session, filters=filters, today=TODAY, after=after,
                                  limit=limit)
        found += [event.id for event in page.items]
        if page.next_key is None:
            return found
        after = [page.next_key[0].isoformat(), *page.next_key[1:]]


def _nodes(plan: str) -> list[dict]:
    """Every node of a plan (EXPLAIN's JSON), outermost first."""
    found = []

    def walk(node):
        found.append(node)
        for child in node.get("Plans", []):
            walk(child)

    walk(json.loads(plan)[0]["Plan"])
    return found


def _seq_scans(plan: str) -> list[str]:
    """The relations the plan reads with a sequential scan."""
    return [node.get("Relation Name") for node in _nodes(plan) if node["Node Type"] == "Seq Scan"]


def _scans(plan: str) -> list[tuple[str, str]]:
    """The plan's index scans: (node type, index name)."""
    return [(node["Node Type"], node["Index Name"]) for node in _nodes(plan) if "Index Name" in node]


def test_every_list_query_is_planned_for_its_own_values_unless_marked(db):
    """psycopg prepares a statement it ran five times; PostgreSQL's generic plan for it, made
    without its values, may read far more than a plan for them (a rare word walking the
    agenda's order). Plans are custom, but for the statements marked for a generic plan
    (below)."""
    if db.get_bind().dialect.name != "postgresql":
        pytest.skip("SQLite has no plan cache")
    assert db.execute(text("SHOW plan_cache_mode")).scalar_one() == "force_custom_plan"


# A list whose values do not change its plan (the walk of one index in its order) is planned
# once for any values (adapters/direct.py `planned_once`), a radius around its few venues
# too (this agenda has 80 venues: every radius names them), and a word alone (its statement
# chosen by the word's share: models/words.py); a word with a filter that walks its own
# index, at each run for its values (that walk or the trigram index).
PLANNED_ONCE = ("no filter", "date window", "city", "genre", "price", "radius", "q")


def _generic_plans(session, filters: events.EventFilters, **run) -> list[str]:
    """The generic plan (made for any values) of each statement `list_events` runs on the
    events table (or `_run`'s `table` and `run`), as EXPLAIN's JSON."""
    return [_planned_once(session, statement, parameters)
            for statement, parameters in _run(session, filters, **run)]


def _planned_once(session, statement: str, parameters, analyze: bool = False) -> str:
    """The plan of `statement` (PostgreSQL's own $1, $2, ...) as a statement planned once is
    planned (`direct.PLANNED_ONCE_SETTINGS`), as EXPLAIN's JSON; run too with `analyze`."""
    cursor = session.connection().connection.driver_connection.cursor()
    cursor.execute(f"PREPARE listed AS {statement}")
    for name, value in direct.PLANNED_ONCE_SETTINGS:
        cursor.execute(f"SET {name} = {value}")
    options = "ANALYZE, FORMAT JSON" if analyze else "FORMAT JSON"
    cursor.execute(sql.SQL("EXPLAIN ({}) EXECUTE listed ({})").format(
        sql.SQL(options), sql.SQL(", ").join(map(sql.Literal, parameters))))
    plan = json.dumps(cursor.fetchone()[0])
    cursor.execute("DEALLOCATE listed")
    for name, _value in direct.PLANNED_ONCE_SETTINGS:
        cursor.execute(f"RESET {name}")
    return plan


def _plan_counts(session) -> tuple[int, int]:
    """(generic, custom): plans PostgreSQL made for the session's prepared statements on the
    events table so far."""
    return tuple(session.execute(text(
        "SELECT coalesce(sum(generic_plans), 0), coalesce(sum(custom_plans), 0) "
        "FROM pg_prepared_statements WHERE statement LIKE '%FROM events%' "
        "AND statement NOT LIKE '%pg_prepared_statements%'")).one())


def test_lists_are_planned_once_unless_their_values_decide_the_plan(postgres, big_agenda):
    """Planned for its values, a city's page at a million events took 1.2-1.6 ms to plan
    and 0.8-2.3 to run; planned once, it walks the same index. So does a price's page (it
    has no index), a radius's few venues, and a word alone, whose share (estimated from
    PostgreSQL's own sample, models/words.py) chose its statement: planning a word for its
    value took ~1.5 ms at a million events. A word with a filter that walks its own index
    is planned for its values: the word's share decides between that walk and the trigram
    index."""
    made = {}
    for name, filters in [*((name, HOT_FILTERS[name]) for name in PLANNED_ONCE),
                          ("q in a city", WORD_IN_A_CITY)]:
        before = _plan_counts(big_agenda)
        # psycopg prepares a statement at its sixth run: then PostgreSQL counts its plans.
        for _ in range(8):
            events.list_events(big_agenda, filters=filters, today=TODAY, after=None, limit=25)
        after = _plan_counts(big_agenda)
        generic, custom = after[0] - before[0], after[1] - before[1]
        made[name] = "generic" if generic and not custom else "custom" if custom and not generic \
            else (generic, custom)
    assert made == {**{name: "generic" for name in PLANNED_ONCE}, "q in a city": "custom"}
    # And the session's mode is its own again.
    assert big_agenda.execute(text("SHOW plan_cache_mode")).scalar_one() == "force_custom_plan"


def test_a_radius_around_its_few_venues_reads_the_suspended_organisations_once(postgres,
                                                                             big_agenda):
    """Planned once, a radius's page walks each of its few venues' events and checks each
    row's organisation against the suspended ones, read once for the statement: not an
    anti-join of the organisations run again in every venue's walk, which a generic plan
    made a scan of the organisations for every row walked (780 for 10 km around Amsterdam
    in the demo agenda of 10k events: 1.8 ms of the page's 2.2)."""
    statement, parameters = _run(big_agenda, HOT_FILTERS["radius"])[-1]
    plan = _planned_once(big_agenda, statement, parameters, analyze=True)
    assert '"Function Name": "unnest"' in plan, plan  # around its few venues
    # The one anti-join left is the range of events still running, run once.
    assert all(node["Actual Loops"] <= 1 for node in _nodes(plan)
               if node.get("Join Type") == "Anti"), plan


def test_a_radius_around_more_venues_than_it_names_is_planned_once(postgres, big_agenda,
                                                                   monkeypatch):
    """Around more venues than `NEAR_VENUES_AT_MOST` a radius's page walks the agenda's
    order with the distance, whatever the radius: planned once, without a scan of the
    table."""
    monkeypatch.setattr(events, "NEAR_VENUES_AT_MOST", 5)  # 10 km around Amsterdam: 10
    radius = HOT_FILTERS["radius"]
    before = _plan_counts(big_agenda)
    for _ in range(8):
        events.list_events(big_agenda, filters=radius, today=TODAY, after=None, limit=25)
    after = _plan_counts(big_agenda)
    assert after[0] > before[0] and after[1] == before[1]  # generic plans only
    plans = _generic_plans(big_agenda, radius)
    assert not [plan for plan in plans if "events" in _seq_scans(plan)], plans
    assert ("Index Only Scan", "ix_events_order") in _scans(plans[-1]), plans[-1]


def test_a_list_planned_once_walks_an_index_whatever_its_values(postgres, big_agenda):
    scanned = {name: plan for name in PLANNED_ONCE
               for plan in _generic_plans(big_agenda, HOT_FILTERS[name])
               if "events" in _seq_scans(plan) or "Index" not in plan}
    assert not scanned, scanned
    # Walked in the list's order: the city's and the genre's own ordered indexes.
    assert "ix_events_city_order" in _generic_plans(big_agenda, HOT_FILTERS["city"])[-1]
    assert "ix_event_genres" in _generic_plans(big_agenda, HOT_FILTERS["genre"])[-1]


def test_a_requests_statements_start_no_parallel_workers_and_compile_nothing(db):
    """A request reads a few rows to a few thousand: parallel workers would cost more than
    they save (facet counts of a small organisation: 17 ms with them, 6 without) and take
    the cores of other requests; JIT compiling a statement estimated dear took 90 ms of
    GET /cities' 95 at a million events. Set for every connection of the request engine,
    so that it holds in autocommit too (the answers built before the framework)."""
    if db.get_bind().dialect.name != "postgresql":
        pytest.skip("SQLite has no parallel workers nor JIT")
    assert db.execute(text("SHOW max_parallel_workers_per_gather")).scalar_one() == "0"
    assert db.execute(text("SHOW jit")).scalar_one() == "off"


def test_a_radius_around_a_few_venues_reads_their_events_and_lists_the_same(big_agenda,
                                                                             monkeypatch):
    """A radius search names the few venues within it (the planner then reads their events,
    not the whole agenda's order) and lists what the box and the distance alone list."""
    venue = big_agenda.execute(text("SELECT lat, lng FROM venues WHERE id = 'v0'")).one()
    around_one = events.EventFilters(lat=venue.lat, lng=venue.lng, radius_km=0.5)
    page_plan = _plans(big_agenda, around_one)[-1]
    assert "ix_events_venue_order" in page_plan, page_plan
    if big_agenda.bind.dialect.name == "postgresql":
        # Venue by venue: each one's events walked in the list's order, a page at most.
        assert '"Function Name": "unnest"' in page_plan, page_plan
        assert "ix_events_lat_lng" not in page_plan, page_plan
        # Each walk yields positions, from an index carrying all it reads (migration 0019):
        # the page's events are read by their ids.
        assert '"Index Name": "pk_events"' in page_plan, page_plan
        included = big_agenda.execute(text(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_events_venue_order'")
        ).scalar_one()
        assert "INCLUDE (status, city_key, end_date, last_date, organisation_id, lat, lng)" \
            in included, included

    def listed(filters: events.EventFilters) -> list[str]:
        return _listed(big_agenda, filters)

    searches = [around_one, *(events.EventFilters(lat=52.37, lng=4.89, radius_km=radius_km)
                              for radius_km in (0.5, 10, 60))]
    named = [listed(filters) for filters in searches]
    monkeypatch.setattr(events, "NEAR_VENUES_AT_MOST", -1)  # never names them
    assert named == [listed(filters) for filters in searches]
    assert named[0] and named[2]
    if big_agenda.bind.dialect.name == "postgresql":
        # Around more venues than it names: the agenda's order, the distance alone, from the
        # order's index alone (it carries the coordinates: migration 0023), then the page's
        # events by id.
        walks = _scans(_plans(big_agenda, searches[2])[-1])
        assert ("Index Only Scan", "ix_events_order") in walks, walks
        assert ("Index Scan", "pk_events") in walks, walks


def test_a_words_share_of_the_events_is_estimated_from_a_histogram_of_3000_keys(postgres,
                                                                               big_agenda,
                                                                               monkeypatch):
    """PostgreSQL estimates `search_key LIKE '%word%'` by the share of its histogram's entries
    holding the word (at least 0.01%). With the default 100 entries, a word of 0.01% to 1%
    of the events is estimated at 0.01% or, where an entry happens to hold it, at 1% or
    more: then a rare word walked the agenda's order filtering every row (`q=stormvogel`,
    92 events of a million: 483,023 rows, 1.9 s). With 1,000 (migration 0018) a word one
    entry holds was still estimated at 0.1%, which walked the whole order's index once
    that walk read the index alone (0020: `q=nevelveld`, 93 events, 85 ms instead of 2);
    with 3,000 (0020) the estimate is near the word's share, and a rare word is read
    through the trigram index. (A word that few words hold walks theirs instead:
    `HOLDING_WORDS_AT_MOST`, never here.)"""
    monkeypatch.setattr(events, "HOLDING_WORDS_AT_MOST", -1)
    assert big_agenda.execute(text(
        "SELECT attstattarget FROM pg_attribute WHERE attrelid = 'events'::regclass "
        "AND attname = 'search_key'")).scalar_one() == 3000
    held = ROWS // 200  # 0.5% of the events
    big_agenda.execute(text("UPDATE events SET search_key = search_key || ' stormvogel' "
                            "WHERE right(id, 3)::int % 200 = 0"))
    big_agenda.execute(text("ANALYZE events"))
    estimate = big_agenda.execute(text(
        "EXPLAIN (FORMAT JSON) SELECT 1 FROM events WHERE search_key LIKE '%stormvogel%'")
    ).scalar_one()[0]["Plan"]["Plan Rows"]
    assert held / 2 <= estimate <= held * 1.8, (estimate, held)
    # The question is the trigram index against walking the agenda's order. At 10k events a
    # third way, reading the whole table, costs about what the index does, more or less
    # as the earlier tests of the same database left the table and its index (seen on
    # CI: a sequential scan chosen); at the sizes served it is never the cheaper one.
    big_agenda.execute(text("SET LOCAL enable_seqscan = off"))
    rare = _plans(big_agenda, events.EventFilters(q="Stormvogel"))[-1]
    assert "ix_events_search_key_trgm" in rare and "ix_events_order" not in rare, rare


def _holding(session, word: str) -> list[str]:
    """The ids of the events whose words hold `word`, from `TODAY` on, in the agenda's order."""
    return session.execute(text(
        "SELECT id FROM events WHERE search_key LIKE :pattern AND date >= :today "
        "ORDER BY date, start, id"), {"pattern": f"%{word}%", "today": TODAY}).scalars().all()


def test_a_common_word_walks_the_agendas_order_in_its_index_alone(big_agenda, monkeypatch):
    """A free-text search of a common word (that many words hold: `HOLDING_WORDS_AT_MOST`,
    never here) walks the agenda's order testing each event's words: from its index alone
    (it carries the public condition and the words, migration 0020), the page's events then
    read by id (`q=amapiano&limit=100`, 3,409 events of a million, read 29,220 event rows:
    104 ms; from the index, 6 ms). Every page lists what the words and the order alone
    select."""
    monkeypatch.setattr(events, "HOLDING_WORDS_AT_MOST", -1)
    kompas = events.EventFilters(q="Kompas")  # 5% of the events
    expected = _holding(big_agenda, "kompas")
    assert len(expected) > 200 and _listed(big_agenda, kompas) == expected
    if big_agenda.bind.dialect.name == "postgresql":
        walks = _scans(_plans(big_agenda, kompas)[-1])
        assert ("Index Only Scan", "ix_events_order") in walks, walks
        assert ("Index Scan", "pk_events") in walks, walks
        included = big_agenda.execute(text(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_events_order'")).scalar_one()
        assert "INCLUDE (status, organisation_id, search_key, lat, lng)" in included, included


def test_a_word_alone_is_read_the_way_its_share_makes_cheaper_planned_once(big_agenda,
                                                                          monkeypatch):
    """A word alone that many words hold (`HOLDING_WORDS_AT_MOST`, never here) is planned
    once, its statement chosen by its share of the events as PostgreSQL's own sample
    estimates it (models/words.py): a common word walks the agenda's order, a rare one (or
    one nobody holds) is read through the trigram index, a word too short for a trigram
    walks. Either way a page lists what the words and the order alone select, every page of
    it."""
    monkeypatch.setattr(events, "HOLDING_WORDS_AT_MOST", -1)
    big_agenda.execute(text("UPDATE events SET search_key = search_key || ' stormvogel' "
                            "WHERE CAST(substr(id, 2) AS INTEGER) % 200 = 0"))  # 0.5%
    if big_agenda.bind.dialect.name == "postgresql":
        big_agenda.execute(text("ANALYZE events"))
        words.forget()
        assert not words.rare(big_agenda, "kompas", 26)  # 5%: 1 in 20 entries walked
        assert words.rare(big_agenda, "stormvogel", 26)  # all 50 read, against 5,200 walked
        assert words.rare(big_agenda, "nobodys", 26)
        assert not words.rare(big_agenda, "ko", 26)
        for word, index in (("Kompas", "ix_events_order"),
                            ("Stormvogel", "ix_events_search_key_trgm")):
            plans = _generic_plans(big_agenda, events.EventFilters(q=word))
            assert index in plans[-1], (word, plans[-1])
            assert not [plan for plan in plans if "events" in _seq_scans(plan)], plans
    for word in ("Kompas", "Stormvogel"):
        expected = _holding(big_agenda, word.lower())
        assert expected
        for rare in (False, True):
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(words, "rare", lambda *_args, rare=rare: rare)
                assert _listed(big_agenda, events.EventFilters(q=word)) == expected, rare


def test_a_words_share_follows_the_events_once_the_sample_is_read_again(postgres, big_agenda,
                                                                        monkeypatch):
    """A worker keeps PostgreSQL's sample of the events' words `SAMPLE_KEPT_SECONDS` and
    then reads it again: a word that became common is then walked for."""
    assert words.rare(big_agenda, "stormvogel", 26)
    big_agenda.execute(text("UPDATE events SET search_key = search_key || ' stormvogel' "
                            "WHERE right(id, 1)::int % 5 = 0"))  # 20% of the events
    big_agenda.execute(text("ANALYZE events"))
    assert words.rare(big_agenda, "stormvogel", 26)  # the sample kept
    monkeypatch.setattr(words, "SAMPLE_KEPT_SECONDS", 0)
    assert not words.rare(big_agenda, "stormvogel", 26)
    assert _listed(big_agenda, events.EventFilters(q="Stormvogel")) == \
        _holding(big_agenda, "stormvogel")


def _by_words_plans(session, filters: events.EventFilters) -> list[str]:
    """The generic plans of the list's statements reading the events' words."""
    plans = _generic_plans(session, filters)
    assert plans and '"Relation Name": "event_words"' in plans[-1], plans
    return plans


def test_a_word_that_a_few_words_hold_walks_theirs_in_order_and_lists_the_same(
        postgres, big_agenda, monkeypatch):
    """A word alone (with dates at most) that a few words of the events hold (the word, its
    compounds: `HOLDING_WORDS_AT_MOST`) is read word by word: each word's events in the
    agenda's order through its ordered index (`event_words`, migration 0026), a page at most,
    then the page's events by id, planned once. It lists what the words and the order alone
    select, every page of it, each event once (some hold two of the words), with or without
    an end date."""
    big_agenda.execute(text("UPDATE events SET search_key = search_key || ' stormkompas' "
                            "WHERE right(id, 1)::int % 7 = 0"))
    assert set(big_agenda.execute(text(
        "SELECT word FROM event_vocabulary WHERE word LIKE '%kompas%'")).scalars()) == \
        {"kompas", "stormkompas"}
    kompas = events.EventFilters(q="Kompas")
    window = events.EventFilters(q="kompas", date_from=TODAY + dt.timedelta(days=10),
                                 date_to=TODAY + dt.timedelta(days=40))
    big_agenda.execute(text("ANALYZE event_words"))
    for filters in (kompas, window):
        plan = _by_words_plans(big_agenda, filters)[-1]
        walks = _scans(plan)
        assert ("Index Only Scan", "pk_event_words") in walks, walks
        assert ("Index Scan", "pk_events") in walks, walks
        assert '"Function Name": "unnest"' in plan, plan
        assert not _seq_scans(plan), plan
        assert {node["Node Type"] for node in _nodes(plan)
                if node.get("Relation Name") == "event_words"} == {"Index Only Scan"}, plan
    expected = _holding(big_agenda, "kompas")
    twice = set(big_agenda.execute(text(
        "SELECT id FROM events WHERE search_key LIKE '%kompas %stormkompas%'")).scalars())
    assert len(expected) > 200 and twice & set(expected)
    in_window = big_agenda.execute(text(
        "SELECT id FROM events WHERE search_key LIKE '%kompas%' AND date BETWEEN :start AND :end "
        "ORDER BY date, start, id"), {"start": window.date_from, "end": window.date_to}
    ).scalars().all()
    assert in_window
    walked = [_listed(big_agenda, filters) for filters in (kompas, window)]
    assert walked == [expected, in_window]
    monkeypatch.setattr(events, "HOLDING_WORDS_AT_MOST", -1)  # the word's share decides
    assert [_listed(big_agenda, filters) for filters in (kompas, window)] == walked


def test_a_words_list_follows_every_write_of_the_events_at_once(postgres, big_agenda):
    """The events' words are written by triggers in the writing transaction, whoever
    writes: a list of a word finds an event as soon as its words hold it, in its new
    place when its date moves, and no longer once its words, its status or its removal
    say otherwise (plain SQL here; the API and imports write the same rows)."""
    kompas = events.EventFilters(q="zeldzaam")

    def listed() -> list[str]:
        return _listed(big_agenda, kompas)

    later = big_agenda.execute(text(
        "SELECT id FROM events WHERE date >= :today ORDER BY date, start, id LIMIT 3"),
        {"today": TODAY + dt.timedelta(days=5)}).scalars().all()
    assert listed() == []
    big_agenda.execute(text("UPDATE events SET search_key = search_key || ' zeldzaam' "
                            "WHERE id = ANY(:ids)"), {"ids": later})
    assert listed() == later
    big_agenda.execute(text("UPDATE events SET date = :today, last_date = :today "
                            "WHERE id = :id"), {"today": TODAY, "id": later[2]})
    assert listed() == [later[2], *later[:2]]
    big_agenda.execute(text("UPDATE events SET status = 'rejected' WHERE id = :id"),
                       {"id": later[0]})
    assert listed() == [later[2], later[1]]
    big_agenda.execute(text("UPDATE events SET search_key = 'kompas' WHERE id = :id"),
                       {"id": later[1]})
    assert listed() == [later[2]]
    big_agenda.execute(text("DELETE FROM events WHERE id = :id"), {"id": later[2]})
    assert listed() == []
    made = factories.EventFactory(title="Zeldzaam Zomerfeest", date=TODAY + dt.timedelta(days=3),
                                  venue=big_agenda.get(Venue, "v0"))
    big_agenda.flush()
    assert listed() == [made.id]
    # A word held by a word new to the events (a compound) is found in it.
    assert _listed(big_agenda, events.EventFilters(q="ldzaa")) == [made.id]
    made.organisation.suspended = True  # its words as they were: public no more
    big_agenda.flush()
    assert listed() == []


def test_an_artists_events_are_walked_in_its_ordered_index(big_agenda):
    """An artist's events are walked in the list's order through its own index (artist,
    date), each day's events sorted as they come: a page reads its own events, not all of
    the artist's (at a million events, 594 read and sorted for a page of 11: 4 ms; walked,
    0.35). Every page lists what the artist's events in the agenda's order are."""
    big_agenda.execute(insert(Artist), [{"id": "a1", "name": "Ida", "name_key": "ida",
                                         "genre": "Techno", "updated_at": 0}])
    big_agenda.execute(text(
        "INSERT INTO event_artists (event_id, artist_id, name, position, date) "
        "SELECT id, 'a1', 'Ida', 0, date FROM events WHERE CAST(substr(id, 2) AS INTEGER) % 4 = 0"))
    big_agenda.execute(text("ANALYZE event_artists"))
    ida = events.EventFilters(artist_id="a1")
    expected = big_agenda.execute(text(
        "SELECT id FROM events JOIN event_artists ON event_id = id AND artist_id = 'a1' "
        "WHERE events.date >= :today ORDER BY events.date, start, id"),
        {"today": TODAY}).scalars().all()
    assert len(expected) > 1000 and _listed(big_agenda, ida) == expected
    if big_agenda.bind.dialect.name == "postgresql":
        plan = _plans(big_agenda, ida)[-1]
        assert ("Index Only Scan", "ix_event_artists_artist_order") in _scans(plan), plan
        assert '"Node Type": "Incremental Sort"' in plan, plan


def test_a_city_and_a_genre_walk_the_genre_in_the_city_and_list_the_same(big_agenda):
    """A page of a city's events of a genre walks the genre's events in that city, in the
    list's order (`ix_event_genres_city_order`: each genre row carries its event's city),
    with or without an end: it reads the page's events only (at a million, walking the
    city and probing each event's genres read 4,435 events for 101: 26 ms warm; 1.8).
    Every page lists what the city, the genre and the order alone select."""
    # A genre's events a statement, each under the request deadline (on SQLite each row's
    # triggers write its event's copy of its genres; the days counted once at the end).
    with facets.counted_at_the_end(big_agenda):
        for genre in GENRES:
            if genre != "Techno":
                big_agenda.execute(text(
                    "INSERT INTO event_genres (event_id, genre, position, date, start, "
                    "city_key) SELECT event_id, 'Techno', 1, date, start, city_key "
                    "FROM event_genres WHERE genre = :genre"), {"genre": genre})
    factories.settled(big_agenda)
    big_agenda.execute(text("ANALYZE events, event_genres" if
                            big_agenda.bind.dialect.name == "postgresql" else "ANALYZE"))
    searches = [events.EventFilters(city="Gent", genre="Techno"),
                events.EventFilters(city="Amsterdam", genre="Acid"),
                events.EventFilters(city="Gent", genre="Latin"),
                events.EventFilters(city="gent", genre="Techno",
                                    date_from=TODAY + dt.timedelta(days=20), max_price=20),
                events.EventFilters(city="Gent", genre="Techno", date_from=TODAY,
                                    date_to=TODAY + dt.timedelta(days=40))]
    for filters in searches:
        priced = "" if filters.max_price is None else f"AND price <= {filters.max_price} "
        expected = big_agenda.execute(text(
            "SELECT id FROM events JOIN event_genres ON event_id = id AND genre = :genre "
            "WHERE events.city_key = :city AND events.date BETWEEN :first AND :last "
            f"{priced}ORDER BY events.date, events.start, id"),
            {"genre": filters.genre, "city": filters.city.lower(),
             "first": filters.date_from or TODAY,
             "last": filters.date_to or dt.date(9999, 12, 31)}).scalars().all()
        assert _listed(big_agenda, filters, limit=70) == expected, filters
    assert _listed(big_agenda, searches[0]) and not _listed(big_agenda, searches[2])
    for filters in (searches[0], searches[4]):
        plan = _plans(big_agenda, filters)[-1]
        assert "ix_event_genres_city_order" in plan, plan


def test_a_page_with_its_genres_is_one_statement(big_agenda):
    """A page's events come with their genres in their order, each event's copy of them
    (migration 0022), kept as they change here by plain SQL: one statement a page."""
    amsterdam = events.EventFilters(city="Amsterdam")
    first, second = [event.id for event in events.list_events(
        big_agenda, filters=amsterdam, today=TODAY, after=None, limit=2).items]
    big_agenda.execute(text("UPDATE event_genres SET position = 1 WHERE event_id = :id"),
                       {"id": first})
    big_agenda.execute(text("INSERT INTO event_genres (event_id, genre, position, date, start, "
                            "city_key) SELECT event_id, 'Acid', 0, date, start, city_key "
                            "FROM event_genres WHERE event_id = :id"), {"id": first})
    with api.statements(big_agenda.get_bind().engine) as statements:
        page = events.list_events(big_agenda, filters=amsterdam, today=TODAY, after=None,
                                  limit=25)
    postgres = big_agenda.bind.dialect.name == "postgresql"
    assert len(statements) == 1, statements
    genres = {event.id: event.genre_names for event in page.items}
    assert genres[first] == ("Acid", "Techno") and genres[second] == ("Techno",)
    if postgres:  # psycopg's values as they come: no column sends every row through Python
        statement = events._statement(frozenset({"city"}), None, False, True)
        assert direct.compiled(statement, big_agenda.bind.dialect).processors is None


BASES = {**HOT_FILTERS, "word in a city": events.EventFilters(q="bassline", city="Rotterdam"),
         "a common word": events.EventFilters(q="venue"),
         "genre in a city": events.EventFilters(city="Gent", genre="Hardstyle"),
         "radius around a few venues": events.EventFilters(lat=51.05, lng=3.72, radius_km=3),
         "radius around many venues": events.EventFilters(lat=52.0, lng=5.0, radius_km=200),
         "no tickets on sale": events.EventFilters(has_tickets=False, city="Utrecht")}


def test_a_pages_basis_is_read_again_from_its_events_positions_and_versions(postgres,
                                                                             big_agenda):
    """What a page was built from (`Page.basis`) is what `list_basis` reads again, from the
    same statement's positions and row versions alone, on every walk and on a second page;
    it follows a change to a listed event (its genres' copy too, written by a trigger) and
    not one to an event the list does not hold."""
    past = big_agenda.execute(text(
        "SELECT id FROM events WHERE date < :long_ago AND end_date IS NULL LIMIT 1"),
        {"long_ago": TODAY - dt.timedelta(days=60)}).scalar_one()
    for number, (name, filters) in enumerate(BASES.items()):
        def built(after=None, filters=filters):
            return events.list_events(big_agenda, filters=filters, today=TODAY, after=after,
                                      limit=25)

        def read_again(after=None, filters=filters):
            return events.list_basis(big_agenda, filters=filters, today=TODAY, after=after,
                                     limit=25)

        first = built()
        assert first.items and first.next_key, name
        assert first.basis is not None and read_again() == first.basis, name
        after = [first.next_key[0].isoformat(), *first.next_key[1:]]
        assert read_again(after) == built(after).basis != first.basis, name
        big_agenda.execute(text("UPDATE events SET title = title || '.' WHERE id = :id"),
                           {"id": past})
        assert read_again() == first.basis, name
        big_agenda.execute(text(
            "INSERT INTO event_genres (event_id, genre, position, date, start, city_key) "
            "SELECT event_id, :genre, 5, date, start, city_key FROM event_genres "
            "WHERE event_id = :id LIMIT 1"), {"id": first.items[-1].id, "genre": f"Extra {number}"})
        assert read_again() != first.basis, name


def test_facets_from_the_kept_counts_are_one_statement_planned_once_reading_indexes(
        postgres, big_agenda):
    """The kept counts of a faceted answer, every facet asked, and the multi-day events
    still running that add to them are one statement planned once for any values
    (models/facets.py); its plan reads ranges of the counts' indexes, the days' totals
    (every city, every genre) their partial index: one row a day; and the events only
    through their small index of running ones."""
    for filters in (events.EventFilters(facets=("genre", "city", "date")),
                    events.EventFilters(city="Gent", facets=("genre", "date"))):
        plans = _generic_plans(big_agenda, filters, table="event_day_counts",
                               run=lambda session, filters: facets.count(
                                   session, filters=filters, today=TODAY))
        assert len(plans) == 1, plans
        # The counts (and the top cities' names) by index scans only (only-index where the
        # rows are old enough to be all-visible: this agenda's are this transaction's own).
        indexes, _read = _events_read(plans[0])
        assert indexes == {"ix_events_running"}, plans
        scans = [(node, index) for node, index in _scans(plans[0])
                 if index.startswith(("ix_event_day_counts", "ix_event_month_counts", "ix_venues"))]
        assert scans and {node for node, _index in scans} <= {"Index Scan", "Index Only Scan"}, scans
        assert not _seq_scans(plans[0]), plans
        totals = "ix_event_day_counts_totals" in {index for _node, index in scans}
        assert totals == (filters.city is None), scans


def test_the_cities_and_the_organisations_counts_read_indexes_of_their_own(postgres,
                                                                            big_agenda):
    """GET /cities reads each city's name, country and middle from the venues once a page
    (two walks of the venues were ~4,200 pages at a million events; there one walk of
    their index of places alone is 42); an organisation's events count sums its month totals
    through their partial index (through the genres' index, a page of 50 organisations
    read every city's row of each month: 17,230 entries). Both planned once, as they run."""
    factories.settled(big_agenda)  # the kept counts the cities are counted from
    listed = _run(big_agenda, events.EventFilters(), table="venues",
                  run=lambda session, _filters: cities.list_cities(
                      session, filters=cities.CityFilters(), today=TODAY, after=None, limit=25))
    assert len(listed) == 1, listed
    plan = _planned_once(big_agenda, *listed[0], analyze=True)
    assert json.loads(plan)[0]["Plan"]["Actual Rows"] == len(CITIES), plan
    assert not _seq_scans(plan), plan
    # Which index walks every venue is the planner's (by how many of their rows are known
    # visible to all: this agenda's are the test's own); that one walk does is the
    # statement's. (The venues of keys in two countries are read again, by key.)
    venues = big_agenda.scalar(select(func.count()).select_from(Venue))
    walks = [(node["Node Type"], node.get("Index Name")) for node in _nodes(plan)
             if (str(node.get("Index Name", "")).startswith("ix_venues")
                 or node.get("Relation Name") == "venues")
             and node["Actual Rows"] * node["Actual Loops"] >= venues]
    assert len(walks) == 1, plan
    counted = _generic_plans(big_agenda, events.EventFilters(), table="event_month_counts",
                             run=lambda session, _filters: organisations.list_organisations(
                                 session, filters=organisations.OrganisationFilters(),
                                 after=None, limit=50))
    assert len(counted) == 1 and not _seq_scans(counted[0]), counted
    assert [index for _node, index in _scans(counted[0])] == ["ix_event_month_counts_totals"]


def _kept_page(session, filters: events.EventFilters) -> None:
    events.list_events(session, filters=filters, today=TODAY, after=None, limit=25,
                       rendering="plans")


def test_a_pages_kept_summaries_are_looked_up_by_key_even_when_planned_on_an_empty_table(
        postgres, big_agenda):
    """The lists' statements that read the summaries kept as JSON (models/events.py
    KEPT_SUMMARIES) are planned once: planned while the table is empty (after the
    migration, after a crash), a join of it was a hash join reading the whole table for
    every page once it had filled, and so did a lookup of each row by a sequential scan
    (adapters/direct.py `PLANNED_ONCE_SETTINGS`). Each row's kept summary is looked up by
    its event's id through the hash of it (migration 0030: two pages a row at a million
    events, against five through the table's key)."""
    # The table's statistics as an ANALYZE of it empty leaves them (autovacuum's, after
    # the tests' rolled-back rows; seen on CI): estimated at no rows, whatever it holds.
    big_agenda.execute(text("ANALYZE event_summaries"))
    for name in PLANNED_ONCE:
        plans = _generic_plans(big_agenda, HOT_FILTERS[name], run=_kept_page)
        assert plans, name
        for plan in plans:
            assert "event_summaries" not in _seq_scans(plan), (name, plan)
            assert ("Index Scan", "ix_event_summaries_event_id") in _scans(plan), (name, plan)


def test_an_organisations_running_events_are_found_among_all_running_ones(postgres,
                                                                          big_agenda):
    """The multi-day events still running that an organisation's facet counts add
    (models/facets.py `_multi_day`, `_listed`) are planned once: the plan made for any organisation
    reads every multi-day event running through their own small index, then picks the
    organisation's among them, whatever the statistics say of the organisation. (With the
    organisation's condition in the scan, the plan made for any organisation walked its
    ordered index at a million events: the busiest's 4,774 entries, for none running.)"""
    for number, other in enumerate([OrganisationFactory() for _ in range(20)] * 3):
        factories.EventFactory(organisation=other, venue=big_agenda.get(Venue, "v0"),
                               date=TODAY + dt.timedelta(days=number - 30),
                               end_date=TODAY + dt.timedelta(days=number - 28))
    big_agenda.execute(text("ANALYZE events"))
    filters = events.EventFilters(organisation_id=other.id, facets=("genre", "city", "date"))
    plans = _generic_plans(big_agenda, filters, run=lambda session, filters: facets.count(
        session, filters=filters, today=TODAY))
    assert len(plans) == 1, plans
    read = [node for node in _nodes(plans[0]) if node.get("Relation Name") == "events"]
    assert [node.get("Index Name") for node in read] == ["ix_events_running"], plans
    assert "organisation_id" not in f"{read[0].get('Index Cond')} {read[0].get('Filter')}"
    picked = [node for node in _nodes(plans[0]) if node["Node Type"] == "CTE Scan"]
    assert len(picked) == 1 and "organisation_id" in picked[0]["Filter"], plans
    counted = facets.count(big_agenda, filters=filters, today=TODAY)
    assert sum(day["count"] for day in json.loads(counted["date"])) > 0, counted


def test_an_organisations_counts_with_events_begun_before_from_are_planned_once(postgres,
                                                                             big_agenda):
    """With one of its multi-day events begun before `from` and still running, an
    organisation's tops count it in the kept counts' statement (models/facets.py
    `_kept_top`): that statement too is planned once, reading the running events through
    their own index and picking the organisation's above it; the counts include it."""
    owner = OrganisationFactory()
    factories.EventFactory(organisation=owner, venue=big_agenda.get(Venue, "v0"),
                           date=TODAY - dt.timedelta(days=2), end_date=TODAY + dt.timedelta(days=2),
                           genre_names=["Ambient"])
    factories.EventFactory(organisation=OrganisationFactory(), venue=big_agenda.get(Venue, "v1"),
                           date=TODAY - dt.timedelta(days=1), end_date=TODAY + dt.timedelta(days=1),
                           genre_names=["Ambient"])
    big_agenda.execute(text("ANALYZE events"))
    filters = events.EventFilters(organisation_id=owner.id, facets=("genre", "city"))
    plans = _generic_plans(big_agenda, filters, run=lambda session, filters: facets.count(
        session, filters=filters, today=TODAY))
    assert len(plans) == 2, plans  # the running events, the kept counts with them
    for plan in plans:
        indexes, read = _events_read(plan)
        assert indexes == {"ix_events_running"} and "events" not in _seq_scans(plan), plan
        assert not any("organisation_id" in f"{node.get('Index Cond')} {node.get('Filter')} "
                                             f"{node.get('Recheck Cond')}" for node in read), read
        picked = [node for node in _nodes(plan) if node["Node Type"] == "CTE Scan"]
        assert picked and all("organisation_id" in node["Filter"] for node in picked), plan
    counted = facets.count(big_agenda, filters=filters, today=TODAY)
    assert json.loads(counted["genre"]) == [{"value": "Ambient", "count": 1}], counted


def _events_read(plan: str) -> tuple[set[str], list[dict]]:
    """The indexes of events a plan reads (its own ix_events_*), and its nodes reading the
    events table or one of those indexes."""
    nodes = [node for node in _nodes(plan) if node.get("Relation Name") == "events"
             or str(node.get("Index Name", "")).startswith("ix_events")]
    return {node["Index Name"] for node in nodes if "Index Name" in node}, nodes
