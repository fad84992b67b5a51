"""Who calls the MCP endpoint: a live API token or an OAuth access token for {site_url}/mcp.

Both become an `Identity` holding a `tokens.Caller`, so the per-token limits of
edge/limits.py and the organiser functions work the same as on REST.
"""

from __future__ import annotations

import dataclasses

from models import oauth, stamp, tokens
from models.db import now
from models.errors import Unauthorized
from models.unit_of_work import transaction

# The scope each tool needs; organiser tools also need an organisation to act for.
ORGANISER_SCOPES = frozenset({"attendance", "scan"})


@dataclasses.dataclass(frozen=True)
class Identity:
    """The caller of one MCP request."""

    kind: str  # "live" or "oauth"
    caller: tokens.Caller
    person_id: str | None = None
    client_id: str | None = None
    expires_at: int | None = None

    def may(self, scope: str) -> bool:
        """Whether this caller may use a tool that needs `scope`."""
        if scope not in self.caller.scopes:
            return False
        return scope not in ORGANISER_SCOPES or self.caller.organisation_id is not None


def authenticate(execute, sessions, token: str, *, resource: str) -> tuple[Identity, str]:
    """The identity behind a bearer token, and the catalogue stamp read with it (what the
    response cache serves its tools' answers under, edge/cache.py); `Unauthorized` (or
    `Forbidden` for a suspended organisation's live token) otherwise. A live token is read
    as the REST API reads it, with the stamp in one statement (`execute`: the direct
    statements); an OAuth token, which must have been issued for `resource`, in a
    transaction of its own."""
    if token.startswith(tokens.LIVE_PREFIX):
        caller, current = tokens.authenticate_with_stamp(execute, token)
        return Identity(kind="live", caller=caller), current
    with transaction(sessions) as session:
        access = oauth.authenticate_access(session, token, now=now())
        current = session.scalar(stamp.READ)
    if access is None:
        raise Unauthorized("The access token is unknown, expired or revoked.")
    if access.resource.rstrip("/") != resource:
        raise Unauthorized("The access token was not issued for this MCP server.")
    # Counted per grant: the access tokens a refresh replaces share one count.
    caller = tokens.Caller(token_id=f"oauth_{access.grant_id}",
                           organisation_id=access.organisation_id, scopes=access.scopes,
                           per_day=None)
    return Identity(kind="oauth", caller=caller, person_id=access.person_id,
                    client_id=access.client_id, expires_at=access.expires_at), current
