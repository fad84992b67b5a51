"""The catalogue's records checked and saved: organisations, venues, artists, events, releases.

The import and the demo data share these. `clean` checks one record's fields
without the database and names every bad field at once; `write` resolves the
record's references and upserts it by its id. A record is the whole resource:
a field left out takes its default, it is not kept from before (except the
derived ones noted on `write`). `save_venue(session, **record)` and its
siblings do both steps.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import re
import zoneinfo
from urllib.parse import urlsplit

from sqlalchemy import func, select, union_all, update
from sqlalchemy.orm import Session

from models.artists import Artist
from models.db import now
from models.errors import BadRequest
from models.events import (MAX_SPAN_DAYS, PUBLIC, STATUSES, Event, EventArtist, EventGenre,
                           denormalize)
from models.festivals import CHANNELS, REFUNDS, TIERS, TokenReport
from models.genres import GENRES
from models.organisations import Organisation
from models.people import Person
from models.releases import RELEASE_TYPES, Release, ReleaseArtist
from models.text import fold, slugify
from models.venues import Venue

KINDS = ("organisation", "venue", "artist", "event", "release", "token_report")
# Records by kind, with the people a token report may point to (people are not imported).
MODELS = {"organisation": Organisation, "venue": Venue, "artist": Artist, "event": Event,
          "release": Release, "token_report": TokenReport, "person": Person}
GENRE_NAMES = frozenset(name for name, _group in GENRES)
_GENRE_KEYS = {fold(name): name for name in GENRE_NAMES}
COUNTRIES = ("NL", "BE")
TIMEZONES = {"NL": "Europe/Amsterdam", "BE": "Europe/Brussels"}
# Venue facts: the keys decisions.md fixes, with the type of their value.
FACTS = {"capacity": int, "rooms": str, "lockers": str, "cashless": str, "smoking": str,
         "cloakroom": str, "parking": str}
# Around the Netherlands and Belgium (lat, lng): catches swapped or zeroed coordinates.
AREA = ((49.4, 53.7), (2.5, 7.3))

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_CLOCK = re.compile(r"^([01][0-9]|2[0-3]):[0-5][0-9]$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_COUNTRY = re.compile(r"^[A-Z]{2}$")
_CURRENCY = re.compile(r"^[A-Z]{3}$")
_PLATFORM = re.compile(r"^[a-z0-9_]{1,40}$")
# Markers: "read the value from the record", "the field has no value".
_RECORD = object()
_ABSENT = object()


@dataclasses.dataclass(frozen=True)
class Reference:
    """A record's pointer to another record: `field` holds the id of a `kind`."""

    field: str
    kind: str
    id: str


# ---------------------------------------------------------------------------
# Checking fields
# ---------------------------------------------------------------------------


class _Fields:
    """One record's fields being checked; every problem is kept, not only the first.

    Each check reads the field `name` of the record, or `value` when given (for
    items inside arrays and objects), and returns the cleaned value or None.
    """

    def __init__(self, kind: str, record: dict, accepted: tuple[str, ...]):
        self.record = record
        self.params: list[dict] = []
        article = "an" if kind[0] in "aeiou" else "a"
        for name in record:
            if name not in accepted:
                self.bad(name, f"is not a field of {article} {kind}")

    def bad(self, name: str, message: str) -> None:
        """Note that field `name` is bad."""
        self.params.append({"name": name, "in": "body", "message": message})

    def done(self) -> None:
        """Raise `BadRequest` when any field was bad."""
        if self.params:
            raise BadRequest(self.params, "The record has invalid fields.")

    def given(self, name: str) -> bool:
        """Whether the record has a value (not null) for `name`."""
        return self.record.get(name) is not None

    def _value(self, name: str, required: bool, value):
        if value is _RECORD:
            value = self.record.get(name)
        # A null is "no value" (the specification's convention), the same as leaving it out.
        if value is None:
            if required:
                self.bad(name, "is required")
            return _ABSENT
        return value

    def text(self, name: str, *, max_length: int, required: bool = False, default="",
             nullable: bool = False, value=_RECORD):
        """A string, stripped; an empty one is the default (null when `nullable`)."""
        value = self._value(name, required, value)
        if value is _ABSENT:
            return None if nullable or required else default
        if not isinstance(value, str):
            self.bad(name, f"must be a string, got {value!r}")
            return None
        value = value.strip()
        if not value:
            if required:
                self.bad(name, "must not be empty")
            return None if nullable or required else default
        if len(value) > max_length:
            self.bad(name, f"must be at most {max_length} characters")
            return None
        return value

    def ident(self, name: str, *, max_length: int = 80, value=_RECORD):
        """A required id as the source gives it: letters, digits, `.`, `_`, `-`."""
        value = self.text(name, max_length=max_length, required=True, value=value)
        if value is not None and not _ID.match(value):
            self.bad(name, f"{value!r} must consist of letters, digits, '.', '_' and '-'")
            return None
        return value

    def url(self, name: str, *, required: bool = False, nullable: bool = False,
            value=_RECORD):
        """An http(s) URL of at most 500 characters ("" or null when absent)."""
        value = self.text(name, max_length=500, required=required, nullable=nullable,
                          value=value)
        if value and not _is_url(value):
            self.bad(name, f"{value!r} must be an http or https URL")
            return None
        return value

    def matching(self, name: str, pattern: re.Pattern, meaning: str, *, default=None,
                 max_length: int = 200):
        """A string that matches `pattern` (`meaning` says what it should be)."""
        value = self.text(name, max_length=max_length, nullable=True)
        if value is None:
            return default
        if not pattern.match(value):
            self.bad(name, f"must be {meaning}, got {value!r}")
            return None
        return value

    def date(self, name: str, *, required: bool = False):
        """A date `yyyy-mm-dd` (or a `datetime.date` from Python callers)."""
        value = self._value(name, required, _RECORD)
        if value is _ABSENT:
            return None
        if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
            return value
        if isinstance(value, str) and _DATE.match(value):
            try:
                return dt.date.fromisoformat(value)
            except ValueError:
                pass
        self.bad(name, f"must be a date yyyy-mm-dd, got {value!r}")
        return None

    def clock(self, name: str, *, required: bool = False):
        """A clock time `HH:MM`."""
        value = self.text(name, max_length=5, required=required, nullable=True)
        if value is not None and not _CLOCK.match(value):
            self.bad(name, f"must be a time HH:MM, got {value!r}")
            return None
        return value

    def number(self, name: str, *, minimum: float | None = None, maximum: float | None = None,
               required: bool = False, default=None):
        """A finite JSON number within bounds."""
        value = self._value(name, required, _RECORD)
        if value is _ABSENT:
            return default
        if (isinstance(value, bool) or not isinstance(value, (int, float))
                or not math.isfinite(value)):
            self.bad(name, f"must be a number, got {value!r}")
            return None
        return self._bounded(name, value, minimum, maximum)

    def integer(self, name: str, *, minimum: int | None = None, maximum: int | None = None,
                default=None, value=_RECORD):
        """A JSON integer within bounds."""
        value = self._value(name, False, value)
        if value is _ABSENT:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            self.bad(name, f"must be an integer, got {value!r}")
            return None
        return self._bounded(name, value, minimum, maximum)

    def _bounded(self, name, value, minimum, maximum):
        if minimum is not None and value < minimum:
            self.bad(name, f"must be at least {minimum}, got {value!r}")
            return None
        if maximum is not None and value > maximum:
            self.bad(name, f"must be at most {maximum}, got {value!r}")
            return None
        return value

    def boolean(self, name: str, *, default: bool = False):
        """true or false."""
        value = self._value(name, False, _RECORD)
        if value is _ABSENT:
            return default
        if not isinstance(value, bool):
            self.bad(name, f"must be true or false, got {value!r}")
            return default
        return value

    def choice(self, name: str, choices, *, default=None, required: bool = False):
        """One of `choices`."""
        value = self._value(name, required, _RECORD)
        if value is _ABSENT:
            return default
        if value not in choices:
            self.bad(name, f"must be one of {', '.join(choices)}, got {value!r}")
            return None
        return value

    def genre(self, name: str, *, required: bool = False, value=_RECORD):
        """A name of the fixed genre list, spelled as the list spells it."""
        value = self._value(name, required, value)
        if value is _ABSENT:
            return None
        if not isinstance(value, str) or value not in GENRE_NAMES:
            close = _GENRE_KEYS.get(fold(value)) if isinstance(value, str) else None
            hint = f" (did you mean {close!r}?)" if close else ""
            self.bad(name, f"{value!r} is not a genre of the list{hint}")
            return None
        return value

    def items(self, name: str) -> list:
        """A JSON array (empty when absent)."""
        value = self._value(name, False, _RECORD)
        if value is _ABSENT:
            return []
        if not isinstance(value, list):
            self.bad(name, "must be an array")
            return []
        return value

    def strings(self, name: str, *, max_length: int = 500) -> list[str]:
        """An array of non-empty strings."""
        values = []
        for i, item in enumerate(self.items(name)):
            text = self.text(f"{name}[{i}]", max_length=max_length, required=True, value=item)
            if text is not None:
                values.append(text)
        return values

    def mapping(self, name: str, *, value=_RECORD) -> dict:
        """A JSON object (empty when absent)."""
        value = self._value(name, False, value)
        if value is _ABSENT:
            return {}
        if not isinstance(value, dict):
            self.bad(name, "must be an object")
            return {}
        return value

    def keys(self, name: str, value: dict, accepted: tuple[str, ...]) -> None:
        """Note every key of the object `value` (at `name`) that is not accepted."""
        for key in value:
            if key not in accepted:
                self.bad(f"{name}.{key}", f"is not a field here ({', '.join(accepted)})")


def _is_url(value: str) -> bool:
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc) and " " not in value


# ---------------------------------------------------------------------------
# The five kinds of record: their fields
# ---------------------------------------------------------------------------

ORGANISATION_FIELDS = ("id", "name", "bio", "website", "verified", "since",
                       # No column holds an organisation's origin yet: accepted, not stored.
                       "source", "source_url")
VENUE_FIELDS = ("id", "name", "city", "country", "area", "address", "website", "image_url",
                "lat", "lng", "tags", "rating", "reviews_count", "info", "accessibility",
                "rules", "rules_url", "facts", "source", "source_url")
ARTIST_FIELDS = ("id", "name", "genre", "country", "city", "image_url", "verified", "links",
                 "bio", "aliases", "agency", "source", "source_url")
EVENT_FIELDS = ("id", "slug", "title", "date", "end_date", "start", "end", "timezone", "status",
                "cancelled", "cancel_reason", "postponed_to", "genres", "price", "price_max",
                "currency", "age", "ticket_url", "artwork_url", "venue_id", "organisation_id",
                "description", "lineup", "timetable", "maps", "rules", "dress", "source",
                "source_url", "festival_key", "season", "external_ticketing")
TOKEN_REPORT_FIELDS = ("id", "event_id", "person_id", "paid", "tokens", "drink_tokens",
                       "channel", "refund", "tier", "created_at", "source", "source_url")
RELEASE_FIELDS = ("id", "title", "type", "release_date", "genre", "artists", "spotify_url",
                  "apple_music_url", "cover_url", "source", "source_url")


def _clean_organisation(fields: _Fields) -> dict:
    fields.text("source", max_length=100)
    fields.url("source_url")
    return {
        "id": fields.ident("id", max_length=40),
        "name": fields.text("name", max_length=200, required=True),
        "bio": fields.text("bio", max_length=20_000),
        "website": fields.url("website"),
        "verified": fields.boolean("verified"),
        # None: the current year for a new organisation, kept for an existing one.
        "since": fields.integer("since", minimum=1900, maximum=2100),
    }


def _clean_venue(fields: _Fields) -> dict:
    values = {
        "id": fields.ident("id"),
        "name": fields.text("name", max_length=200, required=True),
        "city": fields.text("city", max_length=100, required=True),
        "country": fields.choice("country", COUNTRIES, required=True),
        "area": fields.text("area", max_length=100),
        "address": fields.text("address", max_length=300),
        "website": fields.url("website"),
        "image_url": fields.url("image_url"),
        "lat": fields.number("lat", minimum=-90, maximum=90, required=True),
        "lng": fields.number("lng", minimum=-180, maximum=180, required=True),
        "tags": fields.strings("tags", max_length=60),
        "rating": fields.number("rating", minimum=0, maximum=5, default=0.0),
        "reviews_count": fields.integer("reviews_count", minimum=0, default=0),
        "info": fields.text("info", max_length=20_000),
        "accessibility": fields.text("accessibility", max_length=20_000),
        "rules": fields.strings("rules"),
        "rules_url": fields.url("rules_url"),
        "facts": _facts(fields),
        "source": fields.text("source", max_length=100),
        "source_url": fields.url("source_url"),
    }
    for name, (low, high) in zip(("lat", "lng"), AREA):
        if values[name] is not None and not low <= values[name] <= high:
            fields.bad(name, f"{values[name]!r} is outside the Netherlands and Belgium")
    return values


def _facts(fields: _Fields) -> dict:
    facts = {}
    for key, value in fields.mapping("facts").items():
        name = f"facts.{key}"
        if key not in FACTS:
            fields.bad(name, f"is not a venue fact ({', '.join(FACTS)})")
        elif FACTS[key] is int:
            facts[key] = fields.integer(name, minimum=0, value=value)
        else:
            facts[key] = fields.text(name, max_length=200, nullable=True, value=value)
    # A null fact is unknown, which is what an absent key says.
    return {key: value for key, value in facts.items() if value is not None}


def _clean_artist(fields: _Fields) -> dict:
    return {
        "id": fields.ident("id"),
        "name": fields.text("name", max_length=200, required=True),
        "genre": fields.genre("genre", required=True),
        "country": fields.matching("country", _COUNTRY, "a two-letter country code like NL",
                                   default=""),
        "city": fields.text("city", max_length=100),
        "image_url": fields.url("image_url"),
        "verified": fields.boolean("verified"),
        "links": _links(fields),
        "bio": fields.text("bio", max_length=20_000),
        "aliases": fields.strings("aliases", max_length=200),
        "agency": _agency(fields),
        "source": fields.text("source", max_length=100),
        "source_url": fields.url("source_url"),
    }


def _links(fields: _Fields) -> dict:
    links = {}
    for platform, url in fields.mapping("links").items():
        name = f"links.{platform}"
        if not _PLATFORM.match(platform):
            fields.bad(name, "must be a platform key of lowercase letters, digits and '_'")
        elif (checked := fields.url(name, required=True, value=url)) is not None:
            links[platform] = checked
    return links


def _agency(fields: _Fields) -> dict | None:
    if not fields.given("agency"):
        return None
    agency = fields.mapping("agency")
    fields.keys("agency", agency, ("name", "url"))
    name = fields.text("agency.name", max_length=200, required=True, value=agency.get("name"))
    url = fields.url("agency.url", required=True, value=agency.get("url"))
    return {"name": name, "url": url}


def _clean_event(fields: _Fields) -> dict:
    values = {
        "id": fields.ident("id"),
        # None: kept for an existing event, made from title and date for a new one.
        "slug": fields.matching("slug", _SLUG, "lowercase letters and digits joined by '-'"),
        "title": fields.text("title", max_length=300, required=True),
        "date": fields.date("date", required=True),
        "end_date": fields.date("end_date"),
        "start": fields.clock("start", required=True),
        "end": fields.clock("end", required=True),
        # None: the zone of the venue's country.
        "timezone": fields.text("timezone", max_length=60, nullable=True),
        "status": fields.choice("status", STATUSES, default="approved"),
        "cancelled": fields.boolean("cancelled"),
        "cancel_reason": fields.text("cancel_reason", max_length=500, nullable=True),
        "postponed_to": fields.date("postponed_to"),
        "genres": _genres(fields),
        "price": fields.number("price", minimum=0),
        "price_max": fields.number("price_max", minimum=0),
        "currency": fields.matching("currency", _CURRENCY, "a currency code like EUR",
                                    default="EUR"),
        "age": fields.integer("age", minimum=0, maximum=99, default=18),
        "ticket_url": fields.url("ticket_url", nullable=True),
        "artwork_url": fields.url("artwork_url"),
        "venue_id": fields.ident("venue_id"),
        "organisation_id": fields.ident("organisation_id", max_length=40),
        "description": fields.text("description", max_length=50_000),
        "lineup": _lineup(fields),
        "timetable": _timetable(fields),
        "maps": _maps(fields),
        "rules": fields.strings("rules"),
        "dress": fields.text("dress", max_length=300, nullable=True),
        "source": fields.text("source", max_length=100),
        "source_url": fields.url("source_url"),
        "festival_key": fields.matching("festival_key", _SLUG,
                                        "lowercase letters and digits joined by '-'",
                                        max_length=100),
        "season": fields.integer("season", minimum=1900, maximum=2100),
        "external_ticketing": fields.boolean("external_ticketing"),
    }
    date, end_date = values["date"], values["end_date"]
    if date and end_date:
        if end_date < date:
            fields.bad("end_date", f"{end_date} is before date {date}")
        elif (end_date - date).days > MAX_SPAN_DAYS:
            fields.bad("end_date",
                       f"{end_date} is more than {MAX_SPAN_DAYS} days after date {date}")
        elif end_date == date:
            # One day is a single-day event, which the API shows as end_date null.
            values["end_date"] = None
    if date and values["postponed_to"] and values["postponed_to"] <= date:
        fields.bad("postponed_to", f"{values['postponed_to']} must be after date {date}")
    if values["cancel_reason"] and not values["cancelled"]:
        fields.bad("cancel_reason", "is only for a cancelled event (cancelled: true)")
    price, price_max = values["price"], values["price_max"]
    if price is not None and price_max is not None and price_max < price:
        fields.bad("price_max", f"{price_max!r} is below price {price!r}")
    if values["timezone"] is not None and not _is_zone(values["timezone"]):
        fields.bad("timezone", f"{values['timezone']!r} is not an IANA time zone name")
    if values["season"] is not None and values["festival_key"] is None:
        fields.bad("season", "is only for a festival (with festival_key)")
    if values["festival_key"] is not None and values["season"] is None and date:
        values["season"] = date.year
    return values


def _is_zone(name: str) -> bool:
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
    return True


def _genres(fields: _Fields) -> list[str]:
    names = []
    for i, item in enumerate(fields.items("genres")):
        name = fields.genre(f"genres[{i}]", required=True, value=item)
        if name in names:
            fields.bad(f"genres[{i}]", f"{name!r} is listed twice")
        elif name is not None:
            names.append(name)
    return names


def _artist_ids(fields: _Fields, name: str, *, ordered: bool) -> list[tuple[str, str]]:
    """(field path, artist id) of an array of ids or of `{id[, order]}` objects, in order."""
    entries = []
    for i, item in enumerate(fields.items(name)):
        path, order = f"{name}[{i}]", i
        if isinstance(item, dict):
            fields.keys(path, item, ("id", "order") if ordered else ("id",))
            if ordered and item.get("order") is not None:
                order = fields.integer(f"{path}.order", minimum=0, value=item["order"])
            path, item = f"{path}.id", item.get("id")
        artist_id = fields.ident(path, value=item)
        if artist_id is not None and artist_id in [seen for _o, _p, seen in entries]:
            fields.bad(path, f"{artist_id!r} is listed twice")
        elif artist_id is not None:
            entries.append((order if order is not None else i, path, artist_id))
    entries.sort(key=lambda entry: entry[0])
    return [(path, artist_id) for _order, path, artist_id in entries]


def _lineup(fields: _Fields) -> list[tuple[str, str]]:
    """The bill in billing order: `order` when given, else the position in the array."""
    return _artist_ids(fields, "lineup", ordered=True)


def _timetable(fields: _Fields) -> dict:
    timetable = {}
    for stage, sets in fields.mapping("timetable").items():
        name = f"timetable.{stage}"
        if not stage.strip() or len(stage) > 100:
            fields.bad(name, "must be a stage name of 1 to 100 characters")
            continue
        if not isinstance(sets, list):
            fields.bad(name, "must be an array of [HH:MM, act] pairs")
            continue
        slots = []
        for i, slot in enumerate(sets):
            if (isinstance(slot, list) and len(slot) == 2 and isinstance(slot[0], str)
                    and _CLOCK.match(slot[0]) and isinstance(slot[1], str) and slot[1].strip()):
                slots.append([slot[0], slot[1].strip()])
            else:
                fields.bad(f"{name}[{i}]", f"must be a pair [HH:MM, act name], got {slot!r}")
        timetable[stage.strip()] = slots
    return timetable


def _maps(fields: _Fields) -> list[dict]:
    maps = []
    for i, item in enumerate(fields.items("maps")):
        name = f"maps[{i}]"
        if not isinstance(item, dict):
            fields.bad(name, "must be an object {label, image_url, source}")
            continue
        fields.keys(name, item, ("label", "image_url", "source"))
        maps.append({
            "label": fields.text(f"{name}.label", max_length=200, required=True,
                                 value=item.get("label")),
            "image_url": fields.url(f"{name}.image_url", required=True,
                                    value=item.get("image_url")),
            "source": fields.text(f"{name}.source", max_length=200, nullable=True,
                                  value=item.get("source")),
        })
    return maps


def _clean_release(fields: _Fields) -> dict:
    artists = _artist_ids(fields, "artists", ordered=False)
    if not fields.given("artists"):
        fields.bad("artists", "is required")
    elif fields.record["artists"] == []:
        fields.bad("artists", "must name at least one artist")
    return {
        "id": fields.ident("id"),
        "title": fields.text("title", max_length=300, required=True),
        "type": fields.choice("type", RELEASE_TYPES, required=True),
        "release_date": fields.date("release_date", required=True),
        "genre": fields.genre("genre", required=True),
        "artists": artists,
        "spotify_url": fields.url("spotify_url", nullable=True),
        "apple_music_url": fields.url("apple_music_url", nullable=True),
        "cover_url": fields.url("cover_url"),
        "source": fields.text("source", max_length=100),
        "source_url": fields.url("source_url"),
    }


def _clean_token_report(fields: _Fields) -> dict:
    """A visitor's report; amounts are bounded to what a festival purchase can be."""
    fields.url("source_url")  # Accepted like on other records; reports keep no page.
    return {
        "id": fields.ident("id"),
        "event_id": fields.ident("event_id"),
        "person_id": fields.text("person_id", max_length=40, nullable=True),
        "paid": fields.number("paid", minimum=0.01, maximum=10_000, required=True),
        "tokens": fields.number("tokens", minimum=0.01, maximum=10_000, required=True),
        "drink_tokens": fields.number("drink_tokens", minimum=0.01, maximum=100, required=True),
        "channel": fields.choice("channel", CHANNELS, required=True),
        "refund": fields.choice("refund", REFUNDS, default="unknown"),
        "tier": fields.choice("tier", TIERS, required=True),
        # None: now for a new report, kept for an existing one.
        "created_at": fields.integer("created_at", minimum=946_684_800, maximum=4_102_444_800),
        "source": fields.text("source", max_length=100),
    }


_CLEANERS = {
    "organisation": (ORGANISATION_FIELDS, _clean_organisation),
    "venue": (VENUE_FIELDS, _clean_venue),
    "artist": (ARTIST_FIELDS, _clean_artist),
    "event": (EVENT_FIELDS, _clean_event),
    "release": (RELEASE_FIELDS, _clean_release),
    "token_report": (TOKEN_REPORT_FIELDS, _clean_token_report),
}


def clean(kind: str, record: dict) -> dict:
    """The record's fields checked and normalised; `BadRequest` names every bad field."""
    accepted, cleaner = _CLEANERS[kind]
    fields = _Fields(kind, record, accepted)
    values = cleaner(fields)
    fields.done()
    return values


def references(kind: str, values: dict) -> list[Reference]:
    """The records a cleaned record points to, which must exist before it is written."""
    if kind == "event":
        return [Reference("venue_id", "venue", values["venue_id"]),
                Reference("organisation_id", "organisation", values["organisation_id"]),
                *(Reference(path, "artist", artist_id) for path, artist_id in values["lineup"])]
    if kind == "release":
        return [Reference(path, "artist", artist_id) for path, artist_id in values["artists"]]
    if kind == "token_report":
        return [Reference("event_id", "event", values["event_id"]),
                *([Reference("person_id", "person", values["person_id"])]
                  if values["person_id"] else [])]
    return []


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------


def write(session: Session, *, kind: str, values: dict) -> tuple[object, str]:
    """Upsert a cleaned record by id; returns it and `created`, `updated` or `unchanged`.

    Derived values are kept from before when the record leaves them out: an
    organisation's `since`, an event's `slug`. Flushes, never commits.
    """
    return _WRITERS[kind](session, values)


def _assign(target, values: dict) -> bool:
    """Set the attributes that differ; whether any did."""
    changed = False
    for name, value in values.items():
        if getattr(target, name) != value:
            setattr(target, name, value)
            changed = True
    return changed


def _finish(session: Session, target, created: bool, changed: bool) -> tuple[object, str]:
    if created or changed:
        # Unchanged records keep their updated_at, so re-importing a file changes nothing.
        target.updated_at = now()
    session.add(target)
    session.flush()
    return target, "created" if created else "updated" if changed else "unchanged"


def _write_organisation(session: Session, values: dict) -> tuple[object, str]:
    values = dict(values)
    taken = session.scalar(select(Organisation.id).where(
        func.lower(Organisation.name) == values["name"].lower(), Organisation.id != values["id"]))
    if taken is not None:
        raise BadRequest([{"name": "name", "in": "body",
                           "message": f"{values['name']!r} is the name of organisation {taken!r}"}])
    organisation = session.get(Organisation, values["id"])
    created = organisation is None
    if created:
        stamp = now()
        organisation = Organisation(id=values["id"], created_at=stamp, suspended=False,
                                    since=dt.datetime.fromtimestamp(stamp, dt.UTC).year)
    if values["since"] is None:
        values["since"] = organisation.since
    changed = _assign(organisation, values)
    session.add(organisation)
    session.flush()
    # Organisations have no updated_at: the outcome is all that tells a change.
    return organisation, "created" if created else "updated" if changed else "unchanged"


def _write_venue(session: Session, values: dict) -> tuple[object, str]:
    values = {**values, "name_key": fold(values["name"]), "city_key": fold(values["city"])}
    venue = session.get(Venue, values["id"])
    created = venue is None
    venue = venue or Venue(id=values["id"])
    copied = ("name", "city_key", "lat", "lng")
    copies_changed = not created and any(getattr(venue, name) != values[name] for name in copied)
    changed = _assign(venue, values)
    result = _finish(session, venue, created, changed)
    if copies_changed:
        # Events carry copies of their venue's city, coordinates and name (models.events).
        for event in session.scalars(select(Event).where(Event.venue_id == venue.id)):
            denormalize(event)
        session.flush()
    return result


def _write_artist(session: Session, values: dict) -> tuple[object, str]:
    values = {**values, "name_key": fold(values["name"])}
    artist = session.get(Artist, values["id"])
    created = artist is None
    artist = artist or Artist(id=values["id"])
    renamed = not created and artist.name != values["name"]
    changed = _assign(artist, values)
    result = _finish(session, artist, created, changed)
    if renamed:
        # A bill shows the artist's name as a copy; keep it in step.
        session.execute(update(EventArtist).where(EventArtist.artist_id == artist.id)
                        .values(name=artist.name).execution_options(synchronize_session="fetch"))
    return result


def _resolve(session: Session, refs: list[Reference]) -> dict[tuple[str, str], object]:
    """The records `refs` point to, by (kind, id); `BadRequest` names each one missing."""
    wanted: dict[str, set[str]] = {}
    for ref in refs:
        wanted.setdefault(ref.kind, set()).add(ref.id)
    found = {}
    for kind, ids in wanted.items():
        model = MODELS[kind]
        if len(ids) == 1:
            # A single record may well be in the session already: no query then.
            records = [session.get(model, next(iter(ids)))]
        else:
            records = session.scalars(select(model).where(model.id.in_(ids)))
        found.update(((kind, record.id), record) for record in records if record is not None)
    missing = [{"name": ref.field, "in": "body", "message": f"{ref.id!r} does not exist"}
               for ref in refs if (ref.kind, ref.id) not in found]
    if missing:
        raise BadRequest(missing, "The record points to records that do not exist.")
    return found


def _write_event(session: Session, values: dict) -> tuple[object, str]:
    found = _resolve(session, references("event", values))
    values = dict(values)
    venue = found["venue", values.pop("venue_id")]
    organisation = found["organisation", values.pop("organisation_id")]
    genre_names = values.pop("genres")
    bill = [found["artist", artist_id] for _path, artist_id in values.pop("lineup")]
    event = session.get(Event, values["id"])
    created = event is None
    event = event or Event(id=values["id"])
    if values["slug"] is None:
        values["slug"] = _free_slug(session, values) if created else event.slug
    _check_slug(session, event_id=values["id"], slug=values["slug"])
    values["timezone"] = values["timezone"] or TIMEZONES.get(venue.country, "Europe/Amsterdam")
    changed = _assign(event, values)
    if created or event.venue_id != venue.id or event.organisation_id != organisation.id:
        event.venue, event.organisation, changed = venue, organisation, True
    if [genre.genre for genre in event.genres] != genre_names:
        held = {genre.genre: genre for genre in event.genres}
        event.genres = [held.get(name) or EventGenre(genre=name) for name in genre_names]
        changed = True
    for position, genre in enumerate(event.genres):
        genre.position = position
    if [(act.artist_id, act.name) for act in event.lineup] != [(a.id, a.name) for a in bill]:
        held = {act.artist_id: act for act in event.lineup}
        event.lineup = [held.get(artist.id) or EventArtist(artist_id=artist.id)
                        for artist in bill]
        for act, artist in zip(event.lineup, bill):
            act.name = artist.name
        changed = True
    for position, act in enumerate(event.lineup):
        act.position = position
    denormalize(event)
    return _finish(session, event, created, changed)


def _free_slug(session: Session, values: dict) -> str:
    """A slug from the title and date; the id is added when that one is taken."""
    slug = f"{slugify(values['title'])[:150].strip('-')}-{values['date'].isoformat()}"
    if _slug_holder(session, event_id=values["id"], slug=slug) is None:
        return slug
    return f"{slug}-{slugify(values['id'])}"[:200].strip("-")


def _slug_holder(session: Session, *, event_id: str, slug: str) -> tuple[str, str] | None:
    """(id, slug) of another event whose slug or id is `slug`, or whose slug is `event_id`."""
    # Three lookups of one indexed column each: an OR of them scans the table on SQLite.
    others = Event.id != event_id
    row = session.execute(union_all(
        select(Event.id, Event.slug).where(Event.slug == slug, others),
        select(Event.id, Event.slug).where(Event.id == slug, others),
        select(Event.id, Event.slug).where(Event.slug == event_id, others)).limit(1)).first()
    return tuple(row) if row is not None else None


def _check_slug(session: Session, *, event_id: str, slug: str) -> None:
    # A path {id} takes an id or a slug, so neither may name two events.
    holder = _slug_holder(session, event_id=event_id, slug=slug)
    if holder is None:
        return
    other_id, other_slug = holder
    if other_slug == event_id:
        param = {"name": "id", "message": f"{event_id!r} is the slug of event {other_id!r}"}
    else:
        param = {"name": "slug", "message": f"{slug!r} is taken by event {other_id!r}"}
    raise BadRequest([{**param, "in": "body"}], "The event's slug or id is taken.")


def _write_release(session: Session, values: dict) -> tuple[object, str]:
    _resolve(session, references("release", values))
    values = dict(values)
    artist_ids = [artist_id for _path, artist_id in values.pop("artists")]
    release = session.get(Release, values["id"])
    created = release is None
    release = release or Release(id=values["id"])
    changed = _assign(release, values)
    if [credit.artist_id for credit in release.artists] != artist_ids:
        held = {credit.artist_id: credit for credit in release.artists}
        release.artists = [held.get(artist_id) or ReleaseArtist(artist_id=artist_id)
                           for artist_id in artist_ids]
        changed = True
    for position, credit in enumerate(release.artists):
        credit.position = position
    return _finish(session, release, created, changed)


def _write_token_report(session: Session, values: dict) -> tuple[object, str]:
    """Upsert a report of a festival edition; the caller refreshes the festival's figures."""
    found = _resolve(session, references("token_report", values))
    event = found["event", values["event_id"]]
    if event.festival_key is None:
        raise BadRequest([{"name": "event_id", "in": "body",
                           "message": f"{event.id!r} is not a festival (it has no festival_key)"}])
    report = session.get(TokenReport, values["id"])
    created = report is None
    report = report or TokenReport(id=values["id"])
    values = {**values, "created_at": values["created_at"] or report.created_at or now()}
    changed = _assign(report, values)
    session.add(report)
    session.flush()
    return report, "created" if created else "updated" if changed else "unchanged"


_WRITERS = {"organisation": _write_organisation, "venue": _write_venue, "artist": _write_artist,
            "event": _write_event, "release": _write_release,
            "token_report": _write_token_report}


def save_organisation(session: Session, **record) -> Organisation:
    """Create or update the organisation `record["id"]` from the record's fields."""
    return write(session, kind="organisation", values=clean("organisation", record))[0]


def save_venue(session: Session, **record) -> Venue:
    """Create or update a venue; the copies on its events follow a new name, city or place."""
    return write(session, kind="venue", values=clean("venue", record))[0]


def save_artist(session: Session, **record) -> Artist:
    """Create or update an artist; the names on bills follow a new name."""
    return write(session, kind="artist", values=clean("artist", record))[0]


def save_event(session: Session, **record) -> Event:
    """Create or update an event with its genres and bill, and the copies of its venue."""
    return write(session, kind="event", values=clean("event", record))[0]


def save_release(session: Session, **record) -> Release:
    """Create or update a release with its credited artists."""
    return write(session, kind="release", values=clean("release", record))[0]


# ---------------------------------------------------------------------------
# Copies for bulk writers
# ---------------------------------------------------------------------------


def event_copies(*, title: str, date: dt.date, end_date: dt.date | None, venue_name: str,
                 venue_city_key: str, venue_lat: float, venue_lng: float) -> dict:
    """The columns `models.events.denormalize` copies onto an event, from plain values."""
    return {"last_date": end_date or date, "city_key": venue_city_key, "lat": venue_lat,
            "lng": venue_lng, "search_key": fold(f"{title} {venue_name}")}


def sources(session: Session) -> list[tuple[str, int]]:
    """Each origin the served catalogue names (`source`), with its number of records, most
    first: public events, venues, artists and releases."""
    named = union_all(
        select(Event.source.label("source")).where(PUBLIC),
        select(Venue.source.label("source")), select(Artist.source.label("source")),
        select(Release.source.label("source"))).subquery()
    counted = func.count().label("records")
    return [(source, records) for source, records in session.execute(
        select(named.c.source, counted).where(named.c.source != "")
        .group_by(named.c.source).order_by(counted.desc(), named.c.source))]
