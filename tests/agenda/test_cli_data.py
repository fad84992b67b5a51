"""`agenda import`, `agenda demo-data` and the demo's first start, through the command line.

These commit real rows, so every test uses ids of its own and removes them afterwards.
"""

import datetime as dt
import json
import random
import re
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import delete, func, or_, select

from agenda import cli
from agenda.demo import catalogue as demo_data
from models import members
from models.artists import Artist
from models.db import make_engine, make_sessionmaker
from agenda.demo.people import DEMO_ORGANISATION
from models.events import Event, EventArtist, EventGenre
from models.organisations import Organisation
from models.people import Mark, Membership, Person
from models.releases import Release, ReleaseArtist
from models.tickets import DeliveryBatch, ExternalSales, Ticket
from models.venues import Venue

EXAMPLE = Path(__file__).parents[2] / "docs" / "example-import.jsonl"


def _run(database_url, *args):
    return CliRunner().invoke(cli.main, list(args), env={"AGENDA_DATABASE_URL": database_url},
                              catch_exceptions=False)


class _Rows:
    """The rows of one test in a database: counted by id prefix, removed at the end."""

    def __init__(self, database_url: str, prefix: str):
        self.engine = make_engine(database_url)
        self.sessions = make_sessionmaker(self.engine)
        self.prefix = prefix

    def count(self, model) -> int:
        with self.sessions() as session:
            return session.scalar(select(func.count()).where(model.id.like(f"{self.prefix}%")))

    def get(self, model, id_):
        with self.sessions() as session:
            return session.get(model, id_)

    def remove(self) -> None:
        like = f"{self.prefix}%"
        with self.sessions.begin() as session:
            for model in (Ticket, Mark):
                session.execute(delete(model).where(or_(model.event_id.like(like),
                                                        model.person_id.like(like))))
            for model in (DeliveryBatch, ExternalSales):
                session.execute(delete(model).where(model.event_id.like(like)))
            session.execute(delete(Membership).where(Membership.person_id.like(like)))
            session.execute(delete(Person).where(Person.id.like(like)))
            session.execute(delete(EventArtist).where(EventArtist.event_id.like(like)))
            session.execute(delete(EventGenre).where(EventGenre.event_id.like(like)))
            session.execute(delete(Event).where(Event.id.like(like)))
            session.execute(delete(ReleaseArtist).where(ReleaseArtist.release_id.like(like)))
            for model in (Release, Artist, Venue, Organisation):
                session.execute(delete(model).where(model.id.like(like)))
            # The demo organisation, when the test's demo data made it and nothing else is its.
            session.execute(delete(Organisation).where(
                Organisation.name == DEMO_ORGANISATION,
                ~select(Event.id).where(Event.organisation_id == Organisation.id).exists(),
                ~select(Membership.person_id)
                .where(Membership.organisation_id == Organisation.id).exists()))
        self.engine.dispose()


@pytest.fixture
def rows(database_url):
    """Rows of ids that start with a prefix of this test (`rows.prefix`), removed afterwards."""
    made = _Rows(database_url, f"t{uuid.uuid4().hex[:8]}-")
    yield made
    made.remove()


@pytest.fixture
def demo_rows(database_url):
    """A seed of this test's own; its demo rows are removed afterwards."""
    made = _Rows(database_url, f"demo{random.randrange(10**8, 10**9)}-")
    yield made
    made.remove()


def _example(prefix: str, tmp_path: Path, *, extra: list[dict] = ()) -> Path:
    """The documented example with this test's ids (and names, which are unique)."""
    records = []
    for line in EXAMPLE.read_text().splitlines():
        record = json.loads(line)
        for key in ("id", "venue_id", "organisation_id", "event_id"):
            if key in record:
                record[key] = prefix + record[key]
        for key in ("lineup", "artists"):
            record[key] = [prefix + (entry["id"] if isinstance(entry, dict) else entry)
                           for entry in record.get(key, [])] or record.get(key)
            if record[key] is None:
                del record[key]
        if record["kind"] == "organisation":
            record["name"] += f" {prefix}"
        if record.get("slug"):
            record["slug"] = f"{prefix}{record['slug']}"
        records.append(record)
    path = tmp_path / "import.jsonl"
    path.write_text("\n".join(json.dumps(record) for record in [*records, *extra]) + "\n")
    return path


def test_import_writes_a_good_file_and_says_what_it_did(database_url, rows, tmp_path):
    path = _example(rows.prefix, tmp_path)
    result = _run(database_url, "import", str(path))
    assert result.exit_code == 0, result.output
    assert "event: 4 created" in result.stdout and "release: 2 created" in result.stdout
    assert rows.count(Event) == 4 and rows.count(Venue) == 3
    assert rows.get(Event, f"{rows.prefix}polderlicht-2027").festival_key == "polderlicht"
    again = _run(database_url, "import", str(path))
    assert again.exit_code == 0 and "event: 4 unchanged" in again.stdout


def test_import_of_a_bad_file_names_each_bad_line_and_writes_nothing(database_url, rows,
                                                                      tmp_path):
    bad = [{"kind": "venue", "id": f"{rows.prefix}x", "name": "X", "city": "Gent",
            "country": "BE", "lat": 51.05, "lng": 3.72},
           {"kind": "event", "id": f"{rows.prefix}y", "title": "Y", "date": "2027-01-01",
            "start": "22:00", "end": "04:00", "venue_id": f"{rows.prefix}nowhere",
            "organisation_id": f"{rows.prefix}nachtwerk", "source": "s"}]
    path = _example(rows.prefix, tmp_path, extra=bad)
    result = _run(database_url, "import", str(path))
    assert result.exit_code == 1
    assert result.stderr.splitlines()[1:] == [
        "line 18: source is required: on the record, or as the file's source",
        f"line 19: venue_id '{rows.prefix}nowhere' does not exist"]
    assert "2 bad lines; nothing was imported." in result.stderr
    assert rows.count(Event) == rows.count(Venue) == rows.count(Organisation) == 0


def test_import_records_the_given_source(database_url, rows, tmp_path):
    venue = {"kind": "venue", "id": f"{rows.prefix}v", "name": "V", "city": "Gent",
             "country": "BE", "lat": 51.05, "lng": 3.72}
    path = tmp_path / "venues.jsonl"
    path.write_text(json.dumps(venue) + "\n")
    result = _run(database_url, "import", str(path), "--source", "partner-feed")
    assert result.exit_code == 0, result.output
    assert rows.get(Venue, f"{rows.prefix}v").source == "partner-feed"


def test_demo_data_adds_an_agenda_once_per_seed(database_url, demo_rows):
    seed = demo_rows.prefix.removeprefix("demo").rstrip("-")
    result = _run(database_url, "demo-data", "--events", "100", "--seed", seed)
    assert result.exit_code == 0, result.output
    assert f"demo data, seed {seed}: added 8 organisations, 12 venues, 40 artists" in result.stdout
    assert "300 people" in result.stdout
    # The agenda's events and the demo organisation's own nights.
    assert demo_rows.count(Event) == 110
    again = _run(database_url, "demo-data", "--events", "100", "--seed", seed)
    assert again.exit_code == 0 and "added 0 organisations" in again.stdout
    assert demo_rows.count(Event) == 110


def test_demo_data_refuses_sizes_outside_its_range(database_url):
    for size in ("99", "1000001"):
        result = _run(database_url, "demo-data", "--events", size)
        assert result.exit_code == 2 and "--events" in result.output


def test_the_demo_loads_its_agenda_on_the_first_start_only(tmp_path, monkeypatch):
    # A database of its own: the first start is the one into an agenda without events.
    url = f"sqlite:///{tmp_path / 'demo.sqlite3'}"
    served = []
    # The demo sets the site address for the server it starts; keep that out of other tests.
    monkeypatch.setenv("AGENDA_SITE_URL", "http://127.0.0.1:8099")
    monkeypatch.setattr(cli, "_serve", lambda host, port, workers: served.append(port))
    monkeypatch.setattr(cli, "DEMO_EVENTS", 300)
    first = _run(url, "demo", "--port", "8099")
    assert first.exit_code == 0, first.output
    assert "demo data, seed 1: added" in first.stdout and served == [8099]
    # The agenda and the demo organisation's own nights (tonight's among them).
    engine = make_engine(url)

    def events():
        with make_sessionmaker(engine)() as session:
            return session.scalar(select(func.count()).select_from(Event))

    assert events() == 310
    assert "http://127.0.0.1:8099/v1/events/demo1-evt-dn-next/attendance" in first.stdout
    assert "\"code\": \"" in first.stdout and "http://127.0.0.1:8099/v1/scan" in first.stdout
    assert "/v1/events/demo1-evt-dn-ext/external-tickets" in first.stdout
    # A member who signs in: the demo organisation's owner, a new password every run.
    assert _signs_in_as_owner(engine, first.stdout)
    second = _run(url, "demo", "--port", "8099")
    assert second.exit_code == 0 and "demo data" not in second.stdout
    assert _signs_in_as_owner(engine, second.stdout)
    assert _member(first.stdout)[1] != _member(second.stdout)[1]
    assert events() == 310
    # A start on a later day brings that day's nights, with tickets to scan.
    tomorrow = demo_data.today_in_amsterdam() + dt.timedelta(days=1)
    monkeypatch.setattr(demo_data, "today_in_amsterdam", lambda: tomorrow)
    later = _run(url, "demo", "--port", "8099")
    assert later.exit_code == 0 and "2 events" in later.stdout
    assert events() == 312
    engine.dispose()


def _member(printed: str) -> tuple[str, str]:
    """(email, password) of the member `agenda demo` printed."""
    email = re.search(r"^  email +(\S+)$", printed, re.M).group(1)
    return email, re.search(r"^  password +(\S+)$", printed, re.M).group(1)


def _signs_in_as_owner(engine, printed: str) -> bool:
    """Whether the printed member signs in and owns the demo organisation."""
    email, password = _member(printed)
    with make_sessionmaker(engine)() as session:
        person = members.sign_in(session, email=email, password=password, secret_key="demo",
                                 now=0)
        roles = members.roles_of(session, person.id)
    return [(name, role) for _id, name, role in roles] == [(DEMO_ORGANISATION, "owner")]
