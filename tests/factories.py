"""factory_boy factories for test data, bound to the test's session by `conftest.db`."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import factory
from sqlalchemy import text
from factory.alchemy import SQLAlchemyModelFactory

from models.artists import Artist
from models.db import new_id, now
from models import facets, festivals
from models.events import Event, EventArtist, EventGenre, denormalize
from models.organisations import Organisation
from models.people import Mark, Membership, Person
from models.tickets import Ticket
from models.releases import Release, ReleaseArtist
from models.text import fold
from models.venues import Venue
from tests.api import day

AMSTERDAM = ZoneInfo("Europe/Amsterdam")


class _Base(SQLAlchemyModelFactory):
    class Meta:
        abstract = True
        sqlalchemy_session = None
        sqlalchemy_session_persistence = "flush"


class OrganisationFactory(_Base):
    """An organisation (not suspended, no ticket shop unless given)."""

    class Meta:
        model = Organisation

    id = factory.LazyFunction(lambda: new_id("org"))
    name = factory.Sequence(lambda n: f"Organisation {n}")
    bio = "Nights in the low countries."
    website = "https://organisation.example"
    verified = False
    since = 2015
    ticket_shop_url = None
    suspended = False
    created_at = factory.LazyFunction(now)


class VenueFactory(_Base):
    """A venue in Amsterdam unless told otherwise."""

    class Meta:
        model = Venue

    id = factory.LazyFunction(lambda: new_id("ven"))
    name = factory.Sequence(lambda n: f"Venue {n}")
    name_key = factory.LazyAttribute(lambda venue: fold(venue.name))
    city = "Amsterdam"
    city_key = factory.LazyAttribute(lambda venue: fold(venue.city))
    country = "NL"
    area = "Centrum"
    address = "Straat 1"
    website = "https://venue.example"
    image_url = "https://img.example/venue.jpg"
    lat = 52.3676
    lng = 4.9041
    tags = factory.LazyFunction(lambda: ["club"])
    rating = 4.2
    reviews_count = 10
    info = "A club."
    accessibility = "Step-free entrance."
    rules = factory.LazyFunction(lambda: ["No photos on the dancefloor"])
    rules_url = "https://venue.example/rules"
    facts = factory.LazyFunction(lambda: {"capacity": 800, "lockers": "yes"})
    source = "test"
    source_url = "https://source.example/venue"
    updated_at = factory.LazyFunction(now)


class ArtistFactory(_Base):
    """A Dutch techno artist unless told otherwise."""

    class Meta:
        model = Artist

    id = factory.LazyFunction(lambda: new_id("art"))
    name = factory.Sequence(lambda n: f"Artist {n}")
    name_key = factory.LazyAttribute(lambda artist: fold(artist.name))
    genre = "Techno"
    country = "NL"
    city = "Rotterdam"
    image_url = "https://img.example/artist.jpg"
    verified = False
    links = factory.LazyFunction(lambda: {"soundcloud": "https://soundcloud.example/a"})
    bio = "Plays records."
    aliases = factory.LazyFunction(list)
    agency = None
    source = "test"
    source_url = "https://source.example/artist"
    updated_at = factory.LazyFunction(now)


class EventFactory(_Base):
    """An approved event tomorrow at a new venue, by a new organisation.

    `genres=["Techno"]` and `lineup=[artist, ...]` set the bill; the venue copies are
    written by the domain's `denormalize`, as the import does.
    """

    class Meta:
        model = Event

    id = factory.LazyFunction(lambda: new_id("evt"))
    title = factory.Sequence(lambda n: f"Night {n}")
    slug = factory.LazyAttribute(lambda event: f"{fold(event.title).replace(' ', '-')}-{event.id[-6:]}")
    date = factory.LazyFunction(lambda: day(1))
    end_date = None
    start = "23:00"
    end = "06:00"
    timezone = "Europe/Amsterdam"
    status = "approved"
    cancelled = False
    cancel_reason = None
    postponed_to = None
    price = 15.0
    price_max = 25.0
    currency = "EUR"
    age = 18
    ticket_url = "https://tickets.example/night"
    artwork_url = "https://img.example/night.jpg"
    venue = factory.SubFactory(VenueFactory)
    organisation = factory.SubFactory(OrganisationFactory)
    description = "All night long."
    timetable = factory.LazyFunction(dict)
    maps = factory.LazyFunction(list)
    rules = factory.LazyFunction(list)
    dress = None
    source = "test"
    source_url = "https://source.example/event"
    updated_at = factory.LazyFunction(now)
    festival_key = None
    season = None
    external_ticketing = False

    @classmethod
    def _create(cls, model_class, *args, genre_names=("Techno",), acts=(), **kwargs):
        session = cls._meta.sqlalchemy_session
        event = model_class(*args, **kwargs)
        event.genres = [EventGenre(genre=name, position=i) for i, name in enumerate(genre_names)]
        event.lineup = [EventArtist(artist_id=artist.id, name=artist.name, position=i)
                        for i, artist in enumerate(acts)]
        denormalize(event)
        session.add(event)
        session.flush()
        return event


class ReleaseFactory(_Base):
    """A single released a week ago, by the artists given as `credits`."""

    class Meta:
        model = Release

    id = factory.LazyFunction(lambda: new_id("rel"))
    title = factory.Sequence(lambda n: f"Track {n}")
    type = "single"
    release_date = factory.LazyFunction(lambda: day(-7))
    genre = "Techno"
    spotify_url = "https://open.spotify.example/track/1"
    apple_music_url = None
    cover_url = "https://img.example/cover.jpg"
    source = "test"
    source_url = "https://source.example/release"
    updated_at = factory.LazyFunction(now)

    @classmethod
    def _create(cls, model_class, *args, credits=(), **kwargs):
        session = cls._meta.sqlalchemy_session
        release = model_class(*args, **kwargs)
        release.artists = [ReleaseArtist(artist_id=artist.id, position=i)
                           for i, artist in enumerate(credits)]
        session.add(release)
        session.flush()
        return release


class PersonFactory(_Base):
    """A member with a public profile."""

    class Meta:
        model = Person

    id = factory.LazyFunction(lambda: new_id("per"))
    handle = factory.Sequence(lambda n: f"raver{n}")
    name = factory.Sequence(lambda n: f"Raver {n}")
    email = factory.LazyAttribute(lambda person: f"{person.handle}@mail.example")
    email_key = factory.LazyAttribute(lambda person: person.email.lower())
    visibility = "public"
    region = "Noord-Holland"
    birth_year = 1995
    created_at = factory.LazyFunction(now)
    last_login_at = None


class MembershipFactory(_Base):
    """A person's role in an organisation."""

    class Meta:
        model = Membership

    person_id = factory.LazyFunction(lambda: PersonFactory().id)
    organisation_id = factory.LazyFunction(lambda: OrganisationFactory().id)
    role = "editor"


class MarkFactory(_Base):
    """A person going to an event."""

    class Meta:
        model = Mark

    person_id = factory.LazyFunction(lambda: PersonFactory().id)
    event_id = factory.LazyFunction(lambda: EventFactory().id)
    kind = "going"
    created_at = factory.LazyFunction(now)


class TicketFactory(_Base):
    """A valid ticket sold through the service to a new member."""

    class Meta:
        model = Ticket

    id = factory.LazyFunction(lambda: new_id("tkt"))
    event_id = factory.LazyFunction(lambda: EventFactory().id)
    code = factory.Sequence(lambda n: f"CODE{n:08d}")
    person_id = factory.LazyFunction(lambda: PersonFactory().id)
    type = "Regular"
    holder = "Raver"
    price = 20.0
    source = "service"
    status = "valid"
    scanned_at = None
    created_at = factory.LazyFunction(now)
    batch_id = None
    buyer_email = None
    buyer_email_hash = None
    invite = True
    linked_at = None


def tonight_event(**fields) -> Event:
    """An event whose doors are open now (it started an hour ago, in Amsterdam)."""
    started = dt.datetime.now(AMSTERDAM) - dt.timedelta(hours=1)
    return EventFactory(date=started.date(), start=started.strftime("%H:%M"),
                        end=(started + dt.timedelta(hours=5)).strftime("%H:%M"), **fields)


class TokenReportFactory(_Base):
    """A presale report of 2.50 a token by a visitor whose ticket was scanned.

    Created as every writer of reports does it: the festival's figures and outlier
    marks are refreshed after it.
    """

    class Meta:
        model = festivals.TokenReport

    id = factory.LazyFunction(lambda: new_id("rep"))
    event_id = factory.LazyFunction(
        lambda: EventFactory(festival_key="test-fest", season=day(0).year).id)
    person_id = None
    paid = 50.0
    tokens = 20.0
    drink_tokens = 2.0
    channel = "presale"
    refund = "no"
    tier = "ticket"
    outlier = False
    source = "test"
    created_at = factory.Sequence(lambda n: 1_750_000_000 + 60 * n)

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        session = cls._meta.sqlalchemy_session
        report = model_class(*args, **kwargs)
        session.add(report)
        session.flush()
        festivals.refresh(session, [report.event_id])
        return report


def bind(session) -> None:
    """Make every factory create its objects in `session`."""
    for factory_class in (OrganisationFactory, VenueFactory, ArtistFactory, EventFactory,
                          ReleaseFactory, PersonFactory, MembershipFactory, MarkFactory,
                          TicketFactory, TokenReportFactory):
        factory_class._meta.sqlalchemy_session = session


def settled(connection) -> None:
    """What the test wrote so far as a commit leaves it: PostgreSQL renews the catalogue
    stamp and the kept event counts as a change commits (models/stamp.py, models/facets.py),
    and a test never commits. Switching the deferred renewals to IMMEDIATE runs them now,
    once. `connection`: a session or a connection."""
    dialect = getattr(connection, "dialect", None) or connection.get_bind().dialect
    if dialect.name == "postgresql":
        connection.execute(text("SET CONSTRAINTS ALL IMMEDIATE"))
        connection.execute(text("SET CONSTRAINTS ALL DEFERRED"))


def kept_counts(connection) -> set[tuple]:
    """Every kept count of events (models/facets.py), by day and by month."""
    return {tuple(row) for table in ("event_day_counts", "event_month_counts")
            for row in connection.execute(text(f"SELECT '{table}', * FROM {table}"))}


def recounted_counts(connection) -> set[tuple]:
    """The counts made afresh from the events, as the migration fills them."""
    dialect = connection.get_bind().dialect.name if hasattr(connection, "get_bind") else \
        connection.dialect.name
    renamed = {"event_day_counts": "recount_days", "event_month_counts": "recount_months"}
    for table, copy in renamed.items():
        connection.execute(text(f"CREATE TEMPORARY TABLE {copy} AS SELECT * FROM {table} "
                                "WHERE 1 = 0"))
    for statement in facets.recount_all(dialect):
        for table, copy in renamed.items():
            statement = statement.replace(table, copy)
        connection.execute(text(statement))
    found = {(table, *row) for table, copy in renamed.items()
             for row in connection.execute(text(f"SELECT * FROM {copy}"))}
    for copy in renamed.values():
        connection.execute(text(f"DROP TABLE {copy}"))
    return found
