"""The organiser portal (an organisation's API tokens, its door) and ticket links.

Who may do what, by role in the organisation (`models.people.ROLES`):

- owner: sees the API page, creates tokens with any scope the organisation may have
  (`tickets` only with a link to its own ticket shop), renames and revokes every token;
  works the door.
- editor: the same, except `tickets`: delivering ticket lists hands buyers' addresses to
  the service, which is the owner's call. An editor creates `read`, `scan` and
  `attendance` tokens and renames or revokes only tokens whose scopes they could have
  created (not a `tickets` token an owner made for the shop).
- viewer: sees the list of tokens, changes nothing; no door.
- door: works the door page only; the API page is not for them.

An organisation the person has no role in is the same 404 page as one that does not
exist. Every form carries the session's CSRF token (`oauth.views`); a new token is shown
once, in the answer to the form that created it (never in a URL), and only its hash is
stored (`models.tokens`).

`/t/<code>` shows a ticket to its holder only; to anyone else, signed in, it is the
404 page of a missing code. Signed out, it sends to /signin and back.

The pages are Dutch or English (`?lang=`, then Accept-Language), need no JavaScript, and
are private: `Cache-Control: no-store`.
"""

from __future__ import annotations

import datetime as dt
from urllib.parse import urlencode

from flask import Blueprint, Response, redirect, render_template, request

from edge.context import holds_nul, service, session, settings
from models import door, members, tickets, tokens
from models.calendar import AMSTERDAM, today
from models.db import now
from models.errors import BadRequest, NotFound
from models.organisations import Organisation
from models.people import Person
from oauth.views import check_csrf, csrf_token, signed_in
from openapi.schemas import attribution
from pages.views import html_response, request_locale
from pages.words import long_date, short_date
from portal.words import text_for

blueprint = Blueprint("portal", __name__, template_folder="templates")

# Scopes each role may give a token it creates (and so manage).
CREATABLE = {"owner": set(tokens.SCOPES), "editor": {"read", "scan", "attendance"},
             "viewer": set(), "door": set()}
SEES_TOKENS = {"owner", "editor", "viewer"}
WORKS_DOOR = {"owner", "editor", "door"}


class _SignIn(Exception):
    """The page needs a signed-in person."""


class _NotForRole(Exception):
    """The person's role in the organisation does not open this page."""


@blueprint.errorhandler(_SignIn)
def _to_sign_in(_error: _SignIn) -> Response:
    # A form posted after the session ended goes back to the portal, not to the POST path.
    here = request.full_path.rstrip("?") if request.method == "GET" else "/portal"
    return redirect(f"/signin?{urlencode({'next': here, 'lang': request_locale()})}")


@blueprint.errorhandler(NotFound)
def _not_found(_error: NotFound) -> Response:
    """No such organisation, token or ticket, or one that is not the person's."""
    return _page("pages/not_found.html", title=None, status=404)


@blueprint.before_request
def _no_nul() -> Response | None:
    """No organisation, token or ticket has a NUL character (%00) in its address. (Forms
    answer for their fields: the door's says a code with one is an unknown ticket.)"""
    return _not_found(NotFound()) if holds_nul(form=False) else None


@blueprint.errorhandler(_NotForRole)
def _forbidden(_error: _NotForRole) -> Response:
    return _page("portal/forbidden.html", title=None, status=403)


# ---------------------------------------------------------------------------
# Choosing an organisation
# ---------------------------------------------------------------------------


@blueprint.get("/portal")
def portal():
    """The organisations the person has a role in; with one, straight to its page."""
    person = _person()
    roles = members.roles_of(session(), person.id)
    if len(roles) == 1:
        organisation_id, _name, role = roles[0]
        return redirect(_start(organisation_id, role))
    return _page("portal/choose.html", title=None, person=person,
                 roles=[(organisation_id, name, role, _start(organisation_id, role))
                        for organisation_id, name, role in roles])


def _start(organisation_id: str, role: str) -> str:
    page = "api" if role in SEES_TOKENS else "door"
    return f"/portal/{organisation_id}/{page}?lang={request_locale()}"


# ---------------------------------------------------------------------------
# API tokens
# ---------------------------------------------------------------------------


@blueprint.get("/portal/<organisation_id>/api")
def api_page(organisation_id: str):
    """The organisation's live tokens, and for owners and editors the forms to change them."""
    person, organisation, role = _member(organisation_id, SEES_TOKENS)
    return _api_page(person, organisation, role)


@blueprint.post("/portal/<organisation_id>/api/tokens")
def create_token(organisation_id: str):
    """A new token, shown once in this answer."""
    person, organisation, role = _member(organisation_id, SEES_TOKENS)
    check_csrf()
    scopes = request.form.getlist("scope")
    if not set(scopes) <= CREATABLE[role]:
        raise _NotForRole()
    try:
        record, token = tokens.create_token(session(), organisation=organisation,
                                            name=request.form.get("name", ""), scopes=scopes)
    except BadRequest as error:
        return _api_page(person, organisation, role, problems=error.params, status=400)
    return _api_page(person, organisation, role, created=(record, token))


@blueprint.post("/portal/<organisation_id>/api/tokens/<prefix>/name")
def rename_token(organisation_id: str, prefix: str):
    """Another name for a token."""
    person, organisation, role = _member(organisation_id, SEES_TOKENS)
    check_csrf()
    _managed(organisation.id, prefix, role)
    try:
        tokens.rename_token(session(), organisation_id=organisation.id, prefix=prefix,
                            name=request.form.get("name", ""))
    except BadRequest as error:
        return _api_page(person, organisation, role, problems=error.params, status=400)
    return _back_to_api(organisation.id)


@blueprint.post("/portal/<organisation_id>/api/tokens/<prefix>/revoke")
def revoke_token(organisation_id: str, prefix: str):
    """Revoke a token: its next request gets 401."""
    _, organisation, role = _member(organisation_id, SEES_TOKENS)
    check_csrf()
    tokens.revoke_token(session(), _managed(organisation.id, prefix, role).prefix)
    return _back_to_api(organisation.id)


def _managed(organisation_id: str, prefix: str, role: str) -> tokens.ApiToken:
    """The organisation's token, when the role may change it."""
    record = tokens.get_organisation_token(session(), organisation_id=organisation_id,
                                           prefix=prefix)
    if not set(record.scope_list) <= CREATABLE[role]:
        raise _NotForRole()
    return record


def _back_to_api(organisation_id: str) -> Response:
    return redirect(f"/portal/{organisation_id}/api?lang={request_locale()}", code=303)


def _api_page(person: Person, organisation, role: str, *, created=None,
              problems: list[dict] = (), status: int = 200) -> Response:
    records = tokens.list_tokens(session(), organisation.id)
    used = service().usage.used_today([
        tokens.Caller(token_id=record.id, organisation_id=organisation.id,
                      scopes=frozenset(record.scope_list), per_day=record.per_day)
        for record in records])
    rows = [{"token": record, "used_today": count,
             "manageable": set(record.scope_list) <= CREATABLE[role]}
            for record, count in zip(records, used)]
    offered = [scope for scope in tokens.SCOPES if scope in CREATABLE[role]]
    if "tickets" in offered and not organisation.ticket_shop_url:
        offered.remove("tickets")
    return _page("portal/api.html", title=None, status=status, person=person,
                 organisation=organisation, role=role, rows=rows, offered=offered,
                 can_manage=bool(CREATABLE[role]), created=created, problems=problems,
                 csrf=csrf_token())


# ---------------------------------------------------------------------------
# The door
# ---------------------------------------------------------------------------


@blueprint.route("/portal/<organisation_id>/door", methods=["GET", "POST"])
def door_page(organisation_id: str):
    """Scan a code (as POST /scan does) and show the verdict large; tonight's events."""
    person, organisation, role = _member(organisation_id, WORKS_DOOR)
    verdict = None
    if request.method == "POST":
        check_csrf()
        verdict = door.scan(service().direct, door.within(session()),
                            organisation_id=organisation.id,
                            scanned=request.form.get("code", ""), event_id=None, now=now())
    moment = dt.datetime.now(AMSTERDAM)
    return _page("portal/door.html", title=None, person=person, organisation=organisation,
                 role=role, verdict=verdict, csrf=csrf_token(),
                 tonight=door.tonight(session(), organisation_id=organisation.id,
                                        today=today(), moment=moment))


# ---------------------------------------------------------------------------
# Ticket links
# ---------------------------------------------------------------------------


@blueprint.get("/t/<code>")
def ticket_page(code: str):
    """The ticket behind a link, for its holder only."""
    person = _person()
    ticket, event = tickets.holders_ticket(session(), code=code, person_id=person.id)
    return _page("portal/ticket.html", title=event.title, ticket=ticket, event=event,
                 day=long_date(event.date, request_locale()))


# ---------------------------------------------------------------------------
# The signed-in person, their role, the page
# ---------------------------------------------------------------------------


def _person() -> Person:
    person = signed_in()
    if person is None:
        raise _SignIn()
    return person


def _member(organisation_id: str, roles: set[str]):
    """(person, organisation, role) when the person has one of `roles` there."""
    person = _person()
    found = next(((name, role) for key, name, role in members.roles_of(session(), person.id)
                  if key == organisation_id), None)
    if found is None:
        raise NotFound("organisation", organisation_id)
    if found[1] not in roles:
        raise _NotForRole()
    organisation = session().get(Organisation, organisation_id)
    return person, organisation, found[1]


def _page(template: str, *, title: str | None, status: int = 200, **values) -> Response:
    """A private page in the person's language, in the public pages' layout."""
    locale = request_locale()
    body = render_template(template, t=text_for(locale), locale=locale, site=settings().site_url,
                           title=title, attribution=attribution(settings()), path=request.path,
                           when=lambda moment: _when(moment, locale), **values)
    return html_response(body, status=status, private=True)


def _when(moment: int | None, locale: str) -> str:
    if moment is None:
        return text_for(locale)["never"]
    local = dt.datetime.fromtimestamp(moment, AMSTERDAM)
    return f"{short_date(local.date(), locale)}, {local:%H:%M}"
