"""Contract: schemathesis against the running ASGI app, through every Connexion middleware.

Every implemented operation is exercised with positive and negative data and all
checks, using a token that holds every scope. The default run is bounded and
seeded; `AGENDA_CONTRACT_EXAMPLES=500 tox -e contract` is the long run.
"""

import datetime as dt
import os
import time

import pytest
import schemathesis
from schemathesis.config import SchemathesisConfig
from schemathesis.core.parameters import ParameterLocation

from models import badges, facets
from models.calendar import today
from models.changes import RETENTION
from tests.factories import (ArtistFactory, EventFactory, PersonFactory, ReleaseFactory,
                             TicketFactory, TokenReportFactory, VenueFactory)

EXAMPLES = int(os.environ.get("AGENDA_CONTRACT_EXAMPLES", "30"))
SEED = int(os.environ.get("AGENDA_CONTRACT_SEED", "20261125"))



@pytest.fixture
def contract_schema(app):
    config = SchemathesisConfig.from_dict({"seed": SEED, "generation": {"max-examples": EXAMPLES}})
    return schemathesis.openapi.from_asgi("/v1/openapi.json", app, config=config)


@pytest.fixture
def unlimited(app, monkeypatch):
    """Schemathesis sends far more than 120 requests a minute, many without a token;
    the limits themselves are tested in tests/edge/test_limits.py."""
    monkeypatch.setattr(app.service.usage, "per_minute", 10**9)
    monkeypatch.setattr("edge.limits.UNAUTHENTICATED_PER_MINUTE", 10**9)


@pytest.fixture
def catalogue(db):
    """A small but varied agenda, so responses are checked with real content in them."""
    day = today()
    artists = [ArtistFactory(agency={"name": "Agency", "url": "https://agency.example"},
                             aliases=["A.K.A."]), ArtistFactory()]
    venue = VenueFactory(facts={"capacity": 1500, "rooms": "2", "parking": "no"})
    EventFactory(venue=venue, acts=artists, genre_names=["Techno", "Acid"],
                 timetable={"Main": [["23:00", artists[0].name]]},
                 maps=[{"label": "Site", "image_url": "https://img.example/m.png", "source": None}])
    EventFactory(date=day, end_date=day + dt.timedelta(days=2), festival_key="fest",
                 season=day.year, price=None, price_max=None, ticket_url=None,
                 postponed_to=day + dt.timedelta(days=40), rules=["18+"], dress="Black")
    EventFactory(cancelled=True, cancel_reason="Storm", price=0, price_max=0)
    # A festival with reports and a profile with badges: found when a generated id is theirs.
    festival = EventFactory(id="festival", festival_key="fest", season=day.year - 1)
    for channel in ("presale", "onsite", "onsite"):
        TokenReportFactory(event_id=festival.id, channel=channel)
    person = PersonFactory(id="person", handle="raver")
    TicketFactory(event_id=festival.id, person_id=person.id, status="used", scanned_at=1)
    badges.award(db, [person.id])
    ReleaseFactory(credits=artists, type="ep", apple_music_url="https://music.apple.example/1")


schema = schemathesis.pytest.from_fixture("contract_schema")


@pytest.mark.contract
@schema.parametrize()
def test_every_implemented_operation_keeps_the_contract(case, auth, catalogue, unlimited):
    if case.query and not case.meta.is_negative_at(ParameterLocation.QUERY):
        _make_positive(case.query)
    if case.path_parameters and not case.meta.is_negative_at(ParameterLocation.PATH):
        _without_nul(case.path_parameters)
    case.call_and_validate(headers=auth)


def _make_positive(query: dict) -> None:
    """Keep generated "valid" queries valid where OpenAPI cannot say what valid is.

    A cursor is signed by the server (clients never make one up), and some parameters
    depend on each other (lat with lng, radius_km with both, from <= to,
    min_price <= max_price) or are bounded by a rule (no day before 1900-01-01);
    tests/handlers/test_events.py and tests/edge/test_inputs.py check those 400s. So do
    facets (day counts over at most 62 days; text, price, tickets or radius only within a
    venue, artist or organisation): tests/handlers/test_event_facets.py checks those. The
    change feed's `since` is at most 30 days back and not in the future
    (tests/handlers/test_changes.py).
    """
    query.pop("cursor", None)
    _without_nul(query)
    if ("lat" in query) != ("lng" in query):
        query.pop("lat", None)
        query.pop("lng", None)
    if "radius_km" in query and "lat" not in query:
        query.pop("radius_km")
    for name in ("from", "to"):
        if name in query and str(query[name]) < "1900-01-01":
            query[name] = "1900-01-01"
    if "from" in query and "to" in query and str(query["to"]) < str(query["from"]):
        query["from"], query["to"] = query["to"], query["from"]
    if "min_price" in query and "max_price" in query and query["min_price"] > query["max_price"]:
        query["min_price"], query["max_price"] = query["max_price"], query["min_price"]
    if "since" in query and not time.time() - RETENTION < int(query["since"]) <= time.time():
        query["since"] = int(time.time()) - 3600  # the change feed keeps 30 days
    if "facets" in query and (_facets_window_too_long(query) or _facets_unbounded(query)):
        query.pop("facets")


def _facets_window_too_long(query: dict) -> bool:
    if "date" not in str(query["facets"]) or "to" not in query:
        return False
    first = dt.date.fromisoformat(str(query["from"])) if "from" in query else today()
    return (dt.date.fromisoformat(str(query["to"])) - first).days + 1 > facets.MAX_DAYS


def _facets_unbounded(query: dict) -> bool:
    unkept = {"q", "has_tickets", "max_price", "min_price", "lat"} & set(query)
    return bool(unkept) and not {"venue_id", "artist_id", "organisation_id"} & set(query)


def _without_nul(values: dict) -> None:
    """A NUL is refused (400, tests/edge/test_problems.py): PostgreSQL cannot hold it."""
    for name, value in list(values.items()):
        if isinstance(value, str) and "\x00" in value:
            values[name] = value.replace("\x00", "")
