"""Demo people: members who go out, their nights, and the demo organisation's own nights.

`People` builds, from the demo agenda of a seed and a day (its pools and the
`Calendar` of its events), a pool of people with Dutch and Flemish names,
handles, addresses on `.example`, provinces and birth years; the tickets they
had scanned at past nights (a few void) and their marks on coming ones, some
of them with a long history across venues, cities, genres and festivals; and
the demo organisation "Demo Nights" with members in every role and nights of
its own: past nights its regulars attended, tonight's two events with tickets
to scan, a coming night with an audience, and a coming event sold by an
external shop with a delivery and a sales count.

`add_people` writes them through `agenda.demo.catalogue.add_rows`: a person's
history goes in with the person and an event's tickets with the event, so a
second run adds only what a new day brings (tonight's events, whose ids hold
the date) and never a row twice.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import random
from collections import defaultdict
from collections.abc import Iterator
from zoneinfo import ZoneInfo

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from agenda.demo import catalogue as demo_data
from agenda.demo.catalogue import (
    CONCEPTS,
    FIRST_NAMES,
    GENRE_WEIGHTS,
    GROUP_OF,
    SURNAMES,
    Added,
    Builder,
    _pick,
    _weighted,
    _weights,
)
from models.door import door_window
from models.events import Event, EventArtist, EventGenre
from models.organisations import Organisation, create_organisation, find_organisation
from models.people import Mark, Membership, Person
from models.text import fold, slugify
from models.tickets import DeliveryBatch, ExternalSales, Ticket

DEMO_ORGANISATION = "Demo Nights"
ZONE = ZoneInfo("Europe/Amsterdam")
# The first CROWD people of every seed are the demo organisation's crowd, the first
# REGULARS of them the visitors of its past nights: its nights do not depend on the
# agenda's size (`Sizes.people` is at least CROWD).
CROWD, REGULARS = 300, 180
CHUNK = 1000
# Coming events people mark: those of the next six weeks.
MARK_DAYS = 42
# Where a written row belongs: with its person, or with its event.
WITH_PERSON, WITH_EVENT = ("people", "person_id"), ("events", "event_id")
PROVINCE_OF = {
    "Amsterdam": "Noord-Holland", "Haarlem": "Noord-Holland", "Rotterdam": "Zuid-Holland",
    "Den Haag": "Zuid-Holland", "Leiden": "Zuid-Holland", "Utrecht": "Utrecht",
    "Eindhoven": "Noord-Brabant", "Tilburg": "Noord-Brabant", "Breda": "Noord-Brabant",
    "Groningen": "Groningen", "Nijmegen": "Gelderland", "Arnhem": "Gelderland",
    "Maastricht": "Limburg (NL)", "Zwolle": "Overijssel", "Enschede": "Overijssel",
    "Brussel": "Brussel", "Antwerpen": "Antwerpen", "Mechelen": "Antwerpen",
    "Gent": "Oost-Vlaanderen", "Leuven": "Vlaams-Brabant", "Liège": "Luik",
    "Brugge": "West-Vlaanderen", "Kortrijk": "West-Vlaanderen", "Hasselt": "Limburg (BE)",
}
# Provinces without a demo city: their few people make the small groups of a breakdown.
FAR_PROVINCES = ("Friesland", "Drenthe", "Zeeland", "Flevoland", "Henegouwen", "Namen",
                 "Luxemburg", "Waals-Brabant")
DOMAINS = ("mail.example", "post.example", "inbox.example", "webmail.example")
# The demo organisation's members, in pool order.
ROLES = ("owner", "editor", "door", "door", "viewer")
TICKET_TYPES = ("Early bird", "Regular", "Regular", "Regular", "Late")
CODE_LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
NIGHT_GENRES = ("Techno", "House", "Hard Techno", "Drum & Bass", "Disco",
                "Melodic House & Techno")
PAST_NIGHTS = 6


@dataclasses.dataclass(slots=True)
class Night:
    """What a history needs of an agenda event: when it started, where, its main genre."""

    id: str
    date: dt.date
    start: str
    timezone: str
    city: str
    festival: bool
    group: str = ""


class Calendar:
    """The agenda's nights as they are written: past ones to have attended, coming ones to mark."""

    def __init__(self, today: dt.date):
        self.today = today
        self.past: dict[str, Night] = {}
        self.coming: dict[str, Night] = {}

    def take(self, table: str, rows: list[dict]) -> None:
        """Note the served events of one written batch (and, from `event_genres`, their genre)."""
        if table == "events":
            for row in rows:
                if row["status"] != "approved" or row["cancelled"] or row["postponed_to"]:
                    continue
                days = (row["date"] - self.today).days
                nights = self.past if days < 0 else self.coming if days <= MARK_DAYS else None
                if nights is not None:
                    nights[row["id"]] = Night(row["id"], row["date"], row["start"],
                                              row["timezone"], row["city_key"],
                                              row["festival_key"] is not None)
        elif table == "event_genres":
            for row in rows:
                night = row["position"] == 0 and (self.past.get(row["event_id"])
                                                  or self.coming.get(row["event_id"]))
                if night:
                    night.group = GROUP_OF[row["genre"]]


def demo_organisation(session: Session) -> Organisation:
    """The demo organisation, created the first time it is asked for."""
    return find_organisation(session, DEMO_ORGANISATION) or create_organisation(
        session, name=DEMO_ORGANISATION, verified=True,
        ticket_shop_url="https://shop.demo-nights.example",
        bio="Club nights and festivals across the Netherlands and Belgium.",
        website="https://demo-nights.example")


def demo_member(session: Session, *, organisation_id: str) -> Person:
    """The demo organisation's first owner who may sign in (not suspended)."""
    return session.scalars(
        select(Person).join(Membership, Membership.person_id == Person.id)
        .where(Membership.organisation_id == organisation_id, Membership.role == "owner",
               Person.visibility != "suspended")
        .order_by(Person.id)).first()


def add_people(session: Session, *, builder: Builder, calendar: Calendar, present: dict,
               added: Added) -> None:
    """Write the people of the demo agenda, their histories and the demo organisation's
    nights that the database lacks (`present` and `added` as `add_demo_data` keeps them)."""
    organisation = demo_organisation(session)
    people = People(builder=builder, calendar=calendar,
                    organisation={"id": organisation.id, "name": organisation.name})
    for table, rows, parent in people.tables():
        if table is Person.__table__:
            _rename_taken(session, rows, builder.seed)
        demo_data.add_rows(session, table, rows, seed=builder.seed, present=present,
                           added=added, parent=parent)


def _rename_taken(session: Session, rows: list[dict], seed: int) -> None:
    """Handles and addresses are unique: one taken by someone else gets the seed added."""
    for start in range(0, len(rows), CHUNK):
        batch = rows[start:start + CHUNK]
        taken = session.execute(select(Person.id, Person.handle, Person.email_key).where(or_(
            Person.handle.in_([row["handle"] for row in batch]),
            Person.email_key.in_([row["email_key"] for row in batch])))).all()
        handles = {handle for person_id, handle, _ in taken}
        addresses = {address for person_id, _, address in taken}
        mine = {person_id for person_id, _, _ in taken}
        for row in batch:
            if row["id"] in mine:
                continue
            if row["handle"] in handles:
                row["handle"] = f"{row['handle']}-{seed}"
            if row["email_key"] in addresses:
                row["email"] = row["email"].replace("@", f".{seed}@")
                row["email_key"] = row["email"].lower()


@dataclasses.dataclass(frozen=True)
class Showcase:
    """What to try the organiser endpoints on: real ids and a ticket code to scan now."""

    coming: str | None
    external: str | None
    ticket: str | None


def showcase(session: Session, *, organisation_id: str, now: int) -> Showcase:
    """The organisation's next night (else its latest), its next externally sold event, and
    a valid ticket of an event whose doors are open at `now`."""
    moment = dt.datetime.fromtimestamp(now, dt.UTC)
    today = moment.astimezone(ZONE).date()
    own = select(Event.id).where(Event.organisation_id == organisation_id,
                                 Event.status == "approved")
    night = own.where(Event.external_ticketing.is_(False))
    coming = (session.scalars(night.where(Event.date > today).order_by(Event.date, Event.id))
              .first() or session.scalars(night.order_by(Event.date.desc(), Event.id)).first())
    external = own.where(Event.external_ticketing.is_(True))
    sold = (session.scalars(external.where(Event.date >= today).order_by(Event.date, Event.id))
            .first() or session.scalars(external.order_by(Event.date.desc())).first())
    ticket = None
    tonight = session.scalars(select(Event).where(
        Event.organisation_id == organisation_id, Event.status == "approved",
        Event.date.between(today - dt.timedelta(days=1), today)).order_by(Event.id)).all()
    for event in tonight:
        opens, closes = door_window(event)
        if opens <= moment <= closes:
            ticket = session.scalars(select(Ticket.code).where(
                Ticket.event_id == event.id, Ticket.status == "valid").order_by(Ticket.id)
            ).first()
            if ticket:
                break
    return Showcase(coming=coming, external=sold, ticket=ticket)


class People:
    """The people of one seed's demo agenda and the demo organisation's nights.

    The n-th person depends only on the seed, so a larger agenda extends a
    smaller one's pool; histories come from the agenda's `Calendar`.
    """

    def __init__(self, *, builder: Builder, calendar: Calendar, organisation: dict):
        self.builder, self.calendar, self.organisation = builder, calendar, organisation
        self.seed, self.today, self.prefix = builder.seed, builder.today, builder.prefix
        self.stamp = builder.stamp
        groups: dict[str, int] = defaultdict(int)
        for name, weight in GENRE_WEIGHTS.items():
            groups[GROUP_OF[name]] += weight
        self.groups = _weights(groups)
        # Each person's home city (folded, as events carry it) and favourite genre family.
        self.home: list[str] = []
        self.taste: list[str] = []
        self.people = self._people()

    def _rng(self, *parts) -> random.Random:
        return random.Random(":".join(str(part) for part in (self.seed, *parts)))

    def tables(self) -> Iterator[tuple[object, list[dict], tuple[str, str] | None]]:
        """(table, rows, parent) in an order that inserts cleanly; `parent` as `add_rows`."""
        yield Person.__table__, self.people, None
        yield Membership.__table__, [
            {"person_id": self.people[number]["id"], "organisation_id": self.organisation["id"],
             "role": role} for number, role in enumerate(ROLES)], WITH_PERSON
        for tickets, marks in self._histories():
            yield Ticket.__table__, tickets, WITH_PERSON
            yield Mark.__table__, marks, WITH_PERSON
        made, audiences = self._nights()
        events, genres, acts = self.builder.event_rows(made)
        yield Event.__table__, events, None
        yield EventGenre.__table__, genres, WITH_EVENT
        yield EventArtist.__table__, acts, WITH_EVENT
        tickets, marks, batches, sales = audiences
        yield DeliveryBatch.__table__, batches, WITH_EVENT
        yield Ticket.__table__, tickets, WITH_EVENT
        yield Mark.__table__, marks, WITH_EVENT
        yield ExternalSales.__table__, sales, WITH_EVENT

    # -- the pool ------------------------------------------------------------------------

    def _people(self) -> list[dict]:
        rows = []
        count = self.builder.sizes.people
        for start in range(0, count, CHUNK):
            rng = self._rng("people", start // CHUNK)
            rnd = rng.random
            for number in range(start, min(start + CHUNK, count)):
                first, last = _pick(rnd, FIRST_NAMES), _pick(rnd, SURNAMES)
                city = _weighted(rnd, *self.builder.cities)
                chance = rnd()
                region = (None if chance < 0.1 else _pick(rnd, FAR_PROVINCES) if chance < 0.15
                          else PROVINCE_OF[city.name])
                # Mostly in their twenties; about one in eight keeps the birth year to itself.
                age = 18 + int(rng.triangular(0, 32, 4))
                birth_year = None if rnd() < 0.12 else self.today.year - age
                chance = rnd()
                visibility = ("suspended" if chance < 0.02 else "private" if chance < 0.14
                              else "public")
                given, family = (slugify(first).replace("-", ""),
                                 slugify(last).replace("-", ""))
                handle = _pick(rnd, (f"{given}{family}", f"{given}.{family}",
                                     f"{given}_{family[0]}"))
                email = f"{given}.{family}{number}@{_pick(rnd, DOMAINS)}"
                joined = self.stamp - int(rnd() * 3 * 365 * 86400)
                rows.append({
                    "id": f"{self.prefix}per-{number}", "email": email,
                    "email_key": email.lower(), "handle": f"{handle}{number}",
                    "name": f"{first} {last}", "visibility": visibility, "region": region,
                    "birth_year": birth_year,
                    "created_at": joined,
                    "last_login_at": max(joined, self.stamp - int(rnd() * 30 * 86400))
                    if rnd() < 0.6 else None,
                })
                self.home.append(fold(city.name))
                self.taste.append(_weighted(rnd, *self.groups))
        return rows

    # -- histories -----------------------------------------------------------------------

    def _histories(self) -> Iterator[tuple[list[dict], list[dict]]]:
        """Per chunk of people: their tickets of past nights and marks on coming ones."""
        past = _Index(list(self.calendar.past.values()))
        coming = _Index(list(self.calendar.coming.values()))
        for start in range(0, len(self.people), CHUNK):
            rng = self._rng("history", start // CHUNK)
            tickets, marks = [], []
            for number in range(start, min(start + CHUNK, len(self.people))):
                tickets += self._history(rng, number, past)
                marks += self._marks(rng, number, coming)
            yield tickets, marks

    def _history(self, rng: random.Random, number: int, past: _Index) -> list[dict]:
        """Tickets of the nights a person went to: mostly in town and of their taste; some
        people (the demo organisation's members among them) go out far more, and wider."""
        rnd = rng.random
        rich = number < len(ROLES) or rnd() < 0.04
        wanted = rng.randint(40, 120) if rich else min(int(rng.expovariate(1 / 6)), 30)
        if not past.nights:
            return []
        wanted = min(wanted, len(past.nights) // 2 or 1)
        pools = (past.by_city.get(self.home[number]) or past.nights,
                 past.by_group.get(self.taste[number]) or past.nights, past.nights)
        shares = (0.2, 0.45) if rich else (0.5, 0.85)
        chosen: dict[str, Night] = {}
        for _ in range(wanted * 3):
            if len(chosen) >= wanted:
                break
            chance = rnd()
            pool = pools[0] if chance < shares[0] else pools[1] if chance < shares[1] else pools[2]
            night = _pick(rnd, pool)
            chosen[night.id] = night
        festivals = rng.randint(3, 8) if rich else (rng.randint(1, 2) if rnd() < 0.15 else 0)
        for _ in range(min(festivals, len(past.festivals))):
            night = _pick(rnd, past.festivals)
            chosen[night.id] = night
        person = self.people[number]
        rows = []
        for position, night in enumerate(chosen.values()):
            starts = _moment(night.date, night.start, night.timezone)
            void = rnd() < 0.05
            rows.append(self._ticket(
                rnd, f"{number}-{position}", night.id, person, number=number,
                status="void" if void else "used",
                scanned_at=None if void else starts + int((rnd() * 240 - 60) * 60),
                created_at=starts - int(rnd() * 40 * 86400) - 3600))
        return rows

    def _marks(self, rng: random.Random, number: int, coming: _Index) -> list[dict]:
        """Coming nights a person marked going or interested."""
        if not coming.nights:
            return []
        rnd = rng.random
        pools = (coming.by_city.get(self.home[number]) or coming.nights,
                 coming.by_group.get(self.taste[number]) or coming.nights)
        chosen = {_pick(rnd, pools[int(rnd() * 2)]).id for _ in range(int(rnd() * 5))}
        person_id = self.people[number]["id"]
        return [self._mark(rnd, person_id, event_id, "going" if rnd() < 0.6 else "interested")
                for event_id in sorted(chosen)]

    def _mark(self, rnd, person_id: str, event_id: str, kind: str) -> dict:
        return {"person_id": person_id, "event_id": event_id, "kind": kind,
                "created_at": self.stamp - 3600 - int(rnd() * 30 * 86400)}

    def _ticket(self, rnd, tag: str, event_id: str, person: dict, *, number: int, status: str,
                scanned_at: int | None, created_at: int, price: float | None = None,
                source: str = "service", batch_id: str | None = None) -> dict:
        """A ticket row; the code holds the person's number, so it is unique per event."""
        letters = "".join(_pick(rnd, CODE_LETTERS) for _ in range(6))
        return {
            "id": f"{self.prefix}tkt-{tag}", "event_id": event_id,
            "code": f"{letters}{number:05d}", "person_id": person["id"],
            "type": _pick(rnd, TICKET_TYPES), "holder": person["name"], "price": price,
            "source": source, "status": status, "scanned_at": scanned_at,
            "created_at": created_at, "batch_id": batch_id, "buyer_email": None,
            "buyer_email_hash": None, "invite": True,
            "linked_at": created_at if batch_id else None,
        }

    # -- the demo organisation's nights --------------------------------------------------

    def _nights(self):
        """Its events (`own_event` tuples) and their audiences: (tickets, marks, delivery
        batches, external sales)."""
        rng = self._rng("nights", self.today.isoformat())
        first = self.builder.venues[:demo_data.Sizes.of(demo_data.MIN_EVENTS).venues]
        clubs = {venue["id"] for venue in self.builder.venues_by_kind.get("club", [])}
        dutch = [venue for venue in first if venue["country"] == "NL"] or first
        homes = [venue for venue in dutch if venue["id"] in clubs] or dutch
        outside = {venue["id"] for venue in self.builder.venues_by_kind.get("open air", [])}
        grounds = next((venue for venue in first if venue["id"] in outside), homes[0])
        saturday = self.today - dt.timedelta(days=(self.today.weekday() - 5) % 7 or 7)
        ahead = self.today + dt.timedelta(days=8)
        coming = ahead + dt.timedelta(days=(5 - ahead.weekday()) % 7)
        day = f"{self.today:%Y%m%d}"
        crowd = self.people[:CROWD]
        plans = [(f"p{k}", f"Demo Nights #{30 - k}: {_pick(rng.random, CONCEPTS)}",
                  saturday - dt.timedelta(days=14 * (k - 1)), "23:00", "06:00",
                  homes[k % len(homes)], NIGHT_GENRES[k % len(NIGHT_GENRES)])
                 for k in range(1, PAST_NIGHTS + 1)]
        plans += [
            ("next", f"Demo Nights #30: {_pick(rng.random, CONCEPTS)}", coming, "23:00", "06:00",
             homes[0], "Techno"),
            ("ext", "Demo Nights Open Air", coming + dt.timedelta(days=14), "14:00", "23:00",
             grounds, "House"),
            # Tonight's two cover the whole day at the door (doors open 6 hours before
            # the start and close 12 hours after the end): 00:00 until 10:00 tomorrow,
            # and 17:00 until 19:00 tomorrow.
            (f"d{day}", f"Demo Nights Ochtendgloren {self.today:%d-%m}", self.today, "06:00",
             "22:00", grounds, "Deep House"),
            (f"n{day}", f"Demo Nights {self.today:%d-%m}: {_pick(rng.random, CONCEPTS)}",
             self.today, "23:00", "07:00", homes[0], "Techno"),
        ]
        made, tickets, marks = [], [], []
        batches, sales = [], []
        for tag, title, date, start, end, venue, primary in plans:
            made.append(self.builder.own_event(
                rng, f"dn-{tag}", title=title, date=date, start=start, end=end, venue=venue,
                organisation=self.organisation, primary=primary))
            event = made[-1][0]
            event["price"] = event["price"] or 22.5
            starts = _moment(date, start, event["timezone"])
            if tag.startswith("p"):
                visitors = rng.sample(crowd[:REGULARS], k=rng.randint(110, 160))
                for position, person in enumerate(visitors):
                    chance = rng.random()
                    status = "void" if chance < 0.04 else "valid" if chance < 0.07 else "used"
                    tickets.append(self._ticket(
                        rng.random, f"{tag}-{position}", event["id"], person,
                        number=_number(person), status=status,
                        scanned_at=starts + rng.randrange(-3600, 4 * 3600)
                        if status == "used" else None,
                        created_at=starts - rng.randrange(3600, 30 * 86400),
                        price=event["price"]))
            elif tag == "next":
                audience = rng.sample(crowd, k=240)
                for position, person in enumerate(audience[:130]):
                    tickets.append(self._ticket(
                        rng.random, f"{tag}-{position}", event["id"], person,
                        number=_number(person), status="valid", scanned_at=None,
                        created_at=self.stamp - rng.randrange(3600, 30 * 86400),
                        price=event["price"]))
                # The rest of the audience marked going; some others are interested.
                coming_ids = {person["id"] for person in audience}
                curious = [person for person in crowd if person["id"] not in coming_ids][:40]
                marks += [self._mark(rng.random, person["id"], event["id"], kind)
                          for kind, group in (("going", audience[130:]),
                                              ("interested", curious))
                          for person in group]
            elif tag == "ext":
                event["external_ticketing"] = True
                event["ticket_url"] = "https://shop.demo-nights.example/open-air"
                batch_id = f"{self.prefix}dlv-dn-ext"
                delivered = self.stamp - 2 * 86400
                buyers = rng.sample(crowd, k=38)
                batches.append({"id": batch_id, "event_id": event["id"], "source": "paylogic",
                                "via": "api", "received": 40, "added": 38, "duplicates": 2,
                                "refused": 0, "linked": 38, "created_at": delivered})
                for position, person in enumerate(buyers):
                    tickets.append(self._ticket(
                        rng.random, f"{tag}-{position}", event["id"], person,
                        number=_number(person), status="valid", scanned_at=None,
                        created_at=delivered, price=event["price"], source="paylogic",
                        batch_id=batch_id))
                # Delivered tickets mark their members going (as models.deliveries does).
                marks += [self._mark(lambda: 0.0, person["id"], event["id"], "going")
                          for person in buyers]
                sales.append({"event_id": event["id"], "sold": 412,
                              "updated_at": self.stamp - 5 * 3600})
            else:
                holders = rng.sample(crowd, k=160 if tag.startswith("n") else 70)
                for position, person in enumerate(holders):
                    tickets.append(self._ticket(
                        rng.random, f"{tag}-{position}", event["id"], person,
                        number=_number(person), status="valid", scanned_at=None,
                        created_at=self.stamp - rng.randrange(3600, 20 * 86400),
                        price=event["price"]))
        return made, (tickets, marks, batches, sales)


class _Index:
    """Nights to pick from: all of them, by city, by genre family, the festivals."""

    def __init__(self, nights: list[Night]):
        self.nights = nights
        self.by_city: dict[str, list[Night]] = defaultdict(list)
        self.by_group: dict[str, list[Night]] = defaultdict(list)
        self.festivals = [night for night in nights if night.festival]
        for night in nights:
            self.by_city[night.city].append(night)
            self.by_group[night.group].append(night)


def _number(person: dict) -> int:
    return int(person["id"].rsplit("-", 1)[1])


def _moment(date: dt.date, clock: str, timezone: str) -> int:
    """Unix seconds of `clock` on `date` in `timezone`."""
    return int(dt.datetime.combine(date, dt.time.fromisoformat(clock), ZoneInfo(timezone))
               .timestamp())
