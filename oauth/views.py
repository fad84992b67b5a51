"""The OAuth endpoints and the pages a person needs: sign-in, consent, connected apps.

Errors of the OAuth endpoints are RFC 6749 JSON (`{"error", "error_description"}`),
never the REST envelope and never a 500; the pages answer with pages. The
authorization endpoint sends the person back to the client only once the client
and its redirect URI are known to be good and the person saw a page of this site
(the consent page, or an error page for a client they never approved): it is no
open redirector. Every redirect back carries `iss` (RFC 9207).

A signed-in browser holds a session's secret in its cookie; the session is a row
(models/members.py), so signing out ends it for every copy of the cookie.

An authorization request is kept, signed and timed, in a `request` ticket
while the person signs in and consents; after 10 minutes it is void.
"""

from __future__ import annotations

import hmac
import secrets
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import orjson
from authlib.oauth2.rfc6749 import InsecureTransportError, OAuth2Error
from flask import Blueprint, Response, redirect, render_template, request
from flask import session as cookie
from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer
from werkzeug.urls import iri_to_uri

from edge.context import holds_nul, service, session, settings
from models import deliveries, members, oauth
from models.db import now
from models.errors import DomainError
from models.people import Person
from oauth import server as authorization
from oauth.pages import text_for
from oauth.prefetch import AUTHORIZATIONS, windows_of

blueprint = Blueprint("oauth", __name__, template_folder="templates")

# Limits of the specification: registrations per address and for the whole platform,
# token requests per address.
# Windows are (name, limit, seconds, counted per client address (an IPv6 /64)).
REGISTRATIONS = (("register-address", 30, 600, True),)
# The platform's hour must not be used up from a few dozen addresses: an address's first
# five registrations of the hour count in the platform's 1,000 only, any further ones also
# in 500 that all such share. It takes 100 addresses to use up the hour; until then every
# other address still registers. Beside it, one client name registers at most 200 times an
# hour (a fifth of the platform's hour: many people may register the same app).
REGISTRATIONS_FIRST = (("register-address-hour", 5, 3600, True),)
REGISTRATIONS_PLATFORM = (("register-platform", 1000, 3600, False),)
REGISTRATIONS_BEYOND_FIRST = (("register-beyond-first", 500, 3600, False),
                              *REGISTRATIONS_PLATFORM)
REGISTRATIONS_PER_NAME = 200
TOKEN_REQUESTS_PER_MINUTE = 120
SIGN_INS_PER_MINUTE = 10
TOKEN_REQUESTS = (("token-address", TOKEN_REQUESTS_PER_MINUTE, 60, True),)
SIGN_INS = (("signin-address", SIGN_INS_PER_MINUTE, 60, True),)
# Sign-ins per account, from any address (`Usage.backoff`): five attempts at once, then each
# after a wait that doubles from a second up to five minutes; a success starts afresh, and
# attempts are forgotten an hour after the last. A browser that signed in to the account
# before (a signed `agenda_device` cookie) has a series of its own, so that whoever guesses
# at the password cannot keep the owner out: at worst the owner waits five minutes on a new
# browser, and not at all on their own.
SIGN_IN_BACKOFF = {"free": 5, "longest": 300, "forget_after": 3600}
DEVICE_COOKIE = "agenda_device"
DEVICE_LIFETIME = 365 * 86400


def _json(body: dict, status: int = 200, headers: dict | None = None) -> Response:
    return Response(orjson.dumps(body), status=status, mimetype="application/json",
                    headers={"Cache-Control": "no-store", **(headers or {})})


def _oauth_error(error: str, description: str, status: int = 400,
                 headers: dict | None = None) -> Response:
    return _json({"error": error, "error_description": description}, status, headers)


@blueprint.errorhandler(InsecureTransportError)
def _insecure(error: InsecureTransportError):
    """The service is configured with a plain http address that is not a loopback one
    (AGENDA_SITE_URL): OAuth needs https there."""
    return _oauth_error(error.error, "This server must be reached over https "
                        "(AGENDA_SITE_URL).")


# Endpoints answered in JSON (RFC 6749 errors) and pages a person sees.
_JSON_ENDPOINTS = frozenset({"oauth.token", "oauth.revoke"})
_PAGE_ENDPOINTS = frozenset({"oauth.authorize", "oauth.consent", "oauth.sign_in",
                             "oauth.connected_apps"})
_NUL_CHECKED = _JSON_ENDPOINTS | _PAGE_ENDPOINTS
NUL_DESCRIPTION = "The request has a NUL character (%00), which no parameter accepts."


@blueprint.before_request
def _no_nul() -> Response | None:
    """No client, code, token, address or password has a NUL character (%00)."""
    if request.endpoint not in _NUL_CHECKED or not holds_nul():
        return None
    if request.endpoint in _JSON_ENDPOINTS:
        return _oauth_error("invalid_request", NUL_DESCRIPTION)
    # The authorization request names its language `ui_locales`; the other pages `lang`.
    asked = request.values.get("ui_locales") or request.values.get("lang", "")
    return _error_page(_locale({"ui_locales": asked}), "invalid_request", NUL_DESCRIPTION)


def _address() -> str:
    return request.remote_addr or "unknown"


def _wait(windows) -> int | None:
    """Count this request in `windows`; the seconds to wait when one is over its limit."""
    return service().usage.throttle(windows_of(windows, _address()))


def _throttled(windows) -> Response | None:
    wait = _wait(windows)
    if wait is None:
        return None
    return _oauth_error("slow_down", "Too many requests; try again later.", 429,
                        {"Retry-After": str(wait)})


# ---------------------------------------------------------------------------
# Metadata
# ---------------------------------------------------------------------------


@blueprint.get("/.well-known/oauth-authorization-server")
def authorization_server_metadata():
    """RFC 8414, with every key of the specification's table."""
    site = settings().site_url
    return _json({
        "issuer": site,
        "authorization_endpoint": f"{site}/oauth/authorize",
        "token_endpoint": f"{site}/oauth/token",
        "registration_endpoint": f"{site}/oauth/register",
        "revocation_endpoint": f"{site}/oauth/revoke",
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": list(oauth.AUTH_METHODS),
        "revocation_endpoint_auth_methods_supported": list(oauth.AUTH_METHODS),
        "code_challenge_methods_supported": ["S256"],
        "scopes_supported": list(oauth.SCOPES),
        "authorization_response_iss_parameter_supported": True,
        "service_documentation": f"{site}/docs",
        "ui_locales_supported": ["nl", "en"],
        # Beside dynamic registration: a client id may be its metadata document's URL.
        "client_id_metadata_document_supported": True,
    }, headers={"Cache-Control": "public, max-age=3600"})


@blueprint.get("/.well-known/oauth-protected-resource")
@blueprint.get("/.well-known/oauth-protected-resource/mcp")
def protected_resource_metadata():
    """RFC 9728 for the MCP endpoint."""
    site = settings().site_url
    return _json({
        "resource": f"{site}/mcp",
        "authorization_servers": [site],
        "scopes_supported": list(oauth.SCOPES),
        "bearer_methods_supported": ["header"],
        "resource_name": f"{settings().provider_name} MCP server",
        "resource_documentation": f"{site}/docs",
    }, headers={"Cache-Control": "public, max-age=3600"})


# ---------------------------------------------------------------------------
# Registration, token, revocation
# ---------------------------------------------------------------------------


@blueprint.post("/oauth/register")
def register():
    """RFC 7591 dynamic client registration (open; limited per address, per client name
    and in total)."""
    if (refused := _throttled(REGISTRATIONS)) is not None:
        return refused
    try:
        metadata = orjson.loads(request.get_data())
    except orjson.JSONDecodeError:
        return _oauth_error("invalid_client_metadata", "The body must be JSON.")
    if (refused := _registration_share(metadata)) is not None:
        return refused
    try:
        client, secret = oauth.register_client(session(), metadata, now=now())
    except oauth.RegistrationError as error:
        return _oauth_error(error.error, error.description)
    return _json(oauth.registration_response(client, secret), 201)


def _registration_share(metadata) -> Response | None:
    """The 429 of a registration over its client name's hour or over its address's share
    of the platform's hour (`REGISTRATIONS_FIRST`), or None."""
    name = metadata.get("client_name") if isinstance(metadata, dict) else None
    named = " ".join(name.split()).casefold() if isinstance(name, str) else ""
    per_name = (f"register-name:{oauth.digest(named)}", REGISTRATIONS_PER_NAME, 3600, False)
    if (refused := _throttled((per_name,))) is not None:
        return refused
    first = _wait(REGISTRATIONS_FIRST) is None
    return _throttled(REGISTRATIONS_PLATFORM if first else REGISTRATIONS_BEYOND_FIRST)


@blueprint.post("/oauth/token")
def token():
    """Code exchange and refresh (form encoded)."""
    if (refused := _throttled(TOKEN_REQUESTS)) is not None:
        return refused
    return _server().create_token_response()


@blueprint.post("/oauth/revoke")
def revoke():
    """RFC 7009: revoke an access or refresh token (a refresh token takes its family)."""
    if (refused := _throttled(TOKEN_REQUESTS)) is not None:
        return refused
    return _server().create_endpoint_response("revocation")


def _server() -> authorization.Server:
    return service().oauth_server


# ---------------------------------------------------------------------------
# Authorization: sign-in and consent
# ---------------------------------------------------------------------------


def _tickets() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(settings().secret_key, salt="oauth-authorization-request")


@blueprint.get("/oauth/authorize")
def authorize():
    """Check the request, then have the person sign in (if needed) and consent."""
    params = {key: values[0] for key, values in request.args.lists()}
    repeated = [key for key, values in request.args.lists() if len(values) > 1]
    locale = _locale(params)
    wait = _wait(AUTHORIZATIONS)
    if wait is not None:
        return _error_page(locale, "slow_down", "Too many authorization requests from this "
                           "address; try again in a minute.", status=429,
                           headers={"Retry-After": str(wait)})
    try:
        if repeated:
            # Checked before the client is trusted with a redirect: an error page.
            raise _PageError("invalid_request", f"Repeated parameter: {repeated[0]}.")
        _server().get_consent_grant(request=authorization.AuthorizeRequest(params))
    except _PageError as error:
        return _error_page(locale, error.error, error.description)
    except OAuth2Error as error:
        return _refuse(error, params, locale)
    except ValueError:
        # Authlib refuses to put some characters of a bad parameter into its error text.
        return _error_page(locale, "invalid_request", "The request has characters that "
                           "cannot be part of an authorization request.")
    ticket = _tickets().dumps(params)
    consent = f"/oauth/consent?{urlencode({'request': ticket})}"
    if signed_in() is None:
        return redirect(f"/signin?{urlencode({'next': consent, 'lang': locale})}")
    return redirect(consent)


class _PageError(Exception):
    def __init__(self, error: str, description: str):
        super().__init__(description)
        self.error, self.description = error, description


def _refuse(error: OAuth2Error, params: dict, locale: str) -> Response:
    """An error of the authorization endpoint: back to the client (with `state` and `iss`)
    when its redirect URI is known to be good and the person approved the client before;
    otherwise an error page, which offers the way back to an unapproved client as a link
    (RFC 9700 4.11.2: the site is no open redirector for whoever registers a client)."""
    if not error.redirect_uri:
        return _error_page(locale, error.error, error.description or "")
    query = {"error": error.error}
    if error.description:
        query["error_description"] = error.description
    if params.get("state"):
        query["state"] = params["state"]
    back = to_client(error.redirect_uri, query)
    person, client = signed_in(), _server().query_client(params.get("client_id"))
    if person is not None and client is not None and oauth.has_approved(
            session(), person.id, client.id):
        return redirect(back)
    return _error_page(locale, error.error, error.description or "", back=back,
                       back_host=ascii_host(error.redirect_uri))


def to_client(uri: str, query: dict[str, str]) -> str:
    """`uri` with `query` and `iss` (RFC 9207) added to its own query, parsed as a query:
    an `iss` it held already is replaced by the issuer's."""
    parts = urlsplit(uri)
    pairs = [(key, value) for key, value in parse_qsl(parts.query, keep_blank_values=True)
             if key != "iss"]
    pairs += [*query.items(), ("iss", settings().site_url)]
    # An international host or path in ASCII, as a Location header must be.
    return iri_to_uri(urlunsplit(parts._replace(query=urlencode(pairs))))


def _with_iss(response: Response) -> Response:
    """RFC 9207: the issuer on every redirect back to the client."""
    location = response.headers.get("Location")
    if location:
        response.headers["Location"] = to_client(location, {})
    return response


def ascii_host(uri: str) -> str:
    """The host of `uri` as the browser will ask for it: international names in punycode
    (a look-alike letter shows), anything else that is not ASCII escaped."""
    host = urlsplit(uri).hostname or ""
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host.encode("ascii", "backslashreplace").decode("ascii")


def _ticket(value: str | None) -> dict[str, str]:
    """The authorization request kept in a ticket; `_PageError` when void or expired."""
    try:
        return _tickets().loads(value or "", max_age=oauth.REQUEST_LIFETIME)
    except SignatureExpired:
        raise _PageError("request_expired", "This authorization request waited more than "
                         "10 minutes; start again from the app.") from None
    except BadSignature:
        raise _PageError("invalid_request", "This authorization request is not valid; "
                         "start again from the app.") from None


@blueprint.route("/oauth/consent", methods=["GET", "POST"])
def consent():
    """What the app may do, for which organisation; allow or deny."""
    try:
        params = _ticket(request.values.get("request"))
    except _PageError as error:
        return _error_page(_locale({}), error.error, error.description)
    # The site's language switch asks with `lang`; the app asked with `ui_locales`.
    locale = _locale({"ui_locales": request.args.get("lang") or params.get("ui_locales", "")})
    person = signed_in()
    if person is None:
        here = f"/oauth/consent?{urlencode({'request': request.values['request']})}"
        return redirect(f"/signin?{urlencode({'next': here, 'lang': locale})}")
    try:
        grant = _server().get_consent_grant(request=authorization.AuthorizeRequest(params),
                                            end_user=person)
    except OAuth2Error as error:
        return _refuse(error, params, locale)
    choices = _choices(person, grant.request.scope)
    if request.method == "GET":
        return _consent_page(locale, grant, choices, params)
    check_csrf()
    if request.form.get("decision") != "allow":
        return _with_iss(_server().create_authorization_response(
            request=grant.request, grant=grant, grant_user=None))
    choice = next((c for c in choices if c["key"] == request.form.get("organisation", "")), None)
    if choice is None:
        return _error_page(locale, "invalid_request", "You have no role in this organisation "
                           "that allows what the app asks for; choose again from the app.")
    grant.request.organisation_id = choice["organisation_id"]
    grant.request.granted_scope = " ".join(choice["scopes"])
    return _with_iss(_server().create_authorization_response(
        request=grant.request, grant=grant, grant_user=person))


def _choices(person: Person, requested: str) -> list[dict]:
    """What the person can give: `read` as themselves, or for each organisation they have a
    role in, what that role allows (of what the client asked for)."""
    wanted = set(requested.split())
    options = [{"key": "", "organisation_id": None, "name": None,
                "scopes": sorted(wanted & {"read"})}]
    for organisation_id, name, role in members.roles_of(session(), person.id):
        options.append({"key": organisation_id, "organisation_id": organisation_id,
                        "name": name, "role": role,
                        "scopes": sorted(wanted & oauth.ROLE_SCOPES[role])})
    return [option for option in options if option["scopes"]]


def _consent_page(locale: str, grant, choices: list[dict], params: dict) -> Response:
    client = grant.request.client
    redirect_uri = grant.request.payload.redirect_uri or client.get_default_redirect_uri()
    target = urlsplit(redirect_uri)
    return _page("consent.html", locale, client_name=client.name,
                 redirect_host=ascii_host(redirect_uri), choices=choices,
                 ticket=request.values["request"], csrf=csrf_token(),
                 form_targets=(iri_to_uri(f"{target.scheme}://{target.netloc}"),))


@blueprint.route("/signin", methods=["GET", "POST"])
def sign_in():
    """Sign in with email and password; then on to `next` (a path of this site only).
    Too many attempts (from this address, or at this account) get a page that says how
    long to wait (429), before the password is looked at."""
    locale = _locale({"ui_locales": request.values.get("lang", "")})
    target = _local_path(request.values.get("next"))
    failed, wait = False, None
    if request.method == "POST":
        check_csrf()
        account = deliveries.address_hash(settings().secret_key,
                                          request.form.get("email", "").strip())
        series = f"signin-account:{account}" + (":device" if _known_device(account) else "")
        wait = _wait(SIGN_INS) or service().usage.backoff(series, **SIGN_IN_BACKOFF)
        if wait is None:
            try:
                person = members.sign_in(session(), email=request.form.get("email", ""),
                                         password=request.form.get("password", ""),
                                         secret_key=settings().secret_key, now=now())
            except DomainError:
                failed = True
            else:
                service().usage.forgive(series)
                cookie.clear()
                cookie["sid"] = members.start_session(session(), person=person, now=now())
                cookie["csrf"] = secrets.token_urlsafe(32)
                return _remember_device(redirect(target), account)
    response = _page("signin.html", locale, next=target, csrf=csrf_token(), failed=failed,
                     wait=wait, lang=locale)
    response.status_code = 429 if wait else 401 if failed else 200
    if wait:
        response.headers["Retry-After"] = str(wait)
    return response


def _devices() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(settings().secret_key, salt="known-device")


def _known_device(account: str) -> bool:
    """Whether this browser signed in to `account` before (its `agenda_device` cookie)."""
    try:
        return _devices().loads(request.cookies.get(DEVICE_COOKIE, ""),
                                max_age=DEVICE_LIFETIME) == account
    except BadSignature:
        return False


def _remember_device(response: Response, account: str) -> Response:
    response.set_cookie(DEVICE_COOKIE, _devices().dumps(account), max_age=DEVICE_LIFETIME,
                        httponly=True, samesite="Lax",
                        secure=settings().site_url.startswith("https://"))
    return response


@blueprint.post("/signout")
def sign_out():
    """End the session, on the server too (a copy of the cookie stops working)."""
    check_csrf()
    if "sid" in cookie:
        members.end_session(session(), cookie["sid"])
    cookie.clear()
    return redirect("/signin")


@blueprint.route("/settings/apps", methods=["GET", "POST"])
def connected_apps():
    """The apps holding tokens of the signed-in person; revoke one."""
    locale = _locale({"ui_locales": request.values.get("lang", "")})
    person = signed_in()
    if person is None:
        return redirect(f"/signin?{urlencode({'next': '/settings/apps', 'lang': locale})}")
    if request.method == "POST":
        check_csrf()
        oauth.disconnect(session(), person.id, request.form.get("client_id", ""), now=now())
        return redirect("/settings/apps")
    return _page("apps.html", locale, person=person,
                 apps=oauth.connected_apps(session(), person.id, now=now()), csrf=csrf_token())


# ---------------------------------------------------------------------------
# Pages: language, CSRF, the signed-in person
# ---------------------------------------------------------------------------


def _locale(params: dict) -> str:
    """`ui_locales` (first supported), then Accept-Language, then English."""
    for tag in (params.get("ui_locales") or "").split():
        language = tag.split("-")[0].lower()
        if language in ("nl", "en"):
            return language
    return request.accept_languages.best_match(["nl", "en"]) or "en"


def _page(template: str, locale: str, *, form_targets: tuple[str, ...] = (),
          **values) -> Response:
    """A page; its forms may post to this site, and be redirected on to `form_targets`
    (browsers apply `form-action` to the redirect that follows a form, too)."""
    body = render_template(template, t=text_for(locale), locale=locale,
                           site=settings().site_url, **values)
    targets = " ".join(("'self'", *form_targets))
    return Response(body, mimetype="text/html", headers={
        "Cache-Control": "no-store", "X-Frame-Options": "DENY",
        "Content-Security-Policy": f"default-src 'none'; style-src 'self'; "
                                   f"form-action {targets}; frame-ancestors 'none'",
        "Referrer-Policy": "no-referrer"})


def _error_page(locale: str, error: str, description: str, *, status: int = 400,
                headers: dict | None = None, back: str | None = None,
                back_host: str | None = None) -> Response:
    """A page saying what is wrong; `back` is a link to the client, for the person to
    follow or not."""
    response = _page("error.html", locale, error=error, description=description, back=back,
                     back_host=back_host)
    response.status_code = status
    response.headers.update(headers or {})
    return response


def csrf_token() -> str:
    if "csrf" not in cookie:
        cookie["csrf"] = secrets.token_urlsafe(32)
    return cookie["csrf"]


class FormRefused(Exception):
    """A form without the CSRF token of this browser's session (`check_csrf`)."""


def check_csrf() -> None:
    """A form must carry the token of this browser's session (and come from this site)."""
    sent = request.form.get("csrf", "")
    if not sent or "csrf" not in cookie or not hmac.compare_digest(sent, cookie["csrf"]):
        raise FormRefused()


@blueprint.app_errorhandler(FormRefused)
def _form_refused(_error: FormRefused) -> Response:
    """A page (403) on every surface whose forms `check_csrf` guards: they are HTML."""
    return _error_page(_locale({"ui_locales": request.values.get("lang", "")}), "forbidden",
                       "This form was not sent from this site's page, or the page is out "
                       "of date: reload it and try again.", status=403)


def signed_in() -> Person | None:
    """The person this browser's live session signs in, or None."""
    secret = cookie.get("sid")
    if not isinstance(secret, str):
        return None
    person = members.session_person(session(), secret, now=now())
    if person is None:
        cookie.clear()
    return person


def _local_path(target: str | None) -> str:
    """`target` when it is a path of this site, else the connected apps page. Only visible
    ASCII: a control character (CR, LF) cannot go into the Location header, and the
    sign-in must not be lost over it."""
    if (not target or not target.startswith("/") or target.startswith("//")
            or "\\" in target or not all("!" <= ch <= "~" for ch in target)
            or urlsplit(target).netloc):
        return "/settings/apps"
    return target
