"""Importing JSON Lines: every line checked first, bad lines named by number, all or nothing."""

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select

from models import festivals, importing
from models.artists import Artist
from models.errors import BadRequest
from models.events import Event
from models.organisations import Organisation
from models.releases import Release
from models.venues import Venue
from tests.factories import EventFactory, OrganisationFactory, VenueFactory

EXAMPLE = Path(__file__).parents[2] / "docs" / "example-import.jsonl"
MODELS = (Organisation, Venue, Artist, Event, Release)


def _lines(*records) -> list[str]:
    return [json.dumps(record) for record in records]


def _counts(db) -> dict:
    return {model.__tablename__: db.scalar(select(func.count()).select_from(model))
            for model in MODELS}


ORGANISATION = {"kind": "organisation", "id": "imp-org", "name": "Import Nights"}
VENUE = {"kind": "venue", "id": "imp-ven", "name": "De Kaai", "city": "Gent", "country": "BE",
         "lat": 51.0662, "lng": 3.7352, "source": "feed"}
ARTIST = {"kind": "artist", "id": "imp-art", "name": "DJ Lente", "genre": "Disco",
          "source": "feed"}
EVENT = {"kind": "event", "id": "imp-evt", "title": "Disco Kerst", "date": "2027-12-19",
         "start": "22:00", "end": "04:00", "venue_id": "imp-ven", "organisation_id": "imp-org",
         "genres": ["Disco"], "lineup": ["imp-art"], "source": "feed"}
RELEASE = {"kind": "release", "id": "imp-rel", "title": "Zomeravond", "type": "single",
           "release_date": "2026-10-30", "genre": "Disco", "artists": ["imp-art"],
           "source": "feed"}
GOOD = (ORGANISATION, VENUE, ARTIST, EVENT, RELEASE)


def _problems(db, lines, **options) -> list[str]:
    with pytest.raises(BadRequest) as caught:
        importing.import_lines(db, lines=lines, **options)
    return [f"{param['name']}: {param['message']}" for param in caught.value.params]


def test_the_documented_example_imports(db):
    before = _counts(db)
    result = importing.import_lines(db, lines=EXAMPLE.read_text().splitlines())
    assert result.summary() == ("organisation: 2 created\nvenue: 3 created\nartist: 4 created\n"
                                "event: 4 created\nrelease: 2 created\ntoken_report: 2 created")
    assert {name: _counts(db)[name] - count for name, count in before.items()} == {
        "organisations": 2, "venues": 3, "artists": 4, "events": 4, "releases": 2}
    festival = db.get(Event, "polderlicht-2027")
    assert [act.name for act in festival.lineup] == ["Mira Voss", "Sanne Bakker", "DJ Lente",
                                                     "Kolder"]
    assert (festival.festival_key, festival.season, festival.city_key) == \
        ("polderlicht", 2027, "haarlem")
    assert festival.source == "nachtwerk-feed"
    assert db.get(Event, "sk-2026-12-19").cancel_reason == "The quay is closed for works."


def test_the_example_in_the_documentation_imports(db):
    doc = (EXAMPLE.parent / "import.md").read_text()
    block = doc.split("```json\n", 1)[1].split("```", 1)[0]
    result = importing.import_lines(db, lines=block.splitlines())
    assert result.summary() == ("organisation: 1 created\nvenue: 1 created\nartist: 1 created\n"
                                "event: 1 created")
    assert db.get(Event, "sk-2026-12-19").lineup[0].name == "DJ Lente"


def test_importing_the_same_file_again_changes_nothing(db):
    lines = EXAMPLE.read_text().splitlines()
    importing.import_lines(db, lines=lines)
    stamps = {event.id: event.updated_at for event in db.scalars(select(Event))}
    counts = _counts(db)
    result = importing.import_lines(db, lines=lines)
    assert set(result.summary().split("\n")) == {
        "organisation: 2 unchanged", "venue: 3 unchanged", "artist: 4 unchanged",
        "event: 4 unchanged", "release: 2 unchanged", "token_report: 2 unchanged"}
    assert _counts(db) == counts
    assert {event.id: event.updated_at for event in db.scalars(select(Event))} == stamps


def test_a_changed_record_is_updated_in_place(db):
    importing.import_lines(db, lines=_lines(*GOOD))
    moved = {**VENUE, "city": "Antwerpen", "lat": 51.22, "lng": 4.40}
    result = importing.import_lines(db, lines=_lines(moved))
    assert result.summary() == "venue: 1 updated"
    event = db.get(Event, "imp-evt")
    db.refresh(event)
    assert (event.city_key, event.lat) == ("antwerpen", 51.22)


def test_references_may_point_to_earlier_lines_or_to_the_database(db):
    venue, organisation = VenueFactory(), OrganisationFactory()
    event = {**EVENT, "venue_id": venue.id, "organisation_id": organisation.id}
    importing.import_lines(db, lines=_lines(ARTIST, event))
    assert db.get(Event, "imp-evt").venue is venue


@pytest.mark.parametrize(("line", "problem"), [
    ("{not json", "is not JSON (Expecting property name enclosed in double quotes at column 2)"),
    ("[1, 2]", "is not a JSON object"),
    (json.dumps({**VENUE, "kind": "club"}),
     "kind must be one of organisation, venue, artist, event, release, token_report, "
     "got 'club'"),
    (json.dumps({**ORGANISATION, "id": "imp-org-2", "name": None}), "name is required"),
    (json.dumps({**VENUE, "id": "imp-ven-2", "lat": 52.1, "lng": 0.2}),
     "lng 0.2 is outside the Netherlands and Belgium"),
    (json.dumps({**ARTIST, "id": "imp-art-2", "genre": "Tekno"}),
     "genre 'Tekno' is not a genre of the list"),
    (json.dumps({**EVENT, "id": "imp-evt-2", "venue_id": "nowhere"}),
     "venue_id 'nowhere' does not exist"),
    (json.dumps({**EVENT, "id": "imp-evt-2", "end_date": "2028-02-01"}),
     "end_date 2028-02-01 is more than 31 days after date 2027-12-19"),
    (json.dumps({**RELEASE, "id": "imp-rel-2", "type": "lp"}),
     "type must be one of single, ep, album, got 'lp'"),
    (json.dumps({**ARTIST, "source": None}),
     "source is required: on the record, or as the file's source"),
    (json.dumps(ARTIST), "artist id 'imp-art' is already on line 3"),
])
def test_each_kind_of_bad_line_is_reported_with_its_number(db, line, problem):
    lines = [*_lines(ORGANISATION, VENUE, ARTIST), line, *_lines(EVENT, RELEASE)]
    assert _problems(db, lines) == [f"line 4: {problem}"]


def test_a_file_with_one_bad_line_changes_nothing(db):
    before = _counts(db)
    bad = {**EVENT, "id": "imp-evt-bad", "genres": ["Disco", "Polka"]}
    assert _problems(db, _lines(*GOOD, bad)) == [
        "line 6: genres[1] 'Polka' is not a genre of the list"]
    assert _counts(db) == before


def test_every_bad_line_is_reported_at_once(db):
    lines = ["", *_lines({**VENUE, "country": "DE"}, {**ARTIST, "name": ""}), "   ",
             *_lines(ORGANISATION, {**EVENT, "start": "late"}, {**EVENT, "id": "imp-evt-2"})]
    # Line 7 points to the bad lines 2 and 3: those are told, not a missing venue and artist.
    assert _problems(db, lines) == [
        "line 2: country must be one of NL, BE, got 'DE'",
        "line 3: name must not be empty",
        "line 6: start must be a time HH:MM, got 'late'"]


def test_a_reference_to_a_later_line_says_where_it_is(db):
    assert _problems(db, _lines(ORGANISATION, VENUE, EVENT, ARTIST)) == [
        "line 3: lineup[0] 'imp-art' does not exist (it is on line 4: put it before this line)"]


def test_a_conflict_only_the_database_sees_undoes_the_whole_file(db):
    EventFactory(slug="disco-kerst")
    before = _counts(db)
    taken = {**EVENT, "slug": "disco-kerst"}
    assert _problems(db, _lines(ORGANISATION, VENUE, ARTIST, taken)) == [
        f"line 4: slug 'disco-kerst' is taken by event "
        f"{db.scalar(select(Event.id).where(Event.slug == 'disco-kerst'))!r}"]
    assert _counts(db) == before


def test_two_events_of_a_file_may_not_share_a_slug(db):
    first = {**EVENT, "slug": "disco-kerst"}
    second = {**EVENT, "id": "imp-evt-2", "slug": "disco-kerst"}
    lines = _lines(ORGANISATION, VENUE, ARTIST, first, second)
    assert _problems(db, lines) == [
        "line 5: slug 'disco-kerst' is already the slug of event 'imp-evt' on line 4"]


def test_the_file_source_is_recorded_where_a_record_names_none(db):
    records = [{key: value for key, value in record.items() if key != "source"}
               for record in GOOD]
    records[2]["source"] = "artist-feed"
    importing.import_lines(db, lines=_lines(*records), source="partner-feed")
    assert db.get(Event, "imp-evt").source == "partner-feed"
    assert db.get(Artist, "imp-art").source == "artist-feed"
    assert db.get(Release, "imp-rel").source == "partner-feed"


# --- token reports --------------------------------------------------------------------

FESTIVAL = {**EVENT, "id": "imp-fest", "title": "Zomerfeest", "festival_key": "zomerfeest",
            "season": 2027}
REPORT = {"kind": "token_report", "id": "imp-rep-1", "event_id": "imp-fest", "paid": 25,
          "tokens": 10, "drink_tokens": 2, "channel": "presale", "tier": "going",
          "created_at": 1_760_000_000, "source": "feed"}


def test_token_reports_import_and_their_festival_gets_figures(db):
    second = {**REPORT, "id": "imp-rep-2", "paid": 30, "channel": "onsite", "tier": "ticket"}
    result = importing.import_lines(db, lines=_lines(*GOOD[:4], FESTIVAL, REPORT, second))
    assert "token_report: 2 created" in result.summary()
    found = festivals.token_prices(db, "imp-fest")
    shown = found.figures.rounded()
    assert (shown["reports"], shown["presale"], shown["onsite"], shown["token_price"]) == (
        2, 2.5, 3.0, 3.0)
    stored = db.get(festivals.FestivalFigures, "imp-fest")
    assert (stored.reports, stored.token_price, stored.drink_price) == (2, 3.0, 6.0)
    # The same file again changes nothing, not even the time of a report.
    again = importing.import_lines(db, lines=_lines(*GOOD[:4], FESTIVAL, REPORT, second))
    assert "token_report: 2 unchanged" in again.summary()


def test_a_bad_token_report_names_every_bad_field(db):
    bad = {**REPORT, "paid": 0, "tokens": "ten", "channel": "bar", "tier": "vip",
           "refund": "maybe", "drink_tokens": 101, "colour": "red"}
    problems = _problems(db, _lines(*GOOD[:4], FESTIVAL, bad))
    assert len(problems) == 1 and problems[0].startswith("line 6: ")
    for said in ("paid must be at least 0.01", "tokens must be a number",
                 "channel must be one of presale, onsite", "tier must be one of ticket",
                 "refund must be one of yes, no, partial, unknown",
                 "drink_tokens must be at most 100", "colour is not a field of a token_report"):
        assert said in problems[0]


def test_a_token_report_needs_a_festival_and_an_existing_reporter(db):
    night = {**REPORT, "event_id": "imp-evt"}
    assert _problems(db, _lines(*GOOD[:4], night)) == [
        "line 5: event_id 'imp-evt' is not a festival (it has no festival_key)"]
    stranger = {**REPORT, "person_id": "nobody"}
    assert _problems(db, _lines(*GOOD[:4], FESTIVAL, stranger)) == [
        "line 6: person_id 'nobody' does not exist"]
    assert db.get(festivals.TokenReport, "imp-rep-1") is None
