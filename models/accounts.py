"""What a token may know about itself (GET /me, the MCP `whoami` tool)."""

from __future__ import annotations

import dataclasses

from sqlalchemy.orm import Session

from models.organisations import Organisation, count_events
from models.tokens import ApiToken, Caller, get_token


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
