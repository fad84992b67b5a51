"""Live API tokens (`svc_live_...`): created in the portal or by `agenda token create`.

Only a SHA-256 hash of a token is stored, with a short visible prefix to tell
tokens apart; the token itself is shown once, when it is created.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import secrets

from sqlalchemy import ForeignKey, Integer, String, bindparam, select, update
from sqlalchemy.orm import Mapped, Session, mapped_column, relationship

from adapters.direct import rows
from adapters.watch import KnownToken, Watch
from models import stamp
from models.db import Base, Timestamp, new_id, now
from models.errors import BadRequest, Forbidden, NotFound, Unauthorized
from models.organisations import Organisation, count_events

LIVE_PREFIX = "svc_live_"
SCOPES = ("read", "scan", "attendance", "tickets")
VISIBLE_CHARS = 8
# last_used_at is written at most this often, so that reads stay reads.
LAST_USED_RESOLUTION = 60


class ApiToken(Base):
    """A live token of one organisation with one or more scopes."""

    __tablename__ = "api_tokens"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    organisation_id: Mapped[str] = mapped_column(ForeignKey("organisations.id"), index=True)
    name: Mapped[str] = mapped_column(String(120))
    prefix: Mapped[str] = mapped_column(String(40), unique=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    scopes: Mapped[str] = mapped_column(String(200))
    # None: the default daily quota of the settings applies.
    per_day: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[int] = mapped_column(Timestamp)
    last_used_at: Mapped[int | None] = mapped_column(Timestamp, nullable=True)
    revoked_at: Mapped[int | None] = mapped_column(Timestamp, nullable=True)

    organisation: Mapped[Organisation] = relationship(lazy="joined")

    @property
    def scope_list(self) -> list[str]:
        """The scopes in their canonical order."""
        granted = set(self.scopes.split())
        return [scope for scope in SCOPES if scope in granted]


@dataclasses.dataclass(frozen=True)
class Caller:
    """Who is calling: what the security layer hands to handlers for one request."""

    token_id: str
    organisation_id: str
    scopes: frozenset[str]
    per_day: int | None


# Built once: this runs on every request.
_TOKEN_ROW = (
    select(ApiToken.id, ApiToken.organisation_id, ApiToken.scopes, ApiToken.per_day,
           ApiToken.last_used_at, ApiToken.revoked_at, Organisation.suspended,
           stamp.current().label("stamp"))
    .join(Organisation, Organisation.id == ApiToken.organisation_id)
    .where(ApiToken.token_hash == bindparam("token_hash"))
)

# Conditional, so concurrent requests write it once.
_TOUCH = (
    update(ApiToken)
    .where(ApiToken.id == bindparam("token_id"),
           ApiToken.last_used_at.is_(None) | (ApiToken.last_used_at <= bindparam("before")))
    .values(last_used_at=bindparam("current"))
)


def hash_token(token: str) -> str:
    """The stored form of a token."""
    return hashlib.sha256(token.encode()).hexdigest()


def _name_params(name: str) -> list[dict]:
    """What is wrong with a token's name, if anything."""
    if not name.strip() or len(name) > 120 or "\x00" in name:
        return [{"name": "name", "in": "body", "message": "1 to 120 characters, without NUL"}]
    return []


def create_token(session: Session, *, organisation: Organisation, name: str,
                 scopes: list[str], per_day: int | None = None) -> tuple[ApiToken, str]:
    """A new live token; returns the record and the token, which is never stored."""
    params = []
    unknown = sorted(set(scopes) - set(SCOPES))
    if unknown or not scopes:
        params.append({"name": "scopes", "in": "body",
                       "message": f"choose one or more of {', '.join(SCOPES)}"})
    if "tickets" in scopes and not organisation.ticket_shop_url:
        params.append({"name": "scopes", "in": "body",
                       "message": "the tickets scope needs a link to the organisation's "
                                  "own ticket shop"})
    params += _name_params(name)
    if per_day is not None and per_day < 1:
        params.append({"name": "per_day", "in": "body", "message": "at least 1"})
    if params:
        raise BadRequest(params)
    secret = secrets.token_urlsafe(32)
    token = LIVE_PREFIX + secret
    record = ApiToken(
        id=new_id("tok"), organisation_id=organisation.id, name=name.strip(),
        prefix=LIVE_PREFIX + secret[:VISIBLE_CHARS], token_hash=hash_token(token),
        scopes=" ".join(scope for scope in SCOPES if scope in scopes), per_day=per_day,
        created_at=now(),
    )
    session.add(record)
    session.flush()
    return record, token


def authenticate(session: Session, token: str) -> Caller:
    """The caller behind a bearer token; refuses unknown, revoked and suspended ones."""
    return authenticate_with_stamp(functools.partial(rows, session.connection()), token)[0]


def authenticate_with_stamp(execute, token: str, watch: Watch | None = None, *,
                            read: bool = False) -> tuple[Caller, str]:
    """`authenticate`, and the catalogue stamp (models/stamp.py) read in the same statement,
    for the response cache: no extra round trip. `execute(statement, params)` runs a statement
    and returns its rows: `adapters.direct.DirectStatements.execute` on the request path. With a `watch`
    (adapters/watch.py), a token it knows is not read at all (the stamp is then the one the
    watch knows, which a change committed elsewhere may not have reached yet), and one read
    is known after; with `read`, it is read all the same, the stamp the database's."""
    if not token.startswith(LIVE_PREFIX):
        raise Unauthorized("The bearer token is not a live API token.")
    found = None if read else known(watch, token)
    if found is not None:
        return found
    generation = watch.generation if watch is not None else None
    token_hash = hash_token(token)
    rows = execute(_TOKEN_ROW, {"token_hash": token_hash})
    row = rows[0] if rows else None
    if row is None or row.revoked_at is not None:
        raise Unauthorized("The bearer token is unknown or revoked.")
    if row.suspended:
        raise Forbidden("The organisation of this token is suspended.")
    current = now()
    last_used_at = row.last_used_at
    if last_used_at is None or current - last_used_at >= LAST_USED_RESOLUTION:
        execute(_TOUCH, {"token_id": row.id, "current": current,
                         "before": current - LAST_USED_RESOLUTION})
        last_used_at = current
    granted = set(row.scopes.split())
    caller = Caller(token_id=row.id, organisation_id=row.organisation_id,
                    scopes=frozenset(scope for scope in SCOPES if scope in granted),
                    per_day=row.per_day)
    if watch is not None:
        watch.learn(token_hash, KnownToken(caller, last_used_at), row.stamp, generation)
    return caller, row.stamp


def known(watch: Watch | None, token: str) -> tuple[Caller, str] | None:
    """The caller and catalogue stamp of a token `watch` knows, without reading the database;
    None for any other (and for one due to be marked used again)."""
    if watch is None or not token.startswith(LIVE_PREFIX):
        return None
    found = watch.token(hash_token(token), now(), LAST_USED_RESOLUTION)
    return (found[0].caller, found[1]) if found is not None else None


def get_token(session: Session, token_id: str) -> ApiToken:
    """The token record behind a caller."""
    return session.get(ApiToken, token_id)


def revoke_token(session: Session, prefix: str) -> ApiToken:
    """Revoke the token with this visible prefix; later use gets 401."""
    record = session.scalars(select(ApiToken).where(ApiToken.prefix == prefix)).first()
    if record is None:
        raise NotFound("token", prefix)
    if record.revoked_at is None:
        record.revoked_at = now()
        session.flush()
    return record


def set_daily_limit(session: Session, prefix: str, per_day: int | None) -> ApiToken:
    """Raise (or lower) one token's daily quota; None returns it to the default."""
    if per_day is not None and per_day < 1:
        raise BadRequest([{"name": "per_day", "in": "body", "message": "at least 1"}])
    record = session.scalars(select(ApiToken).where(ApiToken.prefix == prefix)).first()
    if record is None:
        raise NotFound("token", prefix)
    record.per_day = per_day
    session.flush()
    return record


def list_tokens(session: Session, organisation_id: str) -> list[ApiToken]:
    """The organisation's live (not revoked) tokens, newest first."""
    return list(session.scalars(
        select(ApiToken).where(ApiToken.organisation_id == organisation_id,
                               ApiToken.revoked_at.is_(None))
        .order_by(ApiToken.created_at.desc(), ApiToken.id)))


def get_organisation_token(session: Session, *, organisation_id: str, prefix: str) -> ApiToken:
    """The organisation's live token with this prefix; another organisation's token, a
    revoked one and a missing one alike are `NotFound`."""
    record = session.scalars(select(ApiToken).where(
        ApiToken.prefix == prefix, ApiToken.organisation_id == organisation_id,
        ApiToken.revoked_at.is_(None))).first()
    if record is None:
        raise NotFound("token", prefix)
    return record


def rename_token(session: Session, *, organisation_id: str, prefix: str, name: str) -> ApiToken:
    """Give one of the organisation's live tokens another name (1 to 120 characters)."""
    if params := _name_params(name):
        raise BadRequest(params)
    record = get_organisation_token(session, organisation_id=organisation_id, prefix=prefix)
    record.name = name.strip()
    session.flush()
    return record


# What a token may know about itself (GET /me, the MCP `whoami` tool).


@dataclasses.dataclass(frozen=True)
class OrganisationView:
    """An organisation with its counted events."""

    organisation: Organisation
    events_count: int

    def __getattr__(self, name):
        return getattr(self.organisation, name)


@dataclasses.dataclass(frozen=True)
class TokenDescription:
    """The answer of GET /me."""

    token: ApiToken
    organisation: OrganisationView
    rate_limit: dict
    usage_today: list[dict]


def describe_token(session: Session, caller: Caller, *, usage, routes: list[str]):
    """The caller's token, organisation, limits (from `usage`) and today's usage per route."""
    token = get_token(session, caller.token_id)
    figures = usage.figures(caller)
    return TokenDescription(
        token=token,
        organisation=OrganisationView(token.organisation,
                                      count_events(session, token.organisation_id)),
        rate_limit={"per_minute": figures.per_minute,
                    "remaining_this_minute": figures.remaining_this_minute,
                    "per_day": figures.per_day, "used_today": figures.used_today},
        usage_today=usage.usage_today(caller, routes),
    )
