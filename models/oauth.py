"""OAuth 2.1 for the MCP server: registered clients, grants, codes and tokens.

A grant is one person's consent to one client (for one organisation, or none):
every code and token issued from it belongs to it, so a replayed code or a
reused refresh token revokes the whole family at once. Secrets, codes and
tokens are stored only as SHA-256 hashes. What a token may do is decided at
each request from the grant's scopes and the person's role *now*
(`abilities`), so a changed role changes the token's abilities at once.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import ipaddress
import secrets
from urllib.parse import urlsplit

from sqlalchemy import JSON, ForeignKey, Index, String, and_, select, update
from sqlalchemy.orm import Mapped, Session, mapped_column

from models.db import Base, Timestamp, insert_for
from models.organisations import Organisation
from models.people import Membership, Person

ACCESS_PREFIX, REFRESH_PREFIX = "svc_oat_", "svc_ort_"
ACCESS_LIFETIME = 60 * 60
REFRESH_LIFETIME = 30 * 86400
CODE_LIFETIME = 60
# How long an authorization request waits for the person to sign in and consent.
REQUEST_LIFETIME = 10 * 60
SCOPES = ("read", "attendance", "scan", "admin")
# What each role in an organisation may grant: editing events opens attendance, the door
# opens scanning. `tickets` is never granted through OAuth; `admin` only to the platform.
ROLE_SCOPES = {"owner": {"read", "attendance", "scan"}, "editor": {"read", "attendance"},
               "door": {"read", "scan"}, "viewer": {"read"}}
AUTH_METHODS = ("none", "client_secret_post", "client_secret_basic")
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")


def digest(secret: str) -> str:
    """The stored form of a secret, code or token."""
    return hashlib.sha256(secret.encode()).hexdigest()


class OAuthClient(Base):
    """A registered client (RFC 7591); Authlib reads it through the `ClientMixin` methods."""

    __tablename__ = "oauth_clients"

    id: Mapped[str] = mapped_column(String(48), primary_key=True)
    secret_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)
    name: Mapped[str] = mapped_column(String(200))
    redirect_uris: Mapped[list] = mapped_column(JSON)
    grant_types: Mapped[list] = mapped_column(JSON)
    response_types: Mapped[list] = mapped_column(JSON)
    token_endpoint_auth_method: Mapped[str] = mapped_column(String(30))
    scope: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[int] = mapped_column(Timestamp)

    # -- authlib.oauth2.rfc6749.ClientMixin -------------------------------------------

    def get_client_id(self) -> str:
        return self.id

    def get_default_redirect_uri(self) -> str | None:
        # Only with exactly one registered: with several the request must name one.
        return self.redirect_uris[0] if len(self.redirect_uris) == 1 else None

    def get_allowed_scope(self, scope: str | None) -> str:
        allowed = self.scope.split()
        if not scope:
            return " ".join(allowed)
        return " ".join(s for s in scope.split() if s in allowed)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return any(redirect_matches(registered, redirect_uri)
                   for registered in self.redirect_uris)

    def check_client_secret(self, client_secret: str) -> bool:
        return self.secret_hash is not None and hmac.compare_digest(
            self.secret_hash, digest(client_secret))

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        if endpoint == "token":
            return method == self.token_endpoint_auth_method
        return method in AUTH_METHODS

    def check_response_type(self, response_type: str) -> bool:
        return response_type in self.response_types

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in self.grant_types


def redirect_matches(registered: str, given: str) -> bool:
    """Exact match, except that a loopback http redirect may use any port (RFC 8252 7.3)."""
    if registered == given:
        return True
    try:
        want, got = urlsplit(registered), urlsplit(given)
        want.port, got.port  # noqa: B018 - raises on a bad port
    except ValueError:
        return False
    return (want.scheme == got.scheme == "http" and is_loopback(want.hostname)
            and want.hostname == got.hostname and want.path == got.path
            and want.query == got.query and not got.fragment and not got.username)


def is_loopback(host: str | None) -> bool:
    """Whether `host` is localhost or a loopback address."""
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class OAuthGrant(Base):
    """A person's consent to a client: the family every code and token of it belongs to."""

    __tablename__ = "oauth_grants"
    __table_args__ = (Index("ix_oauth_grants_person", "person_id", "client_id"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    client_id: Mapped[str] = mapped_column(ForeignKey("oauth_clients.id", ondelete="CASCADE"))
    person_id: Mapped[str] = mapped_column(ForeignKey("people.id", ondelete="CASCADE"))
    organisation_id: Mapped[str | None] = mapped_column(
        ForeignKey("organisations.id", ondelete="CASCADE"), nullable=True)
    scope: Mapped[str] = mapped_column(String(200))
    resource: Mapped[str] = mapped_column(String(500))
    created_at: Mapped[int] = mapped_column(Timestamp)
    revoked_at: Mapped[int | None] = mapped_column(Timestamp, nullable=True)


class OAuthCode(Base):
    """An authorization code (its hash): 60 seconds, single use."""

    __tablename__ = "oauth_codes"

    code_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    grant_id: Mapped[str] = mapped_column(ForeignKey("oauth_grants.id", ondelete="CASCADE"))
    redirect_uri: Mapped[str] = mapped_column(String(500))
    code_challenge: Mapped[str] = mapped_column(String(128))
    code_challenge_method: Mapped[str] = mapped_column(String(10))
    scope: Mapped[str] = mapped_column(String(200))
    expires_at: Mapped[int] = mapped_column(Timestamp)
    used_at: Mapped[int | None] = mapped_column(Timestamp, nullable=True)

    # -- authlib.oauth2.rfc6749.AuthorizationCodeMixin --------------------------------

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope


class OAuthToken(Base):
    """An access or refresh token (its hash) of a grant."""

    __tablename__ = "oauth_tokens"
    __table_args__ = (Index("ix_oauth_tokens_grant", "grant_id"),)

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    grant_id: Mapped[str] = mapped_column(ForeignKey("oauth_grants.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(10))
    scope: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[int] = mapped_column(Timestamp)
    expires_at: Mapped[int] = mapped_column(Timestamp)
    # A refresh token is used once: then it is replaced by a new one.
    used_at: Mapped[int | None] = mapped_column(Timestamp, nullable=True)
    revoked_at: Mapped[int | None] = mapped_column(Timestamp, nullable=True)

    def get_scope(self) -> str:
        """The scope it was issued with (Authlib's refresh grant narrows from it)."""
        return self.scope


def new_secret(prefix: str = "") -> str:
    """A new random secret (256 bits), with a visible prefix."""
    return f"{prefix}{secrets.token_urlsafe(32)}"


# ---------------------------------------------------------------------------
# Codes and token families
# ---------------------------------------------------------------------------


def consume_code(session: Session, code: str, *, client_id: str, now: int) -> OAuthCode | None:
    """Take an unused, unexpired code of this client, atomically (one conditional UPDATE):
    of two requests with the same code exactly one gets it. None otherwise."""
    taken = session.execute(
        update(OAuthCode)
        .where(OAuthCode.code_hash == digest(code), OAuthCode.used_at.is_(None),
               OAuthCode.expires_at > now,
               OAuthCode.grant_id.in_(select(OAuthGrant.id).where(
                   OAuthGrant.client_id == client_id, OAuthGrant.revoked_at.is_(None))))
        .values(used_at=now).returning(OAuthCode.code_hash)
        .execution_options(synchronize_session=False)).first()
    return session.get(OAuthCode, taken[0]) if taken else None


def replayed_code_grant(session: Session, code: str) -> str | None:
    """The grant of a code that was used before (a replay), if it is one."""
    return session.scalar(select(OAuthCode.grant_id).where(
        OAuthCode.code_hash == digest(code), OAuthCode.used_at.is_not(None)))


def consume_refresh_token(session: Session, token: str, *, client_id: str,
                          now: int) -> OAuthToken | None:
    """Take a live refresh token of this client for rotation, atomically; None otherwise."""
    taken = session.execute(
        update(OAuthToken)
        .where(OAuthToken.token_hash == digest(token), OAuthToken.kind == "refresh",
               OAuthToken.used_at.is_(None), OAuthToken.revoked_at.is_(None),
               OAuthToken.expires_at > now,
               OAuthToken.grant_id.in_(select(OAuthGrant.id).where(
                   OAuthGrant.client_id == client_id, OAuthGrant.revoked_at.is_(None))))
        .values(used_at=now).returning(OAuthToken.token_hash)
        .execution_options(synchronize_session=False)).first()
    return session.get(OAuthToken, taken[0]) if taken else None


def reused_refresh_grant(session: Session, token: str) -> str | None:
    """The grant of a refresh token that was already replaced (a reuse), if it is one."""
    return session.scalar(select(OAuthToken.grant_id).where(
        OAuthToken.token_hash == digest(token), OAuthToken.kind == "refresh",
        OAuthToken.used_at.is_not(None)))


def revoke_grant(session: Session, grant_id: str, *, now: int) -> None:
    """Revoke a grant and every token of it."""
    session.execute(update(OAuthGrant).where(OAuthGrant.id == grant_id,
                                             OAuthGrant.revoked_at.is_(None))
                    .values(revoked_at=now).execution_options(synchronize_session=False))
    session.execute(update(OAuthToken).where(OAuthToken.grant_id == grant_id,
                                             OAuthToken.revoked_at.is_(None))
                    .values(revoked_at=now).execution_options(synchronize_session=False))


def store_tokens(session: Session, *, grant_id: str, access_token: str,
                 refresh_token: str | None, scope: str, now: int) -> None:
    """Keep the hashes of newly issued tokens."""
    session.add(OAuthToken(token_hash=digest(access_token), grant_id=grant_id, kind="access",
                           scope=scope, created_at=now, expires_at=now + ACCESS_LIFETIME))
    if refresh_token:
        session.add(OAuthToken(token_hash=digest(refresh_token), grant_id=grant_id,
                               kind="refresh", scope=scope, created_at=now,
                               expires_at=now + REFRESH_LIFETIME))
    session.flush()


def revoke_token(session: Session, token: str, *, client_id: str, now: int) -> bool:
    """Revoke one token of this client (RFC 7009); a refresh token takes its grant along."""
    found = session.execute(
        select(OAuthToken, OAuthGrant).join(OAuthGrant, OAuthGrant.id == OAuthToken.grant_id)
        .where(OAuthToken.token_hash == digest(token), OAuthGrant.client_id == client_id)
    ).first()
    if found is None:
        return False
    stored, grant = found
    if stored.kind == "refresh":
        revoke_grant(session, grant.id, now=now)
    elif stored.revoked_at is None:
        stored.revoked_at = now
    session.flush()
    return True


# ---------------------------------------------------------------------------
# Using a token
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Access:
    """What a live OAuth access token stands for right now."""

    person_id: str
    organisation_id: str | None
    client_id: str
    grant_id: str
    resource: str
    scopes: frozenset[str]
    expires_at: int


def abilities(granted: set[str], role: str | None) -> frozenset[str]:
    """The scopes a grant gives now: what was consented to and the role still allows."""
    return frozenset(granted & (ROLE_SCOPES.get(role, set()) if role else {"read"}))


def authenticate_access(session: Session, token: str, *, now: int) -> Access | None:
    """The access an OAuth access token gives now; None when unknown, expired or revoked,
    or when its person or organisation is suspended."""
    if not token.startswith(ACCESS_PREFIX):
        return None
    found = session.execute(
        select(OAuthToken, OAuthGrant, Person.visibility)
        .join(OAuthGrant, OAuthGrant.id == OAuthToken.grant_id)
        .join(Person, Person.id == OAuthGrant.person_id)
        .where(OAuthToken.token_hash == digest(token), OAuthToken.kind == "access")).first()
    if found is None:
        return None
    stored, grant, visibility = found
    if (stored.revoked_at is not None or grant.revoked_at is not None
            or stored.expires_at <= now or visibility == "suspended"):
        return None
    organisation_id, role = grant.organisation_id, None
    if organisation_id is not None:
        membership = session.execute(
            select(Organisation.suspended, Membership.role)
            .outerjoin(Membership, and_(Membership.organisation_id == Organisation.id,
                                        Membership.person_id == grant.person_id))
            .where(Organisation.id == organisation_id)).first()
        if membership is None or membership.suspended:
            return None
        role = membership.role
        if role is None:
            # No longer a member: what anyone may do, nothing of the organisation.
            organisation_id = None
    return Access(person_id=grant.person_id, organisation_id=organisation_id,
                  client_id=grant.client_id, grant_id=grant.id, resource=grant.resource,
                  scopes=abilities(set(stored.scope.split()), role),
                  expires_at=stored.expires_at)


# ---------------------------------------------------------------------------
# Connected apps
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ConnectedApp:
    """A client holding live tokens of a person."""

    client_id: str
    name: str
    organisation: str | None
    scope: str
    since: int


def connected_apps(session: Session, person_id: str, *, now: int) -> list[ConnectedApp]:
    """The clients with a live grant of the person that still holds a usable token."""
    rows = session.execute(
        select(OAuthGrant, OAuthClient.name, Organisation.name)
        .join(OAuthClient, OAuthClient.id == OAuthGrant.client_id)
        .outerjoin(Organisation, Organisation.id == OAuthGrant.organisation_id)
        .where(OAuthGrant.person_id == person_id, OAuthGrant.revoked_at.is_(None),
               select(OAuthToken.token_hash).where(
                   OAuthToken.grant_id == OAuthGrant.id, OAuthToken.revoked_at.is_(None),
                   OAuthToken.expires_at > now).exists())
        .order_by(OAuthGrant.created_at.desc(), OAuthGrant.id)).all()
    return [ConnectedApp(client_id=grant.client_id, name=name, organisation=organisation,
                         scope=grant.scope, since=grant.created_at)
            for grant, name, organisation in rows]


def has_approved(session: Session, person_id: str, client_id: str) -> bool:
    """Whether the person approved the client before (a grant of theirs is still live)."""
    return session.scalar(select(OAuthGrant.id).where(
        OAuthGrant.person_id == person_id, OAuthGrant.client_id == client_id,
        OAuthGrant.revoked_at.is_(None)).limit(1)) is not None


def disconnect(session: Session, person_id: str, client_id: str, *, now: int) -> int:
    """Revoke every grant (and token) of the person to this client; how many grants."""
    grant_ids = session.scalars(select(OAuthGrant.id).where(
        OAuthGrant.person_id == person_id, OAuthGrant.client_id == client_id,
        OAuthGrant.revoked_at.is_(None))).all()
    for grant_id in grant_ids:
        revoke_grant(session, grant_id, now=now)
    session.flush()
    return len(grant_ids)


# ---------------------------------------------------------------------------
# Registration (RFC 7591)
# ---------------------------------------------------------------------------


class RegistrationError(Exception):
    """A registration request that cannot be accepted (`error` as RFC 7591 names it)."""

    def __init__(self, error: str, description: str):
        super().__init__(description)
        self.error, self.description = error, description


def register_client(session: Session, metadata: dict, *, now: int) -> tuple[OAuthClient, str | None]:
    """A new client from its metadata, and its secret (None for a public client).

    Redirect URIs must be https, or http on a loopback host (any port). Omitted
    grant types are the code and refresh grants, the response type `code`, the
    authentication method `client_secret_basic` (RFC 7591's default) unless the
    client asks for `none`.
    """
    if not isinstance(metadata, dict):
        raise RegistrationError("invalid_client_metadata", "The body must be a JSON object.")
    uris = _redirect_uris(metadata)
    name = metadata.get("client_name", "")
    if not isinstance(name, str) or len(name) > 200 or not name.isprintable():
        raise RegistrationError("invalid_client_metadata", "client_name must be a string of "
                                "at most 200 characters, without control or bidi "
                                "characters (NUL, CR, LF, tab, U+202E, ...).")
    method = metadata.get("token_endpoint_auth_method", "client_secret_basic")
    if method not in AUTH_METHODS:
        raise RegistrationError("invalid_client_metadata",
                                f"token_endpoint_auth_method must be one of "
                                f"{', '.join(AUTH_METHODS)}.")
    grant_types = _strings(metadata, "grant_types", ["authorization_code", "refresh_token"],
                           allowed={"authorization_code", "refresh_token"})
    response_types = _strings(metadata, "response_types", ["code"], allowed={"code"})
    if "authorization_code" not in grant_types:
        raise RegistrationError("invalid_client_metadata",
                                "grant_types must include authorization_code.")
    scope = metadata.get("scope", "read attendance scan")
    if not isinstance(scope, str) or not set(scope.split()) <= set(SCOPES):
        raise RegistrationError("invalid_client_metadata",
                                f"scope may name only {', '.join(SCOPES)}.")
    secret = None if method == "none" else new_secret()
    client = OAuthClient(id=f"cli_{secrets.token_urlsafe(18)}",
                         secret_hash=digest(secret) if secret else None,
                         name=name.strip() or "Unnamed app", redirect_uris=uris,
                         grant_types=grant_types, response_types=response_types,
                         token_endpoint_auth_method=method, scope=" ".join(scope.split()),
                         created_at=now)
    session.add(client)
    session.flush()
    return client, secret


def document_client(session: Session, url: str, document: dict, *, now: int) -> OAuthClient:
    """The client a Client ID Metadata Document describes, kept (and refreshed) as a record
    so grants can name it; its record id is derived from the URL (ids are short)."""
    if document.get("client_id") != url:
        raise RegistrationError("invalid_client_metadata",
                                "The document's client_id must be its own URL.")
    if document.get("token_endpoint_auth_method", "none") != "none":
        raise RegistrationError("invalid_client_metadata",
                                "A metadata document client authenticates with 'none'.")
    uris = _redirect_uris(document)
    name = document.get("client_name") or urlsplit(url).hostname
    if not isinstance(name, str):
        raise RegistrationError("invalid_client_metadata", "client_name must be a string.")
    client_id = _document_client_id(url)
    if session.get(OAuthClient, client_id) is None:
        # Two first requests of one client at once: one inserts, the other finds it.
        session.execute(insert_for(session, OAuthClient.__table__).values(
            id=client_id, secret_hash=None, grant_types=["authorization_code", "refresh_token"],
            response_types=["code"], token_endpoint_auth_method="none",
            scope="read attendance scan", created_at=now, name="", redirect_uris=[]
        ).on_conflict_do_nothing(index_elements=["id"]))
    client = session.get(OAuthClient, client_id)
    client.name, client.redirect_uris = name.strip()[:200] or "Unnamed app", uris
    session.flush()
    return client


def known_document_client(session: Session, url: str) -> OAuthClient | None:
    """The record a Client ID Metadata Document left when it was last seen, if any."""
    return session.get(OAuthClient, _document_client_id(url))


def _document_client_id(url: str) -> str:
    return f"cimd_{digest(url)[:40]}"


def _redirect_uris(metadata: dict) -> list[str]:
    """The checked `redirect_uris` of client metadata."""
    uris = metadata.get("redirect_uris")
    if (not isinstance(uris, list) or not uris or len(uris) > 10
            or not all(isinstance(uri, str) for uri in uris)):
        raise RegistrationError("invalid_redirect_uri",
                                "redirect_uris must be a list of 1 to 10 URIs.")
    for uri in uris:
        _check_redirect_uri(uri)
    return uris


def _check_redirect_uri(uri: str) -> None:
    # Checked before parsing: urlsplit drops CR, LF and tab (as browsers do), so the URI
    # used would differ from the one stored and shown.
    if len(uri) > 500 or not uri.isprintable() or any(ch.isspace() for ch in uri):
        raise RegistrationError("invalid_redirect_uri", f"{uri[:100]!r} must be at most 500 "
                                "characters, without spaces, control or bidi characters "
                                "(NUL, CR, LF, tab, U+202E, ...).")
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 - raises on a bad port
        (parts.hostname or "").encode("idna")
    except (ValueError, UnicodeError):
        raise RegistrationError("invalid_redirect_uri", f"{uri!r} is not a URI.") from None
    if not parts.hostname or parts.fragment or parts.username:
        raise RegistrationError("invalid_redirect_uri",
                                f"{uri!r} must be an absolute URI without a fragment.")
    if parts.scheme == "https" or (parts.scheme == "http" and is_loopback(parts.hostname)):
        return
    raise RegistrationError("invalid_redirect_uri", f"{uri!r} must be https, or http on a "
                            "loopback address (localhost, 127.0.0.1, [::1]).")


def _strings(metadata: dict, name: str, default: list[str], *, allowed: set[str]) -> list[str]:
    value = metadata.get(name, default)
    if (not isinstance(value, list) or not value
            or not all(isinstance(item, str) and item in allowed for item in value)):
        raise RegistrationError("invalid_client_metadata",
                                f"{name} may name only {', '.join(sorted(allowed))}.")
    return list(dict.fromkeys(value))


def registration_response(client: OAuthClient, secret: str | None) -> dict:
    """The RFC 7591 answer for a newly registered client."""
    body = {"client_id": client.id, "client_id_issued_at": client.created_at,
            "client_name": client.name, "redirect_uris": client.redirect_uris,
            "grant_types": client.grant_types, "response_types": client.response_types,
            "token_endpoint_auth_method": client.token_endpoint_auth_method,
            "scope": client.scope}
    if secret is not None:
        body |= {"client_secret": secret, "client_secret_expires_at": 0}
    return body
