"""Demo data: a realistic, deterministic agenda of nightlife in the Netherlands and Belgium.

`generate` builds the rows from a seed and a day (the same pair gives the same
rows); `add_demo_data` writes the ones the database lacks with bulk inserts,
then the people who go out and the demo organisation's own nights
(`agenda.demo.people`).
Every id carries the seed (`demo1-evt-42`), so running it again with the same
seed adds only what is missing and never a record twice; another seed builds
another agenda beside it. The people, places and nights are made up; the
cities and their coordinates are real.

The bulk path writes the copies `models.events.denormalize` keeps on events
itself, through `models.records.event_copies`, so both agree.
"""

from __future__ import annotations

import bisect
import collections
import contextlib
import dataclasses
import datetime as dt
import json
import random
from collections.abc import Callable, Iterator

from sqlalchemy import JSON, func, insert, select, text
from sqlalchemy.orm import Session

from models import calendar, facets
from models.artists import Artist
from models.records import TIMEZONES, event_copies
from models.events import Event, EventArtist, EventGenre
from models.genres import GENRES
from models.organisations import Organisation
from models.people import Person
from models.releases import Release, ReleaseArtist
from models.text import fold, slugify
from models.venues import Venue

MIN_EVENTS, MAX_EVENTS = 100, 1_000_000
MAX_SEED = 1_000_000_000
# Rows per INSERT batch, and events per random stream (so an event's data does not
# depend on how many events come before it in other chunks).
BATCH = 5000
CHUNK = 1000
SOURCE = "demo"
# From this many events (and at least as many as are there), PostgreSQL loads the event
# tables without their secondary indexes and foreign keys (see `_loading`).
REBUILD_FROM = 50_000
# Loaded rows of a table from which its statistics are renewed during a load.
ANALYZED_FROM = 5_000
_REBUILT = ("events", "event_genres", "event_artists")


@dataclasses.dataclass(frozen=True)
class City:
    """A real city: its name as the agenda spells it, country, centre and share of venues."""

    name: str
    country: str
    lat: float
    lng: float
    weight: int
    areas: tuple[str, ...]


CITIES = (
    City("Amsterdam", "NL", 52.3676, 4.9041, 20, ("Centrum", "Noord", "Oost", "West", "De Pijp",
                                                   "Westerpark", "Zuidoost")),
    City("Rotterdam", "NL", 51.9244, 4.4777, 12, ("Centrum", "Noord", "Zuid", "Delfshaven",
                                                   "Kralingen", "Feijenoord")),
    City("Utrecht", "NL", 52.0907, 5.1214, 7, ("Binnenstad", "Oost", "Zuilen", "Lombok")),
    City("Den Haag", "NL", 52.0705, 4.3007, 6, ("Centrum", "Scheveningen", "Laak",
                                                 "Zeeheldenkwartier")),
    City("Eindhoven", "NL", 51.4416, 5.4697, 5, ("Centrum", "Strijp", "Woensel", "Stratum")),
    City("Groningen", "NL", 53.2194, 6.5665, 5, ("Binnenstad", "Oosterpoort", "Helpman")),
    City("Nijmegen", "NL", 51.8126, 5.8372, 4, ("Centrum", "Oost", "Waalkade", "Lent")),
    City("Tilburg", "NL", 51.5555, 5.0913, 4, ("Centrum", "Spoorzone", "Noord")),
    City("Arnhem", "NL", 51.9851, 5.8987, 3, ("Centrum", "Spijkerkwartier", "Presikhaaf")),
    City("Maastricht", "NL", 50.8514, 5.6910, 3, ("Centrum", "Wyck", "Sphinxkwartier")),
    City("Haarlem", "NL", 52.3874, 4.6462, 2, ("Centrum", "Schalkwijk")),
    City("Leiden", "NL", 52.1601, 4.4970, 2, ("Centrum", "Noord")),
    City("Breda", "NL", 51.5719, 4.7683, 2, ("Centrum", "Belcrum")),
    City("Zwolle", "NL", 52.5168, 6.0830, 2, ("Centrum", "Assendorp")),
    City("Enschede", "NL", 52.2215, 6.8937, 2, ("Centrum", "Roombeek")),
    City("Brussel", "BE", 50.8503, 4.3517, 9, ("Centrum", "Elsene", "Sint-Gillis",
                                                "Schaarbeek", "Anderlecht")),
    City("Antwerpen", "BE", 51.2194, 4.4025, 7, ("Centrum", "Zuid", "Eilandje", "Borgerhout",
                                                  "Berchem")),
    City("Gent", "BE", 51.0543, 3.7174, 6, ("Centrum", "Dampoort", "Ledeberg", "Sint-Pieters")),
    City("Leuven", "BE", 50.8798, 4.7005, 3, ("Centrum", "Kessel-Lo", "Heverlee")),
    City("Liège", "BE", 50.6326, 5.5797, 3, ("Centre", "Outremeuse", "Guillemins")),
    City("Brugge", "BE", 51.2093, 3.2247, 2, ("Centrum", "Sint-Kruis")),
    City("Hasselt", "BE", 50.9307, 5.3325, 2, ("Centrum",)),
    City("Kortrijk", "BE", 50.8279, 3.2649, 2, ("Centrum",)),
    City("Mechelen", "BE", 51.0259, 4.4776, 1, ("Centrum",)),
)
FOREIGN_CITIES = {"DE": "Berlin", "GB": "London", "FR": "Paris", "IT": "Milano", "ES": "Barcelona",
                  "US": "Detroit", "ZA": "Johannesburg", "GH": "Accra"}
COUNTRY_WEIGHTS = {"NL": 45, "BE": 25, "DE": 8, "GB": 7, "FR": 4, "IT": 3, "ES": 2, "US": 3,
                   "ZA": 2, "GH": 1}
GENRE_WEIGHTS = {
    "Techno": 14, "House": 10, "Tech House": 7, "Hard Techno": 6, "Deep House": 5,
    "Melodic House & Techno": 5, "Hardstyle": 6, "Hardcore": 4, "Drum & Bass": 5, "Disco": 3,
    "Nu Disco": 2, "Afro House": 3, "Trance": 3, "Psytrance": 2, "Uptempo": 2, "Frenchcore": 2,
    "Minimal": 2, "Acid": 2, "Industrial": 1, "Progressive House": 2, "Italo Disco": 1,
    "Jungle": 1, "Dubstep": 1, "UK Garage": 2, "Bass House": 2, "Electro": 2, "Hip-Hop": 4,
    "R&B": 2, "Afrobeats": 2, "Amapiano": 2, "Dancehall": 1, "Reggaeton": 1, "Latin": 1,
    "Ambient": 1, "Pop": 2,
}
GROUP_OF = dict(GENRES)
GROUPS: dict[str, list[str]] = collections.defaultdict(list)
for _name, _group in GENRES:
    GROUPS[_group].append(_name)

FIRST_NAMES = (
    "Mira", "Sanne", "Joris", "Lotte", "Daan", "Femke", "Noor", "Bram", "Ilse", "Wout", "Anouk",
    "Thijs", "Eline", "Jasper", "Roos", "Sem", "Lieke", "Milan", "Fleur", "Ruben", "Amira",
    "Youssef", "Kofi", "Ayla", "Dries", "Lies", "Jens", "Marthe", "Arne", "Hanne", "Nina", "Leon",
    "Zoë", "Ivo", "Kato", "Senna", "Jules", "Lina", "Mats", "Yara", "Sven", "Merel", "Tijs",
    "Floor", "Gijs", "Nora", "Stijn", "Elif", "Ravi", "Inès", "Koen", "Vera", "Bas", "Jet",
    "Olaf", "Maud", "Pim", "Saar", "Teun", "Wies",
)
SURNAMES = (
    "Voss", "Bakker", "de Wit", "Peeters", "Janssens", "Visser", "Maes", "Claes", "Mulder",
    "Smit", "van Dijk", "Wouters", "Goossens", "de Graaf", "Hermans", "Vermeulen", "Kok",
    "Jacobs", "Dekker", "Willems", "Brouwer", "Martens", "de Bruin", "Aerts", "Lambrecht",
    "Verbeek", "Hendriks", "Mertens", "Koster", "Renders", "Stevens", "Dubois", "Leclercq",
    "van Leeuwen", "Bos", "Vos", "Prins", "Huisman", "Meijer", "Timmermans", "De Smet",
    "Van Damme", "Cools", "Boon", "Kuipers", "Postma", "Schouten", "Verhoeven", "Nijs", "Sels",
)
MONO_HEADS = ("Kolder", "Nacht", "Ruis", "Stoom", "Zwart", "Diep", "Grijs", "Storm", "Kern",
              "Echo", "Vonk", "Nevel", "Puls", "Vlam", "Golf", "Duin", "Mist", "Rook", "Staal",
              "Glas")
MONO_TAILS = ("", "vogel", "werk", "lab", "kracht", "lijn", "veld", "slag", "stroom", "wind",
              "licht", " Beat", " Boy", " Girl", " Machine", " System", " Unit", " Tape",
              " Room", " Dub")
CONCEPTS = (
    "Nachtdienst", "Diepgang", "Lichtkogel", "Zondagmiddag", "Kelderkoorts", "Stroomversnelling",
    "Havennacht", "Ondergrond", "Donkerblauw", "Ruis", "Echoput", "Vuurtoren", "Nachtvlucht",
    "Rookgordijn", "Slagwerk", "Vrije Val", "Molenwiek", "Tegenlicht", "Klankkast", "Bassin",
    "Kanaalzone", "Zwart Licht", "Nevel", "Kolk", "Sluis 7", "Dijkdisco", "Garagebox",
    "Ritmeester", "Bovenstroom", "Laagtij",
)
FESTIVALS = (
    "Polderlicht", "Duinwind", "Havenklank", "Bosgeluid", "Kanaalkoorts", "Scheldewind",
    "Zomerzin", "Veldwerk", "Strandgeruis", "Heidegloed", "Dijkdans", "Weidewaan", "Maasbries",
    "Rivierfeest", "Zandkasteel", "Lenteweide", "Oeverloos", "Zonnewende", "Bermbloei",
    "Kustkoorts",
)
ORGANISATION_HEADS = ("Nacht", "Donker", "Polder", "Kanaal", "Haven", "Diep", "Duister",
                      "Groen", "Zuid", "Noord", "Lage Landen", "Bas", "Kelder", "Dijk", "Stroom",
                      "Maan", "Zon", "Golf", "Rook", "Vuur")
ORGANISATION_TAILS = ("Collectief", "Events", "Presents", "Producties", "Nights", "Concepts",
                      "Records", "Soundsystem", "Kollektiv", "& Co")
VENUE_WORDS = ("Vonk", "Kolk", "Ruis", "Bunker", "Sluis", "Gieterij", "Smederij", "Kathedraal",
               "Loods", "Kantine", "Pakhuis", "Silo", "Werf", "Tunnel", "Remise", "Centrale",
               "Transformator", "Hangar", "Garage", "Drukkerij", "Brouwerij", "Gasfabriek",
               "Ketelhuis", "Machinehal", "Spoorloods", "Ampère", "Volta", "Kelvin", "Ohm",
               "Gemaal")
OPEN_AIR_WORDS = ("Polder", "Duin", "Heide", "Zand", "Weide", "Bos", "Oever", "Dijk", "Veld",
                  "Plas")
STREETS = ("Havenstraat", "Industrieweg", "Kanaalkade", "Stationsplein", "Spoorlaan", "Werfkade",
           "Molenstraat", "Lange Nieuwstraat", "Dokweg", "Oude Markt", "Veemarkt",
           "Brouwerijstraat", "Fabrieksstraat", "Kaaiplein", "Singel")
# (kind, share, name patterns, tags, capacity range)
VENUE_KINDS = (
    ("club", 60, ("Club {w}", "{w}", "De {w}", "Kelder {w}"),
     ("club", "late licence", "24h licence", "basement", "warehouse", "queer-friendly",
      "rooftop", "sound system"), (250, 2500)),
    ("bar", 15, ("Café {w}", "Bar {w}", "{w} Bar"),
     ("bar", "dj bar", "terrace", "free entry nights"), (80, 300)),
    ("hall", 12, ("Poppodium {w}", "{w} Hall", "{w}zaal"),
     ("concert hall", "live music", "seated balcony"), (600, 6000)),
    ("open air", 13, ("{w}park", "{w} Terrein", "Strand {w}", "Recreatieplas {w}"),
     ("open air", "festival grounds", "camping"), (3000, 40000)),
)
RULES = ("No photos on the dancefloor", "ID required (18+)", "No re-entry after 02:00",
         "Respect everyone: no harassment", "Zero tolerance for drugs", "Phone cameras taped",
         "No glass outside", "Tokens only at the bars")
# House rules of nights: none, one or two of the first six.
RULE_SETS = ([], *([rule] for rule in RULES[:6]),
             *([first, second] for first in RULES[:6] for second in RULES[:6] if first != second))
CANCEL_REASONS = ("Headliner is ill", "The venue was closed by the municipality",
                  "Too few tickets sold", "Weather warning (code orange)",
                  "Permit not granted in time")
DRESS = ("Dress to express", "All black", "No sportswear", "Comfortable shoes", "Fetish welcome")
PLATFORMS = ("soundcloud", "instagram", "spotify", "bandcamp", "resident_advisor")
AGENCIES = (("Polder Booking", "https://polderbooking.example"),
            ("Lowlands Artists", "https://lowlandsartists.example"),
            ("Nachtwacht Agency", "https://nachtwacht.example"),
            ("Scheldebooking", "https://scheldebooking.example"))
# Event statuses and minimum ages, with cumulative weights: a few events are never served.
STATUSES, STATUS_WEIGHTS = ("approved", "draft", "pending", "rejected"), (965, 977, 992, 1000)
AGES, AGE_WEIGHTS = (18, 16, 21, 0), (70, 80, 95, 100)
RELEASE_WORDS = ("Tidal", "Nachtzicht", "Zuiderzee", "Ondiep", "Lichtjaar", "Kanaal", "Stroom",
                 "Vloed", "Eb", "Ruis", "Mist", "Nevelbank", "Zoutwater", "Sluis", "Dijkbreuk",
                 "Polder", "Wolkenkrabber", "Noorderlicht", "Spoorloos", "Duisternis")


@dataclasses.dataclass
class Added:
    """What `add_demo_data` wrote, per table, and what it found already there."""

    seed: int
    added: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    present: collections.Counter = dataclasses.field(default_factory=collections.Counter)

    def summary(self) -> str:
        """One line for people: counts per table."""
        tables = ("organisations", "venues", "artists", "releases", "events", "people",
                  "tickets", "marks", "token_reports")
        made = ", ".join(f"{self.added[table]} {table}" for table in tables)
        there = sum(self.present[table] for table in tables)
        note = f" ({there} records of seed {self.seed} were there already)" if there else ""
        return f"demo data, seed {self.seed}: added {made}{note}"


@dataclasses.dataclass(frozen=True)
class Sizes:
    """How many of each record an agenda of `events` events has."""

    events: int
    organisations: int
    venues: int
    artists: int
    releases: int
    festivals: int
    people: int

    @classmethod
    def of(cls, events: int) -> Sizes:
        """Pools that grow with the agenda, within realistic caps."""
        artists = _clamp(events // 20, 40, 6000)
        return cls(events=events, organisations=_clamp(events // 250, 8, 200),
                   venues=_clamp(events // 50, 12, 3000), artists=artists,
                   releases=_clamp(artists // 2, 20, 3000),
                   festivals=_clamp(events // 500, 2, len(FESTIVALS) * 5),
                   # At least the demo organisation's crowd (agenda.demo.people.CROWD).
                   people=_clamp(events // 5, 300, 30_000))


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


def today_in_amsterdam() -> dt.date:
    """Today's date in Europe/Amsterdam, the agenda's day (and the door's)."""
    return calendar.today()


def has_events(session: Session) -> bool:
    """Whether the database has any event at all."""
    return session.scalar(select(Event.id).limit(1)) is not None


# Tables whose rows carry a demo id (and its tag), and tables whose rows hang off one of them.
_OWN = {"organisations": (Organisation, "org"), "venues": (Venue, "ven"),
        "artists": (Artist, "art"), "releases": (Release, "rel"), "events": (Event, "evt"),
        "people": (Person, "per")}
_CHILD = {"release_artists": ("releases", "release_id"), "event_genres": ("events", "event_id"),
          "event_artists": ("events", "event_id")}


def add_demo_data(session: Session, *, events: int, seed: int, today: dt.date | None = None,
                  progress: Callable[[int], None] | None = None) -> Added:
    """Write the demo agenda of `events` events for `seed` that the database lacks; flushes only.

    Records of the seed that are there already are left as they are. `progress`
    is called with the number of events handled after each batch. The people,
    their nights out and the demo organisation's nights follow the agenda.
    """
    # agenda.demo.people and agenda.demo.festivals build on this module.
    from agenda.demo import festivals as demo_festivals
    from agenda.demo import people as demo_people

    today = today or today_in_amsterdam()
    builder = Builder(events=events, seed=seed, today=today)
    calendar = demo_people.Calendar(today)
    added = Added(seed=seed)
    present: dict[str, set[str]] = {}
    analyzed: dict[str, int] = {}
    with _loading(session, events=events, seed=seed):
        for table, rows in _tables(builder):
            add_rows(session, table, rows, seed=seed, present=present, added=added)
            _analyzed_as_it_grows(session, table.name, added.added[table.name], analyzed)
            calendar.take(table.name, rows)
            if table.name == "events" and progress:
                progress(len(rows))
    demo_people.add_people(session, builder=builder, calendar=calendar, present=present,
                           added=added)
    demo_festivals.add_reports(session, seed=seed, prefix=builder.prefix,
                               today_stamp=builder.stamp, added=added)
    session.flush()
    if session.get_bind().dialect.name == "postgresql":
        # Fresh statistics for the planner: a bulk load leaves them far behind until
        # autovacuum gets to it, and with them the agenda's queries pick slow plans.
        session.execute(text("ANALYZE"))
    return added


def add_tonight(session: Session, *, seed: int, today: dt.date | None = None) -> Added:
    """Tonight's events of the demo organisation, with their tickets, when the demo data of
    `seed` is there and they are not (a later day's `agenda demo`); flushes only."""
    from agenda.demo import people as demo_people

    added = Added(seed=seed)
    if session.get(Person, f"{prefix_of(seed)}per-0") is None:
        return added
    today = today or today_in_amsterdam()
    builder = Builder(events=MIN_EVENTS, seed=seed, today=today)
    demo_people.add_people(session, builder=builder, calendar=demo_people.Calendar(today),
                           present={}, added=added)
    session.flush()
    return added


def add_rows(session: Session, table, rows: list[dict], *, seed: int, present: dict,
             added: Added, parent: tuple[str, str] | None = None) -> None:
    """Insert the rows of `table` whose record is not there yet.

    A table of records with a demo id is checked by id; any other table hangs
    off such a record (`parent`: its table and the column naming it) and its
    rows are written only with a new parent.
    """
    name = table.name
    if name in _OWN and parent is None:
        if name not in present:
            model, tag = _OWN[name]
            present[name] = set(session.scalars(
                select(model.id).where(model.id.like(f"{prefix_of(seed)}{tag}-%"))))
            added.present[name] = len(present[name])
        fresh = [row for row in rows if row["id"] not in present[name]]
    else:
        owner, key = parent or _CHILD[name]
        fresh = [row for row in rows if row[key] not in present[owner]]
    added.added[name] += len(fresh)
    if name == "organisations":
        _rename_taken(session, fresh, seed)
    _insert(session, table, fresh)


def _rebuilds(session: Session, *, events: int, seed: int) -> bool:
    """Whether loading `events` events of `seed` is a bulk load (see `_loading`): at least as
    many new events as are there, and on PostgreSQL at least `REBUILD_FROM`."""
    postgres = session.get_bind().dialect.name == "postgresql"
    if postgres and events < REBUILD_FROM:
        return False
    there = session.scalar(select(func.count()).select_from(Event).where(
        Event.id.like(f"{prefix_of(seed)}evt-%")))
    new = events - there
    return new >= (REBUILD_FROM if postgres else 1) \
        and new >= session.scalar(select(func.count()).select_from(Event))


@contextlib.contextmanager
def _loading(session: Session, *, events: int, seed: int):
    """Around a bulk load (`_rebuilds`): on SQLite, the day counts are counted once at its
    end (`facets.counted_at_the_end`); on PostgreSQL, the event tables go without their
    secondary indexes and foreign keys, which are made again at the end.

    That is PostgreSQL's advice for populating a database: one sort per index and
    one join per key instead of a lookup per row (on a million events, most of the
    time). DDL is transactional, so a failed load gets them back with its rollback;
    meanwhile the event tables are locked, which is why a small load, or one onto a
    larger agenda, keeps them.
    """
    if not _rebuilds(session, events=events, seed=seed):
        yield
        return
    if session.get_bind().dialect.name != "postgresql":
        with facets.counted_at_the_end(session):
            yield
        return
    connection = session.connection()
    tables = {"tables": list(_REBUILT)}
    indexes = connection.execute(text(
        "SELECT i.relname, pg_get_indexdef(i.oid) FROM pg_index x"
        " JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid"
        " WHERE t.relname = ANY(:tables) AND t.relnamespace = current_schema()::regnamespace"
        " AND NOT x.indisunique AND NOT x.indisprimary"), tables).all()
    keys = connection.execute(text(
        "SELECT t.relname, c.conname, pg_get_constraintdef(c.oid) FROM pg_constraint c"
        " JOIN pg_class t ON t.oid = c.conrelid WHERE c.contype = 'f'"
        " AND t.relname = ANY(:tables) AND t.relnamespace = current_schema()::regnamespace"),
        tables).all()
    for table, name, _definition in keys:
        connection.exec_driver_sql(f'ALTER TABLE "{table}" DROP CONSTRAINT "{name}"')
    for name, _definition in indexes:
        connection.exec_driver_sql(f'DROP INDEX "{name}"')
    yield
    connection.exec_driver_sql("SET LOCAL maintenance_work_mem = '256MB'")
    for _name, definition in indexes:
        connection.exec_driver_sql(definition)
    for table, name, definition in keys:
        connection.exec_driver_sql(f'ALTER TABLE "{table}" ADD CONSTRAINT "{name}" {definition}')


def _analyzed_as_it_grows(session: Session, table: str, loaded: int,
                          analyzed: dict[str, int]) -> None:
    """On PostgreSQL, ANALYZE `table` each time the rows loaded into it double (from
    ANALYZED_FROM on; `analyzed`: the rows loaded at its last ANALYZE, per table), inside
    the load's transaction (ANALYZE counts its own rows).

    The triggers' statements (the change feed's, the kept counts') are planned once a
    session and kept until the statistics of their tables change: planned while `events`
    was empty, each batch of genres and acts walked every event loaded so far for each of
    its rows (a million events took hours instead of minutes)."""
    if session.get_bind().dialect.name != "postgresql" or loaded < ANALYZED_FROM:
        return
    if loaded >= 2 * analyzed.get(table, ANALYZED_FROM // 2):
        session.execute(text(f'ANALYZE "{table}"'))
        analyzed[table] = loaded


def _insert(session: Session, table, rows: list[dict]) -> None:
    """Insert rows in bulk, in the session's transaction.

    PostgreSQL gets them through COPY: a million events with their genres and
    bills (some six million rows) take minutes that way, and far longer as
    INSERTs. Elsewhere, INSERT in batches of BATCH rows.
    """
    if not rows:
        return
    if session.get_bind().dialect.name != "postgresql":
        for start in range(0, len(rows), BATCH):
            session.execute(insert(table), rows[start:start + BATCH])
        return
    columns = list(rows[0])
    as_json = {column.name for column in table.columns if isinstance(column.type, JSON)}
    quoted = ", ".join(f'"{column}"' for column in columns)
    driver = session.connection().connection.driver_connection
    with driver.cursor() as cursor, cursor.copy(f"COPY {table.name} ({quoted}) FROM STDIN") as copy:
        for row in rows:
            # As SQLAlchemy's JSON type stores them (a None is JSON null).
            copy.write_row([json.dumps(row[column]) if column in as_json else row[column]
                            for column in columns])


def _rename_taken(session: Session, rows: list[dict], seed: int) -> None:
    """Organisation names are unique: one taken by another organisation gets the seed added."""
    taken = set(session.scalars(select(func.lower(Organisation.name))))
    for row in rows:
        if row["name"].lower() in taken:
            row["name"] = f"{row['name']} ({seed})"


def prefix_of(seed: int) -> str:
    """What every id of the seed's demo data starts with."""
    return f"demo{seed}-"


def generate(*, events: int, seed: int, today: dt.date) -> Iterator[tuple[object, list[dict]]]:
    """(table, rows) batches of the whole demo agenda, in an order that inserts cleanly."""
    return _tables(Builder(events=events, seed=seed, today=today))


def _tables(builder: Builder) -> Iterator[tuple[object, list[dict]]]:
    yield Organisation.__table__, builder.organisations
    yield Venue.__table__, builder.venues
    yield Artist.__table__, builder.artists
    releases, credits = builder.releases()
    yield Release.__table__, releases
    yield ReleaseArtist.__table__, credits
    for rows, genres, acts in builder.event_batches():
        yield Event.__table__, rows
        yield EventGenre.__table__, genres
        yield EventArtist.__table__, acts


def _weights(table: dict) -> tuple[list, list[int]]:
    """(values, cumulative weights) for `random.choices`."""
    values, total, cumulative = list(table), 0, []
    for value in values:
        total += table[value]
        cumulative.append(total)
    return values, cumulative


def _pick(rnd: Callable[[], float], values):
    # Faster than Random.choice; a draw of a million events makes thirty million of these.
    return values[int(rnd() * len(values))]


def _distinct(rnd: Callable[[], float], values: list, count: int) -> list:
    """`count` different items of `values` (at least that many), in the order drawn."""
    picked: dict[int, None] = {}
    size = len(values)
    while len(picked) < count:
        picked[int(rnd() * size)] = None
    return [values[index] for index in picked]


def _weighted(rnd: Callable[[], float], values, cumulative):
    """A value drawn by weight (`cumulative` weights), as `Random.choices` draws one."""
    return values[bisect.bisect(cumulative, rnd() * cumulative[-1])]


def _clock(minutes: int) -> str:
    return f"{minutes // 60 % 24:02d}:{minutes % 60:02d}"


class Builder:
    """The demo agenda of one seed: the pools of records, then the events.

    The n-th record of a pool depends only on the seed (not on the pool's size),
    so a larger agenda of a seed extends a smaller one.
    """

    def __init__(self, *, events: int, seed: int, today: dt.date):
        self.sizes = Sizes.of(events)
        self.seed, self.today, self.prefix = seed, today, prefix_of(seed)
        # Slugs of the parts titles are made of: folding text is much of the cost of an event.
        self._slugs = {text: slugify(text) for text in (*CONCEPTS, *GENRE_WEIGHTS)}
        midnight = dt.datetime.combine(today, dt.time(), tzinfo=dt.UTC)
        self.stamp = int(midnight.timestamp())
        self.cities = _weights({city: city.weight for city in CITIES})
        self.genres = _weights(GENRE_WEIGHTS)
        self._siblings = {name: [other for other in GROUPS[group] if other != name]
                          for name, group in GENRES}
        self.countries = _weights(COUNTRY_WEIGHTS)
        self.organisations = self._organisations()
        self.venues = self._venues()
        self.artists = self._artists()
        self.by_group: dict[str, list[dict]] = collections.defaultdict(list)
        for artist in self.artists:
            self.by_group[GROUP_OF[artist["genre"]]].append(artist)
        self.venues_by_kind: dict[str, list[dict]] = collections.defaultdict(list)
        self.organisations_by_city: dict[str, list[dict]] = collections.defaultdict(list)
        for venue in self.venues:
            self.venues_by_kind[self._kind[venue["id"]]].append(venue)
        for organisation in self.organisations:
            self.organisations_by_city[self._home[organisation["id"]]].append(organisation)

    def _rng(self, *parts) -> random.Random:
        # String seeds are hashed with SHA-512: stable across runs and Python versions.
        return random.Random(":".join(str(part) for part in (self.seed, *parts)))

    def _id(self, tag: str, number) -> str:
        return f"{self.prefix}{tag}-{number}"

    def _city(self, rng: random.Random) -> City:
        return _weighted(rng.random, *self.cities)

    def _genre(self, rng: random.Random) -> str:
        return _weighted(rng.random, *self.genres)

    def _updated_at(self, rng: random.Random) -> int:
        return self.stamp - rng.randrange(60 * 86400)

    # -- pools ---------------------------------------------------------------------------

    def _organisations(self) -> list[dict]:
        rng = self._rng("organisations")
        names = [f"{head} {tail}" for head in ORGANISATION_HEADS for tail in ORGANISATION_TAILS]
        rng.shuffle(names)
        self._home: dict[str, str] = {}
        rows = []
        for number in range(self.sizes.organisations):
            name, city = names[number], self._city(rng)
            row_id = self._id("org", number)
            self._home[row_id] = city.name
            self._slugs[row_id] = slugify(name)
            rows.append({
                "id": row_id, "name": name,
                "bio": f"{name} puts on nights in {city.name} and beyond.",
                "website": f"https://{slugify(name)}.example", "verified": rng.random() < 0.4,
                "since": rng.randint(1998, self.today.year - 1), "ticket_shop_url": None,
                "suspended": False, "created_at": self._updated_at(rng),
            })
        return rows

    def _venues(self) -> list[dict]:
        rng = self._rng("venues")
        kinds = _weights({kind: share for kind, share, *_rest in VENUE_KINDS})
        shapes = {kind: rest for kind, _share, *rest in VENUE_KINDS}
        self._kind: dict[str, str] = {}
        rows = []
        for number in range(self.sizes.venues):
            city = self._city(rng)
            kind = rng.choices(kinds[0], cum_weights=kinds[1])[0]
            patterns, tags, (low, high) = shapes[kind]
            words = OPEN_AIR_WORDS if kind == "open air" else VENUE_WORDS
            name = rng.choice(patterns).format(w=rng.choice(words))
            # Open-air grounds lie further out of town than clubs.
            spread = 2.0 if kind == "open air" else 1.0
            lat = city.lat + max(-0.04, min(0.04, rng.gauss(0, 0.012))) * spread
            lng = city.lng + max(-0.06, min(0.06, rng.gauss(0, 0.02))) * spread
            row_id = self._id("ven", number)
            self._kind[row_id] = kind
            facts = {"capacity": rng.randrange(low, high, 10)}
            for key, answers in (("rooms", ("1", "2", "3")), ("lockers", ("yes", "no", "yes, €3")),
                                 ("cashless", ("yes", "no", "card only")),
                                 ("smoking", ("no", "smoking room", "outdoor area")),
                                 ("cloakroom", ("yes, €2", "no")),
                                 ("parking", ("paid garage nearby", "bikes only", "free"))):
                if rng.random() < 0.7:
                    facts[key] = rng.choice(answers)
            slug = slugify(f"{name} {city.name}")
            rows.append({
                "id": row_id, "name": name, "name_key": fold(name), "city": city.name,
                "city_key": fold(city.name), "country": city.country,
                "area": rng.choice(city.areas),
                "address": f"{rng.choice(STREETS)} {rng.randint(1, 180)}, {city.name}",
                "website": f"https://{slug}.example",
                "image_url": f"https://img.agenda.example/venues/{row_id}.jpg",
                "lat": round(lat, 6), "lng": round(lng, 6),
                "tags": rng.sample(tags, k=rng.randint(1, min(3, len(tags)))),
                "rating": round(rng.uniform(3.0, 4.9), 1), "reviews_count": rng.randint(3, 3000),
                "info": f"{name} is a {kind} venue in {city.name}.",
                "accessibility": rng.choice(("Step-free entrance.", "Stairs only; ask the door.",
                                             "Step-free, with an accessible toilet.")),
                "rules": rng.sample(RULES[:6], k=rng.randint(1, 3)),
                "rules_url": f"https://{slug}.example/rules", "facts": facts,
                "source": SOURCE, "source_url": f"https://demo.agenda.example/venues/{row_id}",
                "updated_at": self._updated_at(rng),
            })
        return rows

    def _artists(self) -> list[dict]:
        rng = self._rng("artists")
        names = ([f"{first} {last}" for first in FIRST_NAMES for last in SURNAMES]
                 + [f"{head}{tail}" for head in MONO_HEADS for tail in MONO_TAILS]
                 + [f"DJ {first}" for first in FIRST_NAMES]
                 + [f"{first} & {second}" for first in FIRST_NAMES for second in FIRST_NAMES
                    if first != second])
        rng.shuffle(names)
        countries, cumulative = self.countries
        rows = []
        for number in range(self.sizes.artists):
            name, genre = names[number], self._genre(rng)
            country = rng.choices(countries, cum_weights=cumulative)[0]
            if country in ("NL", "BE"):
                city = rng.choice([c for c in CITIES if c.country == country]).name
            else:
                city = FOREIGN_CITIES[country]
            handle_slug = slugify(name)
            handle = handle_slug.replace("-", "")
            links = {platform: f"https://{platform.replace('_', '')}.example/{handle}"
                     for platform in rng.sample(PLATFORMS, k=rng.randint(1, 3))}
            agency = None
            if rng.random() < 0.35:
                agency_name, agency_url = rng.choice(AGENCIES)
                agency = {"name": agency_name, "url": agency_url}
            row_id = self._id("art", number)
            self._slugs[row_id] = handle_slug
            rows.append({
                "id": row_id, "name": name, "name_key": fold(name), "genre": genre,
                "country": country, "city": city,
                "image_url": f"https://img.agenda.example/artists/{row_id}.jpg",
                "verified": rng.random() < 0.3, "links": links,
                "bio": f"{name} plays {genre.lower()} from {city}.",
                "aliases": [f"{rng.choice(MONO_HEADS)}{rng.choice(MONO_TAILS)}"]
                if rng.random() < 0.12 else [],
                "agency": agency, "source": SOURCE,
                "source_url": f"https://demo.agenda.example/artists/{row_id}",
                "updated_at": self._updated_at(rng),
            })
        return rows

    def releases(self) -> tuple[list[dict], list[dict]]:
        """Releases, half of them within the last eight weeks, and their credits."""
        rng = self._rng("releases")
        rows, credits = [], []
        for number in range(self.sizes.releases):
            credited = rng.sample(self.artists, k=1 if rng.random() < 0.85 else 2)
            kind = rng.choices(("single", "ep", "album"), weights=(60, 30, 10))[0]
            recent = rng.random() < 0.5
            days = rng.randint(0, 55) if recent else rng.randint(56, 1100)
            title = rng.choice(RELEASE_WORDS)
            if rng.random() < 0.5:
                title = f"{title} {rng.choice(RELEASE_WORDS)}"
            row_id = self._id("rel", number)
            rows.append({
                "id": row_id, "title": title, "type": kind,
                "release_date": self.today - dt.timedelta(days=days),
                "genre": credited[0]["genre"],
                "spotify_url": f"https://open.spotify.example/album/{row_id}"
                if rng.random() < 0.8 else None,
                "apple_music_url": f"https://music.apple.example/album/{row_id}"
                if rng.random() < 0.5 else None,
                "cover_url": f"https://img.agenda.example/covers/{row_id}.jpg",
                "source": SOURCE, "source_url": f"https://demo.agenda.example/releases/{row_id}",
                "updated_at": self._updated_at(rng),
            })
            credits += [{"release_id": row_id, "artist_id": artist["id"], "position": position}
                        for position, artist in enumerate(credited)]
        return rows, credits

    # -- events --------------------------------------------------------------------------

    def event_batches(self) -> Iterator[tuple[list[dict], list[dict], list[dict]]]:
        """(events, event_genres, event_artists) per chunk: festival editions, then nights."""
        festivals = self._festivals()
        yield self._rows(festivals)
        for start in range(len(festivals), self.sizes.events, CHUNK):
            rng = self._rng("events", start // CHUNK)
            stop = min(start + CHUNK, self.sizes.events)
            yield self._rows([self._night(rng, number) for number in range(start, stop)])

    def _rows(self, made: list[tuple[dict, dict, list[str], list[dict]]]):
        """Rows of made events, with the copies of their venue and dates written."""
        rows, genres, acts = [], [], []
        for event, venue, genre_names, bill in made:
            event.update(event_copies(
                title=event["title"], date=event["date"], end_date=event["end_date"],
                venue_name=venue["name"], venue_city_key=venue["city_key"],
                venue_lat=venue["lat"], venue_lng=venue["lng"]))
            # The copy the triggers of `event_genres` keep (models.events), written with the
            # event: they then find it right and write nothing again.
            event["listed_genres"] = list(genre_names) or None
            rows.append(event)
            genres += [{"event_id": event["id"], "genre": name, "position": position,
                        "date": event["date"], "start": event["start"],
                        "city_key": event["city_key"]}
                       for position, name in enumerate(genre_names)]
            acts += [{"event_id": event["id"], "artist_id": artist["id"], "name": artist["name"],
                      "position": position, "date": event["date"]}
                     for position, artist in enumerate(bill)]
        return rows, genres, acts

    def own_event(self, rng: random.Random, number: str, *, title: str, date: dt.date,
                  start: str, end: str, venue: dict, organisation: dict, primary: str):
        """An approved night of `organisation` with this title, day and times, in the
        agenda's style (the demo organisation's own nights); rows through `event_rows`."""
        event, genre_names, bill = self._common(
            rng, number, title, slugify(title), date, venue, organisation, primary,
            acts=rng.randint(3, 6), most=2)
        event.update({"start": start, "end": end, "status": "approved", "cancelled": False,
                      "cancel_reason": None, "postponed_to": None, "age": 18,
                      "external_ticketing": False,
                      "timetable": self._timetable(rng, bill, int(start[:2]) * 60,
                                                   ("Main", "Kelder"))})
        return event, venue, genre_names, bill

    def event_rows(self, made: list[tuple[dict, dict, list[str], list[dict]]]):
        """(events, event_genres, event_artists) rows of events made by `own_event`."""
        return self._rows(made)

    def _bill(self, rng: random.Random, genre: str, count: int) -> list[dict]:
        """`count` different artists, of the genre's family when it has enough."""
        pool = self.by_group[GROUP_OF[genre]]
        if len(pool) < count * 2:
            pool = self.artists
        return _distinct(rng.random, pool, min(count, len(pool)))

    def _genre_names(self, rng: random.Random, primary: str, most: int) -> list[str]:
        """The primary genre and up to `most` others of its family."""
        siblings = self._siblings[primary]
        return [primary, *_distinct(rng.random, siblings,
                                    min(len(siblings), int(rng.random() * (most + 1))))]

    def _festivals(self) -> list[tuple[dict, dict, list[str], list[dict]]]:
        """Festivals with an edition in each of four seasons around this year."""
        rng = self._rng("festivals")
        grounds = self.venues_by_kind.get("open air") or self.venues
        made, number, named = [], 0, set()
        for series in range(self.sizes.festivals):
            venue = rng.choice(grounds)
            name = FESTIVALS[series % len(FESTIVALS)]
            if series >= len(FESTIVALS):
                # The same name in another town is another festival.
                name = f"{name} {venue['city']}"
            if name in named:
                name = f"{name} {series}"
            named.add(name)
            organisation = rng.choice(self.organisations)
            primary = self._genre(rng)
            month, day = rng.randint(5, 9), rng.randint(1, 28)
            days = rng.choice((1, 2, 2, 3))
            key = f"{self.prefix}{slugify(name)}"
            for season in range(self.today.year - 2, self.today.year + 2):
                date = dt.date(season, month, day)
                # Festivals start on a Friday (three days) or Saturday.
                date += dt.timedelta(days=(4 if days == 3 else 5) - date.weekday())
                event, genre_names, bill = self._common(
                    rng, number, f"{name} Festival {season}", f"{slugify(name)}-{season}", date,
                    venue, organisation, primary, acts=rng.randint(12, 30), most=3)
                event.update({
                    "end_date": date + dt.timedelta(days=days - 1) if days > 1 else None,
                    "start": "12:00", "end": rng.choice(("23:00", "00:00", "01:00")),
                    "price": float(rng.randrange(45, 120)),
                    "festival_key": key, "season": season,
                    "timetable": self._timetable(rng, bill, 12 * 60,
                                                 ("Main Stage", "The Woods", "Hangar",
                                                  "Greenhouse")[:rng.randint(2, 4)]),
                    "maps": [{"label": "Festival grounds",
                              "image_url": f"https://img.agenda.example/maps/{key}-{season}.png",
                              "source": organisation["name"]}],
                    "rules": ["No glass", "Tokens only at the bars", "No re-entry"],
                })
                event["price_max"] = event["price"] + rng.randrange(20, 80)
                event["ticket_url"] = f"https://tickets.example/{event['slug']}"
                made.append((event, venue, genre_names, bill))
                number += 1
        return made

    def _night(self, rng: random.Random, number: int):
        """One club night, concert or day party at a venue, by an organisation of its city."""
        rnd = rng.random
        venue = _pick(rnd, self.venues)
        local = self.organisations_by_city.get(venue["city"])
        organisation = _pick(rnd, local if local and rnd() < 0.7 else self.organisations)
        primary = self._genre(rng)
        # Mostly ahead, thinning out over the year; some weeks of the past.
        if rnd() < 0.15:
            offset = -1 - int(rnd() * 180)
        else:
            offset = int(rng.triangular(0, 365, 0))
        ordinal = self.today.toordinal() + offset
        weekday = (ordinal - 1) % 7  # Monday is 0, as date.weekday()
        if weekday not in (3, 4, 5) and rnd() < 0.7:
            ordinal += (4 if rnd() < 0.5 else 5) - weekday
        event, genre_names, bill = self._common(
            rng, number, "", "", dt.date.fromordinal(ordinal), venue, organisation, primary,
            acts=1 + int(rnd() * 6), most=2)
        kind = self._kind[venue["id"]]
        if kind == "open air" or rnd() < 0.08:
            start, end = _pick(rnd, ((12, "23:00"), (13, "23:00"), (14, "00:00")))
        elif kind == "bar":
            start, end = _pick(rnd, ((20, "02:00"), (21, "03:00")))
        elif kind == "hall":
            start, end = _pick(rnd, ((19, "23:30"), (20, "01:00")))
        else:
            start, end = _pick(rnd, ((22, "05:00"), (23, "06:00"), (23, "07:00"), (22, "04:00")))
        event["start"], event["end"] = _clock(start * 60), end
        if rnd() < 0.6:
            rooms = ("Main",) if len(bill) < 4 else ("Main", _pick(rnd, ("Kelder", "Room 2")))
            event["timetable"] = self._timetable(rng, bill, start * 60, rooms)
        return event, venue, genre_names, bill

    def _title(self, rnd, primary: str, organisation: dict, head: dict) -> tuple[str, str]:
        """A night's title and the start of its slug, from a few house styles."""
        form, slugs = int(rnd() * 5), self._slugs
        concept = _pick(rnd, CONCEPTS)
        if form == 0:
            return f"{concept} w/ {head['name']}", f"{slugs[concept]}-w-{slugs[head['id']]}"
        if form == 1:
            return (f"{concept}: {primary} all night long",
                    f"{slugs[concept]}-{slugs[primary]}-all-night-long")
        if form == 2:
            return f"{head['name']} (extended set)", f"{slugs[head['id']]}-extended-set"
        if form == 3:
            return (f"{organisation['name']} presents {head['name']}",
                    f"{slugs[organisation['id']]}-presents-{slugs[head['id']]}")
        number = 2 + int(rnd() * 149)
        return f"{concept} #{number}", f"{slugs[concept]}-{number}"

    def _common(self, rng: random.Random, number: int, title: str, slug: str, date: dt.date,
                venue: dict, organisation: dict, primary: str, *, acts: int, most: int):
        """The fields every demo event has, with its bill and genres."""
        rnd = rng.random
        bill = self._bill(rng, primary, acts)
        genre_names = self._genre_names(rng, primary, most)
        row_id = f"{self.prefix}evt-{number}"
        if not title:
            title, slug = self._title(rnd, primary, organisation, bill[0])
        # Unknown price is null, free entry 0 (decisions.md); tickets in steps of 50 cents.
        chance = rnd()
        price = None if chance < 0.07 else 0.0 if chance < 0.15 else 5 + int(rnd() * 120) / 2
        cancelled = rnd() < 0.03
        slug = f"{slug}-{row_id}"
        event = {
            "id": row_id, "slug": slug, "title": title, "date": date, "end_date": None,
            "start": "23:00", "end": "06:00", "timezone": TIMEZONES[venue["country"]],
            "status": _weighted(rnd, STATUSES, STATUS_WEIGHTS),
            "cancelled": cancelled,
            "cancel_reason": _pick(rnd, CANCEL_REASONS) if cancelled and rnd() < 0.9 else None,
            "postponed_to": dt.date.fromordinal(date.toordinal() + 7 + int(rnd() * 114))
            if not cancelled and rnd() < 0.015 else None,
            "price": price,
            "price_max": price + 2 + int(rnd() * 28) if price and rnd() < 0.6 else None,
            "currency": "EUR", "age": _weighted(rnd, AGES, AGE_WEIGHTS),
            "ticket_url": f"https://tickets.example/{slug}"
            if price != 0 and rnd() < 0.92 else None,
            "artwork_url": f"https://img.agenda.example/artwork/{row_id}.jpg",
            "venue_id": venue["id"], "organisation_id": organisation["id"],
            "description": f"{title} at {venue['name']}, {venue['city']}: "
                           f"{' and '.join(genre_names)} with {len(bill)} "
                           f"act{'s' if len(bill) != 1 else ''} on the bill.",
            "timetable": {}, "maps": [],
            "rules": _pick(rnd, RULE_SETS),
            "dress": _pick(rnd, DRESS) if rnd() < 0.15 else None,
            "source": SOURCE, "source_url": f"https://demo.agenda.example/events/{row_id}",
            "updated_at": self.stamp - int(rnd() * 60 * 86400), "festival_key": None,
            "season": None, "external_ticketing": rnd() < 0.1,
        }
        return event, genre_names, bill

    def _timetable(self, rng: random.Random, bill: list[dict], start: int,
                   stages: tuple[str, ...]) -> dict:
        """Sets of 60 to 120 minutes from `start`, the bill dealt over the stages."""
        timetable = {stage: [] for stage in stages}
        clocks = dict.fromkeys(stages, start)
        for position, artist in enumerate(bill):
            stage = stages[position % len(stages)]
            timetable[stage].append([_clock(clocks[stage]), artist["name"]])
            clocks[stage] += (60, 90, 120)[int(rng.random() * 3)]
        return {stage: sets for stage, sets in timetable.items() if sets}
